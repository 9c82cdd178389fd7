/* thread_db.c - the libthread_db functions tls.c calls, each loading the
 * library on its first call (dlopen) and forwarding to it.
 *
 * Linked, libthread_db cost every vigil run ~0.12 ms of start-up (spawn
 * to first byte of a hello-world linked with it, median of 300), and only
 * print and watch ask for thread-local addresses.  tls.c calls the td_
 * functions by their own names through <thread_db.h>; these definitions
 * are what it links to.  The library calls back into the ps_ functions
 * tls.c defines, by name, so the executables export those
 * (meson.build: --export-dynamic-symbol=ps_*). */
#include "expr/thread_db.h"

#include <proc_service.h>
#include <thread_db.h>

#include "util/dynlib.h"

/* glibc's soname, the same since 2.0. */
#define THREAD_DB_SONAME "libthread_db.so.1"

static struct {
	td_err_e (*init)(void);
	td_err_e (*ta_new)(struct ps_prochandle *, td_thragent_t **);
	td_err_e (*ta_delete)(td_thragent_t *);
	td_err_e (*ta_thr_iter)(const td_thragent_t *, td_thr_iter_f *, void *, td_thr_state_e,
				int, sigset_t *, unsigned int);
	td_err_e (*thr_get_info)(const td_thrhandle_t *, td_thrinfo_t *);
	td_err_e (*thr_tls_get_addr)(const td_thrhandle_t *, psaddr_t, size_t, psaddr_t *);
} td;
static const char *const td_soname[] = { THREAD_DB_SONAME };
static const struct vg_dynlib_fn td_fns[] = {
	{ "td_init", (void **)&td.init },
	{ "td_ta_new", (void **)&td.ta_new },
	{ "td_ta_delete", (void **)&td.ta_delete },
	{ "td_ta_thr_iter", (void **)&td.ta_thr_iter },
	{ "td_thr_get_info", (void **)&td.thr_get_info },
	{ "td_thr_tls_get_addr", (void **)&td.thr_tls_get_addr },
};
static struct vg_dynlib td_lib = VG_DYNLIB(td_soname, td_fns);

bool vg_thread_db_load(const char **why)
{
	return vg_dynlib_get(&td_lib, why);
}

td_err_e td_init(void)
{
	return vg_thread_db_load(NULL) ? td.init() : TD_NOLIBTHREAD;
}

td_err_e td_ta_new(struct ps_prochandle *ps, td_thragent_t **ta)
{
	return vg_thread_db_load(NULL) ? td.ta_new(ps, ta) : TD_NOLIBTHREAD;
}

td_err_e td_ta_delete(td_thragent_t *ta)
{
	return vg_thread_db_load(NULL) ? td.ta_delete(ta) : TD_NOLIBTHREAD;
}

td_err_e td_ta_thr_iter(const td_thragent_t *ta, td_thr_iter_f *callback, void *cbdata,
			td_thr_state_e state, int ti_pri, sigset_t *ti_sigmask,
			unsigned int ti_user_flags)
{
	return vg_thread_db_load(NULL)
		? td.ta_thr_iter(ta, callback, cbdata, state, ti_pri, ti_sigmask, ti_user_flags)
		: TD_NOLIBTHREAD;
}

td_err_e td_thr_get_info(const td_thrhandle_t *th, td_thrinfo_t *info)
{
	return vg_thread_db_load(NULL) ? td.thr_get_info(th, info) : TD_NOLIBTHREAD;
}

td_err_e td_thr_tls_get_addr(const td_thrhandle_t *th, psaddr_t map_address, size_t offset,
			     psaddr_t *address)
{
	return vg_thread_db_load(NULL) ? td.thr_tls_get_addr(th, map_address, offset, address)
				       : TD_NOLIBTHREAD;
}
