/* pointers.h - pointer scan: chains base -> +off -> ... -> ADDR that start
 * at a static location (IMAGE+offset inside an image's .data/.bss, or any
 * writable mapping of an image file), so that they survive restarts (what
 * Cheat Engine's pointer scanner does).
 *
 * One pass over the writable regions collects every aligned 8-byte value
 * that points into readable memory (vigil's memory: O(pointers)); chains are
 * then searched backwards from ADDR, breadth first, up to depth levels with
 * each offset in [0, max_offset]. */
#ifndef VG_SCAN_POINTERS_H
#define VG_SCAN_POINTERS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "target/maps.h"
#include "util/error.h"

#define VG_PTR_MAX_DEPTH 8

struct vg_ptr_chain {
	uint64_t base_address;          /* runtime address of the static slot */
	const struct vg_image *image;   /* borrowed from imgs */
	uint64_t base_static;           /* base_address - image bias (ELF vaddr) */
	const char *base_symbol;        /* borrowed; NULL if no symbol covers it */
	uint64_t base_symbol_offset;
	/* offsets[i]: added after the (i+1)-th dereference, outermost first:
	 * ADDR == *(...*(*(base) + offsets[0]) ...) + offsets[depth-1] */
	uint64_t offsets[VG_PTR_MAX_DEPTH];
	unsigned depth;                 /* number of dereferences, >= 1 */
};

struct vg_ptr_opts {
	uint64_t target;                /* ADDR */
	unsigned depth;                 /* 1..VG_PTR_MAX_DEPTH */
	uint64_t max_offset;            /* bytes */
	size_t max_chains;              /* stop collecting after this many */
	const volatile sig_atomic_t *stop;
};

struct vg_ptr_stats {
	uint64_t bytes_scanned;
	uint64_t pointers;              /* candidate pointers collected */
	uint64_t regions_skipped;
	uint64_t chains_found;          /* may exceed the chains returned */
	bool truncated;                 /* max_chains reached */
	bool interrupted;
	double seconds;
};

/* Chains ranked by depth, then base image order, then offsets; *chains is
 * malloc'd (free()).  -ESRCH, -EPERM/-EACCES, -ENOMEM. */
int vg_ptr_scan(pid_t pid, const struct vg_maps *maps,
		const struct vg_images *imgs, const struct vg_ptr_opts *opts,
		struct vg_ptr_chain **chains, size_t *n,
		struct vg_ptr_stats *st, struct vg_error *err);

/* "*(*(g_root)+24)+40" or "*(*(libfoo.so+0x4010)+24)+40"; returns buf. */
char *vg_ptr_chain_expression(const struct vg_ptr_chain *c, char *buf,
			      size_t size);

#endif
