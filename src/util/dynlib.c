/* dynlib.c - see dynlib.h. */
#include "util/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

static bool load(struct vg_dynlib *l)
{
	void *h = NULL;

	for (size_t i = 0; i < l->n_sonames && !h; i++)
		h = dlopen(l->sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(l->why, sizeof(l->why), "cannot load %s (%s)",
			 l->n_sonames ? l->sonames[0] : "?", dlerror());
		return false;
	}
	for (size_t i = 0; i < l->n_fns; i++) {
		*l->fns[i].slot = dlsym(h, l->fns[i].name);
		if (!*l->fns[i].slot) {
			snprintf(l->why, sizeof(l->why), "%s lacks %s, a function vigil calls",
				 l->sonames[0], l->fns[i].name);
			return false;
		}
	}
	return true;
}

bool vg_dynlib_get(struct vg_dynlib *l, const char **why)
{
	int s = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);

	if (!s) {
		pthread_mutex_lock(&l->lock);
		s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
		if (!s) {
			s = load(l) ? 1 : 2;
			__atomic_store_n(&l->state, s, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (s != 1 && why)
		*why = l->why;
	return s == 1;
}
