/* capture.c - user stacks of live threads without stopping them: see
 * capture.h for the ways and what each guarantees.
 *
 * Order of one snapshot: one task iterator pass over the whole process
 * (every thread's registers and stack in one read(), in the kernel); the
 * threads it found on a CPU get one perf event each, all opened at once,
 * and a shared wait of at most VG_STACK_PERF_WAIT_MS for their samples; a
 * thread that moved during its read, or went to sleep before its sample
 * came, is taken by a second iterator pass.  Threads the iterator could
 * not give (BPF refused, vigil in another PID namespace) fall back to
 * /proc/TID/syscall.
 *
 * The iterator copies at most 28 KiB of stack per thread (its output
 * buffer is 32 KiB per object, task_regs.bpf.c).  When the walk needs
 * more (stack_end) and the copy stopped at that limit, not at the end of
 * the mapping, the rest up to VG_STACK_MAX_COPY is read with
 * process_vm_readv and the thread's switch counts and state are checked
 * again in /proc/TID/status against the iterator's. */
#include "stack/capture.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "perf/records.h"
#include "perf/ring.h"
#include "perf/bpf_log.h"
#include "stack/task_regs.h"
#include "stack/task_regs.lskel.h"
#include "target/mem.h"
#include "unwind/unwind.h"

#define MAX_NOTES 4
/* perf: the ring holds one sample of up to ~64 KiB */
#define PERF_DATA_PAGES 32
#define PERF_STACK_BYTES 61440u
#define PERF_PERIOD_NS 100000ull  /* 100 us of the thread's CPU time */
/* While waiting for samples, the threads without one are checked for
 * having gone to sleep (/proc/TID/stat) after 250 us, then after twice as
 * long each time up to 2 ms, and at most PERF_LOOKS of them each time (in
 * turn): many runnable threads waiting for a CPU must not turn the wait
 * into a busy loop of /proc reads. */
#define PERF_LOOK_FIRST_US 250
#define PERF_LOOK_MAX_US 2000
#define PERF_LOOKS 32
/* A runnable thread that has not had PERF_PERIOD_NS of CPU time by
 * VG_STACK_PERF_WAIT_MS, or less than a tenth of one CPU over the wait,
 * is waiting for a CPU (a busy machine), not silent: without the
 * iterator (which takes a queued thread at rest), its sample is waited
 * for up to this long in all, its own task clock (the event's count)
 * telling the two apart.  (One period alone was not enough: a thread at
 * nice 19 beside a busy loop had 129 us in 20 ms, in slices too short
 * for the period's timer, and was given up as "running".) */
#define PERF_STARVED_WAIT_MS 250

/* Had the thread less CPU than a queued one gets: ran_ns (perf_ran_ns;
 * UINT64_MAX, unknown, is not starved) in waited_us of waiting. */
static bool perf_starved(uint64_t ran_ns, long waited_us)
{
	return ran_ns < PERF_PERIOD_NS || ran_ns / 100 < (uint64_t)waited_us;
}
/* All general registers, perf indices ax..ip (0-8) and r8..r15 (16-23). */
#define REGS_GENERAL 0xff01ffull

struct vg_stack_capture {
	struct vg_target *t;
	const struct vg_maps *maps;
	struct vg_mem *mem;
	struct vg_unwinder *unw;
	unsigned use;
	struct vg_task_regs_bpf *skel;
	int link_fd;                   /* the iterator attached to the target; -1 */
	uint8_t *iter_buf;
	size_t iter_cap;
	uint8_t *stack;                /* VG_STACK_MAX_COPY scratch */
	const char *notes[MAX_NOTES + 1];
	char note_text[MAX_NOTES][320];
	size_t n_notes;
};

/* Per thread of one snapshot. */
enum pending {
	P_FIRST = 0,     /* not seen yet */
	P_DONE,
	P_RETRY,         /* moved during the iterator read: read again */
	P_RUNNING,       /* on a CPU: perf sample */
	P_FALLBACK,      /* iterator did not give it: /proc/TID/syscall */
};

static void note(struct vg_stack_capture *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct vg_stack_capture *c, const char *fmt, ...)
{
	va_list ap;

	if (c->n_notes >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(c->note_text[c->n_notes], sizeof(c->note_text[0]), fmt, ap);
	va_end(ap);
	c->notes[c->n_notes] = c->note_text[c->n_notes];
	c->n_notes++;
	c->notes[c->n_notes] = NULL;
}

const char *const *vg_stack_capture_notes(const struct vg_stack_capture *c)
{
	return c->notes;
}

const char *vg_stack_how_name(enum vg_stack_how how)
{
	switch (how) {
	case VG_STACK_TASK_ITER: return "task_iter";
	case VG_STACK_PERF_SAMPLE: return "perf_sample";
	case VG_STACK_PROC_SYSCALL: return "proc_syscall";
	case VG_STACK_NONE: break;
	}
	return "none";
}

static int parse_methods(const char *s, unsigned *use, struct vg_error *err)
{
	char buf[128], *save = NULL;

	if (!s || !*s) {
		*use = VG_STACK_USE_ALL;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	*use = 0;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (strcmp(w, "task_iter") == 0)
			*use |= VG_STACK_USE_ITER;
		else if (strcmp(w, "perf_sample") == 0)
			*use |= VG_STACK_USE_PERF;
		else if (strcmp(w, "proc_syscall") == 0)
			*use |= VG_STACK_USE_PROC;
		else
			return vg_error_set(err, -EINVAL, "VIGIL_STACK_METHODS: unknown way '%s' "
					    "(task_iter, perf_sample, proc_syscall)", w);
	}
	return 0;
}

/* ------------------------------------------------------------ the iterator */

/* Which of CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN, which stands for
 * both) this process lacks, as text ("" when it has them): a refusal for
 * want of them comes back from the light skeleton's loader as whatever
 * its first privileged step met (EPERM, or EINVAL and "cannot use
 * helper"), not as one errno. */
static const char *missing_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	bool bpf, perfmon;

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return "";
#define HAS(cap) (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap))
	if (HAS(CAP_SYS_ADMIN))
		return "";
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
#undef HAS
	if (bpf && perfmon)
		return "";
	return bpf ? "CAP_PERFMON" : perfmon ? "CAP_BPF" : "CAP_BPF and CAP_PERFMON";
}

/* The light skeleton's load with the verifier's log, after a refusal:
 * the loader only says errno, the log says why (its last line). */
static void load_refusal_reason(char *out, size_t size)
{
	struct vg_task_regs_bpf *skel = vg_task_regs_bpf__open();
	const size_t log_size = 1u << 20;
	char *log = calloc(1, log_size);

	out[0] = '\0';
	if (skel && log) {
		skel->ctx.log_level = 1;
		skel->ctx.log_size = (uint32_t)log_size;
		skel->ctx.log_buf = (uint64_t)(uintptr_t)log;
		if (vg_task_regs_bpf__load(skel) < 0)
			vg_bpf_log_reason_of(log, log_size, out, size);
	}
	free(log);
	if (skel)
		vg_task_regs_bpf__destroy(skel);
}

/* Loaded through a light skeleton: its loader program runs in the kernel,
 * which relocates the program's field accesses (CO-RE) against the BTF it
 * already holds and finds the iterator's attach point itself.  A libbpf
 * skeleton does both in user space from /sys/kernel/btf/vmlinux: reading
 * and indexing those 5.5 MB was most of a snapshot's fixed cost (a dump of
 * 11 threads took 30.6 ms with it, 14.7 ms now: bench/README.md).  It
 * needs Linux 5.17 (relocations by the kernel); the per-process iterator
 * needs 6.1. */
static void iter_open(struct vg_stack_capture *c)
{
	union bpf_iter_link_info linfo;
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	char reason[200];
	int r;

	c->skel = vg_task_regs_bpf__open();
	if (!c->skel) {
		note(c, "task_iter: cannot open the task iterator's BPF object: %s", strerror(ENOMEM));
		return;
	}
	r = vg_task_regs_bpf__load(c->skel);
	if (r < 0) {
		const char *lacks = missing_caps();

		if (lacks[0]) {
			note(c, "task_iter: the kernel refused the BPF task iterator (%s): it needs "
			     "CAP_BPF and CAP_PERFMON, and this process lacks %s", strerror(-r), lacks);
			goto fail;
		}
		/* Allowed, so the verifier or the kernel's version said no:
		 * the log says which. */
		load_refusal_reason(reason, sizeof(reason));
		note(c, "task_iter: the kernel refused the BPF task iterator (%s)%s%s", strerror(-r),
		     reason[0] ? ": the verifier says: " : "", reason);
		goto fail;
	}
	/* Only the target's threads: the kernel resolves the pid in vigil's
	 * PID namespace (Linux 6.1). */
	memset(&linfo, 0, sizeof(linfo));
	linfo.task.pid = (uint32_t)c->t->pid;
	opts.iter_info = &linfo;
	opts.iter_info_len = sizeof(linfo);
	c->link_fd = bpf_link_create(c->skel->progs.vg_task_regs.prog_fd, 0, BPF_TRACE_ITER, &opts);
	if (c->link_fd < 0) {
		c->link_fd = -1;
		note(c, "task_iter: cannot attach the task iterator to pid %d (%s; a per-process "
		     "task iterator needs Linux 6.1)", (int)c->t->pid, strerror(errno));
		goto fail;
	}
	return;
fail:
	vg_task_regs_bpf__destroy(c->skel);
	c->skel = NULL;
}

/* Run the iterator once: the whole stream into c->iter_buf. */
static int iter_read(struct vg_stack_capture *c, size_t *len)
{
	int fd = bpf_iter_create(c->link_fd);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (c->iter_cap - n < 65536) {
			size_t cap = c->iter_cap ? c->iter_cap * 2 : 262144;
			uint8_t *b = realloc(c->iter_buf, cap);

			if (!b) {
				close(fd);
				return -ENOMEM;
			}
			c->iter_buf = b;
			c->iter_cap = cap;
		}
		r = read(fd, c->iter_buf + n, c->iter_cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return 0;
}

/* ------------------------------------------------------------ helpers */

static uint64_t stack_end_of(const struct vg_stack_capture *c, uint64_t sp)
{
	const struct vg_region *r = c->maps ? vg_maps_find(c->maps, sp) : NULL;

	return r ? r->end : 0;
}

/* /proc/TID/status (thread_info.c's reader): state letter and voluntary +
 * nonvoluntary switches. */
static int read_status(const struct vg_target *t, pid_t tid, char *state, uint64_t *csw)
{
	struct vg_thread_status st;
	int r = vg_thread_status_read(t, tid, &st);

	*csw = st.voluntary_ctxt + st.nonvoluntary_ctxt;
	*state = st.state ? st.state : '?';
	if (r < 0)
		return r;
	return st.state && st.has_ctxt ? 0 : -EINVAL;
}

static void unwind(struct vg_stack_capture *c, struct vg_thread_stack *th, const uint8_t *stack)
{
	th->n = 0;
	th->stop = VG_UNWIND_OUTERMOST;
	vg_unwind_dwarf(c->unw, &th->regs, stack, th->stack_bytes, th->ips, th->exact,
			VG_STACK_MAX_FRAMES, &th->n, &th->stop);
	th->complete = th->n > 0 && th->stop == VG_UNWIND_OUTERMOST;
}

/* Read [sp + have, limit) after the first have bytes already in c->stack. */
static size_t read_more(struct vg_stack_capture *c, uint64_t sp, size_t have, size_t want)
{
	struct vg_mem_result res;

	if (want <= have)
		return have;
	vg_mem_read(c->mem, sp + have, c->stack + have, want - have, &res, NULL);
	return have + res.bytes_read;
}

/* How much stack to read at sp: up to VG_STACK_MAX_COPY, never past the
 * end of its mapping (when the maps know it). */
static size_t copy_size(const struct vg_stack_capture *c, uint64_t sp, bool *truncated)
{
	uint64_t end = stack_end_of(c, sp);
	size_t want = VG_STACK_MAX_COPY;

	*truncated = true;
	if (end > sp && end - sp <= want) {
		want = (size_t)(end - sp);
		*truncated = false;
	}
	return want;
}

/* ------------------------------------------------------------ task_iter */

/* task->__state as /proc shows it (fs/proc/array.c's task_state_array;
 * TASK_IDLE is TASK_UNINTERRUPTIBLE | TASK_NOLOAD). */
static char state_letter(uint32_t st)
{
	if (st == 0)
		return 'R';
	if ((st & 0x0002) && (st & 0x0400))
		return 'I';
	if (st & 0x0001)
		return 'S';
	if (st & 0x0002)
		return 'D';
	if (st & 0x0004)
		return 'T';
	if (st & 0x0008)
		return 't';
	return '?';
}

/* The system call of a record's pt_regs, as the kernel's
 * collect_syscall() gives /proc/TID/syscall: orig_ax -1 is no call; else
 * the number and rdi, rsi, rdx, r10, r8, r9 (pt_regs indices 14, 13, 12,
 * 7, 9, 8). */
static void syscall_of(const struct vg_task_regs_record *rec, struct vg_thread_syscall *out)
{
	static const int arg_index[6] = { 14, 13, 12, 7, 9, 8 };

	memset(out, 0, sizeof(*out));
	out->sp = rec->regs[19];
	out->pc = rec->regs[16];
	if ((int64_t)rec->regs[15] == -1) {
		out->state = VG_SYSCALL_NONE;
		out->nr = -1;
		return;
	}
	out->state = VG_SYSCALL_IN;
	out->nr = (long)rec->regs[15];
	for (int k = 0; k < 6; k++)
		out->args[k] = rec->regs[arg_index[k]];
}

static void take_record(struct vg_stack_capture *c, struct vg_thread_stack *th,
			enum pending *p, const struct vg_task_regs_record *rec,
			const uint8_t *stack, bool second)
{
	bool still = vg_task_regs_still(rec);

	if (rec->flags & VG_TASK_EXITING) {
		/* a zombie (the leader after pthread_exit) or a thread on its
		 * way out: its user memory may be gone already */
		th->how = VG_STACK_NONE;
		snprintf(th->why, sizeof(th->why), "exiting (or a zombie: the main thread "
			 "ended with pthread_exit): no user stack");
		*p = P_DONE;
		return;
	}
	if (rec->flags & VG_TASK_NO_REGS) {
		th->how = VG_STACK_NONE;
		snprintf(th->why, sizeof(th->why), "the kernel keeps no user registers for it%s",
			 rec->flags & VG_TASK_EXITING ? " (exiting)" : "");
		*p = P_DONE;
		return;
	}
	if (rec->flags & (VG_TASK_ON_CPU_BEFORE | VG_TASK_ON_CPU_AFTER)) {
		*p = P_RUNNING;
		return;
	}
	if (!still && !second) {
		*p = P_RETRY;
		return;
	}
	th->how = VG_STACK_TASK_ITER;
	th->why[0] = '\0';   /* an earlier way's failure no longer applies */
	th->state = state_letter(rec->state);
	syscall_of(rec, &th->syscall);
	th->reread = second;
	th->moved = !still;
	vg_task_regs_to_perf(rec, &th->regs);
	memcpy(c->stack, stack, rec->stack_len);
	th->stack_bytes = rec->stack_len;
	th->stack_truncated = !(rec->flags & VG_TASK_COPY_FAULT);
	unwind(c, th, c->stack);
	if (th->stop == VG_UNWIND_STACK_END && th->stack_truncated) {
		uint64_t sp = th->regs.regs[VG_PERF_SP];
		size_t want = copy_size(c, sp, &th->stack_truncated);
		char state;
		uint64_t csw;

		th->stack_bytes = read_more(c, sp, th->stack_bytes, want);
		if (th->stack_bytes < want)
			th->stack_truncated = false;
		/* The iterator's counts were taken after its own copy: any
		 * switch since means the thread ran before the rest was read. */
		if (read_status(c->t, th->tid, &state, &csw) == 0 &&
		    (csw != rec->csw_after || state == 'R'))
			th->moved = true;
		unwind(c, th, c->stack);
	}
	*p = P_DONE;
}

/* One iterator pass for the threads whose pending state is `want`. */
static int iter_pass(struct vg_stack_capture *c, struct vg_thread_stack *out, enum pending *p,
		     size_t n, enum pending want)
{
	struct vg_task_regs_record rec;
	const uint8_t *stack;
	size_t len = 0, off = 0;
	int r = iter_read(c, &len);

	if (r < 0)
		return r;
	while ((r = vg_task_regs_next(c->iter_buf, len, &off, &rec, &stack)) > 0) {
		for (size_t i = 0; i < n; i++)
			if (out[i].tid == (pid_t)rec.tid && p[i] == want) {
				take_record(c, &out[i], &p[i], &rec, stack, want != P_FIRST);
				break;
			}
	}
	return r < 0 ? -EPROTO : 0;
}

/* ------------------------------------------------------------ perf_sample */

struct perf_thread {
	int fd;
	struct vg_ring *ring;
	size_t idx;
	bool got;
	bool slept;      /* seen asleep before any sample: not waited for */
};

/* The thread's CPU time since its event was opened (the task clock's
 * count), or UINT64_MAX when it cannot be read. */
static uint64_t perf_ran_ns(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : UINT64_MAX;
}

struct sample_arg {
	struct vg_stack_capture *c;
	struct vg_thread_stack *th;
	const struct vg_perf_format *fmt;
	bool got;
};

static int on_sample(const struct perf_event_header *h, void *arg)
{
	struct sample_arg *a = arg;
	struct vg_perf_sample s;

	if (h->type != PERF_RECORD_SAMPLE || !vg_perf_parse_sample(h, a->fmt, &s))
		return 0;
	if (!s.regs_abi || !(s.regs.mask & (1ull << VG_PERF_SP)))
		return 0;
	a->th->how = VG_STACK_PERF_SAMPLE;
	a->th->why[0] = '\0';
	a->th->state = 'R';
	a->th->syscall = (struct vg_thread_syscall){ .state = VG_SYSCALL_RUNNING, .nr = -1 };
	a->th->regs = s.regs;
	a->th->stack_bytes = s.stack_size > VG_STACK_MAX_COPY ? VG_STACK_MAX_COPY : s.stack_size;
	memcpy(a->c->stack, s.stack, a->th->stack_bytes);
	a->th->stack_truncated = a->th->stack_bytes >= PERF_STACK_BYTES;
	unwind(a->c, a->th, a->c->stack);
	a->got = true;
	return 1;
}

/* The first usable sample in the thread's ring, if one came: the thread
 * is then done. */
static bool take_sample(struct vg_stack_capture *c, struct perf_thread *pt,
			const struct vg_perf_format *fmt, struct vg_thread_stack *out,
			enum pending *p)
{
	struct sample_arg a = { c, &out[pt->idx], fmt, false };

	vg_ring_drain(pt->ring, on_sample, &a);
	if (a.got) {
		pt->got = true;
		p[pt->idx] = P_DONE;
	}
	return a.got;
}

/* Why a running thread has no stack: ran_ns of CPU time (perf_ran_ns)
 * in waited_us of waiting. */
static void say_no_sample(struct vg_thread_stack *th, long waited_us, uint64_t ran_ns)
{
	char ran[48] = "an unknown time";

	if (ran_ns != UINT64_MAX)
		snprintf(ran, sizeof(ran), "%" PRIu64 " us", ran_ns / 1000);
	snprintf(th->why, sizeof(th->why), "running, and no perf sample came in %ld ms (it had "
		 "%s of CPU meanwhile%s)", waited_us / 1000, ran,
		 perf_starved(ran_ns, waited_us) ? ": queued behind other work" : "");
}

static int perf_open(pid_t tid, struct perf_event_attr *attr)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr->exclude_kernel) {
		/* A sample in the kernel still carries the user registers;
		 * without that right only user-mode ticks sample. */
		attr->exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/* A perf event for each thread that is P_RUNNING and was not tried yet
 * (tried[] remembers); a thread with no sample in time goes to P_RETRY. */
static void perf_pass(struct vg_stack_capture *c, struct vg_thread_stack *out, enum pending *p,
		      bool *tried, size_t n)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = PERF_PERIOD_NS,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.sample_regs_user = REGS_GENERAL,
		.sample_stack_user = PERF_STACK_BYTES,
		.exclude_hv = 1,
		.wakeup_events = 1,
	};
	struct vg_perf_format fmt = {
		.sample_type = attr.sample_type, .regs_user_mask = REGS_GENERAL,
	};
	struct perf_thread *pt;
	struct pollfd *pfd;
	size_t m = 0, left, look_at = 0, first, looks;
	long look_us = PERF_LOOK_FIRST_US;
	struct timespec t0, now;
	char first_err[160] = "";

	pt = calloc(n, sizeof(*pt));
	pfd = calloc(n, sizeof(*pfd));
	if (!pt || !pfd)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int fd;

		if (p[i] != P_RUNNING || tried[i])
			continue;
		tried[i] = true;
		if (!(c->use & VG_STACK_USE_PERF)) {
			p[i] = P_FALLBACK;
			continue;
		}
		fd = perf_open(out[i].tid, &attr);
		if (fd < 0) {
			if (fd == -ESRCH) {
				out[i].how = VG_STACK_NONE;
				snprintf(out[i].why, sizeof(out[i].why), "exited");
				p[i] = P_DONE;
			} else {
				snprintf(first_err, sizeof(first_err), "%s", strerror(-fd));
				snprintf(out[i].why, sizeof(out[i].why), "running on a CPU, and a "
					 "sampled perf event on it was refused: %s", strerror(-fd));
				p[i] = P_FALLBACK;
			}
			continue;
		}
		if (vg_ring_map(fd, PERF_DATA_PAGES, &pt[m].ring, NULL) < 0) {
			close(fd);
			snprintf(out[i].why, sizeof(out[i].why), "running on a CPU, and the perf "
				 "ring could not be mapped");
			p[i] = P_FALLBACK;
			continue;
		}
		pt[m].fd = fd;
		pt[m].idx = i;
		pfd[m].fd = fd;
		pfd[m].events = POLLIN;
		m++;
	}
	if (first_err[0])
		note(c, "perf_sample: a sampled perf event was refused (%s)", first_err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = m;
	while (left) {
		struct timespec slice;
		long us, waited_us;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		waited_us = (now.tv_sec - t0.tv_sec) * 1000000L + (now.tv_nsec - t0.tv_nsec) / 1000;
		if (waited_us >= VG_STACK_PERF_WAIT_MS * 1000L) {
			/* Past the wait: only threads still short of one
			 * period of CPU time (queued for a CPU) wait on. */
			for (size_t k = 0; k < m; k++) {
				uint64_t ran;

				if (pt[k].got || pfd[k].fd < 0)
					continue;
				ran = perf_ran_ns(pt[k].fd);
				if (perf_starved(ran, waited_us) && waited_us < PERF_STARVED_WAIT_MS * 1000L &&
				    c->link_fd < 0)
					continue;
				/* one that came since the last poll */
				if (!take_sample(c, &pt[k], &fmt, out, p))
					say_no_sample(&out[pt[k].idx], waited_us, ran);
				pfd[k].fd = -1;
				left--;
			}
			if (!left)
				break;
			us = PERF_STARVED_WAIT_MS * 1000L - waited_us;
		} else {
			us = VG_STACK_PERF_WAIT_MS * 1000L - waited_us;
		}
		if (us > look_us)
			us = look_us;
		slice = (struct timespec){ us / 1000000, us % 1000000 * 1000 };
		r = ppoll(pfd, m, &slice, NULL);
		if (r < 0 && errno != EINTR)
			break;
		if (r == 0 && look_us < PERF_LOOK_MAX_US)
			look_us *= 2;
		looks = r == 0 ? PERF_LOOKS : 0;
		first = look_at;
		for (size_t j = 0; j < m; j++) {
			size_t k = (j + first) % m;
			struct vg_proc_stat st;

			if (pt[k].got || pfd[k].fd < 0)
				continue;
			/* Nothing yet: still running?  A thread that went to
			 * sleep gives no sample (its task clock stopped); the
			 * iterator takes it at rest instead of this waiting the
			 * whole VG_STACK_PERF_WAIT_MS. */
			if (!pfd[k].revents) {
				if (!looks)
					continue;
				looks--;
				look_at = k + 1;
				if (vg_proc_stat_read(out[pt[k].idx].tid, &st) < 0 || st.state == 'R')
					continue;
			}
			if (take_sample(c, &pt[k], &fmt, out, p)) {
				pfd[k].fd = -1;
				left--;
			} else if (!pfd[k].revents || (pfd[k].revents & (POLLHUP | POLLERR))) {
				/* asleep, or exited: the iterator pass says which */
				pt[k].slept = !pfd[k].revents;
				pfd[k].fd = -1;
				left--;
			}
		}
	}
	for (size_t k = 0; k < m; k++) {
		vg_ring_unmap(pt[k].ring);
		close(pt[k].fd);
		/* No sample in time: asleep again, or descheduled; the
		 * iterator takes it (second pass).  One seen asleep before
		 * it gathered a sample's worth of CPU time may have a perf
		 * event again if the iterator finds it running once more. */
		if (!pt[k].got)
			p[pt[k].idx] = P_RETRY;
		if (pt[k].slept)
			tried[pt[k].idx] = false;
	}
out:
	free(pt);
	free(pfd);
}

/* ------------------------------------------------------------ proc_syscall */

/* Returns true when /proc/TID/syscall said the thread is running (how
 * is then NONE: the caller may try perf). */
static bool take_proc(struct vg_stack_capture *c, struct vg_thread_stack *th)
{
	char path[64], line[2][512], state = 0;
	uint64_t sp = 0, pc = 0, csw[2];
	int r = 0;

	for (int attempt = 0; attempt < 2; attempt++) {
		size_t want;
		bool moved;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)c->t->pid, (int)th->tid);
		for (int k = 0; k < 2; k++) {
			FILE *f;

			if (k == 1) {
				/* the stack between the two looks */
				want = copy_size(c, sp, &th->stack_truncated);
				th->stack_bytes = read_more(c, sp, 0, want);
				if (th->stack_bytes < want)
					th->stack_truncated = false;
			}
			f = fopen(path, "re");
			if (!f || !fgets(line[k], sizeof(line[k]), f)) {
				r = -errno;
				if (f)
					fclose(f);
				th->how = VG_STACK_NONE;
				snprintf(th->why, sizeof(th->why), "%s: %s", path,
					 r == -ENOENT || r == -ESRCH ? "exited" : strerror(r ? -r : EIO));
				return false;
			}
			fclose(f);
			if (read_status(c->t, th->tid, &state, &csw[k]) < 0)
				csw[k] = 0;
			if (k == 0) {
				/* thread_info.c's parser: "running", "-1 sp pc"
				 * outside a call, or "NR a1..a6 sp pc" */
				if (vg_thread_syscall_parse(line[0], strlen(line[0]), &th->syscall) < 0) {
					th->how = VG_STACK_NONE;
					th->syscall = (struct vg_thread_syscall){ .nr = -1 };
					snprintf(th->why, sizeof(th->why), "%s: unexpected line", path);
					return false;
				}
				if (th->syscall.state == VG_SYSCALL_RUNNING) {
					char before[sizeof(th->why)];

					/* keep why perf could not take it, if it said */
					memcpy(before, th->why, sizeof(before));
					th->how = VG_STACK_NONE;
					snprintf(th->why, sizeof(th->why), "%s",
						 before[0] ? before : "running on a CPU, and "
						 "/proc/TID/syscall gives no registers of a "
						 "running thread");
					return true;
				}
				sp = th->syscall.sp;
				pc = th->syscall.pc;
			}
		}
		moved = strcmp(line[0], line[1]) != 0 || csw[0] != csw[1];
		th->how = VG_STACK_PROC_SYSCALL;
		th->why[0] = '\0';
		th->state = state;
		memset(&th->regs, 0, sizeof(th->regs));
		th->regs.regs[VG_PERF_SP] = sp;
		th->regs.regs[VG_PERF_IP] = pc;
		th->regs.mask = (1ull << VG_PERF_SP) | (1ull << VG_PERF_IP);
		if (!moved || attempt == 1) {
			th->moved = moved;
			th->reread = attempt == 1;
			break;
		}
	}
	unwind(c, th, c->stack);
	if (!th->complete)
		snprintf(th->why, sizeof(th->why), "only pc and sp were known (/proc/TID/syscall): "
			 "the walk stopped at %s", vg_unwind_stop_name(th->stop));
	return false;
}

/* ------------------------------------------------------------ snapshot */

int vg_stack_capture_take(struct vg_stack_capture *c, const pid_t *tids, size_t n,
			  struct vg_thread_stack *out, struct vg_error *err)
{
	enum pending *p = calloc(n ? n : 1, sizeof(*p));
	bool *tried = calloc(n ? n : 1, sizeof(*tried));
	int r = 0;

	if (!p || !tried) {
		free(p);
		free(tried);
		return vg_error_set(err, -ENOMEM, "out of memory for %zu threads", n);
	}
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].tid = tids[i];
	}
	if (c->link_fd >= 0) {
		r = iter_pass(c, out, p, n, P_FIRST);
		if (r < 0)
			note(c, "task_iter: reading the task iterator failed: %s", strerror(-r));
	}
	for (size_t i = 0; i < n; i++) {
		if (p[i] != P_FIRST)
			continue;
		if (c->link_fd >= 0 && r == 0) {
			/* Not in the iterator's output: gone, or in another PID
			 * namespace than the kernel's numbering. */
			struct vg_proc_stat st;

			if (vg_proc_stat_read(tids[i], &st) == -ESRCH) {
				out[i].how = VG_STACK_NONE;
				snprintf(out[i].why, sizeof(out[i].why), "exited");
				p[i] = P_DONE;
				continue;
			}
		}
		{
			struct vg_proc_stat st;

			p[i] = vg_proc_stat_read(tids[i], &st) == 0 && st.state == 'R' ?
				       P_RUNNING : P_FALLBACK;
		}
	}
	/* Two rounds: running threads get their perf event; threads that
	 * moved, or gave no sample (asleep again), go to a second iterator
	 * pass, which may find a thread running that was not before. */
	for (int round = 0; round < 2; round++) {
		bool any = false;

		perf_pass(c, out, p, tried, n);
		for (size_t i = 0; i < n; i++)
			any |= p[i] == P_RETRY;
		if (any && c->link_fd >= 0 && iter_pass(c, out, p, n, P_RETRY) < 0)
			break;
		if (c->link_fd >= 0)
			continue;
		/* No iterator: one that went to sleep before its sample and
		 * runs again gets another event; the rest fall back. */
		for (size_t i = 0; i < n; i++) {
			struct vg_proc_stat st;

			if (p[i] == P_RETRY)
				p[i] = !tried[i] && vg_proc_stat_read(tids[i], &st) == 0 &&
				       st.state == 'R' ? P_RUNNING : P_FALLBACK;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (p[i] == P_RUNNING) {
			out[i].how = VG_STACK_NONE;
			snprintf(out[i].why, sizeof(out[i].why), "running, and no perf sample "
				 "came (within %d ms, or before it slept again); on a CPU again "
				 "at the iterator's last look", VG_STACK_PERF_WAIT_MS);
			p[i] = P_DONE;
		}
	for (size_t i = 0; i < n; i++) {
		if (p[i] == P_DONE)
			continue;
		if (c->use & VG_STACK_USE_PROC) {
			/* asleep when classified, running now: perf, if not tried */
			bool again = take_proc(c, &out[i]) && !tried[i];

			p[i] = again ? P_RUNNING : P_DONE;
			if (again)
				out[i].why[0] = '\0';
		} else {
			out[i].how = VG_STACK_NONE;
			if (!out[i].why[0])
				snprintf(out[i].why, sizeof(out[i].why), "no way to read it was "
					 "allowed (VIGIL_STACK_METHODS)");
		}
	}
	if (c->use & VG_STACK_USE_PROC) {
		perf_pass(c, out, p, tried, n);
		for (size_t i = 0; i < n; i++)
			if (p[i] != P_DONE)
				take_proc(c, &out[i]);
	}
	free(p);
	free(tried);
	{
		bool alive, changed;

		vg_target_recheck(c->t, &alive, &changed);
		if (!alive || changed)
			return vg_target_explain(c->t, -ESRCH, err);
	}
	return 0;
}

/* ------------------------------------------------------------ life */

int vg_stack_capture_new(struct vg_target *t, const struct vg_maps *maps,
			 const struct vg_images *images, struct vg_stack_capture **out,
			 struct vg_error *err)
{
	struct vg_stack_capture *c = calloc(1, sizeof(*c));
	int r;

	*out = NULL;
	if (!c)
		return vg_error_set(err, -ENOMEM, "out of memory");
	c->t = t;
	c->maps = maps;
	c->link_fd = -1;
	r = parse_methods(getenv("VIGIL_STACK_METHODS"), &c->use, err);
	if (r == 0)
		r = vg_mem_open(t, maps, &c->mem, err);
	if (r == 0)
		r = vg_unwinder_new(t->pid, images, &c->unw, err);
	if (r == 0 && !(c->stack = malloc(VG_STACK_MAX_COPY)))
		r = vg_error_set(err, -ENOMEM, "out of memory");
	if (r < 0) {
		vg_stack_capture_free(c);
		return r;
	}
	if (c->use & VG_STACK_USE_ITER)
		iter_open(c);
	*out = c;
	return 0;
}

struct vg_stack_capture *vg_stack_capture_free(struct vg_stack_capture *c)
{
	if (!c)
		return NULL;
	if (c->link_fd >= 0)
		close(c->link_fd);
	if (c->skel)
		vg_task_regs_bpf__destroy(c->skel);
	vg_unwinder_free(c->unw);
	vg_mem_free(c->mem);
	free(c->iter_buf);
	free(c->stack);
	free(c);
	return NULL;
}
