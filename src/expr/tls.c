/* tls.c - thread-local addresses through libthread_db (tls.h).
 *
 * libthread_db is a client of the debugger: it calls back into functions
 * the program defines (proc_service.h), by name.  They are defined here,
 * for the one process handle vg_tls_address sets up. */
#include "expr/tls.h"

#include <errno.h>
#include <proc_service.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <thread_db.h>

#include "expr/thread_db.h"
#include "util/vec.h"


struct ps_prochandle {
	const struct vg_images *imgs;
	struct vg_mem *mem;
	pid_t pid;
};

/* glibc exports what libthread_db asks for (__nptl_version, _rtld_global,
 * the _thread_db_* descriptors) in .dynsym: the images' own tables
 * answer, no debug file is needed. */
static bool lookup_in(struct ps_prochandle *ph, const struct vg_image *img, const char *name,
		      psaddr_t *addr)
{
	struct vg_symbol sym;

	if (vg_image_symbol_by_name(img, name, &sym) == 0) {
		*addr = (psaddr_t)(uintptr_t)(img->bias + sym.vaddr);
		return true;
	}
	return false;
}

/* The object named may not be mapped: glibc 2.34 moved libpthread into
 * libc, yet libthread_db still asks for libpthread.so.0.  Like gdb, look
 * in every image then (the named one first). */
ps_err_e ps_pglobal_lookup(struct ps_prochandle *ph, const char *object, const char *name,
			   psaddr_t *addr)
{
	const struct vg_image *img = vg_images_by_name(ph->imgs, object, NULL);

	if (img && lookup_in(ph, img, name, addr))
		return PS_OK;
	for (size_t i = 0; i < ph->imgs->n; i++)
		if (ph->imgs->images[i] != img && lookup_in(ph, ph->imgs->images[i], name, addr))
			return PS_OK;
	return PS_NOSYM;
}

ps_err_e ps_pdread(struct ps_prochandle *ph, psaddr_t addr, void *buf, size_t size)
{
	struct vg_mem_result res;

	return vg_mem_read(ph->mem, (uint64_t)(uintptr_t)addr, buf, size, &res, NULL) == 0 ? PS_OK
											    : PS_ERR;
}

/* What needs ptrace (registers) or writes is refused: vigil never stops
 * or changes the target. */
ps_err_e ps_pdwrite(struct ps_prochandle *ph, psaddr_t addr, const void *buf, size_t size)
{
	return PS_ERR;
}

ps_err_e ps_lgetregs(struct ps_prochandle *ph, lwpid_t lwp, prgregset_t regs)
{
	return PS_ERR;
}

ps_err_e ps_lsetregs(struct ps_prochandle *ph, lwpid_t lwp, const prgregset_t regs)
{
	return PS_ERR;
}

ps_err_e ps_lgetfpregs(struct ps_prochandle *ph, lwpid_t lwp, prfpregset_t *regs)
{
	return PS_ERR;
}

ps_err_e ps_lsetfpregs(struct ps_prochandle *ph, lwpid_t lwp, const prfpregset_t *regs)
{
	return PS_ERR;
}

pid_t ps_getpid(struct ps_prochandle *ph)
{
	return ph->pid;
}

ps_err_e ps_get_thread_area(struct ps_prochandle *ph, lwpid_t lwp, int idx, void **base)
{
	return PS_ERR;
}

/* The dynamic linker's link_map of img: the list _r_debug.r_map starts,
 * matched by load bias (l_addr). */
static int link_map_of(struct ps_prochandle *ph, const struct vg_image *img, uint64_t *lm)
{
	struct vg_symbol sym;
	uint64_t at = 0, words[5];

	for (size_t i = 0; i < ph->imgs->n && !at; i++)
		if (vg_image_symbol_by_name(ph->imgs->images[i], "_r_debug", &sym) == 0)
			at = ph->imgs->images[i]->bias + sym.vaddr;
	/* struct r_debug: int r_version; struct link_map *r_map; ... */
	if (!at || ps_pdread(ph, (psaddr_t)(uintptr_t)(at + 8), &at, 8) != PS_OK)
		return -ENOENT;
	/* struct link_map: l_addr, l_name, l_ld, l_next, l_prev. */
	for (int k = 0; at && k < 4096; k++) {
		if (ps_pdread(ph, (psaddr_t)(uintptr_t)at, words, sizeof(words)) != PS_OK)
			return -ENOENT;
		if (words[0] == img->bias) {
			*lm = at;
			return 0;
		}
		at = words[3];
	}
	return -ENOENT;
}

struct find_thread {
	lwpid_t tid;
	td_thrhandle_t th;
	bool found;
};

static int thread_cb(const td_thrhandle_t *th, void *data)
{
	struct find_thread *f = data;
	td_thrinfo_t info;

	if (td_thr_get_info(th, &info) == TD_OK && info.ti_lid == f->tid) {
		f->th = *th;
		f->found = true;
		return 1;
	}
	return 0;
}

struct all_threads {
	struct vg_tls_thread *t;
	size_t n, cap;
	bool oom;
};

static int all_cb(const td_thrhandle_t *th, void *data)
{
	struct all_threads *a = data;
	td_thrinfo_t info;

	if (td_thr_get_info(th, &info) != TD_OK || !info.ti_tid)
		return 0;
	if (VG_GROW(a->t, a->cap, a->n + 1) < 0) {
		a->oom = true;
		return 1;
	}
	a->t[a->n++] = (struct vg_tls_thread){ .tid = (pid_t)info.ti_lid,
					       .tp = (uint64_t)info.ti_tid };
	return 0;
}

/* td_init failed: why. */
static int no_thread_db(struct vg_error *err)
{
	const char *why = "libthread_db does not initialize";

	(void)vg_thread_db_load(&why);
	return vg_error_set(err, -ENOTSUP, "%s: thread-local variables cannot be located", why);
}

int vg_tls_thread_pointers(const struct vg_images *imgs, struct vg_mem *mem, pid_t pid,
			   struct vg_tls_thread **out, size_t *n, struct vg_error *err)
{
	struct ps_prochandle ph = { .imgs = imgs, .mem = mem, .pid = pid };
	struct all_threads a = { 0 };
	td_thragent_t *ta = NULL;
	td_err_e e;

	*out = NULL;
	*n = 0;
	if (td_init() != TD_OK)
		return no_thread_db(err);
	e = td_ta_new(&ph, &ta);
	if (e != TD_OK)
		return vg_error_set(err, -ENOTSUP, "libthread_db cannot read the threads of pid %d (td_ta_new error %d)",
				    (int)pid, (int)e);
	e = td_ta_thr_iter(ta, all_cb, &a, TD_THR_ANY_STATE, TD_THR_LOWEST_PRIORITY,
			   TD_SIGNO_MASK, TD_THR_ANY_USER_FLAGS);
	td_ta_delete(ta);
	if (a.oom) {
		free(a.t);
		return vg_error_set(err, -ENOMEM, "out of memory listing threads");
	}
	if (e != TD_OK) {
		free(a.t);
		return vg_error_set(err, -ENOTSUP, "libthread_db cannot list the threads of pid %d (error %d)",
				    (int)pid, (int)e);
	}
	*out = a.t;
	*n = a.n;
	return 0;
}

int vg_tls_address(const struct vg_images *imgs, struct vg_mem *mem, pid_t pid, pid_t tid,
		   const struct vg_image *img, uint64_t offset, uint64_t *addr,
		   struct vg_error *err)
{
	struct ps_prochandle ph = { .imgs = imgs, .mem = mem, .pid = pid };
	struct find_thread f = { .tid = tid };
	td_thragent_t *ta = NULL;
	td_err_e e;
	uint64_t lm;
	void *a = NULL;
	int r = 0;

	if (td_init() != TD_OK)
		return no_thread_db(err);
	e = td_ta_new(&ph, &ta);
	if (e != TD_OK)
		return vg_error_set(err, -ENOTSUP, "libthread_db cannot read the threads of pid %d (td_ta_new error %d: not a glibc process, or glibc's symbols are not found)",
				    (int)pid, (int)e);
	e = td_ta_thr_iter(ta, thread_cb, &f, TD_THR_ANY_STATE, TD_THR_LOWEST_PRIORITY,
			   TD_SIGNO_MASK, TD_THR_ANY_USER_FLAGS);
	/* A callback that stops the walk makes it return TD_DBERR. */
	if (e != TD_OK && !f.found) {
		r = vg_error_set(err, -ENOTSUP, "libthread_db cannot list the threads of pid %d (error %d)",
				 (int)pid, (int)e);
	} else if (!f.found) {
		r = vg_error_set(err, -EINVAL, "thread %d is not a thread of pid %d ('ls /proc/%d/task' lists them)",
				 (int)tid, (int)pid, (int)pid);
	} else if (link_map_of(&ph, img, &lm) < 0) {
		r = vg_error_set(err, -ENOTSUP, "the dynamic linker's list has no entry for %s", img->path);
	} else {
		e = td_thr_tls_get_addr(&f.th, (psaddr_t)(uintptr_t)lm, (size_t)offset, &a);
		if (e == TD_TLSDEFER || e == TD_NOTALLOC)
			r = vg_error_set(err, -ENOENT, "thread %d has no thread-local block for %s yet (allocated on first use)",
					 (int)tid, img->path);
		else if (e != TD_OK)
			r = vg_error_set(err, -ENOTSUP, "libthread_db cannot find the thread-local block of thread %d (error %d)",
					 (int)tid, (int)e);
		else
			*addr = (uint64_t)(uintptr_t)a;
	}
	td_ta_delete(ta);
	return r;
}
