/* tls.h - where a thread-local variable lives in one thread of a live
 * process: glibc's libthread_db (the library gdb uses for the same
 * question) walks the process's thread list and the thread's DTV in
 * memory, and vigil serves every read it asks for with process_vm_readv.
 * No register is read and no thread is stopped: the callbacks that would
 * need ptrace (ps_lgetregs, ps_pdwrite, ...) refuse. */
#ifndef VG_EXPR_TLS_H
#define VG_EXPR_TLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "target/mem.h"
#include "util/error.h"

/* The address of the variable at offset in img's TLS block, in thread
 * tid of process pid.  Errors: -EINVAL
 * (tid is not a thread of pid), -ENOENT (the thread has no block for img
 * yet: a dlopen()ed library's TLS is allocated on first use), -ENOTSUP
 * (libthread_db cannot read this process: no glibc, static binary). */
int vg_tls_address(const struct vg_images *imgs, struct vg_mem *mem, pid_t pid, pid_t tid,
		   const struct vg_image *img, uint64_t offset, uint64_t *addr,
		   struct vg_error *err);

/* Every thread of pid with its thread pointer (x86-64: its fs base, the
 * address of its struct pthread, which libthread_db gives as ti_tid),
 * from memory alone, into *out (malloc'ed, n entries).  Errors as
 * vg_tls_address. */
struct vg_tls_thread {
	pid_t tid;
	uint64_t tp;
};
int vg_tls_thread_pointers(const struct vg_images *imgs, struct vg_mem *mem, pid_t pid,
			   struct vg_tls_thread **out, size_t *n, struct vg_error *err);

#endif
