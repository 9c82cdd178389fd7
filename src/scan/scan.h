/* scan.h - first scan and narrowing: find every place in the target's
 * memory that holds a value, then keep the ones that still satisfy a test.
 *
 * The first scan reads the selected regions with process_vm_readv in large
 * batched chunks on several threads (one per online CPU by default) and
 * compares in place; vigil's memory stays bounded by threads x chunk plus
 * the matches.  A page that vanishes or becomes unreadable mid-scan is
 * skipped and counted, never fatal.  Narrowing re-reads only the matched
 * addresses (batched iovecs): it costs O(matches), not O(memory).
 * Never writes to the target. */
#ifndef VG_SCAN_SCAN_H
#define VG_SCAN_SCAN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "scan/matchset.h"
#include "scan/value.h"
#include "target/maps.h"
#include "util/error.h"

/* A selected region larger than this (64 GiB) is not read but counted in
 * regions_too_large: no program keeps values in that much rw memory, and
 * reading a sanitizer's multi-TiB shadow would take hours. */
#define VG_SCAN_MAX_REGION (64ull << 30)

struct vg_scan_stats {
	uint64_t bytes_total;        /* of the selected regions at the start */
	uint64_t bytes_scanned;
	uint64_t regions_scanned;
	uint64_t regions_skipped;    /* wholly unreadable (vanished, PROT_NONE, denied),
				        or too large (below) */
	uint64_t regions_too_large;  /* larger than VG_SCAN_MAX_REGION: not read */
	uint64_t bytes_skipped;      /* unreadable bytes, in any region */
	uint64_t matches;            /* found (or kept, after a narrowing) */
	uint64_t matches_unreadable; /* narrowing: dropped, address no longer readable */
	bool interrupted;            /* *stop became true: the result is partial */
	double seconds;
};

/* Called from the scanning thread that finished a chunk, at most every
 * interval_ms; must be thread-safe and cheap. */
typedef void (*vg_scan_progress_fn)(void *arg, const struct vg_scan_stats *s);

struct vg_scan_opts {
	const struct vg_scan_value *value;
	bool aligned;                 /* only offsets that are multiples of the width
				         (str/bytes: ignored) */
	struct vg_scan_select select;
	unsigned threads;             /* 0: online CPUs */
	/* Bytes per unit of work; 0: default (4 MiB); rounded up to the page
	 * size.  Threads take chunks from a shared counter; each chunk is read
	 * in pieces of at most 256 KiB through one buffer per thread (it stays
	 * in cache between the kernel's copy and the compare). */
	size_t chunk;
	const volatile sig_atomic_t *stop;  /* may be NULL; checked per chunk */
	/* may be NULL; the first report comes after the first chunk, then at
	 * most every interval_ms */
	vg_scan_progress_fn progress;
	void *progress_arg;
	unsigned interval_ms;         /* 0: 200 */
};

/* First scan of pid over the regions of maps that opts->select picks.
 * out is initialised here.  -ESRCH if the process is gone, -EPERM/-EACCES
 * if not allowed to read it at all, -ENOMEM.
 *
 * Numbers match at every byte offset, or only at multiples of the width
 * with opts->aligned; str/bytes patterns at every offset.  A value may
 * span two chunks of one region, never two regions.  Pages that cannot be
 * read (unmapped or made unreadable since maps was read) are skipped one
 * page at a time and counted in bytes_skipped; a region of which nothing
 * could be read counts in regions_skipped.  When interrupted (*stop), the
 * matches of the chunks done are returned, sorted; regions not finished
 * count neither as scanned nor as skipped.  Memory: threads x (256 KiB +
 * width) for the buffers, plus the matches. */
int vg_scan_first(pid_t pid, const struct vg_maps *maps,
		  const struct vg_scan_opts *opts, struct vg_match_set *out,
		  struct vg_scan_stats *st, struct vg_error *err);

/* Re-read every match of set and keep those satisfying n (value is the
 * parsed VALUE for str/bytes EQ); the kept ones get their new value.
 * Unreadable addresses are dropped and counted.  Errors as above; on an
 * error set->n is unchanged, but a part read before the error may already
 * be compacted in place (entries moved, new values): discard the set.
 *
 * str/bytes: value (the VALUE of the first scan) gives each match its
 * length (its pattern's); without it (allowed for CHANGED/UNCHANGED)
 * value_size bytes are compared.  EQ re-matches the match's own pattern
 * (mask-aware); -EINVAL without value.  Numbers: vg_narrow_test.
 *
 * Nearby matches are read with one remote iovec (up to IOV_MAX per
 * process_vm_readv); sets of more than 64 Ki matches are split among the
 * online CPUs.  Cost: about the bytes of the pages holding matches. */
int vg_scan_narrow(pid_t pid, struct vg_match_set *set,
		   const struct vg_scan_value *value, const struct vg_narrow *n,
		   struct vg_scan_stats *st, struct vg_error *err);

/* Re-read the current values of every match without filtering (for
 * display); unreadable ones keep their old value and are reported in
 * readable[i] = false.  readable has set->n entries, values_now
 * set->n * value_size bytes.  str/bytes: value_size bytes are read at each
 * match (a UTF-8 match shorter than the UTF-16 one reads a few bytes past
 * its end). */
int vg_scan_refresh(pid_t pid, const struct vg_match_set *set,
		    uint8_t *values_now, bool *readable, struct vg_error *err);

#endif
