/* dynlib.h - a library loaded when first needed (dlopen) instead of
 * linked, and the functions vigil calls from it: libdebuginfod and
 * libcurl (rarely used, and heavy), Zydis and libthread_db (only watch,
 * probe and print need them; linked, each cost every command's start). */
#ifndef VG_DYNLIB_H
#define VG_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One function: its name and where its address goes (a function
 * pointer's address, cast). */
struct vg_dynlib_fn {
	const char *name;
	void **slot;
};

/* A library and its functions, loaded once (VG_DYNLIB initializes one
 * as a static). */
struct vg_dynlib {
	const char *const *sonames;   /* tried in order */
	size_t n_sonames;
	const struct vg_dynlib_fn *fns;
	size_t n_fns;
	pthread_mutex_t lock;
	int state;                    /* 0 not tried, 1 loaded, 2 failed */
	char why[256];
};

#define VG_DYNLIB_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define VG_DYNLIB(sonames_, fns_)                                              \
	{ .sonames = (sonames_), .n_sonames = VG_DYNLIB_COUNT(sonames_),       \
	  .fns = (fns_), .n_fns = VG_DYNLIB_COUNT(fns_),                       \
	  .lock = PTHREAD_MUTEX_INITIALIZER }

/* Open the first of l's sonames that loads (RTLD_NOW | RTLD_LOCAL) and
 * fill every slot, the first time only (thread-safe; later calls cost an
 * atomic load).  true when each function was found; else *why (if why)
 * says in one sentence which library could not be loaded, or which
 * function it lacks. */
bool vg_dynlib_get(struct vg_dynlib *l, const char **why);

#endif
