/* test_probe_bpf.c - the uprobe + eBPF layer of vigil probe (src/probe/bpf.c)
 * on a live child, with exact counts and exact record contents.
 *
 * The child is a fork of this test: bpf_test_target() has the same address
 * there, and its file offset in /proc/CHILD/exe comes from the child's
 * maps.  The child's three threads call it CALLS_PER_THREAD times each,
 * with arguments that name the thread and the call; one thread is created
 * only after the probe is armed (a probe on the process covers threads
 * created later).  The child reports its threads' tids (and stack tops)
 * when they are done, so every tid, argument, return value and return
 * address seen by the programs is checked against what the child did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/bpf.h"
#include "testutil.h"

#define N_THREADS 3
#define CALLS_PER_THREAD 200
#define N_CALLS (N_THREADS * CALLS_PER_THREAD)
#define SMALL_STACK (64 * 1024)

/* ------------------------------------------------------------ the child */

static volatile int sink;

/* The probed function.  Its arguments name the caller: a = thread index + 1,
 * b = call_arg(index, i). */
__attribute__((noinline, used)) int bpf_test_target(int a, long b);
__attribute__((noinline, used)) int bpf_test_target(int a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a * 100000 + (int)(b & 0xffff);
}

static long call_arg(int index, long i)
{
	return (long)(index + 1) << 33 | i;
}

static int expected_return(int a, long b)
{
	return a * 100000 + (int)(b & 0xffff);
}

struct worker {
	int index;
	pthread_barrier_t *start;
	pid_t tid;
};

__attribute__((noinline)) static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = gettid();
	pthread_barrier_wait(w->start);
	for (long i = 0; i < CALLS_PER_THREAD; i++)
		sink += bpf_test_target(w->index + 1, call_arg(w->index, i));
	return NULL;
}

/* What the child reports when its threads are done. */
struct report {
	pid_t tid[N_THREADS];
	uint64_t stack_top[N_THREADS];   /* small_stacks: the end of each stack */
};

static void start_worker(pthread_t *t, struct worker *w, bool small_stack, uint64_t *top)
{
	pthread_attr_t attr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	pthread_attr_init(&attr);
	*top = 0;
	if (small_stack) {
		/* A stack with an inaccessible page right above its top: a
		 * copy of 16 KiB at SP runs into it. */
		unsigned char *base = mmap(NULL, SMALL_STACK + page, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (base == MAP_FAILED || mprotect(base + SMALL_STACK, page, PROT_NONE) < 0)
			_exit(91);
		pthread_attr_setstack(&attr, base, SMALL_STACK);
		*top = (uint64_t)(uintptr_t)(base + SMALL_STACK);
	}
	if (pthread_create(t, &attr, worker_main, w) != 0)
		_exit(92);
	pthread_attr_destroy(&attr);
}

static void child_main(int go, int res, bool small_stacks)
{
	pthread_barrier_t start;
	pthread_t t[N_THREADS];
	struct worker w[N_THREADS];
	struct report rep;
	char byte;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&rep, 0, sizeof(rep));
	pthread_barrier_init(&start, NULL, N_THREADS);
	for (int i = 0; i < N_THREADS; i++)
		w[i] = (struct worker){ .index = i, .start = &start };
	/* Two threads exist before the probe, the third only after. */
	for (int i = 0; i < N_THREADS - 1; i++)
		start_worker(&t[i], &w[i], small_stacks, &rep.stack_top[i]);
	if (read(go, &byte, 1) != 1)
		_exit(93);
	start_worker(&t[N_THREADS - 1], &w[N_THREADS - 1], small_stacks,
		     &rep.stack_top[N_THREADS - 1]);
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(t[i], NULL);
		rep.tid[i] = w[i].tid;
	}
	if (write(res, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(94);
	while (read(go, &byte, 1) > 0)
		;
	_exit(0);
}

struct kid {
	pid_t pid;
	int go, res;
	char exe[64];
	uint64_t offset;             /* of bpf_test_target in exe */
	uint64_t text_lo, text_hi;   /* the mapping it is in */
};

static void find_offset(struct kid *k)
{
	char path[64], line[4096];
	uintptr_t fn = (uintptr_t)&bpf_test_target;
	FILE *f;

	snprintf(k->exe, sizeof(k->exe), "/proc/%d/exe", (int)k->pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)k->pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) == 4 &&
		    strcmp(perms, "r-xp") == 0 && fn >= lo && fn < hi) {
			k->offset = off + (fn - lo);
			k->text_lo = lo;
			k->text_hi = hi;
		}
	}
	fclose(f);
	assert_true(k->text_hi != 0);
}

static struct kid spawn(bool small_stacks)
{
	int g[2];
	struct kid k;

	memset(&k, 0, sizeof(k));
	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	k.pid = tu_fork_pipe(&k.res);
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		close(g[1]);
		child_main(g[0], k.res, small_stacks);
	}
	close(g[0]);
	k.go = g[1];
	find_offset(&k);
	return k;
}

static void reap(struct kid *k)
{
	int st;

	close(k->go);
	close(k->res);
	kill(k->pid, SIGKILL);
	assert_int_equal(waitpid(k->pid, &st, 0), k->pid);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ records */

struct seen {
	uint32_t kind, site;
	pid_t pid, tid;
	uint64_t time;
	uint64_t regs[VG_PR_COUNT];
	uint32_t stack_len;
	uint64_t first_word;          /* stack[0..8) */
};

struct tally {
	struct seen *rec;
	size_t n, cap;
	uint64_t until;               /* of the current drain call */
	uint64_t last_time;           /* within the current drain call */
	size_t late, unordered, short_len;
};

static void on_record(const struct vg_probe_record *r, size_t len, void *arg)
{
	struct tally *y = arg;
	struct seen *s;

	y->late += r->time_ns > y->until;
	y->unordered += r->time_ns < y->last_time;
	y->last_time = r->time_ns;
	y->short_len += len < offsetof(struct vg_probe_record, stack) + r->stack_len;
	if (y->n == y->cap) {
		y->cap = y->cap ? y->cap * 2 : 1024;
		y->rec = realloc(y->rec, y->cap * sizeof(*y->rec));
		assert_non_null(y->rec);
	}
	s = &y->rec[y->n++];
	memset(s, 0, sizeof(*s));
	s->kind = r->kind;
	s->site = r->site;
	s->pid = (pid_t)(r->pid_tgid >> 32);
	s->tid = (pid_t)(uint32_t)r->pid_tgid;
	s->time = r->time_ns;
	memcpy(s->regs, r->regs, sizeof(s->regs));
	s->stack_len = r->stack_len;
	if (r->stack_len >= 8)
		memcpy(&s->first_word, r->stack, 8);
}

static size_t drain(struct vg_bpf_output *o, struct tally *y, uint64_t until)
{
	y->until = until;
	y->last_time = 0;
	return vg_bpf_output_drain(o, until, on_record, y);
}

/* Let the child run; drain o (if any) meanwhile, up to "now" each time. */
static void run_child(struct kid *k, struct report *rep, struct vg_bpf_output *o,
		      struct tally *y)
{
	size_t got = 0;
	uint64_t deadline = now_ns() + 30ull * 1000000000ull;

	assert_int_equal(write(k->go, "g", 1), 1);
	while (got < sizeof(*rep)) {
		struct pollfd pfd = { .fd = k->res, .events = POLLIN };
		int r = poll(&pfd, 1, 10);

		assert_true(now_ns() < deadline);
		if (o)
			drain(o, y, now_ns());
		if (r > 0) {
			ssize_t n = read(k->res, (char *)rep + got, sizeof(*rep) - got);

			assert_true(n > 0);
			got += (size_t)n;
		}
	}
}

/* ------------------------------------------------------------ setup */

/* Skip only when the kernel refuses what the module needs. */
static bool probe_possible(void)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	int type, bit, r = vg_uprobe_pmu(&type, &bit, &err);

	if (r == -EOPNOTSUPP) {
		print_message("skipped: %s\n", err.msg);
		return false;
	}
	assert_int_equal(r, 0);
	r = vg_bpf_counters_new(1, false, 0, &c, &err);
	if (r == -EPERM || r == -EACCES) {
		print_message("skipped: %s\n", err.msg);
		return false;
	}
	assert_int_equal(r, 0);
	vg_bpf_counters_free(c);
	return true;
}

#define NEED_PROBES() do { if (!probe_possible()) { skip(); return; } } while (0)

static int load(uint32_t site, enum vg_probe_record_kind kind, bool count, uint32_t stack_bytes,
		const struct vg_bpf_counters *c, const struct vg_bpf_output *o)
{
	struct vg_bpf_prog_spec spec = { .site = site, .kind = kind, .count = count, .stack_bytes = stack_bytes };
	struct vg_error err = { 0 };
	int fd, r = vg_bpf_prog_load(&spec, c, o, &fd, &err);

	if (r < 0)
		fail_msg("vg_bpf_prog_load: %d %s", r, err.msg);
	return fd;
}

static int attach(struct kid *k, bool retprobe, int prog_fd)
{
	struct vg_error err = { 0 };
	int fd, r = vg_uprobe_open(k->exe, k->offset, 0, retprobe, k->pid, prog_fd, &fd, &err);

	if (r < 0)
		fail_msg("vg_uprobe_open: %d %s", r, err.msg);
	assert_int_equal(vg_uprobe_enable(fd, true), 0);
	close(prog_fd);   /* the event holds the program */
	return fd;
}

static size_t index_of_tid(const struct report *rep, pid_t tid)
{
	for (size_t i = 0; i < N_THREADS; i++)
		if (rep->tid[i] == tid)
			return i;
	fail_msg("tid %d is not one of the child's workers", (int)tid);
	return 0;
}

/* ------------------------------------------------------------ tests */

static void test_count_exact(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct vg_bpf_thread_count *tc;
	struct report rep;
	struct kid k;
	uint64_t calls, dropped;
	size_t n;
	int ev;

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_counters_new(3, true, 16, &c, &err), 0);
	assert_int_equal(vg_bpf_counters_gate(c, true, &err), 0);
	k = spawn(false);
	ev = attach(&k, false, load(2, VG_PROBE_REC_ENTRY, true, 0, c, NULL));
	run_child(&k, &rep, NULL, NULL);

	assert_int_equal(vg_bpf_counters_read(c, 2, &calls, &err), 0);
	assert_int_equal(calls, N_CALLS);
	assert_int_equal(vg_bpf_counters_read(c, 0, &calls, &err), 0);
	assert_int_equal(calls, 0);
	assert_int_equal(vg_bpf_counters_read(c, 1, &calls, &err), 0);
	assert_int_equal(calls, 0);
	assert_int_equal(vg_bpf_counters_read(c, 3, &calls, &err), -EINVAL);

	assert_int_equal(vg_bpf_counters_threads(c, &tc, &n, &dropped, &err), 0);
	assert_int_equal(n, N_THREADS);
	assert_int_equal(dropped, 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tc[i].site, 2);
		assert_int_equal(tc[i].calls, CALLS_PER_THREAD);
		(void)index_of_tid(&rep, (pid_t)tc[i].tid);
		if (i)
			assert_true(tc[i - 1].tid < tc[i].tid);
	}
	free(tc);

	/* Closing the event removes the probe: later calls are not counted. */
	close(ev);
	reap(&k);
	vg_bpf_counters_free(c);
}

/* A closed gate (the initial state) stops entry programs from counting
 * and recording: every call is made, none is counted or recorded, while
 * the ungated return program still records each return. */
static void test_gate_closed(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct vg_bpf_output *o;
	struct tally y = { 0 };
	struct report rep;
	struct kid k;
	uint64_t calls;
	int ev[2];

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_counters_new(1, false, 0, &c, &err), 0);
	assert_int_equal(vg_bpf_output_new(256, &o, &err), 0);
	k = spawn(false);
	ev[0] = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, true, 0, c, o));
	ev[1] = attach(&k, true, load(0, VG_PROBE_REC_RETURN, false, 0, NULL, o));
	run_child(&k, &rep, NULL, NULL);
	close(ev[0]);
	close(ev[1]);
	assert_int_equal(vg_bpf_counters_read(c, 0, &calls, &err), 0);
	assert_int_equal(calls, 0);
	assert_int_equal(drain(o, &y, UINT64_MAX), N_CALLS);
	for (size_t i = 0; i < y.n; i++)
		assert_int_equal(y.rec[i].kind, VG_PROBE_REC_RETURN);
	free(y.rec);
	reap(&k);
	vg_bpf_output_free(o);
	vg_bpf_counters_free(c);
}

/* A full per-thread table drops pairs, never calls from the total. */
static void test_per_thread_table_full(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct vg_bpf_thread_count *tc;
	struct report rep;
	struct kid k;
	uint64_t calls, dropped;
	size_t n;
	int ev;

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_counters_new(1, true, 2, &c, &err), 0);
	assert_int_equal(vg_bpf_counters_gate(c, true, &err), 0);
	k = spawn(false);
	ev = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, true, 0, c, NULL));
	run_child(&k, &rep, NULL, NULL);

	assert_int_equal(vg_bpf_counters_read(c, 0, &calls, &err), 0);
	assert_int_equal(calls, N_CALLS);
	assert_int_equal(vg_bpf_counters_threads(c, &tc, &n, &dropped, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(tc[0].calls, CALLS_PER_THREAD);
	assert_int_equal(tc[1].calls, CALLS_PER_THREAD);
	assert_int_equal(dropped, CALLS_PER_THREAD);
	free(tc);
	close(ev);
	reap(&k);
	vg_bpf_counters_free(c);
}

/* Per thread, records must alternate entry, return with rising times;
 * each entry's DI and SI are the call's arguments, each return's AX its
 * result.  Returns how many pairs were checked. */
static size_t check_pairs(const struct tally *y, const struct report *rep, pid_t pid)
{
	size_t pairs = 0, next[N_THREADS] = { 0 };
	bool open[N_THREADS] = { false };
	const struct seen *entry[N_THREADS] = { NULL };

	for (size_t i = 0; i < y->n; i++) {
		const struct seen *s = &y->rec[i];
		size_t t = index_of_tid(rep, s->tid);

		assert_int_equal(s->pid, pid);
		assert_int_equal(s->site, 0);
		if (s->kind == VG_PROBE_REC_ENTRY) {
			assert_false(open[t]);
			assert_int_equal((int)s->regs[VG_PR_DI], (int)t + 1);
			assert_int_equal((long)s->regs[VG_PR_SI], call_arg((int)t, (long)next[t]));
			assert_int_equal(s->regs[VG_PR_IP], (uint64_t)(uintptr_t)&bpf_test_target);
			open[t] = true;
			entry[t] = s;
			next[t]++;
		} else {
			assert_int_equal(s->kind, VG_PROBE_REC_RETURN);
			assert_true(open[t]);
			assert_true(entry[t]->time < s->time);
			assert_int_equal((int)s->regs[VG_PR_AX],
					 expected_return((int)t + 1, call_arg((int)t, (long)next[t] - 1)));
			assert_int_equal(s->stack_len, 0);
			open[t] = false;
			pairs++;
		}
	}
	for (size_t t = 0; t < N_THREADS; t++) {
		assert_int_equal(next[t], CALLS_PER_THREAD);
		assert_false(open[t]);
	}
	return pairs;
}

static void test_records_entry_return(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct vg_bpf_output *o;
	struct vg_bpf_output_stats st;
	struct tally y = { 0 };
	struct report rep;
	struct kid k;
	uint64_t calls, t_go;
	const int *fds;
	size_t n_fds;
	int ev[2];

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_counters_new(1, false, 0, &c, &err), 0);
	assert_int_equal(vg_bpf_counters_gate(c, true, &err), 0);
	assert_int_equal(vg_bpf_output_new(256, &o, &err), 0);
	fds = vg_bpf_output_fds(o, &n_fds);
	assert_int_equal(n_fds, (size_t)sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < n_fds; i++)
		assert_true(fds[i] >= 0);
	k = spawn(false);
	ev[0] = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, true, 0, c, o));
	ev[1] = attach(&k, true, load(0, VG_PROBE_REC_RETURN, false, 0, NULL, o));
	t_go = now_ns();
	run_child(&k, &rep, NULL, NULL);
	close(ev[0]);
	close(ev[1]);

	/* Records newer than until wait, in order, for the next call. */
	assert_int_equal(drain(o, &y, 0), 0);
	assert_int_equal(drain(o, &y, t_go), 0);
	assert_int_equal(drain(o, &y, UINT64_MAX), 2 * N_CALLS);
	assert_int_equal(drain(o, &y, UINT64_MAX), 0);
	assert_int_equal(y.n, 2 * N_CALLS);
	assert_int_equal(y.late, 0);
	assert_int_equal(y.unordered, 0);
	assert_int_equal(y.short_len, 0);
	assert_int_equal(check_pairs(&y, &rep, k.pid), N_CALLS);

	vg_bpf_output_stats(o, &st);
	assert_int_equal(st.records, 2 * N_CALLS);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.dropped_nomem, 0);
	assert_int_equal(vg_bpf_counters_read(c, 0, &calls, &err), 0);
	assert_int_equal(calls, N_CALLS);

	free(y.rec);
	reap(&k);
	vg_bpf_output_free(o);
	vg_bpf_counters_free(c);
}

/* Stacks: 1024 bytes at SP at entry, whose first word is the return
 * address (into worker_main), while the return probe is armed too.
 * Drained while the child runs, in time order up to "now". */
static void test_records_with_stack(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_output *o;
	struct vg_bpf_output_stats st;
	struct tally y = { 0 };
	struct report rep;
	struct kid k;
	uint64_t ret_addr = 0;
	size_t entries = 0;
	int ev[2];

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_output_new(1024, &o, &err), 0);
	k = spawn(false);
	ev[0] = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, false, 1024, NULL, o));
	ev[1] = attach(&k, true, load(0, VG_PROBE_REC_RETURN, false, 0, NULL, o));
	run_child(&k, &rep, o, &y);
	close(ev[0]);
	close(ev[1]);
	drain(o, &y, UINT64_MAX);
	assert_int_equal(y.late, 0);
	assert_int_equal(y.unordered, 0);
	assert_int_equal(y.short_len, 0);
	assert_int_equal(check_pairs(&y, &rep, k.pid), N_CALLS);

	for (size_t i = 0; i < y.n; i++) {
		const struct seen *s = &y.rec[i];

		if (s->kind == VG_PROBE_REC_RETURN) {
			/* After the return, IP is the address returned to. */
			assert_int_equal(s->regs[VG_PR_IP], ret_addr);
			continue;
		}
		entries++;
		assert_int_equal(s->stack_len, 1024);
		if (!ret_addr)
			ret_addr = s->first_word;
		assert_int_equal(s->first_word, ret_addr);
	}
	assert_int_equal(entries, N_CALLS);
	assert_true(ret_addr >= k.text_lo && ret_addr < k.text_hi);
	assert_true(ret_addr > (uint64_t)(uintptr_t)&worker_main &&
		    ret_addr < (uint64_t)(uintptr_t)&worker_main + 4096);

	vg_bpf_output_stats(o, &st);
	assert_int_equal(st.records, 2 * N_CALLS);
	assert_int_equal(st.lost, 0);
	free(y.rec);
	reap(&k);
	vg_bpf_output_free(o);
}

/* A stack top closer than stack_bytes: the copy stops at the first
 * 512-byte piece that reaches past it. */
static void test_stack_copy_stops_at_top(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_output *o;
	struct tally y = { 0 };
	struct report rep;
	struct kid k;
	int ev;

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_output_new(1024, &o, &err), 0);
	k = spawn(true);
	ev = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, false, 16384, NULL, o));
	run_child(&k, &rep, o, &y);
	close(ev);
	drain(o, &y, UINT64_MAX);
	assert_int_equal(y.n, N_CALLS);
	assert_int_equal(y.short_len, 0);
	for (size_t i = 0; i < y.n; i++) {
		const struct seen *s = &y.rec[i];
		uint64_t top = rep.stack_top[index_of_tid(&rep, s->tid)];
		uint64_t sp = s->regs[VG_PR_SP];

		assert_true(top > sp && top - sp < 16384);
		assert_int_equal(s->stack_len, (top - sp) / 512 * 512);
		assert_true(s->stack_len > 0);
	}
	free(y.rec);
	reap(&k);
	vg_bpf_output_free(o);
}

/* A ring too small for the burst: every record is either handed out or
 * counted lost, exactly, even with no record written after the losses. */
static void test_lost_exact(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_output *o;
	struct vg_bpf_output_stats st;
	struct tally y = { 0 };
	struct report rep;
	struct kid k;
	int ev;

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_output_new(1, &o, &err), 0);
	k = spawn(false);
	ev = attach(&k, false, load(0, VG_PROBE_REC_ENTRY, false, 1024, NULL, o));
	run_child(&k, &rep, NULL, NULL);
	close(ev);
	vg_bpf_output_stats(o, &st);
	assert_true(st.lost > 0);
	assert_int_equal(drain(o, &y, UINT64_MAX), N_CALLS - st.lost);
	vg_bpf_output_stats(o, &st);
	assert_int_equal(st.records + st.lost, N_CALLS);
	assert_int_equal(st.malformed, 0);
	free(y.rec);
	reap(&k);
	vg_bpf_output_free(o);
}

static void *lone_worker(void *arg)
{
	int *fds = arg;
	char byte;

	if (read(fds[0], &byte, 1) != 1)
		_exit(95);
	for (long i = 0; i < CALLS_PER_THREAD; i++)
		sink += bpf_test_target(1, i);
	if (write(fds[1], "d", 1) != 1)
		_exit(96);
	pause();
	return NULL;
}

/* A main thread that called pthread_exit cannot carry the probe (the
 * sentence says so); a live thread of the process can, for all of it. */
static void test_zombie_leader(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct kid k = { 0 };
	char path[64], byte;
	int go[2], done[2], fd, prog, st;
	pid_t worker = 0;
	uint64_t calls;
	DIR *d;
	struct dirent *e;

	(void)state;
	NEED_PROBES();
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(done, O_CLOEXEC), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		int fds[2] = { go[0], done[1] };
		pthread_t t;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&t, NULL, lone_worker, fds) != 0)
			_exit(97);
		pthread_exit(NULL);
	}
	close(go[0]);
	close(done[1]);
	tu_wait_zombie(k.pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)k.pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != k.pid)
			worker = atoi(e->d_name);
	closedir(d);
	assert_true(worker > 0);
	/* A zombie leader has no maps and no exe link: read the worker's. */
	{
		struct kid w = { .pid = worker };

		find_offset(&w);
		memcpy(k.exe, w.exe, sizeof(k.exe));
		k.offset = w.offset;
	}
	assert_int_equal(vg_bpf_counters_new(1, false, 0, &c, &err), 0);
	assert_int_equal(vg_bpf_counters_gate(c, true, &err), 0);
	prog = load(0, VG_PROBE_REC_ENTRY, true, 0, c, NULL);
	assert_int_equal(vg_uprobe_open(k.exe, k.offset, 0, false, k.pid, prog, &fd, &err), -ESRCH);
	assert_non_null(strstr(err.msg, "live thread"));
	vg_error_clear(&err);
	assert_int_equal(vg_uprobe_open(k.exe, k.offset, 0, false, worker, prog, &fd, &err), 0);
	assert_int_equal(vg_uprobe_enable(fd, true), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &byte, 1), 1);
	assert_int_equal(vg_bpf_counters_read(c, 0, &calls, &err), 0);
	assert_int_equal(calls, CALLS_PER_THREAD);

	close(fd);
	close(prog);
	close(go[1]);
	close(done[0]);
	kill(k.pid, SIGKILL);
	assert_int_equal(waitpid(k.pid, &st, 0), k.pid);
	vg_bpf_counters_free(c);
}

static int data_marker = 42;   /* in .data: a file-backed, non-executable place */

static void test_errors(void **state)
{
	struct vg_error err = { 0 };
	struct vg_bpf_counters *c;
	struct vg_bpf_prog_spec spec = { .site = 0, .kind = VG_PROBE_REC_ENTRY, .count = true, .stack_bytes = 100 };
	char path[64], line[4096];
	uint64_t data_off = 0;
	FILE *f;
	struct kid self = { 0 };
	pid_t dead;
	int fd, prog, st;

	(void)state;
	NEED_PROBES();
	assert_int_equal(vg_bpf_counters_new(1, false, 0, &c, &err), 0);
	assert_int_equal(vg_bpf_counters_gate(c, true, &err), 0);
	/* Not a multiple of 512. */
	assert_int_equal(vg_bpf_prog_load(&spec, c, NULL, &prog, &err), -EINVAL);
	vg_error_clear(&err);
	spec.stack_bytes = 0;
	prog = load(0, VG_PROBE_REC_ENTRY, true, 0, c, NULL);

	assert_int_equal(vg_uprobe_open("/nonexistent/vigil-probe", 0x1000, 0, false, getpid(), prog,
					&fd, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/vigil-probe"));
	assert_int_equal(fd, -1);
	vg_error_clear(&err);

	/* The file offset of data_marker: in the rw-p mapping of our exe. */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)getpid());
	f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		uintptr_t a = (uintptr_t)&data_marker;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && a >= lo && a < hi)
			data_off = off + (a - lo);
	}
	fclose(f);
	assert_true(data_off != 0);
	assert_int_equal(vg_uprobe_open(path, data_off, 0, false, getpid(), prog, &fd, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "not in an executable segment"));
	vg_error_clear(&err);
	assert_int_equal(vg_uprobe_open(path, 1ull << 40, 0, false, getpid(), prog, &fd, &err),
			 -EINVAL);
	vg_error_clear(&err);

	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, &st, 0), dead);
	self.pid = getpid();
	find_offset(&self);
	assert_int_equal(vg_uprobe_open(path, self.offset, 0, false, dead, prog, &fd, &err), -ESRCH);
	assert_non_null(strstr(err.msg, "gone"));
	close(prog);
	vg_bpf_counters_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_exact),
		cmocka_unit_test(test_gate_closed),
		cmocka_unit_test(test_per_thread_table_full),
		cmocka_unit_test(test_records_entry_return),
		cmocka_unit_test(test_records_with_stack),
		cmocka_unit_test(test_stack_copy_stops_at_top),
		cmocka_unit_test(test_lost_exact),
		cmocka_unit_test(test_zombie_leader),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
