/* pointers.h - pointer scan: chains base -> +off -> ... -> ADDR that start
 * at a static location (IMAGE+offset inside an image's .data/.bss, or any
 * writable mapping of an image file), so that they survive restarts (what
 * Cheat Engine's pointer scanner does).
 *
 * One pass over the writable regions collects every aligned 8-byte value
 * that points into readable memory (vigil's memory: O(pointers)); chains are
 * then searched backwards from ADDR, breadth first, up to depth levels with
 * each offset in [0, limit], the limit widened from 64 bytes to max_offset
 * (see vg_ptr_scan for the ranking). */
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
#include "util/progress.h"

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
	uint64_t max_offset;            /* bytes, the widest search */
	size_t max_chains;              /* stop collecting after this many */
	const volatile sig_atomic_t *stop;
	struct vg_progress *progress;   /* NULL: none; the bytes read */
};

struct vg_ptr_stats {
	uint64_t bytes_scanned;
	uint64_t pointers;              /* candidate pointers collected */
	uint64_t regions_skipped;       /* some bytes unreadable, or too large */
	/* Private anonymous regions over VG_PTR_MAX_SPARSE_REGION that the
	 * kernel cannot list the present pages of (no PAGEMAP_SCAN): address
	 * space reservations (ASan's shadow is 14 TiB) that reading whole
	 * would fault in page tables for every page.  Counted in
	 * regions_skipped too. */
	uint64_t regions_too_large;
	uint64_t chains_found;          /* may exceed the chains returned */
	bool truncated;                 /* max_chains reached */
	/* Searches run (offsets <= VG_PTR_FIRST_LIMIT, then x4 up to
	 * max_offset) and the largest offset limit whose search was
	 * complete: neither cut nor truncated (valid if any_complete). */
	unsigned passes;
	bool any_complete;
	uint64_t max_offset_complete;
	/* A search level reached VG_PTR_MAX_FRONTIER candidate links and the
	 * rest were dropped: chains_found is a lower bound. */
	bool frontier_capped;
	bool interrupted;
	double seconds;
};

#define VG_PTR_MAX_FRONTIER (1u << 20)
#define VG_PTR_FIRST_LIMIT 64u
#define VG_PTR_LIMIT_STEP 4u

/* Classes of a chain's base, best first. */
enum {
	VG_PTR_BASE_MAIN_SYMBOL,        /* a named global of the executable */
	VG_PTR_BASE_MAIN,               /* elsewhere in the executable */
	VG_PTR_BASE_LIB_SYMBOL,         /* a named global of another image */
	VG_PTR_BASE_OTHER,
};
#define VG_PTR_MAX_SPARSE_REGION (64ull << 30)

/* Searches with offsets <= VG_PTR_FIRST_LIMIT first, then limits
 * VG_PTR_LIMIT_STEP times wider up to max_offset, each adding its chains,
 * until one reaches max_chains or VG_PTR_MAX_FRONTIER.  Chains are ranked:
 * fewer inner pointers whose value is not a multiple of 8 (an object that
 * holds pointers is 8-aligned; such a pointer points into a string), then
 * the base (a named global of the main executable, the main executable,
 * a named global of another image, the rest), then the smaller sum of
 * offsets, then the shorter chain; *chains (malloc'd, free()) holds the
 * best max_chains.  Only private anonymous pages that are present or
 * swapped are read (a page never touched holds zeros, and reading it would
 * make the kernel map it).  A location that is itself static ends a chain:
 * longer chains through it are not searched.  On *opts->stop the chains
 * found so far are returned with st->interrupted.  -EINVAL (depth not in
 * 1..VG_PTR_MAX_DEPTH, max_chains 0), -EFAULT (target not mapped),
 * -ESRCH, -EPERM/-EACCES, -ENOMEM. */
int vg_ptr_scan(pid_t pid, const struct vg_maps *maps,
		const struct vg_images *imgs, const struct vg_ptr_opts *opts,
		struct vg_ptr_chain **chains, size_t *n,
		struct vg_ptr_stats *st, struct vg_error *err);

/* "*(*(g_root)+24)+40" or "*(*(libfoo.so+0x4010)+24)+40"; a zero offset
 * is left out ("*(g_root)").  Returns buf (truncated to size). */
char *vg_ptr_chain_expression(const struct vg_ptr_chain *c, char *buf,
			      size_t size);

/* The base as IMAGE+0xSTATIC, IMAGE the image's file name
 * ("vigil-demo+0x4010"), or 0xRUNTIME without an image.  Returns buf. */
char *vg_ptr_chain_base(const struct vg_ptr_chain *c, char *buf, size_t size);

#endif
