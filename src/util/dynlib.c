/* dynlib.c - see dynlib.h. */
#include "util/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

bool vg_dynlib_load(const char *const *sonames, size_t n_sonames,
		    const struct vg_dynlib_fn *fns, size_t n_fns, char *why, size_t why_size)
{
	void *h = NULL;

	for (size_t i = 0; i < n_sonames && !h; i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, why_size, "cannot load %s (%s)", n_sonames ? sonames[0] : "?",
			 dlerror());
		return false;
	}
	for (size_t i = 0; i < n_fns; i++) {
		*fns[i].slot = dlsym(h, fns[i].name);
		if (!*fns[i].slot) {
			snprintf(why, why_size, "%s lacks %s, a function vigil calls", sonames[0],
				 fns[i].name);
			return false;
		}
	}
	return true;
}
