/* test_perf_event.c - the perf layer (src/perf) on a live child, with
 * exact counts.
 *
 * Hardware breakpoints are accepted but never fire on some virtual
 * machines, so these tests use an event that always does: a uprobe (the
 * uprobe PMU through perf_event_open alone, no tracefs) on vgt_probe_me()
 * in this very binary.  The child is a fork of this test, so the
 * function's address here is its address there, and every call is one
 * sample (sample_period 1; software events are never throttled on their
 * first overflow).  The ring, records and duplicate guard do not care
 * which PMU wrote the samples.
 *
 * Kernel behaviour these tests pin down (6.x):
 *  - PERF_EVENT_IOC_MODIFY_ATTRIBUTES on a uprobe event fails with
 *    EOPNOTSUPP (only breakpoints can be modified);
 *  - with inherit_thread=1, a process fork()ed by the target inherits
 *    nothing: its calls produce no sample at all (other_process stays 0),
 *    but its parent's task events still write a PERF_RECORD_FORK naming
 *    the new pid, which the set passes on without adding it to coverage;
 *  - a uprobe sample is dropped when the event that would take it targets
 *    a thread without an mm (trace_uprobe's filter reads
 *    event->hw.target->mm).  After the scheduler swaps the contexts of a
 *    thread and the thread that inherited from it (equivalent contexts
 *    are swapped, not rescheduled), each runs with the other's events; once
 *    the inheriting thread exits, its creator's later calls are not
 *    sampled at all (seen here in about half the runs).  A uprobe-only
 *    effect, not the set's: so no thread here exits while another still
 *    calls the probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/event.h"
#include "perf/records.h"
#include "perf/ring.h"
#include "target/target.h"

/* The probed function: one sample per call. */
__attribute__((noinline, used)) void vgt_probe_me(void);
__attribute__((noinline, used)) void vgt_probe_me(void)
{
	__asm__ volatile("" ::: "memory");
}

static void probe_n(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		vgt_probe_me();
}

/* x86-64 perf register indices (asm/perf_regs.h). */
enum { R_AX = 0, R_CX = 2, R_DI = 5, R_SP = 7, R_IP = 8, R_DS = 12, R_ES, R_FS, R_GS, R_R15 = 23 };
/* Every register a 64-bit task can sample: DS, ES, FS and GS are refused. */
#define ALL_REGS (((1ull << 24) - 1) & ~(0xfull << R_DS))

static char exe_path[PATH_MAX];
static uint64_t probe_offset;    /* file offset of vgt_probe_me */
static int uprobe_type = -1;

/* ---------------------------------------------------------------- helpers */

static void read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		got += (size_t)n;
	}
}

static void write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(90);
		done += (size_t)n;
	}
}

static int setup_uprobe(void **state)
{
	FILE *f;
	char line[PATH_MAX + 128];
	ssize_t len;
	uintptr_t fn = (uintptr_t)&vgt_probe_me;

	(void)state;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (!f || fscanf(f, "%d", &uprobe_type) != 1)
		uprobe_type = -1;
	if (f)
		fclose(f);
	len = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (len <= 0)
		return -1;
	exe_path[len] = '\0';
	/* file offset = runtime address - mapping start + mapping offset */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && fn >= lo && fn < hi) {
			probe_offset = fn - lo + off;
			break;
		}
	}
	fclose(f);
	return probe_offset ? 0 : -1;
}

static void need_uprobe(void)
{
	if (uprobe_type < 0) {
		print_message("no uprobe PMU (/sys/bus/event_source/devices/uprobe)\n");
		skip();
	}
	if (geteuid() != 0) {
		print_message("uprobe events on another process need root\n");
		skip();
	}
}

static struct perf_event_attr probe_attr(uint64_t regs_mask)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)uprobe_type;
	a.config1 = (uint64_t)(uintptr_t)exe_path;
	a.config2 = probe_offset;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP;
	if (regs_mask) {
		a.sample_type |= PERF_SAMPLE_REGS_USER;
		a.sample_regs_user = regs_mask;
	}
	return a;
}

/* A child (fork of this test) running body; go: parent -> child, res:
 * child -> parent.  The child dies with the test. */
struct kid {
	pid_t pid;
	int go, res;
};

static struct kid spawn(void (*body)(int go, int res))
{
	int g[2], r[2];
	struct kid k;

	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	assert_int_equal(pipe2(r, O_CLOEXEC), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(g[1]);
		close(r[0]);
		body(g[0], r[1]);
		_exit(0);
	}
	close(g[0]);
	close(r[1]);
	k.go = g[1];
	k.res = r[0];
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

/* Wait until /proc/PID/task lists n threads: an exited thread leaves it
 * only after the kernel wrote its EXIT record (pthread_join can return
 * earlier). */
static void wait_threads(pid_t pid, size_t n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int i = 0; i < 5000; i++) {
		DIR *d = opendir(path);
		struct dirent *e;
		size_t count = 0;

		assert_non_null(d);
		while ((e = readdir(d)))
			count += e->d_name[0] != '.';
		closedir(d);
		if (count == n)
			return;
		usleep(1000);
	}
	fail_msg("pid %d never came down to %zu threads", (int)pid, n);
}

/* What the consumer saw. */
#define MAX_TIDS 64
struct tally {
	uint64_t want_ip;
	uint64_t samples, bad_ip, bad_regs, before_start, wrong_slot;
	pid_t tid[MAX_TIDS];
	uint64_t count[MAX_TIDS];
	size_t n_tids;
	struct {
		uint32_t type;
		struct vg_perf_task t;
	} task[MAX_TIDS];
	size_t n_task;
	uint64_t regs_mask;         /* REGS_USER expected: check IP and SP */
};

static void on_sample(const struct vg_perf_hit *hit, void *arg)
{
	struct tally *y = arg;
	const struct vg_perf_sample *s = hit->sample;
	size_t i;

	y->samples++;
	y->bad_ip += s->ip != y->want_ip;
	y->before_start += hit->before_start;
	y->wrong_slot += hit->slot != 0;
	if (y->regs_mask)
		y->bad_regs += s->regs_abi != PERF_SAMPLE_REGS_ABI_64 || s->regs.mask != y->regs_mask ||
			       s->regs.regs[R_IP] != y->want_ip || s->regs.regs[R_SP] == 0;
	for (i = 0; i < y->n_tids && y->tid[i] != (pid_t)s->tid; i++)
		;
	if (i == y->n_tids) {
		if (i == MAX_TIDS)
			return;
		y->tid[y->n_tids++] = (pid_t)s->tid;
	}
	y->count[i]++;
}

static void on_task(const struct perf_event_header *h, const struct vg_perf_task *t, void *arg)
{
	struct tally *y = arg;

	if (y->n_task < MAX_TIDS) {
		y->task[y->n_task].type = h->type;
		y->task[y->n_task++].t = *t;
	}
}

static uint64_t count_of(const struct tally *y, pid_t tid)
{
	for (size_t i = 0; i < y->n_tids; i++)
		if (y->tid[i] == tid)
			return y->count[i];
	return 0;
}

static const struct vg_cover_tid *cover_of(const struct vg_perf_set *s, pid_t tid)
{
	size_t n;
	const struct vg_cover_tid *c = vg_perf_set_threads(s, &n);

	for (size_t i = 0; i < n; i++)
		if (c[i].tid == tid)
			return &c[i];
	return NULL;
}

/* Drain (the parent keeps up) until len bytes came from the child. */
static void drain_until(struct vg_perf_set *s, const struct vg_perf_consumer *c, int fd,
			void *buf, size_t len)
{
	size_t got = 0;
	uint64_t deadline = vg_perf_now() + 20ull * 1000000000ull;

	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = vg_perf_set_wait(s, &pfd, 1, 100);

		assert_true(r >= 0 || r == -EINTR);
		vg_perf_set_drain(s, c);
		if (pfd.revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(fd, (char *)buf + got, len - got);

			assert_true(n > 0);
			got += (size_t)n;
		}
		assert_true(vg_perf_now() < deadline);
	}
	vg_perf_set_drain(s, c);
}

struct fixture {
	struct vg_error err;
	struct vg_target *t;
	struct vg_perf_set *s;
	struct tally y;
	struct vg_perf_consumer c;
};

static void open_set(struct fixture *f, pid_t pid, size_t pages, uint64_t regs_mask)
{
	struct perf_event_attr a = probe_attr(regs_mask);

	memset(f, 0, sizeof(*f));
	f->y.want_ip = (uint64_t)(uintptr_t)&vgt_probe_me;
	f->y.regs_mask = regs_mask;
	f->c = (struct vg_perf_consumer){ on_sample, on_task, &f->y, NULL };
	assert_int_equal(vg_target_open(pid, &f->t, &f->err), 0);
	assert_int_equal(vg_perf_set_new(f->t, pages, &f->s, &f->err), 0);
	assert_int_equal(vg_perf_set_add(f->s, &a, &f->err), 0);
	if (vg_perf_set_attach(f->s, &f->c, &f->err) != 0)
		fail_msg("attach: %s", f->err.msg);
}

static void close_set(struct fixture *f)
{
	f->s = vg_perf_set_free(f->s);
	f->t = vg_target_free(f->t);
}

static void assert_clean(const struct vg_perf_stats *st)
{
	assert_int_equal(st->lost, 0);
	assert_int_equal(st->lost_records, 0);
	assert_int_equal(st->throttled, 0);
	assert_int_equal(st->undecodable, 0);
	assert_int_equal(st->other_process, 0);
	assert_int_equal(st->duplicates, 0);
	assert_int_equal(st->before_start, 0);
}

/* ------------------------------------------- 1. coverage with no window */

/* Index 0: main; 1-3: seed threads (exist before attach); 4: created by
 * main after attach; 5: created by seed 1 after attach. */
#define NT 6
static pthread_barrier_t ready_b, go_b, done_b;
static pid_t ctid[NT];
static uint32_t ccount[NT];

static void calls(int idx)
{
	uint32_t n = idx == 0 ? 500 : 1000 + (uint32_t)idx;

	ctid[idx] = gettid();
	probe_n(n);
	ccount[idx] = n;
	/* No thread ends before every thread is done calling: see
	 * "Kernel behaviour" at the top. */
	pthread_barrier_wait(&done_b);
}

static void *late_thread(void *arg)
{
	calls((int)(intptr_t)arg);
	return NULL;
}

static void *seed_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	pthread_t late;

	ctid[idx] = gettid();
	pthread_barrier_wait(&ready_b);
	pthread_barrier_wait(&go_b);
	if (idx == 1 && pthread_create(&late, NULL, late_thread, (void *)(intptr_t)5) != 0)
		_exit(91);
	calls(idx);
	if (idx == 1)
		pthread_join(late, NULL);
	return NULL;
}

static void coverage_child(int go, int res)
{
	pthread_t th[4];
	char c;

	pthread_barrier_init(&ready_b, NULL, 4);
	pthread_barrier_init(&go_b, NULL, 4);
	pthread_barrier_init(&done_b, NULL, NT);
	for (int i = 1; i <= 3; i++)
		if (pthread_create(&th[i], NULL, seed_thread, (void *)(intptr_t)i) != 0)
			_exit(91);
	pthread_barrier_wait(&ready_b);
	ctid[0] = gettid();
	write_full(res, ctid, 4 * sizeof(pid_t));
	if (read(go, &c, 1) != 1)
		_exit(92);
	if (pthread_create(&th[0], NULL, late_thread, (void *)(intptr_t)4) != 0)
		_exit(91);
	pthread_barrier_wait(&go_b);
	calls(0);
	for (int i = 0; i <= 3; i++)
		pthread_join(th[i], NULL);
	write_full(res, ctid, sizeof(ctid));
	write_full(res, ccount, sizeof(ccount));
	while (read(go, &c, 1) > 0)   /* until the parent closes */
		;
}

static void test_coverage_no_window(void **state)
{
	struct fixture f;
	struct kid k;
	pid_t seeds[4], tids[NT];
	uint32_t counts[NT];
	uint64_t total = 0;
	size_t n;

	(void)state;
	need_uprobe();
	k = spawn(coverage_child);
	read_full(k.res, seeds, sizeof(seeds));
	open_set(&f, k.pid, 64, 0);
	assert_int_equal(vg_perf_set_ncpus(f.s), sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(vg_perf_set_nevents(f.s), 4 * (size_t)vg_perf_set_ncpus(f.s));
	vg_perf_set_threads(f.s, &n);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		const struct vg_cover_tid *c = cover_of(f.s, seeds[i]);

		assert_non_null(c);
		assert_int_equal(c->how, VG_COVER_SEEDED);
		assert_false(c->exited);
	}

	write_full(k.go, "g", 1);
	drain_until(f.s, &f.c, k.res, tids, sizeof(tids));
	read_full(k.res, counts, sizeof(counts));
	wait_threads(k.pid, 1);
	vg_perf_set_drain(f.s, &f.c);

	for (int i = 0; i < 4; i++)
		assert_int_equal(tids[i], seeds[i]);
	assert_int_equal(tids[0], k.pid);
	for (int i = 0; i < NT; i++) {
		assert_int_equal(counts[i], i == 0 ? 500 : 1000 + i);
		assert_int_equal(count_of(&f.y, tids[i]), counts[i]);
		total += counts[i];
	}
	assert_int_equal(f.y.n_tids, NT);
	assert_int_equal(f.y.samples, total);
	assert_int_equal(f.y.bad_ip, 0);
	assert_int_equal(f.y.wrong_slot, 0);
	assert_int_equal(vg_perf_set_stats(f.s)->samples, total);
	assert_clean(vg_perf_set_stats(f.s));
	assert_int_equal(vg_perf_set_stats(f.s)->exited_during_setup, 0);

	/* Coverage: the seeds as seeded, the late ones inherited from the
	 * thread that created them; every thread but main has exited. */
	vg_perf_set_threads(f.s, &n);
	assert_int_equal(n, NT);
	for (int i = 0; i < NT; i++) {
		const struct vg_cover_tid *c = cover_of(f.s, tids[i]);

		assert_non_null(c);
		assert_int_equal(c->how, i < 4 ? VG_COVER_SEEDED : VG_COVER_INHERITED);
		if (i >= 4)
			assert_int_equal(c->parent, i == 4 ? tids[0] : tids[1]);
		assert_int_equal(c->exited, i != 0);
	}
	assert_string_equal(vg_cover_how_name(cover_of(f.s, tids[4])->how), "inherited");
	assert_string_equal(vg_cover_how_name(cover_of(f.s, tids[0])->how), "seeded");
	close_set(&f);
	reap(&k);
}

/* -------------------------------------- 2. a fork()ed process is not covered */

static void fork_child(int go, int res)
{
	char c;
	pid_t g;
	int32_t out[2];

	out[1] = (int32_t)gettid();
	write_full(res, &out[1], sizeof(out[1]));
	if (read(go, &c, 1) != 1)
		_exit(92);
	g = fork();
	if (g == 0) {
		probe_n(100);
		_exit(0);
	}
	if (g < 0 || waitpid(g, NULL, 0) != g)
		_exit(93);
	probe_n(300);
	out[0] = g;
	write_full(res, out, sizeof(out));
	while (read(go, &c, 1) > 0)
		;
}

static void test_fork_not_covered(void **state)
{
	struct fixture f;
	struct kid k;
	int32_t me, out[2];
	size_t n, forks = 0;

	(void)state;
	need_uprobe();
	k = spawn(fork_child);
	read_full(k.res, &me, sizeof(me));
	open_set(&f, k.pid, 16, 0);
	write_full(k.go, "g", 1);
	drain_until(f.s, &f.c, k.res, out, sizeof(out));

	/* Only the child's own 300 calls: the grandchild's 100 produce no
	 * sample at all (inherit_thread: nothing is inherited by fork()), so
	 * there is not even one to exclude. */
	assert_int_equal(f.y.samples, 300);
	assert_int_equal(count_of(&f.y, me), 300);
	assert_int_equal(count_of(&f.y, out[0]), 0);
	assert_int_equal(f.y.n_tids, 1);
	assert_int_equal(f.y.bad_ip, 0);
	assert_clean(vg_perf_set_stats(f.s));
	assert_int_equal(vg_perf_set_stats(f.s)->samples, 300);

	/* The kernel still reports the fork: a FORK record naming the new
	 * process, passed to the consumer, not added to coverage. */
	for (size_t i = 0; i < f.y.n_task; i++)
		if (f.y.task[i].type == PERF_RECORD_FORK && (pid_t)f.y.task[i].t.pid == out[0]) {
			assert_int_equal(f.y.task[i].t.ppid, k.pid);
			assert_int_equal(f.y.task[i].t.tid, out[0]);
			forks++;
		}
	assert_int_equal(forks, 1);
	assert_null(cover_of(f.s, out[0]));
	vg_perf_set_threads(f.s, &n);
	assert_int_equal(n, 1);
	close_set(&f);
	reap(&k);
}

/* --------------------------------------------- 3. LOST accounting, exact */

/* Pinned to one CPU, so one ring gets everything: a LOST record is
 * written before the next record that fits in the same ring, which the
 * next round's first call provides. */
static void lost_child(int go, int res)
{
	int32_t n;
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		_exit(94);
	n = (int32_t)gettid();
	write_full(res, &n, sizeof(n));
	for (;;) {
		if (read(go, &n, sizeof(n)) != sizeof(n) || n <= 0)
			break;
		probe_n((unsigned)n);
		write_full(res, "d", 1);
	}
}

static void test_lost_exact(void **state)
{
	/* The last round's single call flushes the LOST record of the one
	 * before it. */
	static const int32_t rounds[] = { 6000, 5000, 8999, 1 };
	struct fixture f;
	struct kid k;
	int32_t me, sum = 0;
	const struct vg_perf_stats *st;

	(void)state;
	need_uprobe();
	k = spawn(lost_child);
	read_full(k.res, &me, sizeof(me));
	/* One data page; samples of 208 bytes (20 registers): a ring holds 19
	 * and they straddle its end after the first drain. */
	open_set(&f, k.pid, 1, ALL_REGS);
	for (size_t i = 0; i < sizeof(rounds) / sizeof(rounds[0]); i++) {
		char c;

		write_full(k.go, &rounds[i], sizeof(rounds[i]));
		read_full(k.res, &c, 1);   /* no draining meanwhile */
		vg_perf_set_drain(f.s, &f.c);
		sum += rounds[i];
	}
	assert_int_equal(sum, 20000);
	st = vg_perf_set_stats(f.s);
	print_message("# samples %llu lost %llu in %llu LOST records\n",
		      (unsigned long long)st->samples, (unsigned long long)st->lost,
		      (unsigned long long)st->lost_records);
	assert_int_equal(st->samples + st->lost, 20000);
	assert_true(st->lost > 0);
	assert_int_equal(st->lost_records, 3);
	assert_int_equal(st->undecodable, 0);
	assert_int_equal(st->duplicates, 0);
	assert_int_equal(st->other_process, 0);
	assert_int_equal(f.y.samples, st->samples);
	assert_int_equal(f.y.n_tids, 1);
	assert_int_equal(count_of(&f.y, me), st->samples);
	assert_int_equal(f.y.bad_ip, 0);
	assert_int_equal(f.y.bad_regs, 0);
	close_set(&f);
	reap(&k);
}

/* ------------------- 4b. drained in time order across per-CPU rings */

/* One thread that hops between two CPUs every 100 calls: its samples
 * land in both rings, interleaved in time. */
static void hop_child(int go, int res)
{
	int32_t n;
	cpu_set_t set;

	n = (int32_t)gettid();
	write_full(res, &n, sizeof(n));
	if (read(go, &n, sizeof(n)) != sizeof(n))
		_exit(95);
	for (int r = 0; r < 10; r++) {
		CPU_ZERO(&set);
		CPU_SET(r % 2, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			_exit(96);
		probe_n(100);
		if (r == 4) {   /* the middle, on the samples' clock */
			uint64_t mid = vg_perf_now();

			write_full(res, &mid, sizeof(mid));
		}
	}
	write_full(res, "d", 1);
	for (;;)
		pause();
}

struct times {
	uint64_t t[2000];
	size_t n;
	size_t inversions;
};

static void on_time(const struct vg_perf_hit *hit, void *arg)
{
	struct times *x = arg;

	/* One thread's samples are µs apart: strictly increasing in order
	 * (a repeated time is a record handed out twice). */
	if (x->n && hit->sample->time <= x->t[x->n - 1])
		x->inversions++;
	if (x->n < sizeof(x->t) / sizeof(x->t[0]))
		x->t[x->n++] = hit->sample->time;
}

static void hop_round(bool ordered, struct times *x)
{
	struct perf_event_attr a = probe_attr(0);
	struct vg_perf_consumer c = { on_time, NULL, x, NULL };
	struct vg_error err = { 0 };
	struct vg_target *t;
	struct vg_perf_set *s;
	struct kid k;
	int32_t me, go = 1;
	uint64_t mid;
	char done;

	memset(x, 0, sizeof(*x));
	k = spawn(hop_child);
	read_full(k.res, &me, sizeof(me));
	assert_int_equal(vg_target_open(k.pid, &t, &err), 0);
	assert_int_equal(vg_perf_set_new(t, 64, &s, &err), 0);
	assert_int_equal(vg_perf_set_add(s, &a, &err), 0);
	assert_int_equal(vg_perf_set_attach(s, &c, &err), 0);
	write_full(k.go, &go, sizeof(go));
	read_full(k.res, &mid, sizeof(mid));
	read_full(k.res, &done, 1);
	if (ordered) {
		/* Cut in the middle: the newer half waits for the next drain
		 * (it is kept, renumbered, and handed out after the older). */
		vg_perf_set_drain_ordered(s, &c, mid);
		assert_true(x->n >= 500 && x->n < 1000);
		vg_perf_set_drain_ordered(s, &c, UINT64_MAX);
	} else {
		vg_perf_set_drain(s, &c);
	}
	assert_int_equal(vg_perf_set_stats(s)->lost, 0);
	vg_perf_set_free(s);
	vg_target_free(t);
	reap(&k);
}

static void test_drain_ordered(void **state)
{
	struct times *x = calloc(1, sizeof(*x));

	(void)state;
	need_uprobe();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	assert_non_null(x);
	/* Ring after ring: the hops show as times going back. */
	hop_round(false, x);
	assert_int_equal(x->n, 1000);
	assert_true(x->inversions > 0);
	/* Ordered: every sample after the one before it. */
	hop_round(true, x);
	assert_int_equal(x->n, 1000);
	assert_int_equal(x->inversions, 0);
	free(x);
}

/* ------------------------------ 4. threads exiting during setup are fine */

static void *short_thread(void *arg)
{
	probe_n(3);
	return arg;
}

static void churn_child(int go, int res)
{
	(void)go;
	write_full(res, "r", 1);
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_thread, NULL) != 0)
			_exit(91);
		pthread_join(t, NULL);
	}
}

static void test_exit_during_setup(void **state)
{
	struct kid k;
	char c;
	unsigned exited = 0, rescans = 0, iterations = 0;

	(void)state;
	need_uprobe();
	k = spawn(churn_child);
	read_full(k.res, &c, 1);
	/* At least 10 attaches, and on until one met a thread that exited
	 * between the task-list scan and its perf_event_open. */
	for (; iterations < 10 || (exited == 0 && iterations < 300); iterations++) {
		struct fixture f;

		open_set(&f, k.pid, 4, 0);   /* fails the test unless attach returns 0 */
		assert_true(vg_perf_set_nevents(f.s) > 0);
		exited += vg_perf_set_stats(f.s)->exited_during_setup;
		rescans += vg_perf_set_stats(f.s)->rescans;
		close_set(&f);
	}
	print_message("# %u attaches, %u threads exited during setup, %u rescans\n", iterations,
		      exited, rescans);
	assert_true(exited > 0);
	reap(&k);
}

/* ----------------------------------- 5. record decoding on built records */

struct rec {
	union {
		struct perf_event_header h;
		uint64_t u[64];
	};
	size_t n;
};

static void rec_begin(struct rec *r, uint32_t type)
{
	memset(r, 0, sizeof(*r));
	r->h.type = type;
	r->n = 1;
}

static void put(struct rec *r, uint64_t v)
{
	assert_true(r->n < 64);
	r->u[r->n++] = v;
	r->h.size = (uint16_t)(r->n * 8);
}

static void test_parse_sample_all_fields(void **state)
{
	struct vg_perf_format fmt = {
		.sample_type = VG_PERF_SAMPLE_SUPPORTED,
		/* AX, SP, IP, R15, and bit 30: decoded past, not stored */
		.regs_user_mask = 1ull << R_AX | 1ull << R_SP | 1ull << R_IP | 1ull << R_R15 | 1ull << 30,
		/* REGS_INTR: CX and DI (the kernel's at a kernel trap) */
		.regs_intr_mask = 1ull << R_CX | 1ull << R_DI,
	};
	struct vg_perf_sample s;
	struct rec r;
	uint64_t id = 0;
	uint8_t stack[16];

	(void)state;
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(0xa0 + i);
	rec_begin(&r, PERF_RECORD_SAMPLE);
	put(&r, 0x1111);                          /* IDENTIFIER */
	put(&r, 0x401000);                        /* IP */
	put(&r, 42ull << 32 | 41);                /* pid 41, tid 42 */
	put(&r, 123456789);                       /* TIME */
	put(&r, 0x7ffd0000);                      /* ADDR */
	put(&r, 0x1111);                          /* ID */
	put(&r, 0x2222);                          /* STREAM_ID */
	put(&r, 0xdead00000003ull);               /* CPU 3, reserved */
	put(&r, 7);                               /* PERIOD */
	put(&r, 2);                               /* CALLCHAIN nr */
	put(&r, PERF_CONTEXT_USER);
	put(&r, 0x401000);
	put(&r, PERF_SAMPLE_REGS_ABI_64);         /* REGS_USER */
	put(&r, 0xa0);                            /* AX */
	put(&r, 0x7ffe0000);                      /* SP */
	put(&r, 0x401000);                        /* IP */
	put(&r, 0xf15);                           /* R15 */
	put(&r, 0x3030);                          /* index 30 */
	put(&r, sizeof(stack));                   /* STACK_USER size */
	memcpy(&r.u[r.n], stack, sizeof(stack));
	r.n += 2;
	put(&r, 12);                              /* dyn_size */
	put(&r, PERF_SAMPLE_REGS_ABI_64);         /* REGS_INTR */
	put(&r, 0x7);                             /* CX */
	put(&r, 0xffff0000);                      /* DI */

	assert_true(vg_perf_parse_sample(&r.h, &fmt, &s));
	assert_int_equal(s.identifier, 0x1111);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 41);
	assert_int_equal(s.tid, 42);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0x7ffd0000);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.period, 7);
	assert_int_equal(s.nr_callchain, 2);
	assert_ptr_equal(s.callchain, &r.u[11]);
	assert_int_equal(s.callchain[0], PERF_CONTEXT_USER);
	assert_int_equal(s.callchain[1], 0x401000);
	assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s.regs.mask, 1ull << R_AX | 1ull << R_SP | 1ull << R_IP | 1ull << R_R15);
	assert_int_equal(s.regs.regs[R_AX], 0xa0);
	assert_int_equal(s.regs.regs[R_SP], 0x7ffe0000);
	assert_int_equal(s.regs.regs[R_IP], 0x401000);
	assert_int_equal(s.regs.regs[R_R15], 0xf15);
	assert_int_equal(s.regs.regs[1], 0);
	assert_int_equal(s.stack_size, 12);
	assert_ptr_equal(s.stack, (const uint8_t *)&r.u[20]);
	assert_memory_equal(s.stack, stack, 12);
	assert_int_equal(s.intr.mask, 1ull << R_CX | 1ull << R_DI);
	assert_int_equal(s.intr.regs[R_CX], 0x7);
	assert_int_equal(s.intr.regs[R_DI], 0xffff0000);
	assert_true(vg_perf_record_identifier(&r.h, &id));
	assert_int_equal(id, 0x1111);

	/* Every shorter record is refused: each field is bounds checked. */
	for (uint16_t size = r.h.size - 8; size >= 8; size -= 8) {
		struct rec t = r;

		t.h.size = size;
		if (vg_perf_parse_sample(&t.h, &fmt, &s))
			fail_msg("a %u-byte record of a %u-byte format parsed", size, r.h.size);
	}
	/* A callchain longer than the record. */
	r.u[10] = 1000;
	assert_false(vg_perf_parse_sample(&r.h, &fmt, &s));
	/* Not a sample. */
	r.u[10] = 2;
	r.h.type = PERF_RECORD_LOST;
	assert_false(vg_perf_parse_sample(&r.h, &fmt, &s));
}

static void test_parse_sample_no_regs_no_stack(void **state)
{
	/* A kernel thread's sample: ABI NONE (no registers follow), stack
	 * size 0 (no data, no dyn_size). */
	struct vg_perf_format fmt = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER,
		.regs_user_mask = ALL_REGS,
	};
	struct vg_perf_sample s;
	struct rec r;

	(void)state;
	rec_begin(&r, PERF_RECORD_SAMPLE);
	put(&r, 9);
	put(&r, 0xffffffff81000000ull);
	put(&r, PERF_SAMPLE_REGS_ABI_NONE);
	put(&r, 0);
	assert_true(vg_perf_parse_sample(&r.h, &fmt, &s));
	assert_int_equal(s.identifier, 9);
	assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_NONE);
	assert_int_equal(s.regs.mask, 0);
	assert_int_equal(s.stack_size, 0);
	assert_null(s.stack);
}

static void test_parse_lost_fork_identifier(void **state)
{
	struct rec r;
	struct vg_perf_task t;
	uint64_t v = 0, id = 0;

	(void)state;
	/* LOST: id, lost, then the sample_id trailer (TID, TIME, IDENTIFIER
	 * for a format of IDENTIFIER|TID|TIME). */
	rec_begin(&r, PERF_RECORD_LOST);
	put(&r, 0x77);
	put(&r, 1234);
	put(&r, 5ull << 32 | 5);
	put(&r, 999);
	put(&r, 0x77);
	assert_true(vg_perf_parse_lost(&r.h, &v));
	assert_int_equal(v, 1234);
	assert_true(vg_perf_record_identifier(&r.h, &id));
	assert_int_equal(id, 0x77);
	r.h.size = 16;
	assert_false(vg_perf_parse_lost(&r.h, &v));

	/* FORK: pid, ppid, tid, ptid, time, trailer. */
	rec_begin(&r, PERF_RECORD_FORK);
	put(&r, 100ull << 32 | 100);      /* pid 100, ppid 100 */
	put(&r, 100ull << 32 | 103);      /* tid 103, ptid 100 */
	put(&r, 5555);
	put(&r, 100ull << 32 | 100);      /* trailer TID */
	put(&r, 5556);                    /* trailer TIME */
	put(&r, 0x88);                    /* trailer IDENTIFIER */
	assert_true(vg_perf_parse_task(&r.h, &t));
	assert_int_equal(t.pid, 100);
	assert_int_equal(t.ppid, 100);
	assert_int_equal(t.tid, 103);
	assert_int_equal(t.ptid, 100);
	assert_int_equal(t.time, 5555);
	assert_true(vg_perf_record_identifier(&r.h, &id));
	assert_int_equal(id, 0x88);
	r.h.type = PERF_RECORD_EXIT;
	assert_true(vg_perf_parse_task(&r.h, &t));
	r.h.size = 24;   /* time missing */
	assert_false(vg_perf_parse_task(&r.h, &t));
	r.h.type = PERF_RECORD_LOST;
	r.h.size = 48;
	assert_false(vg_perf_parse_task(&r.h, &t));
	assert_false(vg_perf_parse_lost(&(struct perf_event_header){ PERF_RECORD_FORK, 0, 24 }, &v));

	/* THROTTLE: time, id, stream_id, trailer. */
	rec_begin(&r, PERF_RECORD_THROTTLE);
	put(&r, 31337);
	put(&r, 0x99);
	put(&r, 0x99);
	assert_true(vg_perf_parse_throttle(&r.h, &v));
	assert_int_equal(v, 31337);

	/* Identifier: a sample's is its first u64; too short -> false. */
	rec_begin(&r, PERF_RECORD_SAMPLE);
	put(&r, 0xabc);
	put(&r, 0xdef);
	assert_true(vg_perf_record_identifier(&r.h, &id));
	assert_int_equal(id, 0xabc);
	r.h.size = 8;
	assert_false(vg_perf_record_identifier(&r.h, &id));
	r.h.type = PERF_RECORD_EXIT;
	assert_false(vg_perf_record_identifier(&r.h, &id));
}

/* ------------------------ ring: wrap-around, on a memfd posing as the ring */

struct seen {
	uint64_t first[8];
	uint16_t size[8];
	uint64_t last[8];
	size_t n, stop_at;
};

static int see(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const uint64_t *u = (const uint64_t *)(const void *)h;

	if (s->n < 8) {
		s->first[s->n] = u[1];
		s->size[s->n] = h->size;
		s->last[s->n] = u[h->size / 8 - 1];
	}
	s->n++;
	return s->n == s->stop_at;
}

static void put_ring(unsigned char *data, size_t size, uint64_t pos, const void *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		data[(pos + i) & (size - 1)] = ((const unsigned char *)src)[i];
}

static void test_ring_wraparound(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd = memfd_create("ring", MFD_CLOEXEC);
	struct vg_ring *ring = NULL;
	struct vg_error err = { 0 };
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t rec[5], pos;
	struct seen seen = { 0 };

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * page)), 0);
	assert_int_equal(vg_ring_map(fd, 3, &ring, &err), -EINVAL);
	assert_int_equal(vg_ring_map(fd, 1, &ring, &err), 0);
	assert_int_equal(vg_ring_size(ring), page);
	meta = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(meta != MAP_FAILED);
	data = (unsigned char *)meta + page;

	/* Three 40-byte records from 24 bytes before the end: the first
	 * straddles it, the others follow at the start. */
	pos = 5 * page - 24;   /* head and tail count bytes ever written */
	meta->data_tail = pos;
	for (int i = 0; i < 3; i++) {
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, sizeof(rec) };

		memcpy(&rec[0], &h, sizeof(h));
		for (int j = 1; j < 5; j++)
			rec[j] = (uint64_t)(i * 10 + j);
		put_ring(data, page, pos + (uint64_t)i * sizeof(rec), rec, sizeof(rec));
	}
	/* And a torn one: its header claims more than was published. */
	{
		struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 64 };

		put_ring(data, page, pos + 3 * sizeof(rec), &h, sizeof(h));
	}
	meta->data_head = pos + 3 * sizeof(rec) + 32;
	assert_int_equal(vg_ring_pending(ring), 3 * sizeof(rec) + 32);

	seen.stop_at = 2;   /* stop after the second: it is consumed */
	assert_int_equal(vg_ring_drain(ring, see, &seen), 2);
	assert_int_equal(meta->data_tail, pos + 2 * sizeof(rec));
	seen.stop_at = 0;
	assert_int_equal(vg_ring_drain(ring, see, &seen), 1);
	assert_int_equal(seen.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(seen.size[i], sizeof(rec));
		assert_int_equal(seen.first[i], (uint64_t)(i * 10 + 1));
		assert_int_equal(seen.last[i], (uint64_t)(i * 10 + 4));
	}
	/* The torn record stays unread. */
	assert_int_equal(meta->data_tail, pos + 3 * sizeof(rec));
	assert_int_equal(vg_ring_pending(ring), 32);

	munmap(meta, 2 * page);
	vg_ring_unmap(ring);
	close(fd);
}

/* --------------------------------------------- 6. modify on a uprobe slot */

static void modify_child(int go, int res)
{
	int32_t n;

	write_full(res, "r", 1);
	while (read(go, &n, sizeof(n)) == sizeof(n) && n > 0) {
		probe_n((unsigned)n);
		write_full(res, "d", 1);
	}
}

static void test_modify_uprobe_refused(void **state)
{
	struct fixture f;
	struct kid k;
	struct perf_event_attr a;
	struct vg_error err = { 0 };
	int32_t n = 250;
	char c;

	(void)state;
	need_uprobe();
	k = spawn(modify_child);
	read_full(k.res, &c, 1);
	open_set(&f, k.pid, 16, 0);

	/* Only breakpoints can be modified: the kernel says EOPNOTSUPP. */
	a = probe_attr(0);
	a.bp_addr = 0x1000;
	a.bp_len = 8;
	a.bp_type = 2;
	assert_int_equal(vg_perf_set_modify(f.s, 0, &a, &err), -EOPNOTSUPP);
	assert_int_equal(err.code, -EOPNOTSUPP);
	assert_true(err.msg[0] != '\0');
	/* No such slot. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(vg_perf_set_modify(f.s, 1, &a, &err), -EINVAL);

	/* The set still works: every call is one sample. */
	write_full(k.go, &n, sizeof(n));
	drain_until(f.s, &f.c, k.res, &c, 1);
	assert_int_equal(f.y.samples, 250);
	assert_int_equal(count_of(&f.y, k.pid), 250);
	assert_int_equal(f.y.bad_ip, 0);
	assert_clean(vg_perf_set_stats(f.s));

	/* Disabled, the calls are not sampled; enabled again, they are. */
	assert_int_equal(vg_perf_set_enable(f.s, false), 0);
	n = 40;
	write_full(k.go, &n, sizeof(n));
	drain_until(f.s, &f.c, k.res, &c, 1);
	assert_int_equal(f.y.samples, 250);
	assert_int_equal(vg_perf_set_enable(f.s, true), 0);
	n = 60;
	write_full(k.go, &n, sizeof(n));
	drain_until(f.s, &f.c, k.res, &c, 1);
	assert_int_equal(f.y.samples, 310);
	close_set(&f);
	reap(&k);
}

/* A format the decoder does not know is refused when added. */
static void test_add_refuses_unknown_bits(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	struct vg_perf_set *s = NULL;
	struct perf_event_attr a = probe_attr(0);

	(void)state;
	assert_int_equal(vg_target_open(getpid(), &t, &err), 0);
	assert_int_equal(vg_perf_set_new(t, 1, &s, &err), 0);
	a.sample_type |= PERF_SAMPLE_RAW;
	assert_int_equal(vg_perf_set_add(s, &a, &err), -EINVAL);
	a.sample_type = PERF_SAMPLE_IP;
	assert_int_equal(vg_perf_set_add(s, &a, &err), 0);
	assert_int_equal(vg_perf_set_add(s, &a, &err), 1);
	vg_perf_set_free(s);
	vg_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coverage_no_window),
		cmocka_unit_test(test_fork_not_covered),
		cmocka_unit_test(test_lost_exact),
		cmocka_unit_test(test_exit_during_setup),
		cmocka_unit_test(test_drain_ordered),
		cmocka_unit_test(test_parse_sample_all_fields),
		cmocka_unit_test(test_parse_sample_no_regs_no_stack),
		cmocka_unit_test(test_parse_lost_fork_identifier),
		cmocka_unit_test(test_ring_wraparound),
		cmocka_unit_test(test_modify_uprobe_refused),
		cmocka_unit_test(test_add_refuses_unknown_bits),
	};

	return cmocka_run_group_tests(tests, setup_uprobe, NULL);
}
