/* probe.c - a vigil probe session: resolve, arm, drain, disarm, results.
 * See probe.h for the order of arming and disarming and why. */
#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "perf/event.h"
#include "util/vec.h"

#define STACK_MAX_FRAMES 128
#define STACKS_MAX_DISTINCT 65536
#define POLL_MS_MAX 20   /* also how late a lost probe task is noticed */

/* Distinct stacks of one location, open addressing on a hash of the ips. */
struct stack_entry {
	uint64_t hash;
	struct vg_probe_stack st;
};
struct stack_table {
	struct stack_entry *slots;
	size_t cap, used;
	uint64_t dropped;            /* stacks beyond STACKS_MAX_DISTINCT */
};

struct site_state {
	struct vg_probe_site *site;  /* borrowed from its location */
	size_t location;
	int entry_fd, return_fd;
	int entry_prog, return_prog;   /* kept for a re-arm */
	struct vg_probe_site_result result;
};

struct vg_probe_session {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	struct vg_probe_opts o;
	struct vg_probe_location_result *locs;
	size_t n_locs;
	struct site_state *sites;
	size_t n_sites;
	struct vg_bpf_counters *counters;
	struct vg_bpf_output *output;
	struct vg_pairing *pairing;  /* by location index */
	struct stack_table *stacks;  /* per location */
	struct vg_unwinder *unwinder;
	struct vg_bpf_thread_count *threads;
	size_t n_threads;
	uint64_t threads_dropped;
	struct vg_probe_stats stats;
	enum vg_stop stop;
	uint64_t armed_ns, stopped_ns;
	bool armed;
	pid_t probe_task;            /* the task the events are opened on */
	struct vg_perf_set *tree;    /* exec and fork records (NULL: none) */
	int exec_gate_fd;            /* the exec gate's raw tracepoint, or -1 */
	/* An exec came while the probes were armed, before the gates
	 * opened: opening them undid the exec gate's closing, and vigil
	 * closed them again at this time. */
	uint64_t exec_reclosed_ns;
};

static bool recording(const struct vg_probe_opts *o)
{
	return o->latency || o->n_args || o->stacks;
}

/* --latency needs the function's entry: a return probe elsewhere would
 * hijack a return address that is not the function's own. */
static void decide_latency(struct vg_probe_location_result *l)
{
	/* Its code may sit at the start of the enclosing function, but the
	 * line's time is not that function's. */
	if (l->loc.is_file_line) {
		l->latency_why = "a FILE:LINE location is a line, not a function: there is no return to time";
		return;
	}
	for (size_t i = 0; i < l->loc.n_sites; i++) {
		const struct vg_probe_site *st = &l->loc.sites[i];

		if (!st->function) {
			l->latency_why = "no function symbol covers the address, so there is no return to measure";
			return;
		}
		if (st->function_offset != 0) {
			l->latency_why = "not at a function's first instruction: a return probe needs the entry";
			return;
		}
	}
}

static int decide_args(struct vg_probe_session *s, struct vg_probe_location_result *l,
		       struct vg_error *err)
{
	const struct vg_probe_site *st = &l->loc.sites[0];
	struct vg_probe_param params[VG_PROBE_MAX_ARGS];
	size_t n = 0;

	memset(params, 0, sizeof(params));
	if (st->function && st->function_offset == 0 && l->loc.n_sites == 1) {
		int r = vg_probe_params(s->sym, st->function_addr, params, s->o.n_args, &n, err);

		if (r < 0)
			return r;
	} else {
		l->args_why = "not at a function's first instruction: the registers are shown, they are not arguments";
	}
	/* Without DWARF, or not at an entry, or past the parameters: the
	 * raw registers that follow, in hex. */
	for (; n < s->o.n_args; n++) {
		unsigned reg = n ? params[n - 1].reg + 1 : 0;

		if (reg >= VG_PROBE_MAX_ARGS)
			break;
		memset(&params[n], 0, sizeof(params[n]));
		params[n].kind = VG_PARAM_UNKNOWN;
		params[n].size = 8;
		params[n].reg = reg;
	}
	for (size_t i = 0; i < n; i++) {
		l->args[i].param = params[i];
		l->args[i].values = vg_values_new(params[i].kind == VG_PARAM_SIGNED);
		if (!l->args[i].values)
			return vg_error_set(err, -ENOMEM, "out of memory");
		l->n_args++;
	}
	return 0;
}

int vg_probe_new(struct vg_target *t, struct vg_symbolizer *sym, const char *const *specs,
		 size_t n_specs, const struct vg_probe_opts *o, struct vg_probe_session **out,
		 struct vg_error *err)
{
	struct vg_probe_session *s;
	int r = 0;

	*out = NULL;
	if (n_specs == 0 || n_specs > VG_PROBE_MAX_LOCATIONS)
		return vg_error_set(err, -EINVAL, "expected 1 to %d locations, got %zu",
				    VG_PROBE_MAX_LOCATIONS, n_specs);
	if (o->n_args > VG_PROBE_MAX_ARGS)
		return vg_error_set(err, -EINVAL, "--args: at most %d integer arguments are in registers",
				    VG_PROBE_MAX_ARGS);
	s = calloc(1, sizeof(*s));
	if (!s)
		return vg_error_set(err, -ENOMEM, "out of memory");
	s->t = t;
	s->sym = sym;
	s->o = *o;
	if (!s->o.stack_bytes)
		s->o.stack_bytes = 8192;
	/* A hit with a stack copy is ~8 KiB: 1024 pages (4 MiB) per CPU hold
	 * ~500 of them between two drains; 256 pages lost a quarter of the
	 * records of a tight loop. */
	if (!s->o.ring_pages)
		s->o.ring_pages = s->o.stacks ? 1024 : 256;
	s->probe_task = t->mm_pid ? t->mm_pid : t->pid;
	s->exec_gate_fd = -1;
	s->locs = calloc(n_specs, sizeof(*s->locs));
	if (!s->locs) {
		free(s);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	s->n_locs = n_specs;
	for (size_t i = 0; i < n_specs && r >= 0; i++) {
		struct vg_probe_location_result *l = &s->locs[i];

		r = vg_probe_resolve(specs[i], sym, &l->loc, err);
		if (r < 0)
			break;
		l->first_site = s->n_sites;
		s->n_sites += l->loc.n_sites;
		if (s->n_sites > VG_PROBE_MAX_SITES) {
			r = vg_error_set(err, -E2BIG, "%zu probe sites (at most %d): '%s' expands to %zu",
					 s->n_sites, VG_PROBE_MAX_SITES, specs[i], l->loc.n_sites);
			break;
		}
		if (o->latency)
			decide_latency(l);
		if (o->n_args)
			r = decide_args(s, l, err);
	}
	if (r >= 0) {
		s->sites = calloc(s->n_sites, sizeof(*s->sites));
		if (!s->sites)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0, k = 0; r >= 0 && i < s->n_locs; i++) {
		for (size_t j = 0; j < s->locs[i].loc.n_sites; j++, k++) {
			s->sites[k].site = &s->locs[i].loc.sites[j];
			s->sites[k].location = i;
			s->sites[k].entry_fd = -1;
			s->sites[k].return_fd = -1;
			s->sites[k].entry_prog = -1;
			s->sites[k].return_prog = -1;
			s->sites[k].result.has_return = o->latency && !s->locs[i].latency_why;
		}
	}
	/* One per-thread stack pairs every location: the same entry twice
	 * (foo and 0xADDR-of-foo) would pair one location's returns with
	 * the other's entries.  Without --latency the same instruction in
	 * two locations (f f, or f and libc.so.6:f) would count every call
	 * once per location, and the total more than once: refused too. */
	for (size_t i = 0; r >= 0 && i < s->n_sites; i++)
		for (size_t j = i + 1; r >= 0 && j < s->n_sites; j++) {
			const struct site_state *a = &s->sites[i], *b = &s->sites[j];

			if (a->site->runtime_addr != b->site->runtime_addr)
				continue;
			if (a->result.has_return && b->result.has_return)
				r = vg_error_set(err, -EINVAL,
						 "'%s' and '%s' are the same function entry (0x%" PRIx64 "); give it once",
						 s->locs[a->location].loc.input, s->locs[b->location].loc.input,
						 a->site->runtime_addr);
			else if (a->location != b->location)
				r = vg_error_set(err, -EINVAL,
						 "'%s' and '%s' probe the same instruction (0x%" PRIx64 "): each call "
						 "would be counted once per location; give it once",
						 s->locs[a->location].loc.input, s->locs[b->location].loc.input,
						 a->site->runtime_addr);
		}
	if (r >= 0 && o->latency) {
		s->pairing = vg_pairing_new(s->n_locs);
		if (!s->pairing)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (r >= 0 && o->stacks) {
		s->stacks = calloc(s->n_locs, sizeof(*s->stacks));
		if (!s->stacks)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (r < 0) {
		vg_probe_free(s);
		return r;
	}
	*out = s;
	return 0;
}

static void stack_table_clear(struct stack_table *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].st.ips);
		free(t->slots[i].st.exact);
	}
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct vg_probe_session *vg_probe_free(struct vg_probe_session *s)
{
	if (!s)
		return NULL;
	vg_probe_disarm(s);
	for (size_t i = 0; i < s->n_locs; i++) {
		struct vg_probe_location_result *l = &s->locs[i];

		for (size_t j = 0; j < l->n_args; j++)
			vg_values_free(l->args[j].values);
		/* The stacks array borrows the table's entries. */
		free(l->stacks);
		if (s->stacks)
			stack_table_clear(&s->stacks[i]);
		vg_probe_location_clear(&l->loc);
	}
	free(s->locs);
	free(s->sites);
	free(s->stacks);
	free(s->threads);
	vg_pairing_free(s->pairing);
	vg_unwinder_free(s->unwinder);
	vg_bpf_counters_free(s->counters);
	vg_bpf_output_free(s->output);
	free(s);
	return NULL;
}

/* Image paths under /proc/PID/ (map_files, root) die with the task that
 * PID names when it is a leader that exited: go through a live thread's
 * /proc/TID/ instead, the same mm and mount namespace. */
static int repoint_path(char **path, pid_t tid)
{
	const char *p = *path, *rest;
	char *np;

	if (strncmp(p, "/proc/", 6) != 0)
		return 0;
	rest = p + 6 + strspn(p + 6, "0123456789");
	if (rest == p + 6 || *rest != '/')
		return 0;
	if (asprintf(&np, "/proc/%d%s", (int)tid, rest) < 0)
		return -ENOMEM;
	free(*path);
	*path = np;
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A pidfd of one thread (readable when it exits), or -1. */
static int task_pidfd(pid_t tid)
{
	return (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
}

/* Gone: unreadable, a zombie or dead.  (A task merely exiting is not
 * gone yet: when the whole process exits, that is the target's exit.) */
static bool task_exited(pid_t tid)
{
	struct vg_proc_stat st;

	return vg_proc_stat_read(tid, &st) < 0 || st.state == 'Z' || st.state == 'X';
}

/* Fit to carry the probes: readable, not a zombie, not exiting. */
static bool task_alive(pid_t tid)
{
	struct vg_proc_stat st;

	return vg_proc_stat_read(tid, &st) == 0 && st.state != 'Z' && st.state != 'X' &&
	       !(st.flags & VG_PF_EXITING);
}

/* Put the probes on a live thread of the process other than the current
 * probe task (which exited): its /proc/TID/ paths too.  -ESRCH when no
 * thread is left (the process is exiting). */
static int move_to_live_thread(struct vg_probe_session *s, struct vg_error *err)
{
	pid_t *tids = NULL, old = s->probe_task;
	size_t n = 0;

	if (vg_target_threads(s->t, &tids, &n, err) < 0)
		return -ESRCH;
	s->probe_task = 0;
	for (size_t i = 0; i < n && !s->probe_task; i++)
		if (tids[i] != old && task_alive(tids[i]))
			s->probe_task = tids[i];
	free(tids);
	if (!s->probe_task) {
		s->probe_task = old;
		return vg_error_set(err, -ESRCH, "no live thread of pid %d to put the probes on",
				    (int)s->t->pid);
	}
	for (size_t i = 0; i < s->n_sites; i++)
		if (repoint_path(&s->sites[i].site->path, s->probe_task) < 0)
			return vg_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int load_prog(struct vg_probe_session *s, size_t i, bool ret, int *prog,
		     struct vg_error *err)
{
	struct vg_bpf_prog_spec spec = {
		.site = (uint32_t)i,
		.kind = ret ? VG_PROBE_REC_RETURN : VG_PROBE_REC_ENTRY,
		.count = !ret,
		.stack_bytes = !ret && s->o.stacks ? s->o.stack_bytes : 0,
	};

	return vg_bpf_prog_load(&spec, s->counters, ret || recording(&s->o) ? s->output : NULL,
				prog, err);
}

static int open_probe(struct vg_probe_session *s, size_t i, bool ret, int *fd,
		      struct vg_error *err)
{
	struct site_state *ss = &s->sites[i];
	int r = vg_uprobe_open(ss->site->path, ss->site->file_offset, ret, s->probe_task,
			       ret ? ss->return_prog : ss->entry_prog, fd, err);

	/* The program runs from the attach on, enabled or not (the kernel
	 * calls it from the uprobe handler); enabling is for kernels that
	 * would check. */
	if (r >= 0 && vg_uprobe_enable(*fd, true) < 0)
		r = vg_error_set(err, -errno, "cannot enable the probe at 0x%" PRIx64 ": %s",
				 ss->site->runtime_addr, strerror(errno));
	return r;
}

static void close_probes(struct vg_probe_session *s, bool returns);

/* Nothing is recorded until the gates open (returns first), whatever the
 * order of opening. */
static int open_all(struct vg_probe_session *s, struct vg_error *err)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < s->n_sites; i++)
		if (s->sites[i].result.has_return)
			r = open_probe(s, i, true, &s->sites[i].return_fd, err);
	for (size_t i = 0; r >= 0 && i < s->n_sites; i++)
		r = open_probe(s, i, false, &s->sites[i].entry_fd, err);
	return r;
}

/* The process tree: a software dummy event on every thread (inherited
 * by new threads, not by child processes) with task and comm_exec, whose
 * ring wakes on every record, so an exec is seen at once.  Optional: a
 * refusal leaves tree_watched false and the report says so. */
static void watch_tree(struct vg_probe_session *s)
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
static void arm_exec_gate(struct vg_probe_session *s)
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
static void recheck_exec_gate(struct vg_probe_session *s)
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
static void poll_exec_gate(struct vg_probe_session *s)
{
	uint64_t k = 0;

	if (s->stats.exec_ns || s->exec_gate_fd < 0 ||
	    vg_bpf_counters_exec_ns(s->counters, &k, NULL) < 0 || !k)
		return;
	on_exec(s, k, NULL);
}

/* Read the tree's records: an exec, and the children. */
static void drain_tree(struct vg_probe_session *s)
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

int vg_probe_arm(struct vg_probe_session *s, struct vg_error *err)
{
	int type, bit, r;

	r = vg_uprobe_pmu(&type, &bit, err);
	if (r < 0)
		return r;
	r = vg_bpf_counters_new(s->n_sites, s->o.per_thread, 65536, &s->counters, err);
	if (r >= 0 && recording(&s->o))
		r = vg_bpf_output_new(s->o.ring_pages, &s->output, err);
	if (r >= 0 && s->o.stacks)
		r = vg_unwinder_new(s->t->pid, vg_symbolizer_images(s->sym), &s->unwinder, err);
	/* Programs are kept for a re-arm, which then needs no verifier. */
	for (size_t i = 0; r >= 0 && i < s->n_sites; i++) {
		if (s->sites[i].result.has_return)
			r = load_prog(s, i, true, &s->sites[i].return_prog, err);
		if (r >= 0)
			r = load_prog(s, i, false, &s->sites[i].entry_prog, err);
	}
	s->armed = true;   /* from here on, disarm closes what was opened */
	/* The probe task may have exited since vigil attached (the main
	 * thread, pthread_exit): the probes go on a live thread. */
	if (r >= 0 && task_exited(s->probe_task))
		r = move_to_live_thread(s, err);
	if (r >= 0)
		r = open_all(s, err);
	if (r == -ESRCH && kill(s->t->pid, 0) == 0 && move_to_live_thread(s, NULL) == 0) {
		close_probes(s, false);
		close_probes(s, true);
		vg_error_clear(err);
		r = open_all(s, err);
	}
	if (r >= 0) {
		watch_tree(s);
		arm_exec_gate(s);
	}
	/* Every probe starts now, at one instant: attaching took tens of ms
	 * per probe (the kernel waits for a grace period). */
	if (r >= 0)
		r = vg_bpf_counters_gate_returns(s->counters, true, err);
	if (r >= 0)
		r = vg_bpf_counters_gate(s->counters, true, err);
	if (r < 0) {
		vg_probe_disarm(s);
		return r;
	}
	recheck_exec_gate(s);
	s->armed_ns = vg_perf_now();
	return 0;
}

/* ---- records ---- */

static uint64_t hash_ips(const uint64_t *ips, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int stack_table_grow(struct stack_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct stack_entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].hash)
			continue;
		for (j = t->slots[i].hash & (cap - 1); slots[j].hash; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static void stack_table_add(struct stack_table *t, const uint64_t *ips, const bool *exact, size_t n)
{
	uint64_t h = hash_ips(ips, n);
	size_t j;

	if ((t->used + 1) * 2 > t->cap && stack_table_grow(t) < 0) {
		t->dropped++;
		return;
	}
	for (j = h & (t->cap - 1); t->slots[j].hash; j = (j + 1) & (t->cap - 1)) {
		struct vg_probe_stack *st = &t->slots[j].st;

		if (t->slots[j].hash == h && st->n == n && memcmp(st->ips, ips, n * sizeof(*ips)) == 0) {
			st->count++;
			return;
		}
	}
	if (t->used >= STACKS_MAX_DISTINCT) {
		t->dropped++;
		return;
	}
	t->slots[j].st.ips = malloc(n * sizeof(*ips));
	t->slots[j].st.exact = malloc(n * sizeof(*exact));
	if (!t->slots[j].st.ips || !t->slots[j].st.exact) {
		free(t->slots[j].st.ips);
		free(t->slots[j].st.exact);
		t->slots[j].st.ips = NULL;
		t->slots[j].st.exact = NULL;
		t->dropped++;
		return;
	}
	memcpy(t->slots[j].st.ips, ips, n * sizeof(*ips));
	memcpy(t->slots[j].st.exact, exact, n * sizeof(*exact));
	t->slots[j].st.n = n;
	t->slots[j].st.count = 1;
	t->slots[j].hash = h;
	t->used++;
}

/* The record's pt_regs as perf register indices (what the unwinder takes). */
static void record_regs(const struct vg_probe_record *r, struct vg_regs *regs)
{
	static const struct { uint8_t perf, pt; } map[] = {
		{ 0, VG_PR_AX }, { 1, VG_PR_BX }, { 2, VG_PR_CX }, { 3, VG_PR_DX },
		{ 4, VG_PR_SI }, { 5, VG_PR_DI }, { 6, VG_PR_BP }, { 7, VG_PR_SP },
		{ 8, VG_PR_IP }, { 9, VG_PR_FLAGS }, { 10, VG_PR_CS }, { 11, VG_PR_SS },
		{ 16, VG_PR_R8 }, { 17, VG_PR_R9 }, { 18, VG_PR_R10 }, { 19, VG_PR_R11 },
		{ 20, VG_PR_R12 }, { 21, VG_PR_R13 }, { 22, VG_PR_R14 }, { 23, VG_PR_R15 },
	};

	memset(regs, 0, sizeof(*regs));
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		regs->regs[map[i].perf] = r->regs[map[i].pt];
		regs->mask |= 1ull << map[i].perf;
	}
}

/* rdi rsi rdx rcx r8 r9 */
static const enum vg_probe_reg arg_regs[VG_PROBE_MAX_ARGS] = {
	VG_PR_DI, VG_PR_SI, VG_PR_DX, VG_PR_CX, VG_PR_R8, VG_PR_R9,
};

/* The register's value as the parameter's type holds it: only its low
 * size bytes are defined (the ABI leaves the rest unspecified). */
static uint64_t arg_value(const struct vg_probe_param *p, uint64_t raw)
{
	unsigned bits = p->size && p->size < 8 ? p->size * 8u : 64u;
	uint64_t v = bits < 64 ? raw & ((1ull << bits) - 1) : raw;

	if (p->kind == VG_PARAM_SIGNED && bits < 64 && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

static void on_entry(struct vg_probe_session *s, const struct vg_probe_record *r, size_t len,
		     struct vg_probe_location_result *l, size_t loc)
{
	uint32_t tid = (uint32_t)r->pid_tgid;

	if (s->pairing && s->sites[r->site].result.has_return)
		vg_pairing_entry(s->pairing, tid, (uint32_t)loc, r->time_ns);
	for (size_t i = 0; i < l->n_args; i++)
		vg_values_add(l->args[i].values,
			      arg_value(&l->args[i].param, r->regs[arg_regs[l->args[i].param.reg]]));
	if (s->stacks && s->unwinder) {
		struct vg_regs regs;
		uint64_t ips[STACK_MAX_FRAMES];
		bool exact[STACK_MAX_FRAMES];
		size_t n = 0, have = len - offsetof(struct vg_probe_record, stack);
		enum vg_unwind_stop why = VG_UNWIND_OUTERMOST;

		if (have > r->stack_len)
			have = r->stack_len;
		record_regs(r, &regs);
		vg_unwind_dwarf(s->unwinder, &regs, r->stack, have, ips, exact, STACK_MAX_FRAMES, &n, &why);
		l->stack_records++;
		if ((unsigned)why < 8)
			l->unwind_stop[why]++;
		if (n)
			stack_table_add(&s->stacks[loc], ips, exact, n);
	}
}

static void on_record(const struct vg_probe_record *r, size_t len, void *arg)
{
	struct vg_probe_session *s = arg;
	size_t loc;

	s->stats.records++;
	/* Only the target's mm reaches the programs (the kernel's uprobe
	 * filter), so no pid check: the tgid is in the initial PID namespace,
	 * which need not be vigil's. */
	if (r->site >= s->n_sites) {
		s->stats.records_malformed++;
		return;
	}
	loc = s->sites[r->site].location;
	if (r->kind == VG_PROBE_REC_ENTRY) {
		on_entry(s, r, len, &s->locs[loc], loc);
	} else if (r->kind == VG_PROBE_REC_RETURN && s->pairing) {
		vg_pairing_return(s->pairing, (uint32_t)r->pid_tgid, (uint32_t)loc, r->time_ns, NULL);
	} else {
		s->stats.records_malformed++;
	}
}

static void drain(struct vg_probe_session *s, uint64_t until)
{
	if (s->output)
		vg_bpf_output_drain(s->output, until, on_record, s);
}

/* ---- run ---- */

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

/* The kernel runs a probe's program for hits in the mm of the task the
 * event was opened on; when that task exits (pthread_exit in main) the
 * program is not run any more.  Open every event again on a live thread
 * (returns first), closing each old one as its new one is in:
 * the calls in between are missing, and the report says so.  Returns 0,
 * or -ESRCH when no thread is left (the process is exiting). */
static int rearm(struct vg_probe_session *s, struct vg_error *err)
{
	int r = move_to_live_thread(s, err);

	for (size_t pass = 0; pass < 2 && r >= 0; pass++) {
		for (size_t i = 0; i < s->n_sites && r >= 0; i++) {
			struct site_state *ss = &s->sites[i];
			bool ret = pass == 0;
			int *fd = ret ? &ss->return_fd : &ss->entry_fd, nfd = -1;

			if (ret && !ss->result.has_return)
				continue;
			r = open_probe(s, i, ret, &nfd, err);
			if (r < 0) {
				if (nfd >= 0)
					close(nfd);
				break;
			}
			close(*fd);
			*fd = nfd;
		}
	}
	s->stats.rearms++;
	s->stats.rearmed_on = s->probe_task;
	if (r < 0 && err)
		snprintf(s->stats.rearm_why, sizeof(s->stats.rearm_why), "%.255s", err->msg);
	return r;
}

/* Whether the probe task exited: its thread pidfd fired, or its state
 * says so (no pidfd before 6.9; and a leader that exits before its
 * threads stays a zombie whose thread pidfd does not fire, seen on 6.18). */
static bool task_lost(struct vg_probe_session *s, const struct pollfd *task)
{
	if (task->fd >= 0 && (task->revents & (POLLIN | POLLHUP)))
		return true;
	return task_exited(s->probe_task);
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
	drain(s, vg_perf_now());
	drain_tree(s);
	poll_exec_gate(s);
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

		if (rearm(s, r->err) < 0)
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

/* ---- disarm and results ---- */

static int cmp_stack_count(const void *a, const void *b)
{
	const struct vg_probe_stack *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->n < y->n ? -1 : x->n > y->n;
}

static void collect_stacks(struct vg_probe_session *s)
{
	for (size_t i = 0; s->stacks && i < s->n_locs; i++) {
		struct stack_table *t = &s->stacks[i];
		struct vg_probe_location_result *l = &s->locs[i];

		l->stacks_dropped = t->dropped;
		l->stacks = calloc(t->used ? t->used : 1, sizeof(*l->stacks));
		if (!l->stacks) {
			l->stacks_dropped = l->stack_records;
			continue;
		}
		for (size_t j = 0; j < t->cap; j++)
			if (t->slots[j].hash)
				l->stacks[l->n_stacks++] = t->slots[j].st;
		qsort(l->stacks, l->n_stacks, sizeof(*l->stacks), cmp_stack_count);
	}
}

/* Does mem differ from file only by int3 (0xcc) bytes where the file has
 * something else: breakpoints of other uprobes still armed? */
static bool only_int3s(const uint8_t *mem, const uint8_t *file, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mem[i] != file[i] && mem[i] != 0xcc)
			return false;
	return true;
}

/* Read each site's bytes back from the target and compare them with the
 * file's: the kernel put its breakpoint in the target's copy of the page
 * and must have put the original back when the last event closed. */
static void check_code_restored(struct vg_probe_session *s)
{
	/* Through a live thread: the probe task may be a zombie leader. */
	pid_t reader = s->probe_task;

	if (task_exited(reader) && move_to_live_thread(s, NULL) == 0)
		reader = s->probe_task;
	s->stats.code_restored = true;
	for (size_t i = 0; i < s->n_sites; i++) {
		const struct vg_probe_site *st = s->sites[i].site;
		uint8_t mem[16], file[16];
		struct iovec l = { mem, sizeof(mem) }, r = { (void *)(uintptr_t)st->runtime_addr, sizeof(mem) };
		ssize_t got = process_vm_readv(reader, &l, 1, &r, 1, 0);
		int fd = open(st->path, O_RDONLY | O_CLOEXEC);
		ssize_t fgot = fd >= 0 ? pread(fd, file, sizeof(file), (off_t)st->file_offset) : -1;

		if (fd >= 0)
			close(fd);
		if (got <= 0 || fgot <= 0) {
			snprintf(s->stats.code_why, sizeof(s->stats.code_why),
				 "the bytes at 0x%" PRIx64 " could not be read back (%s)", st->runtime_addr,
				 got <= 0 ? "target memory" : "the file");
			s->stats.code_restored = false;
			continue;
		}
		if (fgot < got)
			got = fgot;
		s->stats.code_checked++;
		if (memcmp(mem, file, (size_t)got) == 0)
			continue;
		if (only_int3s(mem, file, (size_t)got)) {
			/* The kernel does not hide a uprobe's int3 from readers of
			 * the target's memory: it writes it into the target's own
			 * copy of the page (uprobe_write_opcode) and puts the
			 * original back when the last uprobe on that instruction
			 * closes.  Another tool's (a second vigil probe, perf,
			 * bpftrace) still being armed is not a failure to restore. */
			s->stats.code_foreign_int3++;
			if (!s->stats.code_why[0])
				snprintf(s->stats.code_why, sizeof(s->stats.code_why),
					 "an int3 is still at 0x%" PRIx64 " and every other byte equals the file: "
					 "another uprobe on that instruction (a second vigil probe, perf, bpftrace) "
					 "is still armed", st->runtime_addr);
			continue;
		}
		s->stats.code_restored = false;
		snprintf(s->stats.code_why, sizeof(s->stats.code_why),
			 "the code at 0x%" PRIx64 " differs from the file after the probes were closed",
			 st->runtime_addr);
	}
}

static void close_probes(struct vg_probe_session *s, bool returns)
{
	for (size_t i = 0; i < s->n_sites; i++) {
		int *fd = returns ? &s->sites[i].return_fd : &s->sites[i].entry_fd;

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

/* How long calls open at the stop may take to return and still be timed. */
#define RETURN_GRACE_MS 200

static uint64_t calls_open(struct vg_probe_session *s)
{
	uint64_t open = 0;

	for (size_t i = 0; s->pairing && i < s->n_locs; i++) {
		struct vg_pairing_site_stats st;

		vg_pairing_site(s->pairing, (uint32_t)i, 0, &st);
		open += st.in_flight;
	}
	return open;
}

static void await_returns(struct vg_probe_session *s)
{
	uint64_t until = vg_perf_now() + RETURN_GRACE_MS * 1000000ull;

	if (!s->pairing || s->stop == VG_STOP_TARGET_EXITED)
		return;
	for (;;) {
		uint64_t now = vg_perf_now();

		drain(s, now);
		if (!calls_open(s) || now >= until)
			return;
		usleep(2000);
	}
}

void vg_probe_disarm(struct vg_probe_session *s)
{
	if (!s || !s->armed)
		return;
	s->armed = false;
	if (!s->stopped_ns)
		s->stopped_ns = vg_perf_now();
	/* Every entry program stops at one instant (the gate): the counts
	 * are final, and a return with no open entry after it is of a call
	 * entered after the stop. */
	if (s->pairing)
		vg_pairing_stop(s->pairing, vg_perf_now());
	if (s->counters)
		vg_bpf_counters_gate(s->counters, false, NULL);
	drain_tree(s);
	poll_exec_gate(s);
	s->tree = vg_perf_set_free(s->tree);
	if (s->exec_gate_fd >= 0)
		close(s->exec_gate_fd);
	s->exec_gate_fd = -1;
	/* Calls entered before the stop may still return: for a moment,
	 * while none is left open, take their returns; then the return
	 * gate closes too, and what is still running is in flight.  From
	 * then on no record is written, however long the closes take
	 * (~50 ms per event here, one after another whatever the caller
	 * does: the kernel waits for a grace period under a lock it holds
	 * for every uprobe event; closes from 10 threads still took 50 ms
	 * apiece), so no ring fills up with the returns of calls entered
	 * after the stop. */
	await_returns(s);
	if (s->counters)
		vg_bpf_counters_gate_returns(s->counters, false, NULL);
	drain(s, UINT64_MAX);
	close_probes(s, false);
	for (size_t i = 0; i < s->n_sites; i++) {
		uint64_t c = 0;

		if (s->counters && vg_bpf_counters_read(s->counters, i, &c, NULL) == 0)
			s->sites[i].result.calls = c;
		s->locs[s->sites[i].location].calls += s->sites[i].result.calls;
	}
	if (s->counters && s->o.per_thread)
		vg_bpf_counters_threads(s->counters, &s->threads, &s->n_threads, &s->threads_dropped, NULL);
	close_probes(s, true);
	for (size_t i = 0; i < s->n_sites; i++) {
		if (s->sites[i].entry_prog >= 0)
			close(s->sites[i].entry_prog);
		if (s->sites[i].return_prog >= 0)
			close(s->sites[i].return_prog);
		s->sites[i].entry_prog = s->sites[i].return_prog = -1;
	}
	drain(s, UINT64_MAX);
	if (s->output) {
		struct vg_bpf_output_stats os;

		vg_bpf_output_stats(s->output, &os);
		s->stats.records_lost = os.lost;
		s->stats.records_malformed += os.malformed + os.dropped_nomem;
	}
	for (size_t i = 0; s->pairing && i < s->n_locs; i++)
		vg_pairing_site(s->pairing, (uint32_t)i, s->stopped_ns, &s->locs[i].pairing);
	collect_stacks(s);
	/* The probes live on one task: if it exited (since the last look)
	 * while its process went on, the kernel stopped calling the programs. */
	if (s->stop != VG_STOP_TARGET_EXITED && task_exited(s->probe_task) && kill(s->t->pid, 0) == 0)
		s->stats.leader_exited = true;
	if (s->stats.exec_ns)
		snprintf(s->stats.code_why, sizeof(s->stats.code_why),
			 "the process called exec(): its memory is another program's");
	else if (s->stop != VG_STOP_TARGET_EXITED)
		check_code_restored(s);
	else
		snprintf(s->stats.code_why, sizeof(s->stats.code_why), "the target exited");
}

/* ---- accessors ---- */

size_t vg_probe_n_locations(const struct vg_probe_session *s) { return s->n_locs; }
size_t vg_probe_n_sites(const struct vg_probe_session *s) { return s->n_sites; }

struct vg_probe_location_result *vg_probe_location(struct vg_probe_session *s, size_t i)
{
	return i < s->n_locs ? &s->locs[i] : NULL;
}

const struct vg_probe_site_result *vg_probe_site(const struct vg_probe_session *s, size_t i)
{
	return i < s->n_sites ? &s->sites[i].result : NULL;
}

struct vg_latency *vg_probe_latency(struct vg_probe_session *s, size_t loc)
{
	return s->pairing && loc < s->n_locs && !s->locs[loc].latency_why
		? vg_pairing_latency(s->pairing, (uint32_t)loc) : NULL;
}

const struct vg_bpf_thread_count *vg_probe_thread_counts(const struct vg_probe_session *s,
							 size_t *n, uint64_t *dropped)
{
	*n = s->n_threads;
	if (dropped)
		*dropped = s->threads_dropped;
	return s->threads;
}

const struct vg_probe_stats *vg_probe_stats(const struct vg_probe_session *s) { return &s->stats; }
enum vg_stop vg_probe_stop_reason(const struct vg_probe_session *s) { return s->stop; }

uint64_t vg_probe_armed_ns(const struct vg_probe_session *s) { return s->armed_ns; }

uint64_t vg_probe_duration_ns(const struct vg_probe_session *s)
{
	return s->armed_ns && s->stopped_ns > s->armed_ns ? s->stopped_ns - s->armed_ns : 0;
}

const struct vg_probe_opts *vg_probe_opts(const struct vg_probe_session *s) { return &s->o; }
