/* profile.c - sampling a live process into a symbolized stack trie. */
#include "profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "stacktrie/symbolized.h"
#include "unwind/unwind.h"
#include "util/vec.h"
#include "sym/kallsyms.h"

/* Frames kept per sample: perf's default kernel.perf_event_max_stack is
 * 127; user stacks deeper than this are cut and counted. */
#define MAX_FRAMES 256
/* Symbolizer frames of one address (inline chain). */
#define MAX_INLINE 64

/* The user registers a CFI unwind can need: rax..rdi, rbp, rsp, rip and
 * r8..r15 (perf indices 0-8 and 16-23; flags and segments are useless,
 * and DS/ES/FS/GS are refused on x86-64). */
#define REGS_FOR_CFI 0xff01ffull

struct vg_profile {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	struct vg_profile_opts o;
	struct vg_perf_set *set;
	struct perf_event_attr attr;
	int slot;
	struct vg_stacks *stacks;
	struct vg_unwinder *unwinder;
	const struct vg_images *unwinder_images;
	bool kernel_shown;
	const char *kernel_why;
	char kernel_why_text[1024];
	const char *event_name;
	struct vg_profile_stats st;
	struct vg_perf_stats perf_st;
	struct vg_cover_tid *threads;
	size_t n_threads;
	enum vg_stop stop;
	uint64_t start_ns, end_ns;
	uint64_t deadline_ns;         /* --duration: samples after it are not counted */
	uint64_t last_miss_refresh_ns;
	int error;                    /* first allocation failure in a callback */
	/* Per-sample scratch. */
	uint64_t addrs[MAX_FRAMES];
	bool kern[MAX_FRAMES];
	uint32_t ids[MAX_FRAMES * 4];
	/* Thread names seen (tid -> named) to read /proc once per thread. */
	pid_t *named;
	size_t n_named, cap_named;
	/* Continuous mode (vg_profile_set_period): the trie of the period
	 * that ended, waiting for the end of the drain to be handed over. */
	uint64_t period_ns, period_start_ns, period_end_ns;
	vg_profile_period_fn *period_fn;
	void *period_arg;
	struct vg_stacks *ended;
	uint64_t ended_start_ns, ended_end_ns;
};

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

const char *vg_unwind_mode_name(enum vg_unwind_mode m)
{
	return m == VG_UNWIND_MODE_DWARF ? "dwarf" : "fp";
}

int vg_profile_new(struct vg_target *t, struct vg_symbolizer *sym,
		   const struct vg_profile_opts *opts, struct vg_profile **out,
		   struct vg_error *err)
{
	struct vg_profile *p;
	size_t ev;

	*out = NULL;
	for (ev = 0; ev < sizeof(events) / sizeof(events[0]); ev++)
		if (strcmp(events[ev].name, opts->event ? opts->event : "cpu-clock") == 0)
			break;
	if (ev == sizeof(events) / sizeof(events[0]))
		return vg_error_set(err, -EINVAL, "unknown event '%s': expected cpu-clock, task-clock, cycles, instructions, cache-misses or branch-misses",
				    opts->event);
	if (opts->freq == 0 || opts->freq > 100000)
		return vg_error_set(err, -EINVAL, "sampling frequency %" PRIu64 " Hz is out of range (1 to 100000)",
				    opts->freq);
	if (opts->stack_bytes % 8 || opts->stack_bytes > 65528)
		return vg_error_set(err, -EINVAL, "stack copy size %u must be a multiple of 8, at most 65528",
				    opts->stack_bytes);
	p = calloc(1, sizeof(*p));
	if (!p)
		return vg_error_set(err, -ENOMEM, "out of memory for the profile");
	p->t = t;
	p->sym = sym;
	p->o = *opts;
	if (!p->o.stack_bytes)
		p->o.stack_bytes = 8192;
	p->event_name = events[ev].name;
	p->attr.size = sizeof(p->attr);
	p->attr.type = events[ev].type;
	p->attr.config = events[ev].config;
	p->stacks = vg_stacks_new();
	if (!p->stacks) {
		free(p);
		return vg_error_set(err, -ENOMEM, "out of memory for the stack trie");
	}
	*out = p;
	return 0;
}

struct vg_profile *vg_profile_free(struct vg_profile *p)
{
	if (!p)
		return NULL;
	vg_perf_set_free(p->set);
	vg_unwinder_free(p->unwinder);
	vg_stacks_free(p->stacks);
	free(p->threads);
	free(p->named);
	free(p);
	return NULL;
}

/* The attr for one try.  sample_kernel: the clock also samples while the
 * thread runs in the kernel (its time is then charged to the user stack
 * that entered it, or to kernel frames when kernel_frames). */
static void fill_attr(struct vg_profile *p, bool sample_kernel, bool kernel)
{
	struct perf_event_attr *a = &p->attr;

	a->freq = 1;
	a->sample_freq = p->o.freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
	a->exclude_hv = 1;
	a->exclude_kernel = !sample_kernel;
	a->exclude_callchain_kernel = !kernel;
	/* exec mappings (dlopen) and thread names, kept current. */
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	if (p->o.unwind == VG_UNWIND_MODE_FP) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	} else {
		/* The kernel walks only its own stack; the user side is
		 * unwound here from registers and a stack copy. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = REGS_FOR_CFI;
		a->sample_stack_user = p->o.stack_bytes;
		if (kernel) {
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
			a->exclude_callchain_user = 1;
		}
	}
}

static bool tid_wanted(const struct vg_profile *p, pid_t tid)
{
	if (p->o.n_tids == 0)
		return true;
	for (size_t i = 0; i < p->o.n_tids; i++)
		if (p->o.tids[i] == tid)
			return true;
	return false;
}

static void name_thread(struct vg_profile *p, pid_t tid, const char *comm)
{
	char path[64], buf[64];
	FILE *f;

	if (comm) {
		vg_stacks_set_thread_name(p->stacks, tid, comm, NULL);
		return;
	}
	/* Per sample: most samples are of the thread named last. */
	if (p->n_named && p->named[p->n_named - 1] == tid)
		return;
	for (size_t i = 0; i < p->n_named; i++)
		if (p->named[i] == tid)
			return;
	if (VG_GROW(p->named, p->cap_named, p->n_named + 1) == 0)
		p->named[p->n_named++] = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)p->t->pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		vg_stacks_set_thread_name(p->stacks, tid, buf, NULL);
	}
	fclose(f);
}

static void sync_unwinder_images(struct vg_profile *p);

/* A user address in no image may be in a library whose MMAP2 record sits
 * in another CPU's ring, not read yet: refresh the images now (at most
 * every 50 ms: [vdso] and JIT code miss for good) and look again. */
static void lookup(struct vg_profile *p, uint64_t addr, bool kernel, struct vg_sym_result *res)
{
	uint64_t now;

	vg_sym_lookup(p->sym, addr, res, NULL);
	if (kernel || res->image || res->source == VG_SYMSRC_PERF_MAP)
		return;
	now = vg_perf_now();
	if (now - p->last_miss_refresh_ns < 50000000u)
		return;
	p->last_miss_refresh_ns = now;
	if (vg_symbolizer_refresh(p->sym, NULL) == 0)
		p->st.refreshes++;
	sync_unwinder_images(p);
	vg_sym_lookup(p->sym, addr, res, NULL);
}

/* The frames of one address, symbolized on its first sighting. */
static int address_ids(struct vg_profile *p, uint64_t addr, bool kernel, uint32_t *first,
		       uint32_t *n)
{
	struct vg_sym_result res;
	struct vg_stack_frame_in in[MAX_INLINE];
	struct vg_stack_site site = { addr, 0, VG_STACKS_NONE, kernel };
	size_t k;
	int r;

	if (vg_stacks_find_address(p->stacks, addr, kernel, first, n))
		return 0;
	lookup(p, addr, kernel, &res);
	p->st.addresses++;
	k = vg_stacks_sym_frames(p->stacks, &res, kernel, in, MAX_INLINE, &site);
	r = vg_stacks_intern_address(p->stacks, &site, in, k, first, n, NULL);
	if (r == 0 && k && *n == k) {
		/* Columns where DWARF has them (pprof Line.column). */
		uint32_t cols[MAX_INLINE];

		for (size_t i = 0; i < k; i++)
			cols[i] = res.n_frames ? res.frames[i].column : res.column;
		vg_stacks_set_columns(p->stacks, *first, *n, cols);
	}
	return r;
}

/* After the stop: addresses still in no image get one more chance (a
 * library mapped in the last moments, its MMAP2 read after its samples). */
static void resolve_late(struct vg_profile *p, struct vg_stacks *s)
{
	uint64_t *addrs = NULL;
	size_t n = 0;

	if (vg_stacks_unresolved(s, &addrs, &n) < 0 || n == 0) {
		free(addrs);
		return;
	}
	if (vg_symbolizer_refresh(p->sym, NULL) == 0)
		p->st.refreshes++;
	for (size_t i = 0; i < n; i++) {
		struct vg_sym_result res;
		struct vg_stack_frame_in in[MAX_INLINE];
		struct vg_stack_site site = { addrs[i], 0, VG_STACKS_NONE, false };
		size_t k;

		vg_sym_lookup(p->sym, addrs[i], &res, NULL);
		if (!res.image && res.source != VG_SYMSRC_PERF_MAP)
			continue;
		k = vg_stacks_sym_frames(s, &res, false, in, MAX_INLINE, &site);
		vg_stacks_reintern_address(s, &site, in, k, NULL);
	}
	free(addrs);
}

/* Kernel and (fp) user addresses from the kernel's callchain, innermost
 * first; the first address of each context is where that side was
 * interrupted, the others are return addresses. */
static size_t callchain_frames(struct vg_profile *p, const struct vg_perf_sample *s, size_t n,
			       bool want_user)
{
	enum { NONE, KERNEL, USER } ctx = NONE;
	bool first_of_ctx = false;

	for (uint64_t i = 0; i < s->nr_callchain && n < MAX_FRAMES; i++) {
		uint64_t e = s->callchain[i];

		if (e >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = e == (uint64_t)PERF_CONTEXT_KERNEL ? KERNEL
			      : e == (uint64_t)PERF_CONTEXT_USER ? USER : NONE;
			first_of_ctx = true;
			continue;
		}
		if (ctx == NONE || (ctx == KERNEL && !p->kernel_shown) || (ctx == USER && !want_user))
			continue;
		/* A return address minus one is inside the call: its line
		 * and inline chain are the call's, not the next statement's. */
		p->addrs[n] = first_of_ctx || e == 0 ? e : e - 1;
		p->kern[n] = ctx == KERNEL;
		first_of_ctx = false;
		n++;
	}
	if (n == MAX_FRAMES)
		p->st.max_frames_hit++;
	return n;
}

/* The unwinder follows the symbolizer's image set, which a refresh (here
 * after an exec mmap, or inside a lookup that missed) replaces; the images
 * themselves live as long as the symbolizer. */
static void sync_unwinder_images(struct vg_profile *p)
{
	const struct vg_images *now = vg_symbolizer_images(p->sym);

	if (p->unwinder && now != p->unwinder_images) {
		vg_unwinder_set_images(p->unwinder, now, NULL);
		p->unwinder_images = now;
	}
}

static size_t dwarf_frames(struct vg_profile *p, const struct vg_perf_sample *s, size_t n)
{
	uint64_t ips[MAX_FRAMES];
	bool exact[MAX_FRAMES];
	size_t got = 0;
	enum vg_unwind_stop why = VG_UNWIND_OUTERMOST;

	if (!s->regs_abi) {
		p->st.samples_kernel_only++;
		return n;
	}
	sync_unwinder_images(p);
	vg_unwind_dwarf(p->unwinder, &s->regs, s->stack, (size_t)s->stack_size, ips, exact,
			MAX_FRAMES - n, &got, &why);
	if ((unsigned)why < sizeof(p->st.unwind_stop) / sizeof(p->st.unwind_stop[0]))
		p->st.unwind_stop[why]++;
	for (size_t i = 0; i < got; i++) {
		p->addrs[n] = exact[i] ? ips[i] : ips[i] - 1;
		p->kern[n] = false;
		n++;
	}
	return n;
}

/* The period ended: its trie is set aside (handed over after the drain,
 * where writing it cannot hold the rings up mid-batch) and a new one
 * takes the samples, which keep coming: the events stay open.  A second
 * boundary before the hand-over (a drain longer than a period) keeps
 * filling the new trie: the next period is then longer, never lost. */
static void rotate(struct vg_profile *p)
{
	struct vg_stacks *fresh;

	/* The period the duration ends is the last: its trie is the one
	 * vg_profile_stop leaves, with no empty period after it. */
	if (p->ended || (p->deadline_ns && p->period_end_ns >= p->deadline_ns))
		return;
	fresh = vg_stacks_new();
	if (!fresh)
		return;   /* out of memory: the period goes on */
	p->ended = p->stacks;
	p->ended_start_ns = p->period_start_ns;
	p->ended_end_ns = p->period_end_ns;
	p->stacks = fresh;
	/* Thread names are read again so that each period's file names
	 * its threads. */
	p->n_named = 0;
	p->period_start_ns = p->period_end_ns;
	p->period_end_ns += p->period_ns;
}

/* The ended period, complete (late addresses resolved), to its reader. */
static void hand_over(struct vg_profile *p)
{
	struct vg_stacks *s = p->ended;

	if (!s)
		return;
	p->ended = NULL;
	resolve_late(p, s);
	p->period_fn(p, s, p->ended_start_ns, p->ended_end_ns, p->period_arg);
	vg_stacks_free(s);
}

void vg_profile_set_period(struct vg_profile *p, uint64_t period_ns, vg_profile_period_fn *fn,
			   void *arg)
{
	p->period_ns = period_ns;
	p->period_fn = fn;
	p->period_arg = arg;
}

static void on_sample(const struct vg_perf_hit *hit, void *arg)
{
	struct vg_profile *p = arg;
	const struct vg_perf_sample *s = hit->sample;
	size_t n = 0, nids = 0;

	/* The first drains symbolize whole libraries and can outlast a short
	 * --duration: what was sampled after it is not part of the profile. */
	if (p->deadline_ns && s->time > p->deadline_ns) {
		p->st.samples_after_stop++;
		return;
	}
	/* Taken while the events were still being opened (setup can take
	 * 100 ms under load): the profile starts when every thread is
	 * covered, so its duration and its samples describe the same time. */
	if (hit->before_start) {
		p->st.samples_before_start++;
		return;
	}
	if (!tid_wanted(p, (pid_t)s->tid)) {
		p->st.samples_other_tid++;
		return;
	}
	if (p->period_ns && s->time >= p->period_end_ns)
		rotate(p);
	if (p->o.unwind == VG_UNWIND_MODE_FP) {
		n = callchain_frames(p, s, 0, true);
	} else {
		if (p->kernel_shown)
			n = callchain_frames(p, s, 0, false);
		n = dwarf_frames(p, s, n);
	}
	if (n == 0) {
		/* No callchain at all: the IP alone still says where. */
		p->addrs[0] = s->ip;
		p->kern[0] = vg_addr_is_kernel(s->ip);
		n = 1;
	}
	name_thread(p, (pid_t)s->tid, NULL);
	/* Root first: outermost address first, each with its inline chain
	 * (already outermost first). */
	for (size_t i = n; i-- > 0;) {
		uint32_t first, cnt;

		if (address_ids(p, p->addrs[i], p->kern[i], &first, &cnt) < 0) {
			p->error = -ENOMEM;
			return;
		}
		for (uint32_t k = 0; k < cnt && nids < sizeof(p->ids) / sizeof(p->ids[0]); k++)
			p->ids[nids++] = first + k;
	}
	if (vg_stacks_add(p->stacks, (int32_t)s->tid, p->ids, nids, 1, NULL) < 0)
		p->error = -ENOMEM;
	else
		p->st.samples++;
}

static void on_other(const struct perf_event_header *h, void *arg)
{
	struct vg_profile *p = arg;

	if (h->type == PERF_RECORD_MMAP2) {
		struct vg_perf_mmap m;

		/* A new exec mapping of the target (dlopen): refresh now, so
		 * its first samples are named, not left to the rate limit. */
		if (vg_perf_parse_mmap2(h, &m) && (pid_t)m.pid == p->t->pid &&
		    (m.prot & PROT_EXEC)) {
			if (vg_symbolizer_refresh(p->sym, NULL) == 0)
				p->st.refreshes++;
			sync_unwinder_images(p);
		}
	} else if (h->type == PERF_RECORD_COMM) {
		struct vg_perf_comm c;

		if (vg_perf_parse_comm(h, &c) && (pid_t)c.pid == p->t->pid)
			name_thread(p, (pid_t)c.tid, c.comm);
	}
}

/* Whether the kernel lets this user sample kernel mode of another process:
 * kernel.perf_event_paranoid >= 2 without CAP_PERFMON refuses. */
static int open_events(struct vg_profile *p, bool sample_kernel, bool kernel,
		       struct vg_error *err)
{
	struct vg_perf_consumer c = { on_sample, NULL, p, on_other };
	/* dwarf: ~8 KiB a sample; 4 MiB per CPU holds ~0.5 s at 999 Hz, room
	 * for a first drain that symbolizes whole libraries. */
	size_t pages = p->o.unwind == VG_UNWIND_MODE_DWARF ? 1024 : 128;
	int r;

	vg_perf_set_free(p->set);
	p->set = NULL;
	fill_attr(p, sample_kernel, kernel);
	r = vg_perf_set_new(p->t, pages, &p->set, err);
	if (r < 0)
		return r;
	r = vg_perf_set_add(p->set, &p->attr, err);
	if (r < 0)
		return r;
	p->slot = r;
	p->kernel_shown = kernel;
	return vg_perf_set_attach(p->set, &c, err);
}

int vg_profile_start(struct vg_profile *p, struct vg_error *err)
{
	struct vg_error first = { 0 };
	int r;

	for (size_t i = 0; i < p->o.n_tids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)p->t->pid, (int)p->o.tids[i]);
		if (access(path, F_OK) < 0)
			return vg_error_set(err, -EINVAL, "thread %d is not a thread of pid %d (see /proc/%d/task)",
					    (int)p->o.tids[i], (int)p->t->pid, (int)p->t->pid);
	}
	if (p->o.unwind == VG_UNWIND_MODE_DWARF) {
		p->unwinder_images = vg_symbolizer_images(p->sym);
		r = vg_unwinder_new(p->t->pid, p->unwinder_images, &p->unwinder, err);
		if (r < 0)
			return r;
	}
	p->kernel_why = "--no-kernel was given: time in the kernel is charged to the user stack that entered it";
	r = open_events(p, true, !p->o.no_kernel, &first);
	if (r == -EACCES || r == -EPERM) {
		/* Sampling kernel mode needs more privilege than user mode:
		 * profile user space and say what is missing. */
		snprintf(p->kernel_why_text, sizeof(p->kernel_why_text),
			 "kernel samples refused (%s): time in the kernel is not sampled",
			 first.msg);
		p->kernel_why = p->kernel_why_text;
		r = open_events(p, false, false, err);
	} else if (r < 0 && err) {
		*err = first;
	}
	if (r == -ENOENT || r == -EOPNOTSUPP) {
		/* The kernel's own sentence says only "No such file or
		 * directory": say what it means for a hardware event. */
		vg_error_reset(err, -ENOENT, "event %s is not available on this machine: %s (perf_event_open: %s)",
			       p->event_name,
			       p->attr.type == PERF_TYPE_HARDWARE ? "no hardware PMU (a VM?); use --event cpu-clock"
								  : "the kernel does not offer it",
			       strerror(-r));
		vg_error_set_exit(err, VG_EXIT_PERM);
	}
	if (r < 0)
		return r;
	p->start_ns = vg_perf_set_start_time(p->set);
	return 0;
}

struct run {
	struct vg_profile *p;
	struct vg_perf_consumer c;
	void (*progress)(const struct vg_profile *p, void *arg);
	void *arg;
};

static void run_wait(void *arg, struct pollfd *extra, size_t n, int timeout_ms)
{
	struct run *r = arg;

	vg_perf_set_wait(r->p->set, extra, n, timeout_ms);
}

static enum vg_stop run_drain(void *arg)
{
	struct run *r = arg;

	vg_perf_set_drain(r->p->set, &r->c);
	/* A period with no sample in it (an idle target) ends by the clock. */
	if (r->p->period_ns && !r->p->ended && vg_perf_now() >= r->p->period_end_ns)
		rotate(r->p);
	hand_over(r->p);
	/* exec(): another program, which the images do not describe (the
	 * set drops its samples by time from the COMM on). */
	if (vg_perf_set_stats(r->p->set)->exec_ns) {
		r->p->t->exec_seen = true;
		return VG_STOP_TARGET_EXEC;
	}
	/* Out of memory aggregating: stop now, vg_profile_run says why. */
	return r->p->error ? VG_STOP_INTERRUPTED : VG_STOP_NONE;
}

static void run_tick(void *arg, uint64_t now)
{
	struct run *r = arg;

	(void)now;
	r->progress(r->p, r->arg);
}

int vg_profile_run(struct vg_profile *p, int stop_fd,
		   void (*progress)(const struct vg_profile *p, void *arg), void *arg,
		   struct vg_error *err)
{
	struct run r = { p, { on_sample, NULL, p, on_other }, progress, arg };
	/* Draining in batches keeps vigil's own cost low; the rings hold
	 * far more than 100 ms of samples. */
	struct vg_observer o = {
		.arg = &r, .wait = run_wait, .drain = run_drain,
		.tick = progress ? run_tick : NULL, .tick_ns = 1000000000ull, .max_wait_ms = 100,
	};

	if (!p->set)
		return vg_error_set(err, -EINVAL, "internal: profile not started");
	p->deadline_ns = p->o.duration_ms ? p->start_ns + p->o.duration_ms * 1000000ull : 0;
	p->period_start_ns = p->start_ns;
	p->period_end_ns = p->start_ns + p->period_ns;
	/* The stop is the end, whatever stopped it, and never later than
	 * the deadline: samples are cut where the duration ends. */
	p->stop = vg_observe(&o, p->t, p->start_ns, p->o.duration_ms, stop_fd, &p->end_ns);
	p->deadline_ns = p->end_ns;
	if (p->error)
		return vg_error_set(err, p->error, "out of memory while aggregating samples");
	return 0;
}

/* ---- several processes in one run ------------------------------------ */

struct run_all {
	struct vg_profile **ps;
	size_t n;
	int *pidfds;
	bool *done;
	size_t left;
	void (*progress)(void *arg);
	void *arg;
};

/* One process's profile ends (it exited, or exec'd) while the others go
 * on: what its rings still hold is drained and its events closed. */
static void finish_one(struct run_all *r, size_t i, enum vg_stop why)
{
	struct vg_profile *p = r->ps[i];

	p->stop = why;
	p->end_ns = vg_perf_now();
	if (p->deadline_ns && p->end_ns > p->deadline_ns)
		p->end_ns = p->deadline_ns;
	vg_profile_stop(p);
	r->done[i] = true;
	r->left--;
}

static void run_all_wait(void *arg, struct pollfd *extra, size_t n, int timeout_ms)
{
	struct run_all *r = arg;

	/* The first live set's rings wake the loop; the others are drained
	 * at each wake-up, at least every max_wait_ms (their rings hold far
	 * more than that). */
	for (size_t i = 0; i < r->n; i++)
		if (!r->done[i]) {
			vg_perf_set_wait(r->ps[i]->set, extra, n, timeout_ms);
			return;
		}
}

static enum vg_stop run_all_drain(void *arg)
{
	struct run_all *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		struct vg_profile *p = r->ps[i];
		struct vg_perf_consumer c = { on_sample, NULL, p, on_other };
		struct pollfd pfd = { .fd = r->pidfds[i], .events = POLLIN };
		bool alive = true, changed = false;

		if (r->done[i])
			continue;
		vg_perf_set_drain(p->set, &c);
		if (p->error)
			return VG_STOP_INTERRUPTED;
		if (vg_perf_set_stats(p->set)->exec_ns) {
			p->t->exec_seen = true;
			finish_one(r, i, VG_STOP_TARGET_EXEC);
			continue;
		}
		if (r->pidfds[i] >= 0)
			alive = poll(&pfd, 1, 0) <= 0;
		else
			vg_target_recheck(p->t, &alive, &changed);
		if (!alive || changed)
			finish_one(r, i, VG_STOP_TARGET_EXITED);
	}
	return r->left ? VG_STOP_NONE : VG_STOP_TARGET_EXITED;
}

static void run_all_tick(void *arg, uint64_t now)
{
	struct run_all *r = arg;

	(void)now;
	r->progress(r->arg);
}

int vg_profile_run_all(struct vg_profile **ps, size_t n, int stop_fd,
		       void (*progress)(void *arg), void *arg, struct vg_error *err)
{
	struct run_all r = { ps, n, NULL, NULL, n, progress, arg };
	struct vg_observer o = {
		.arg = &r, .wait = run_all_wait, .drain = run_all_drain,
		.tick = progress ? run_all_tick : NULL, .tick_ns = 1000000000ull, .max_wait_ms = 100,
	};
	uint64_t start = 0, end;
	enum vg_stop stop;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (!ps[i]->set)
			return vg_error_set(err, -EINVAL, "internal: profile not started");
		if (ps[i]->period_ns)
			return vg_error_set(err, -EINVAL, "internal: periods of several processes");
		if (ps[i]->start_ns > start)
			start = ps[i]->start_ns;
	}
	r.pidfds = calloc(n, sizeof(*r.pidfds));
	r.done = calloc(n, sizeof(*r.done));
	if (!r.pidfds || !r.done) {
		free(r.pidfds);
		free(r.done);
		return vg_error_set(err, -ENOMEM, "out of memory for the profiles");
	}
	/* One window for all: the duration counts from when the last
	 * process was covered, so the shares compare equal times. */
	for (size_t i = 0; i < n; i++) {
		r.pidfds[i] = vg_target_pidfd(ps[i]->t);
		ps[i]->deadline_ns = ps[i]->o.duration_ms ? start + ps[i]->o.duration_ms * 1000000ull : 0;
	}
	stop = vg_observe(&o, NULL, start, n ? ps[0]->o.duration_ms : 0, stop_fd, &end);
	for (size_t i = 0; i < n; i++) {
		if (r.pidfds[i] >= 0)
			close(r.pidfds[i]);
		if (ps[i]->error)
			rc = vg_error_set(err, ps[i]->error, "out of memory while aggregating samples");
		if (r.done[i])
			continue;
		ps[i]->stop = stop;
		ps[i]->end_ns = end;
		ps[i]->deadline_ns = end;
	}
	free(r.pidfds);
	free(r.done);
	return rc;
}

void vg_profile_stop(struct vg_profile *p)
{
	struct vg_perf_consumer c = { on_sample, NULL, p, on_other };
	const struct vg_cover_tid *t;
	size_t n;

	if (!p || !p->set)
		return;
	vg_perf_set_enable(p->set, false);
	/* What the kernel wrote before the stop is still in the rings. */
	vg_perf_set_drain(p->set, &c);
	hand_over(p);
	resolve_late(p, p->stacks);
	p->perf_st = *vg_perf_set_stats(p->set);
	t = vg_perf_set_threads(p->set, &n);
	p->threads = malloc(n * sizeof(*t) + 1);
	if (p->threads) {
		memcpy(p->threads, t, n * sizeof(*t));
		p->n_threads = n;
	}
	if (!p->end_ns)
		p->end_ns = vg_perf_now();
	p->set = vg_perf_set_free(p->set);
}

struct vg_stacks *vg_profile_stacks(const struct vg_profile *p) { return p->stacks; }
const struct vg_profile_stats *vg_profile_stats(const struct vg_profile *p) { return &p->st; }

const struct vg_perf_stats *vg_profile_perf_stats(const struct vg_profile *p)
{
	return p->set ? vg_perf_set_stats(p->set) : &p->perf_st;
}

const struct vg_cover_tid *vg_profile_threads(const struct vg_profile *p, size_t *n)
{
	if (p->set)
		return vg_perf_set_threads(p->set, n);
	*n = p->n_threads;
	return p->threads;
}

enum vg_stop vg_profile_stop_reason(const struct vg_profile *p) { return p->stop; }
uint64_t vg_profile_start_ns(const struct vg_profile *p) { return p->start_ns; }
uint64_t vg_profile_period_start_ns(const struct vg_profile *p)
{
	return p->period_ns ? p->period_start_ns : p->start_ns;
}
uint64_t vg_profile_end_ns(const struct vg_profile *p) { return p->end_ns; }

uint64_t vg_profile_duration_ns(const struct vg_profile *p)
{
	return p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
}

bool vg_profile_kernel_shown(const struct vg_profile *p, const char **why)
{
	*why = p->kernel_shown ? NULL : p->kernel_why;
	return p->kernel_shown;
}

const char *vg_profile_event(const struct vg_profile *p) { return p->event_name; }
uint64_t vg_profile_freq(const struct vg_profile *p) { return p->o.freq; }
enum vg_unwind_mode vg_profile_unwind(const struct vg_profile *p) { return p->o.unwind; }
