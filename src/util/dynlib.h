/* dynlib.h - a library loaded when first needed (dlopen) instead of
 * linked, and the functions vigil calls from it: libdebuginfod and
 * libcurl (rarely used, and heavy), Zydis and libthread_db (only watch,
 * probe and print need them; linked, each cost every command's start). */
#ifndef VG_DYNLIB_H
#define VG_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

/* One function: its name and where its address goes (a function
 * pointer's address, cast). */
struct vg_dynlib_fn {
	const char *name;
	void **slot;
};

/* Open the first of n_sonames that loads (RTLD_NOW | RTLD_LOCAL) and fill
 * every slot.  true when each function was found; else why (why_size
 * bytes) says in one sentence which library could not be loaded, or
 * which function it lacks. */
bool vg_dynlib_load(const char *const *sonames, size_t n_sonames,
		    const struct vg_dynlib_fn *fns, size_t n_fns, char *why, size_t why_size);

#endif
