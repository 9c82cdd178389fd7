/* progress.h - rate-limited progress of long work (snapshots, pointer
 * scans, large reads), for a line on a terminal.
 *
 * libvigil never prints: a long operation takes a struct vg_progress *
 * (NULL: nobody is watching), calls vg_progress_start with its total when
 * it knows it, and counts what it did with vg_progress_add.  At most once
 * per interval, and not before the first interval has passed (work that
 * ends sooner shows nothing), the report function the caller set gets the
 * totals.  vigil's CLI prints them on stderr when it is a terminal
 * (src/cli/progress.c).  Safe from several threads: the count is atomic and
 * one thread wins each interval's report. */
#ifndef VG_UTIL_PROGRESS_H
#define VG_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct vg_progress {
	/* Set by the caller: done of total units (total 0: unknown), after
	 * seconds. */
	void (*report)(void *arg, const char *what, uint64_t done, uint64_t total,
		       double seconds);
	void *arg;
	const char *what;         /* "snapshot", "pointer scan", "read" */
	uint64_t interval_ns;     /* 0: 250 ms */
	/* Kept by vg_progress_*. */
	uint64_t total;
	uint64_t done;            /* atomic */
	uint64_t t0_ns;
	uint64_t next_ns;         /* atomic */
	bool reported;            /* a report was made: the caller clears its line */
};

void vg_progress_start(struct vg_progress *p, uint64_t total);
void vg_progress_add(struct vg_progress *p, uint64_t n);

#endif
