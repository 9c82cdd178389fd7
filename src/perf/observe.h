/* observe.h - the one observation loop of watch, profile and probe: wait
 * for data, drain it, and stop at the first of: the duration, a stop the
 * data decided (max events, the target's exec, the probe's task lost),
 * Ctrl-C/SIGTERM (a signalfd), or the target's exit.  One stop enum, one
 * set of names in every report.
 *
 * The loop knows nothing of rings or programs: each command hands it a
 * wait (its own fds plus the loop's), a drain that may decide a stop, and
 * an optional periodic tick (progress lines, probe's --interval).  After
 * the loop, the command drains what is left and disarms. */
#ifndef VG_OBSERVE_H
#define VG_OBSERVE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

enum vg_stop {
	VG_STOP_NONE = 0,          /* "running" */
	VG_STOP_DURATION,          /* "duration": --duration elapsed */
	VG_STOP_MAX_EVENTS,        /* "max_events" */
	VG_STOP_INTERRUPTED,       /* "interrupted": SIGINT or SIGTERM */
	VG_STOP_TARGET_EXITED,     /* "target_exited" */
	VG_STOP_TARGET_EXEC,       /* "target_exec": it called exec() (a new program) */
	VG_STOP_TASK_LOST,         /* "probe_task_lost": no thread could carry the probes */
};

/* The report name of a stop ("running" for NONE). */
const char *vg_stop_name(enum vg_stop s);

struct vg_observer {
	void *arg;
	/* Wait at most timeout_ms for data on the command's own fds and on
	 * extra[0..n) (the loop's: stop signal, target exit), filling their
	 * revents.  Required. */
	void (*wait)(void *arg, struct pollfd *extra, size_t n, int timeout_ms);
	/* Consume what arrived; return the stop it decided, or NONE.
	 * Required. */
	enum vg_stop (*drain)(void *arg);
	/* Called every tick_ns (0: never) while running. */
	void (*tick)(void *arg, uint64_t now_ns);
	uint64_t tick_ns;
	/* The longest wait between drains, ms (batching keeps vigil's own
	 * cost low; a ring holds far more). */
	int max_wait_ms;
};

/* Run from start_ns (CLOCK_MONOTONIC, vg_perf_now) until a stop.
 * duration_ms 0: no deadline.  stop_fd: a signalfd (or -1) whose
 * readiness means interrupted; the signal is consumed, so one still
 * pending when the caller unblocks it cannot kill vigil after the report.
 * t: the target (exit through a pidfd, else the identity recheck); NULL
 * when the drain decides the targets' end (profile of several processes).
 * *end_ns: when it stopped, never later than the deadline (a stop noticed
 * after it ends the observation at it: samples are cut there). */
enum vg_stop vg_observe(const struct vg_observer *o, struct vg_target *t, uint64_t start_ns,
			uint64_t duration_ms, int stop_fd, uint64_t *end_ns);

#endif
