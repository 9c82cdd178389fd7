/* arm.c - the probes' life in a session: programs loaded, uprobes opened
 * on a live thread of the target, the gates opened at one instant,
 * re-arming when that thread exits, disarming and the code read back.
 * See probe.h for the order and why. */
#include "probe/probe_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "perf/event.h"

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

/* Gone: unreadable, a zombie or dead.  (A task merely exiting is not
 * gone yet: when the whole process exits, that is the target's exit.) */
bool probe_task_exited(pid_t tid)
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
int probe_move_to_live_thread(struct vg_probe_session *s, struct vg_error *err)
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
	const struct vg_probe_location_result *l = &s->locs[s->sites[i].location];

	if (!ret)
		for (size_t k = 0; k < VG_PROBE_MAX_ARGS && k < VG_BPF_MAX_MEM_ARGS; k++)
			spec.mem[k] = s->sites[i].usdt_mem[k];

	/* The calls seen go to a second slot per site, after the sites'. */
	if (!ret && l->n_filter) {
		spec.terms = l->filter;
		spec.n_terms = (uint32_t)l->n_filter;
		spec.all_slot = (uint32_t)(s->n_sites + i);
		spec.record_dropped = s->sites[i].result.has_return;
	}

	return vg_bpf_prog_load(&spec, s->counters, ret || probe_recording(&s->o) ? s->output : NULL,
				prog, err);
}

static int open_probe(struct vg_probe_session *s, size_t i, bool ret, int *fd,
		      struct vg_error *err)
{
	struct site_state *ss = &s->sites[i];
	int r = vg_uprobe_open(ss->site->path, ss->site->file_offset, ss->site->ref_ctr_offset, ret,
			       s->probe_task,
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

int vg_probe_arm(struct vg_probe_session *s, struct vg_error *err)
{
	int type, bit, r;

	r = vg_uprobe_pmu(&type, &bit, err);
	if (r < 0)
		return r;
	r = vg_bpf_counters_new(s->o.filter ? 2 * s->n_sites : s->n_sites, s->o.per_thread, 65536, &s->counters, err);
	if (r >= 0 && probe_recording(&s->o))
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
	if (r >= 0 && probe_task_exited(s->probe_task))
		r = probe_move_to_live_thread(s, err);
	if (r >= 0)
		r = open_all(s, err);
	if (r == -ESRCH && kill(s->t->pid, 0) == 0 && probe_move_to_live_thread(s, NULL) == 0) {
		close_probes(s, false);
		close_probes(s, true);
		vg_error_clear(err);
		r = open_all(s, err);
	}
	if (r >= 0) {
		probe_watch_tree(s);
		probe_arm_exec_gate(s);
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
	probe_recheck_exec_gate(s);
	s->armed_ns = vg_perf_now();
	return 0;
}

/* Whether tid is the only thread pid still lists: its exit is the
 * process's, and no other thread can have run a probed call after it. */
static bool sole_thread(const struct vg_probe_session *s, pid_t tid)
{
	pid_t *tids = NULL;
	size_t n = 0;
	bool sole;

	if (vg_target_threads(s->t, &tids, &n, NULL) < 0)
		return true;   /* the process is gone */
	sole = n == 0 || (n == 1 && tids[0] == tid);
	free(tids);
	return sole;
}

/* The kernel runs a probe's program for hits in the mm of the task the
 * event was opened on; when that task exits (pthread_exit in main) the
 * program is not run any more.  Open every event again on a live thread
 * (returns first), closing each old one as its new one is in:
 * the calls in between are missing, and the report says so.  Returns 0,
 * or -ESRCH when no thread is left (the process is exiting).  A probe
 * task that was the process's last thread ended with it: nothing was
 * missed, and that is not counted as a move (a single-threaded target's
 * exit seen by the thread's pidfd before the process's). */
int probe_rearm(struct vg_probe_session *s, struct vg_error *err)
{
	pid_t old = s->probe_task;
	int r;

	if (sole_thread(s, old))
		return vg_error_set(err, -ESRCH, "thread %d was the last of pid %d", (int)old,
				    (int)s->t->pid);
	r = probe_move_to_live_thread(s, err);
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
	if (r < 0) {
		s->stats.rearm_failures++;
		if (err)
			snprintf(s->stats.rearm_why, sizeof(s->stats.rearm_why), "%.255s", err->msg);
		return r;
	}
	s->stats.rearms++;
	s->stats.rearmed_on = s->probe_task;
	return 0;
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

	if (probe_task_exited(reader) && probe_move_to_live_thread(s, NULL) == 0)
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

		probe_drain(s, now);
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
	probe_drain_tree(s);
	probe_poll_exec_gate(s);
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
	probe_drain(s, UINT64_MAX);
	close_probes(s, false);
	for (size_t i = 0; i < s->n_sites; i++) {
		uint64_t c = 0;

		if (s->counters && vg_bpf_counters_read(s->counters, i, &c, NULL) == 0)
			s->sites[i].result.calls = c;
		s->locs[s->sites[i].location].calls += s->sites[i].result.calls;
		if (s->counters && s->o.filter && vg_bpf_counters_read(s->counters, s->n_sites + i, &c, NULL) == 0)
			s->locs[s->sites[i].location].calls_seen += c;
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
	probe_drain(s, UINT64_MAX);
	if (s->output) {
		struct vg_bpf_output_stats os;

		vg_bpf_output_stats(s->output, &os);
		s->stats.records_lost = os.lost;
		s->stats.records_malformed += os.malformed + os.dropped_nomem;
	}
	for (size_t i = 0; s->pairing && i < s->n_locs; i++)
		vg_pairing_site(s->pairing, (uint32_t)i, s->stopped_ns, &s->locs[i].pairing);
	probe_collect_stacks(s);
	/* The probes live on one task: if it exited (since the last look)
	 * while its process went on, the kernel stopped calling the programs. */
	if (s->stop != VG_STOP_TARGET_EXITED && probe_task_exited(s->probe_task) && kill(s->t->pid, 0) == 0)
		s->stats.leader_exited = true;
	if (s->stats.exec_ns)
		snprintf(s->stats.code_why, sizeof(s->stats.code_why),
			 "the process called exec(): its memory is another program's");
	else if (s->stop != VG_STOP_TARGET_EXITED)
		check_code_restored(s);
	else
		snprintf(s->stats.code_why, sizeof(s->stats.code_why), "the target exited");
}
