/* run.c - a probe session in the observation loop (perf/observe.h):
 * its rings drained, the target's exit and exec, and the probe task's
 * exit (the probes move to another thread). */
#include "probe/probe_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/event.h"

#define POLL_MS_MAX 20   /* also how late a lost probe task is noticed */

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A pidfd of one thread (readable when it exits), or -1. */
static int task_pidfd(pid_t tid)
{
	return (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
}

uint64_t vg_probe_live_calls(struct vg_probe_session *s, size_t loc)
{
	const struct vg_probe_location_result *l = &s->locs[loc];
	uint64_t sum = 0;

	for (size_t i = 0; i < l->loc.n_sites; i++) {
		uint64_t c = 0;

		if (s->counters && vg_bpf_counters_read(s->counters, l->first_site + i, &c, NULL) == 0)
			sum += c;
	}
	return sum;
}

/* Whether the probe task exited: its thread pidfd fired, or its state
 * says so (no pidfd before 6.9; and a leader that exits before its
 * threads stays a zombie whose thread pidfd does not fire, seen on 6.18). */
static bool task_lost(struct vg_probe_session *s, const struct pollfd *task)
{
	if (task->fd >= 0 && (task->revents & (POLLIN | POLLHUP)))
		return true;
	return probe_task_exited(s->probe_task);
}

static bool target_gone(struct vg_probe_session *s, struct pollfd *pidfd)
{
	bool alive = true, changed = false;

	if (pidfd && pidfd->fd >= 0)
		return pidfd->revents & (POLLIN | POLLHUP);
	vg_target_recheck(s->t, &alive, &changed);
	return !alive || changed;
}

/* The loop's view of a probe session (perf/observe.h): its fds are the
 * output rings, the process-tree rings and the probe task's pidfd,
 * polled with the loop's own. */
struct run {
	struct vg_probe_session *s;
	struct pollfd *pfd;            /* [0, 2): the loop's; then ours */
	size_t np, task_fd, tree_first, n_tree;
	bool poll_failed;
	vg_probe_interval_fn interval;
	void *arg;
	struct vg_error *err;
};

static void run_wait(void *arg, struct pollfd *extra, size_t n, int timeout_ms)
{
	struct run *r = arg;

	memcpy(r->pfd, extra, n * sizeof(*extra));
	/* Not expected (the fds are vigil's own); the report is still made,
	 * as after Ctrl-C. */
	if (poll(r->pfd, r->np, timeout_ms) < 0 && errno != EINTR)
		r->poll_failed = true;
	memcpy(extra, r->pfd, n * sizeof(*extra));
}

static enum vg_stop run_drain(void *arg)
{
	struct run *r = arg;
	struct vg_probe_session *s = r->s;

	if (r->poll_failed)
		return VG_STOP_INTERRUPTED;
	probe_drain(s, vg_perf_now());
	probe_drain_tree(s);
	probe_poll_exec_gate(s);
	/* A ring whose owner thread exited polls as hung up for ever: it is
	 * read on the 20 ms wake-ups instead. */
	for (size_t i = r->tree_first; i < r->tree_first + r->n_tree; i++)
		if (r->pfd[i].revents & (POLLHUP | POLLERR))
			r->pfd[i].fd = -1;
	if (s->stats.exec_ns)
		return VG_STOP_TARGET_EXEC;
	if (target_gone(s, r->pfd[1].fd >= 0 ? &r->pfd[1] : NULL))
		return VG_STOP_TARGET_EXITED;
	if (task_lost(s, &r->pfd[r->task_fd])) {
		enum vg_stop stop = VG_STOP_NONE;

		if (probe_rearm(s, r->err) < 0)
			stop = target_gone(s, NULL) ? VG_STOP_TARGET_EXITED : VG_STOP_TASK_LOST;
		if (r->pfd[r->task_fd].fd >= 0)
			close(r->pfd[r->task_fd].fd);
		r->pfd[r->task_fd].fd = task_pidfd(s->probe_task);
		return stop;
	}
	return VG_STOP_NONE;
}

static void run_tick(void *arg, uint64_t now)
{
	struct run *r = arg;

	if (r->interval)
		r->interval(r->s, now - r->s->armed_ns, r->arg);
}

int vg_probe_run(struct vg_probe_session *s, int stop_fd, vg_probe_interval_fn interval, void *arg,
		 struct vg_error *err)
{
	size_t n_out = 0, n_tree = 0;
	const int *out_fds = s->output ? vg_bpf_output_fds(s->output, &n_out) : NULL;
	const int *tree_fds = s->tree ? vg_perf_set_ring_fds(s->tree, &n_tree) : NULL;
	struct run r = { .s = s, .interval = interval, .arg = arg, .err = err, .n_tree = n_tree };
	struct vg_observer o = {
		.arg = &r, .wait = run_wait, .drain = run_drain, .tick = run_tick,
		.tick_ns = s->o.interval_ms * 1000000ull, .max_wait_ms = POLL_MS_MAX,
	};
	uint64_t end;

	r.pfd = calloc(3 + n_out + n_tree, sizeof(*r.pfd));
	if (!r.pfd) {
		vg_probe_disarm(s);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	r.np = 2;                      /* the loop's: stop signal, target exit */
	/* The probe task's exit (see rearm): a thread pidfd where the kernel
	 * has them (6.9+), and its state read at every wake-up.  The
	 * events' own fds cannot tell: perf_poll reports POLLHUP for any
	 * event without a ring. */
	r.task_fd = r.np;
	r.pfd[r.np++] = (struct pollfd){ .fd = task_pidfd(s->probe_task), .events = POLLIN };
	for (size_t i = 0; i < n_out; i++)
		r.pfd[r.np++] = (struct pollfd){ .fd = out_fds[i], .events = POLLIN };
	r.tree_first = r.np;
	for (size_t i = 0; i < n_tree; i++)
		r.pfd[r.np++] = (struct pollfd){ .fd = tree_fds[i], .events = POLLIN };
	s->stop = vg_observe(&o, s->t, s->armed_ns, s->o.duration_ms, stop_fd, &end);
	s->stopped_ns = vg_perf_now();
	if (r.pfd[r.task_fd].fd >= 0)
		close(r.pfd[r.task_fd].fd);
	free(r.pfd);
	vg_probe_disarm(s);
	return 0;
}
