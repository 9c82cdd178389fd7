/* wall.h - vigil stack --every: a wall-clock profile.  Every period, one
 * snapshot of every thread (capture.h), running and blocked alike; each
 * thread's stack is added to a stack trie (stacktrie/stacks.h) with a leaf
 * frame that names what it waits for (facts.h: "[mutex g_lock]", "[read
 * tcp 127.0.0.1:P -> ...]", "[sleep]", "[running]"), so the profile's
 * writers (report/stack_format.h) show where wall time goes, off-CPU time
 * included, without a scheduler tracer.  The wait is classified from the
 * system call and the frames already captured; kernel stacks are not
 * read, and the fd describer rereads /proc/net only when an I/O wait
 * names a socket.
 *
 * Resolution: one sample per thread per period; a wait shorter than the
 * period is seen in proportion to how often it is in progress at a tick,
 * and a snapshot that takes longer than the period delays the next tick
 * (counted: late_ticks). */
#ifndef VG_STACK_WALL_H
#define VG_STACK_WALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktrie/stacks.h"
#include "stack/capture.h"
#include "stack/facts.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "util/error.h"

struct vg_stack_wall_opts {
	uint64_t every_ms;          /* period, >= 1 */
	uint64_t duration_ms;       /* >= every_ms */
	const pid_t *tids;          /* only these (n_tids > 0), else all */
	size_t n_tids;
	struct vg_stack_facts_reader *facts;  /* borrowed, required */
};

struct vg_stack_wall_stats {
	uint64_t snapshots;         /* ticks taken */
	uint64_t samples;           /* thread stacks added */
	uint64_t late_ticks;        /* a snapshot outlasted the period */
	uint64_t none;              /* threads with no stack (how none) */
	uint64_t cut;               /* stacks whose walk did not complete */
	uint64_t cut_why[VG_UNWIND_NSTOPS];
	uint64_t by_state[8];       /* R S D T t I Z other */
	uint64_t by_wait[VG_WAIT_NKINDS];   /* samples per wait kind */
	uint64_t start_ns, duration_ns;   /* CLOCK_MONOTONIC */
	uint64_t start_wall_ns;     /* CLOCK_REALTIME of the first tick */
	bool target_exited;
	bool interrupted;
};

/* Sample until duration elapses, stop_fd (a signalfd, or -1) is readable,
 * or the target exits (not an error: target_exited).  Stacks go into out
 * (created by the caller).  0, or -ENOMEM, -ESRCH (gone before the first
 * tick) with err. */
int vg_stack_wall_run(struct vg_target *t, struct vg_symbolizer *sym,
		      struct vg_stack_capture *cap, const struct vg_stack_wall_opts *o,
		      int stop_fd, struct vg_stacks *out, struct vg_stack_wall_stats *st,
		      struct vg_error *err);

/* "R" -> 0 ... as by_state indexes them: "running", "sleeping", ... */
const char *vg_stack_wall_state_name(size_t i);

#endif
