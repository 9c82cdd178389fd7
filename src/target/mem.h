/* mem.h - read the target's memory, saying which source served each byte.
 *
 * Order of sources: process_vm_readv (batched iovecs, no fd), then
 * /proc/PID/mem (pread; also reaches PROT_NONE pages), then the on-disk image
 * for a file-backed private mapping the target has not written (smaps says
 * Anonymous: 0 kB, so every page is still the file's).  A read that cannot be
 * completed stops at the first byte no source can serve: bytes_read says how
 * far it got.  Nothing is ever zero-filled.  Never writes to the target. */
#ifndef VG_MEM_H
#define VG_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"
#include "target/target.h"
#include "util/error.h"

enum vg_mem_source {
	VG_MEM_NONE = 0,
	VG_MEM_VM_READV,   /* "process_vm_readv" */
	VG_MEM_PROC_MEM,   /* "proc_pid_mem" */
	VG_MEM_FILE,       /* "image_file" */
};

#define VG_MEM_MAX_SEGMENTS 8

struct vg_mem_segment {
	uint64_t addr;
	size_t len;
	enum vg_mem_source source;
};

struct vg_mem_result {
	size_t bytes_read;            /* contiguous bytes from the start address */
	int error;                    /* 0 if complete, else negative errno at addr+bytes_read */
	/* Which source served which part, in address order.  If more than
	 * VG_MEM_MAX_SEGMENTS would be needed the last one is merged. */
	struct vg_mem_segment seg[VG_MEM_MAX_SEGMENTS];
	size_t n_seg;
};

struct vg_mem;  /* opaque: pid, lazily opened /proc/PID/mem fd, maps ref */

/* t and maps are borrowed and must outlive m; maps is used for the file
 * fallback and for error sentences; it may be NULL (no file fallback).
 * Never fails except on allocation. */
int vg_mem_open(const struct vg_target *t, const struct vg_maps *maps,
		struct vg_mem **out, struct vg_error *err);
struct vg_mem *vg_mem_free(struct vg_mem *m);

/* Replace the borrowed maps after a refresh (NULL: no file fallback). */
void vg_mem_set_maps(struct vg_mem *m, const struct vg_maps *maps);

/* Restrict the sources tried (tests, and the CLI's --source option).
 * Default VG_MEM_SRC_ALL; a mask of 0 is treated as VG_MEM_SRC_ALL. */
#define VG_MEM_SRC_VM_READV  (1u << 0)
#define VG_MEM_SRC_PROC_MEM  (1u << 1)
#define VG_MEM_SRC_FILE      (1u << 2)
#define VG_MEM_SRC_ALL       (VG_MEM_SRC_VM_READV | VG_MEM_SRC_PROC_MEM | VG_MEM_SRC_FILE)
void vg_mem_set_sources(struct vg_mem *m, unsigned mask);

/* Read len bytes at addr into buf.  Returns 0 if every byte was read,
 * otherwise the negative errno of the first unreadable byte (-EFAULT for an
 * unmapped/unreadable address, -ESRCH if the process is gone, -EPERM/-EACCES)
 * with err filled; res is always filled. */
int vg_mem_read(struct vg_mem *m, uint64_t addr, void *buf, size_t len,
		struct vg_mem_result *res, struct vg_error *err);

/* Scatter read: many small reads in as few syscalls as possible (IOV_MAX
 * iovecs per process_vm_readv).  Each request gets its own bytes_read and
 * source; a failing request does not stop the others.  Returns 0, or a
 * negative errno only if the target is gone or access is denied. */
struct vg_mem_req {
	uint64_t addr;
	void *buf;
	size_t len;
	size_t bytes_read;            /* out */
	enum vg_mem_source source;    /* out */
};
int vg_mem_readv(struct vg_mem *m, struct vg_mem_req *reqs, size_t n,
		 struct vg_error *err);

/* "process_vm_readv", "proc_pid_mem", "image_file", "none". */
const char *vg_mem_source_name(enum vg_mem_source s);

#endif
