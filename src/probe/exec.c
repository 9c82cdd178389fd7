/* exec.c - the target's process tree during a probe session: its exec
 * (seen by the exec gate in the kernel, or by the COMM record of a dummy
 * perf event) stops the session; the children it creates are counted. */
#include "probe/probe_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/event.h"

/* The process tree: a software dummy event on every thread (inherited
 * by new threads, not by child processes) with task and comm_exec, whose
 * ring wakes on every record, so an exec is seen at once.  Optional: a
 * refusal leaves tree_watched false and the report says so. */
void probe_watch_tree(struct vg_probe_session *s)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.watermark = 1,
		.wakeup_watermark = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	if (vg_perf_set_new(s->t, 8, &s->tree, NULL) < 0)
		return;
	if (vg_perf_set_add(s->tree, &a, NULL) < 0 ||
	    vg_perf_set_attach(s->tree, NULL, NULL) < 0) {
		s->tree = vg_perf_set_free(s->tree);
		return;
	}
	s->stats.tree_watched = true;
}

/* The exec gate: closes both gates in the kernel at the target's exec.
 * Optional: without it (refused, a kernel before 5.7) vigil closes them
 * when it reads the exec, and the report says the counts may hold calls
 * of the new program. */
void probe_arm_exec_gate(struct vg_probe_session *s)
{
	struct vg_error err = { 0 };
	const char *off = getenv("VIGIL_PROBE_NO_EXEC_GATE");

	/* For tests: the path of a kernel without the tracepoint. */
	if (off && *off) {
		snprintf(s->stats.exec_gate_why, sizeof(s->stats.exec_gate_why),
			 "VIGIL_PROBE_NO_EXEC_GATE is set");
		return;
	}
	if (vg_bpf_exec_gate_open(s->counters, s->t->pid, &s->exec_gate_fd, &err) < 0) {
		snprintf(s->stats.exec_gate_why, sizeof(s->stats.exec_gate_why), "%.255s", err.msg);
		return;
	}
	s->stats.exec_gate_armed = true;
}

/* The gates were just opened: an exec before that instant had closed
 * them already, and the opening undid it; close them again (the calls of
 * the new program in between are counted, and the report says so). */
void probe_recheck_exec_gate(struct vg_probe_session *s)
{
	uint64_t k = 0;

	if (s->exec_gate_fd < 0 || vg_bpf_counters_exec_ns(s->counters, &k, NULL) < 0 || !k)
		return;
	vg_bpf_counters_gate(s->counters, false, NULL);
	vg_bpf_counters_gate_returns(s->counters, false, NULL);
	s->exec_reclosed_ns = vg_perf_now();
	snprintf(s->stats.exec_gate_why, sizeof(s->stats.exec_gate_why),
		 "the exec came while the probes were being armed, before they started");
}

/* The new program's name, when no COMM record gave it. */
static void read_comm(pid_t pid, char *out, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	out[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)size, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* How long the exec gate may take to fire after the exec's COMM record. */
#define EXEC_GATE_WAIT_MS 100

/* The exec gate's time, waiting for it while the exec is still in the
 * kernel (0: it did not fire). */
static uint64_t await_exec_gate(struct vg_probe_session *s)
{
	uint64_t until = vg_perf_now() + EXEC_GATE_WAIT_MS * 1000000ull, k = 0;

	while (vg_bpf_counters_exec_ns(s->counters, &k, NULL) == 0 && !k && vg_perf_now() < until)
		usleep(50);
	return k;
}

/* The process called exec() at exec_ns (comm: the new program's name, or
 * NULL).  vigil closes the gates now in any case: the new program may map
 * the probed file again, and the kernel's uprobe filter follows the task
 * to its new mm.  The COMM record of an exec is written in the middle of
 * it (after the old program's other threads are gone), ~100 us before
 * the tracepoint at its end: vigil may read it first, and then waits for
 * the exec gate, which closed the gates before the new program ran. */
static void on_exec(struct vg_probe_session *s, uint64_t exec_ns, const char *comm)
{
	uint64_t now = vg_perf_now(), k = 0;

	if (s->counters) {
		vg_bpf_counters_gate(s->counters, false, NULL);
		vg_bpf_counters_gate_returns(s->counters, false, NULL);
	}
	if (s->exec_gate_fd >= 0 && !s->exec_reclosed_ns)
		k = await_exec_gate(s);
	if (k) {
		s->stats.exec_gate_kernel = true;
		s->stats.exec_gate_ns = k;
	} else {
		s->stats.exec_gate_ns = s->exec_reclosed_ns ? s->exec_reclosed_ns : now;
		if (s->exec_gate_fd >= 0 && !s->stats.exec_gate_why[0])
			snprintf(s->stats.exec_gate_why, sizeof(s->stats.exec_gate_why),
				 "the exec gate did not fire within %d ms", EXEC_GATE_WAIT_MS);
	}
	s->stats.exec_ns = exec_ns;
	if (comm)
		memcpy(s->stats.exec_comm, comm, sizeof(s->stats.exec_comm));
	else
		read_comm(s->t->pid, s->stats.exec_comm, sizeof(s->stats.exec_comm));
	s->t->exec_seen = true;
}

/* The exec gate fired with no COMM record read (the tree was refused, or
 * its record is still to come): the exec is known from the gate. */
void probe_poll_exec_gate(struct vg_probe_session *s)
{
	uint64_t k = 0;

	if (s->stats.exec_ns || s->exec_gate_fd < 0 ||
	    vg_bpf_counters_exec_ns(s->counters, &k, NULL) < 0 || !k)
		return;
	on_exec(s, k, NULL);
}

/* Read the tree's records: an exec, and the children. */
void probe_drain_tree(struct vg_probe_session *s)
{
	const struct vg_perf_stats *st;
	const pid_t *kids;
	size_t n;

	if (!s->tree)
		return;
	vg_perf_set_drain(s->tree, NULL);
	st = vg_perf_set_stats(s->tree);
	if (st->exec_ns && !s->stats.exec_ns)
		on_exec(s, st->exec_ns, st->exec_comm);
	s->stats.children = st->children;
	kids = vg_perf_set_children(s->tree, &n);
	for (size_t i = 0; i < n && i < sizeof(s->stats.child_pids) / sizeof(pid_t); i++)
		s->stats.child_pids[i] = kids[i];
	s->stats.n_child_pids = n < 8 ? n : 8;
}
