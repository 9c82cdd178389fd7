/* observe.c - the observation loop shared by watch, profile and probe:
 * see observe.h.  The order of the checks after each wake-up: what the
 * data decided (it describes the past), then Ctrl-C, then the target's
 * exit, then the deadline. */
#include "perf/observe.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "perf/event.h"

const char *vg_stop_name(enum vg_stop s)
{
	switch (s) {
	case VG_STOP_NONE: return "running";
	case VG_STOP_DURATION: return "duration";
	case VG_STOP_MAX_EVENTS: return "max_events";
	case VG_STOP_INTERRUPTED: return "interrupted";
	case VG_STOP_TARGET_EXITED: return "target_exited";
	case VG_STOP_TARGET_EXEC: return "target_exec";
	case VG_STOP_TASK_LOST: return "probe_task_lost";
	}
	return "?";
}

static bool target_gone(struct vg_target *t, int pidfd, const struct pollfd *p)
{
	bool alive = true, changed = false;

	if (!t)
		return false;   /* several targets: the drain tells */
	if (pidfd >= 0)
		return (p->revents & POLLIN) != 0;
	vg_target_recheck(t, &alive, &changed);
	return !alive || changed;
}

enum vg_stop vg_observe(const struct vg_observer *o, struct vg_target *t, uint64_t start_ns,
			uint64_t duration_ms, int stop_fd, uint64_t *end_ns)
{
	uint64_t deadline = duration_ms ? start_ns + duration_ms * 1000000ull : 0;
	uint64_t next_tick = o->tick && o->tick_ns ? start_ns + o->tick_ns : 0;
	int pidfd = t ? vg_target_pidfd(t) : -1;
	enum vg_stop stop = VG_STOP_NONE;

	while (stop == VG_STOP_NONE) {
		struct pollfd extra[2] = { { .fd = stop_fd, .events = POLLIN },
					   { .fd = pidfd, .events = POLLIN } };
		uint64_t now = vg_perf_now(), wait_ns = (uint64_t)o->max_wait_ms * 1000000ull;

		if (deadline && now >= deadline) {
			stop = VG_STOP_DURATION;
			break;
		}
		if (deadline && deadline - now < wait_ns)
			wait_ns = deadline - now;
		if (next_tick && next_tick > now && next_tick - now < wait_ns)
			wait_ns = next_tick - now;
		o->wait(o->arg, extra, 2, (int)((wait_ns + 999999) / 1000000));
		stop = o->drain(o->arg);
		if (stop != VG_STOP_NONE)
			break;
		if (stop_fd >= 0 && (extra[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(stop_fd, &si, sizeof(si)) < 0)
				si.ssi_signo = 0;
			stop = VG_STOP_INTERRUPTED;
		} else if (target_gone(t, pidfd, &extra[1])) {
			stop = VG_STOP_TARGET_EXITED;
		} else if (deadline && vg_perf_now() >= deadline) {
			stop = VG_STOP_DURATION;
		}
		now = vg_perf_now();
		if (stop == VG_STOP_NONE && next_tick && now >= next_tick) {
			o->tick(o->arg, now);
			while (next_tick <= now)
				next_tick += o->tick_ns;
		}
	}
	*end_ns = vg_perf_now();
	if (deadline && *end_ns > deadline)
		*end_ns = deadline;
	if (pidfd >= 0)
		close(pidfd);
	return stop;
}
