/* test_unwind.c - user stacks of a live child, by CFI and by frame pointers.
 *
 * A child of this test calls qsort() from libc with a comparator that, on
 * its first call, says so on a pipe and then spins.  The parent samples it
 * with a task-clock perf event (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER
 * and the kernel's user callchain, which is a frame-pointer walk): no
 * ptrace, no stop, as the profiler will.  The CFI walk of that sample must
 * name spin_compare, libc's msort_with_tmp and qsort_r, then sort_caller
 * and child_main, in that order; the frame-pointer walk of the same sample
 * must equal the kernel's callchain and must NOT reach sort_caller,
 * because Debian's libc keeps no frame pointers: that is why --unwind
 * dwarf is the default.  The test's own functions keep frame pointers
 * (no-omit-frame-pointer), so the failure is libc's alone.
 *
 * A second child spins in a SIGUSR1 handler: the CFI walk must cross
 * glibc's __restore_rt (every rule a DWARF expression) back into the
 * interrupted loop, and mark the trampoline and the interrupted IP as
 * exact (not return addresses).
 *
 * Then the row cache (repeated and refreshed image sets), the stop
 * reasons on the same sample cut short or with registers missing, and the
 * frame-pointer walk on hand-made stacks. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <cmocka.h>

#include "perf/records.h"
#include "perf/ring.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "unwind/unwind.h"
#include "testutil.h"

#define PERF_BP 6
#define PERF_SP 7
#define PERF_IP 8
/* Every general register perf gives on x86-64 (not ds/es/fs/gs). */
#define REGS_ALL (((1ull << 10) - 1) | (0xffull << 16))
#define STACK_BYTES 16384
#define MAX_FRAMES 64

#if defined(__GNUC__) && !defined(__clang__)
#define WITH_FP __attribute__((noinline, optimize("no-omit-frame-pointer")))
#else
#define WITH_FP __attribute__((noinline))
#endif

/* ---- the child ---- */

static int child_fd = -1;
static volatile int keep_spinning = 1;

WITH_FP static int spin_compare(const void *a, const void *b)
{
	static bool told;

	if (!told) {
		told = true;
		if (write(child_fd, "s", 1) != 1)
			_exit(3);
	}
	while (keep_spinning)
		__asm__ volatile("" ::: "memory");
	return *(const int *)a - *(const int *)b;
}

typedef void qsort_fn(void *, size_t, size_t, int (*)(const void *, const void *));

/* libc's own qsort: under ASan, qsort() is the sanitizer's interceptor,
 * which first calls the comparator itself on every adjacent pair (a
 * memory check) and only then libc's. */
static qsort_fn *libc_qsort(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = libc ? dlsym(libc, "qsort") : NULL;

	if (!f)
		_exit(4);
	return (qsort_fn *)f;
}

WITH_FP static void sort_caller(qsort_fn *sort, int *v, size_t n)
{
	sort(v, n, sizeof *v, spin_compare);
	__asm__ volatile("" ::: "memory");   /* a call, not a tail jump */
}

WITH_FP static void child_main(void)
{
	size_t n = 64;
	int *v = malloc(n * sizeof *v);   /* heap: no stack address in reach */

	if (!v)
		_exit(2);
	for (size_t i = 0; i < n; i++)
		v[i] = (int)((i * 7919) % n);
	sort_caller(libc_qsort(), v, n);
	__asm__ volatile("" ::: "memory");
	free(v);
}

/* The second child spins inside a signal handler that interrupted
 * wait_for_signal: the walk must cross glibc's __restore_rt, whose CFI is
 * all DWARF expressions over the signal frame the kernel pushed, and go
 * on at the interrupted IP itself. */
WITH_FP static void spin_handler(int sig)
{
	(void)sig;
	if (write(child_fd, "s", 1) != 1)
		_exit(3);
	while (keep_spinning)
		__asm__ volatile("" ::: "memory");
}

static volatile int waiting;   /* the parent reads it in the child */

WITH_FP static void wait_for_signal(void)
{
	waiting = 1;
	for (;;)
		__asm__ volatile("" ::: "memory");
}

WITH_FP static void signal_child_main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = spin_handler;
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || write(child_fd, "r", 1) != 1)
		_exit(2);
	wait_for_signal();
	__asm__ volatile("" ::: "memory");
}

/* ---- one sample of each, shared by the tests ---- */

struct sample {
	struct vg_regs regs;
	uint8_t stack[STACK_BYTES];
	size_t stack_len;
	uint64_t kernel_fp[MAX_FRAMES];   /* the user part of the callchain */
	size_t n_kernel_fp;
	bool have;
};

struct fixture {
	pid_t pid;
	struct vg_target *t;
	struct vg_symbolizer *sym;
	struct sample s;
};

static struct fixture fx;    /* in qsort */
static struct fixture fxs;   /* in a signal handler */

struct drain {
	struct vg_perf_format fmt;
	struct sample *s;
};

static int keep_last(const struct perf_event_header *h, void *arg)
{
	struct drain *d = arg;
	struct sample *out = d->s;
	struct vg_perf_sample ps;
	size_t k = 0;

	if (h->type != PERF_RECORD_SAMPLE || !vg_perf_parse_sample(h, &d->fmt, &ps))
		return 0;
	if (ps.regs_abi != PERF_SAMPLE_REGS_ABI_64 || !ps.stack_size)
		return 0;
	out->regs = ps.regs;
	out->stack_len = ps.stack_size < STACK_BYTES ? ps.stack_size : STACK_BYTES;
	memcpy(out->stack, ps.stack, out->stack_len);
	out->n_kernel_fp = 0;
	for (uint64_t i = 0; i < ps.nr_callchain; i++) {
		uint64_t ip = ps.callchain[i];

		if (ip >= PERF_CONTEXT_MAX)
			continue;   /* PERF_CONTEXT_USER marker */
		if (k < MAX_FRAMES)
			out->kernel_fp[k++] = ip;
	}
	out->n_kernel_fp = k;
	out->have = true;
	return 0;
}

/* Samples the spinning child for ~100 ms and keeps the last sample. */
static void take_sample(pid_t pid, struct sample *out)
{
	struct perf_event_attr a;
	struct drain d = { .s = out };
	struct vg_ring *ring = NULL;
	struct vg_error err = { 0 };
	int fd;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;   /* 1 ms of the child's CPU time */
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = REGS_ALL;
	a.sample_stack_user = STACK_BYTES;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		print_message("# perf_event_open(task-clock, pid %d): %s\n", (int)pid,
			      strerror(errno));
		if (errno == EACCES || errno == EPERM)
			return;   /* the tests skip */
		fail_msg("perf_event_open failed: %s", strerror(errno));
	}
	if (vg_ring_map(fd, 64, &ring, &err) < 0)
		fail_msg("%s", err.msg);
	d.fmt.sample_type = a.sample_type;
	d.fmt.regs_user_mask = a.sample_regs_user;
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		vg_ring_drain(ring, keep_last, &d);
	}
	vg_ring_unmap(ring);
	close(fd);
}

/* The signal must interrupt the child's loop, not its write(2) of "r":
 * wait until the child's `waiting` (same address: a fork) says so. */
static void wait_until_waiting(pid_t pid)
{
	for (int i = 0; i < 5000; i++) {
		int v = 0;
		struct iovec local = { &v, sizeof v };
		struct iovec remote = { (void *)&waiting, sizeof v };

		assert_int_equal(process_vm_readv(pid, &local, 1, &remote, 1, 0),
				 (ssize_t)sizeof v);
		if (v)
			return;
		usleep(1000);
	}
	fail_msg("child %d never reached its wait loop", (int)pid);
}

/* Forks a child running body, waits for its word on the pipe (after
 * poke, if any, sent once the child said "r"eady), samples it and opens
 * a symbolizer on it. */
static void start(struct fixture *f, void (*body)(void), int poke)
{
	struct vg_error err = { 0 };
	char c;
	int fd;

	memset(f, 0, sizeof *f);
	f->pid = tu_fork_pipe(&fd);
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_fd = fd;
		body();
		_exit(0);
	}
	assert_int_equal(read(fd, &c, 1), 1);
	if (poke) {
		assert_int_equal(c, 'r');
		wait_until_waiting(f->pid);
		assert_int_equal(kill(f->pid, poke), 0);
		assert_int_equal(read(fd, &c, 1), 1);
	}
	assert_int_equal(c, 's');   /* spinning where the test wants it */
	close(fd);
	take_sample(f->pid, &f->s);
	assert_int_equal(vg_target_open(f->pid, &f->t, &err), 0);
	if (vg_symbolizer_open_target(f->t, VG_SYM_NO_DEBUGINFOD | VG_SYM_NO_KERNEL,
				      &f->sym, &err) < 0)
		fail_msg("%s", err.msg);
}

static void stop(struct fixture *f)
{
	int st;

	vg_symbolizer_free(f->sym);
	vg_target_free(f->t);
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, &st, 0);
	}
}

static int setup(void **state)
{
	(void)state;
	start(&fx, child_main, 0);
	start(&fxs, signal_child_main, SIGUSR1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stop(&fx);
	stop(&fxs);
	return 0;
}

static void need_sample(const struct fixture *f)
{
	if (!f->s.have) {
		print_message("# no user sample of the child (perf events refused)\n");
		skip();
	}
}

/* The function at ips[i] (the call instruction for a return address):
 * the ELF symbol, or the outermost DWARF function when there is none. */
static const char *name_at(const struct fixture *f, uint64_t addr, char *buf,
			   size_t size)
{
	struct vg_sym_result r;
	struct vg_error err = { 0 };

	assert_int_equal(vg_sym_lookup(f->sym, addr, &r, &err), 0);
	if (r.has_symbol && r.symbol)
		snprintf(buf, size, "%s", r.symbol);
	else if (r.n_frames && r.frames[r.n_frames - 1].function)
		snprintf(buf, size, "%s", r.frames[r.n_frames - 1].function);
	else
		snprintf(buf, size, "??");
	return buf;
}

static const char *name_of(const uint64_t *ips, size_t i, char *buf, size_t size)
{
	return name_at(&fx, ips[i] - (i ? 1 : 0), buf, size);
}

static void print_chain(const char *label, const uint64_t *ips, size_t n,
			enum vg_unwind_stop why)
{
	char buf[128];

	print_message("# %s: %zu frames, stop %s\n", label, n, vg_unwind_stop_name(why));
	for (size_t i = 0; i < n; i++)
		print_message("#   #%zu 0x%llx %s\n", i, (unsigned long long)ips[i],
			      name_of(ips, i, buf, sizeof buf));
}

/* Is name the function want, or a GCC clone of it (want.part.0,
 * want.constprop.1, want.isra.0)? */
static bool is_function(const char *name, const char *want)
{
	size_t len = strlen(want);

	return strncmp(name, want, len) == 0 && (name[len] == '\0' || name[len] == '.');
}

/* Index of the first frame at or after from that is want, or n. */
static size_t find_frame(const uint64_t *ips, size_t n, size_t from, const char *want)
{
	char buf[128];

	for (size_t i = from; i < n; i++)
		if (is_function(name_of(ips, i, buf, sizeof buf), want))
			return i;
	return n;
}

static struct vg_unwinder *new_unwinder(const struct fixture *f)
{
	struct vg_unwinder *u = NULL;
	struct vg_error err = { 0 };

	assert_int_equal(vg_unwinder_new(f->pid, vg_symbolizer_images(f->sym), &u, &err), 0);
	assert_non_null(u);
	return u;
}

static void test_dwarf_through_libc(void **state)
{
	uint64_t ips[MAX_FRAMES];
	bool exact[MAX_FRAMES];
	size_t n = 0, at;
	enum vg_unwind_stop why;
	struct vg_unwinder *u;
	char buf[128];

	(void)state;
	need_sample(&fx);
	u = new_unwinder(&fx);
	assert_int_equal(vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len,
					 ips, exact, MAX_FRAMES, &n, &why), 0);
	print_chain("dwarf", ips, n, why);
	/* No signal frame: only the sampled IP is exact. */
	assert_true(exact[0]);
	for (size_t i = 1; i < n; i++)
		assert_false(exact[i]);
	assert_int_equal(ips[0], fx.s.regs.regs[PERF_IP]);
	assert_string_equal(name_of(ips, 0, buf, sizeof buf), "spin_compare");
	/* libc's merge sort, recursing once per halving of the 64 elements
	 * (the ELF symbol is its clone msort_with_tmp.part.0), entered from
	 * qsort_r; qsort itself tail-jumps to qsort_r and leaves no frame. */
	assert_int_equal(find_frame(ips, n, 1, "msort_with_tmp"), 1);
	at = find_frame(ips, n, 1, "qsort_r");
	assert_true(at < n);
	for (size_t i = 1; i < at; i++)
		assert_int_equal(find_frame(ips, n, i, "msort_with_tmp"), i);
	assert_int_equal(find_frame(ips, n, at, "sort_caller"), at + 1);
	assert_int_equal(find_frame(ips, n, at, "child_main"), at + 2);
	assert_true(find_frame(ips, n, at, "main") < n);
	/* Through __libc_start_call_main to _start, whose CFI marks the
	 * return address undefined. */
	assert_int_equal(why, VG_UNWIND_OUTERMOST);
	assert_string_equal(name_of(ips, n - 1, buf, sizeof buf), "_start");
	vg_unwinder_free(u);
}

static void test_fp_is_wrong_through_libc(void **state)
{
	uint64_t ips[MAX_FRAMES];
	size_t n = 0;
	enum vg_unwind_stop why;
	char buf[128];

	(void)state;
	need_sample(&fx);
	vg_unwind_fp(&fx.s.regs, fx.s.stack, fx.s.stack_len, ips, MAX_FRAMES, &n, &why);
	print_chain("fp", ips, n, why);
	/* The same walk as the kernel's, over the copy instead of memory. */
	assert_true(n >= 2);
	assert_true(n <= fx.s.n_kernel_fp);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ips[i], fx.s.kernel_fp[i]);
	/* spin_compare has a frame, so its caller's return address is right;
	 * from there rbp is whatever libc kept in it, and the chain never
	 * reaches the test's own frames. */
	assert_string_equal(name_of(ips, 0, buf, sizeof buf), "spin_compare");
	assert_int_equal(find_frame(ips, n, 0, "sort_caller"), n);
	assert_int_equal(find_frame(ips, n, 0, "child_main"), n);
	assert_int_equal(find_frame(fx.s.kernel_fp, fx.s.n_kernel_fp, 0, "sort_caller"),
			 fx.s.n_kernel_fp);
}

static void test_dwarf_through_signal_frame(void **state)
{
	uint64_t ips[MAX_FRAMES];
	bool exact[MAX_FRAMES];
	size_t n = 0;
	enum vg_unwind_stop why;
	struct vg_unwinder *u;
	char buf[128];
	const char *want[] = { "spin_handler", "__restore_rt", "wait_for_signal",
			       "signal_child_main", "start" };

	(void)state;
	need_sample(&fxs);
	u = new_unwinder(&fxs);
	assert_int_equal(vg_unwind_dwarf(u, &fxs.s.regs, fxs.s.stack, fxs.s.stack_len,
					 ips, exact, MAX_FRAMES, &n, &why), 0);
	print_message("# dwarf through a signal frame: %zu frames, stop %s\n", n,
		      vg_unwind_stop_name(why));
	for (size_t i = 0; i < n; i++)
		print_message("#   #%zu 0x%llx%s %s\n", i, (unsigned long long)ips[i],
			      exact[i] ? " (exact)" : "",
			      name_at(&fxs, ips[i] - !exact[i], buf, sizeof buf));
	assert_true(n > 5);
	/* The handler returns into __restore_rt (its first byte, not
	 * after a call), and the frame below it is the interrupted IP:
	 * both are symbolized as they are. */
	assert_true(exact[0]);
	assert_false(exact[3]);
	assert_true(exact[1]);
	assert_true(exact[2]);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(name_at(&fxs, ips[i] - !exact[i], buf, sizeof buf),
				    want[i]);
	for (size_t i = 3; i < n; i++)
		assert_false(exact[i]);
	assert_int_equal(why, VG_UNWIND_OUTERMOST);
	assert_string_equal(name_at(&fxs, ips[n - 1] - 1, buf, sizeof buf), "_start");
	vg_unwinder_free(u);
}

static size_t distinct(const uint64_t *v, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i && v[j] != v[i])
			j++;
		d += j == i;
	}
	return d;
}

static void test_dwarf_cache(void **state)
{
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	size_t na = 0, nb = 0;
	enum vg_unwind_stop wa, wb;
	struct vg_unwind_stats st1, st2;
	struct vg_unwinder *u;

	(void)state;
	need_sample(&fx);
	u = new_unwinder(&fx);
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, a, NULL, MAX_FRAMES, &na, &wa);
	vg_unwinder_stats(u, &st1);
	/* One row per frame, the last included (its row says the return
	 * address is undefined); the recursion's repeated return addresses
	 * are decoded once. */
	assert_int_equal(st1.rows_decoded, distinct(a, na));
	assert_true(st1.rows_decoded < na);
	assert_int_equal(st1.rows_decoded + st1.rows_cached, na);
	assert_true(st1.images_opened >= 2);   /* the test, libc */
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, b, NULL, MAX_FRAMES, &nb, &wb);
	vg_unwinder_stats(u, &st2);
	assert_int_equal(nb, na);
	assert_memory_equal(a, b, na * sizeof a[0]);
	assert_int_equal(wb, wa);
	assert_int_equal(st2.rows_decoded, st1.rows_decoded);
	assert_int_equal(st2.rows_cached, st1.rows_cached + na);
	assert_int_equal(st2.images_opened, st1.images_opened);

	/* The same set again keeps everything; an empty set drops it. */
	assert_int_equal(vg_unwinder_set_images(u, vg_symbolizer_images(fx.sym), NULL), 0);
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, b, NULL, MAX_FRAMES, &nb, &wb);
	vg_unwinder_stats(u, &st1);
	assert_int_equal(nb, na);
	assert_int_equal(st1.rows_decoded, st2.rows_decoded);
	/* With no image every IP is "JIT code": the walk follows rbp,
	 * exactly as the frame-pointer walk does, and stops as no_image. */
	assert_int_equal(vg_unwinder_set_images(u, NULL, NULL), 0);
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, b, NULL, MAX_FRAMES, &nb, &wb);
	vg_unwind_fp(&fx.s.regs, fx.s.stack, fx.s.stack_len, a, MAX_FRAMES, &na, &wa);
	assert_int_equal(nb, na);
	assert_memory_equal(a, b, na * sizeof a[0]);
	assert_int_equal(b[0], fx.s.regs.regs[PERF_IP]);
	assert_int_equal(wb, VG_UNWIND_NO_IMAGE);
	vg_unwinder_free(u);
}

static void test_dwarf_stops(void **state)
{
	uint64_t full[MAX_FRAMES], ips[MAX_FRAMES];
	size_t nfull = 0, n = 0;
	enum vg_unwind_stop why;
	struct vg_regs regs;
	struct vg_unwinder *u;

	(void)state;
	need_sample(&fx);
	u = new_unwinder(&fx);
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, full, NULL, MAX_FRAMES,
			&nfull, &why);
	assert_true(nfull > 4);

	/* The array full. */
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, ips, NULL, 3, &n, &why);
	assert_int_equal(n, 3);
	assert_int_equal(why, VG_UNWIND_MAX_FRAMES);
	assert_memory_equal(ips, full, 3 * sizeof ips[0]);
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, fx.s.stack_len, ips, NULL, 0, &n, &why);
	assert_int_equal(n, 0);
	assert_int_equal(why, VG_UNWIND_MAX_FRAMES);

	/* A copy of 8 bytes: the comparator's return address lies past it
	 * (it has a frame: [rsp] is a local or the saved rbp). */
	vg_unwind_dwarf(u, &fx.s.regs, fx.s.stack, 8, ips, NULL, MAX_FRAMES, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_STACK_END);
	/* No stack at all. */
	vg_unwind_dwarf(u, &fx.s.regs, NULL, 0, ips, NULL, MAX_FRAMES, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_STACK_END);

	/* No SP: nothing. */
	regs = fx.s.regs;
	regs.mask &= ~(1ull << PERF_SP);
	vg_unwind_dwarf(u, &regs, fx.s.stack, fx.s.stack_len, ips, NULL, MAX_FRAMES, &n, &why);
	assert_int_equal(n, 0);
	assert_int_equal(why, VG_UNWIND_NO_REGISTER);
	/* No rbp: the comparator's CFA is rbp + 16 (it has a frame). */
	regs = fx.s.regs;
	regs.mask &= ~(1ull << PERF_BP);
	vg_unwind_dwarf(u, &regs, fx.s.stack, fx.s.stack_len, ips, NULL, MAX_FRAMES, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_NO_REGISTER);

	/* An IP in no image (JIT code): one step through rbp, which the
	 * comparator's frame holds, to its caller; then CFI again. */
	regs = fx.s.regs;
	regs.regs[PERF_IP] = 0x10;
	vg_unwind_dwarf(u, &regs, fx.s.stack, fx.s.stack_len, ips, NULL, MAX_FRAMES, &n, &why);
	assert_true(n > 2);
	assert_int_equal(ips[0], 0x10);
	assert_int_equal(ips[1], full[1]);
	/* Without rbp it cannot: it stops there. */
	regs.mask &= ~(1ull << PERF_BP);
	vg_unwind_dwarf(u, &regs, fx.s.stack, fx.s.stack_len, ips, NULL, MAX_FRAMES, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(ips[0], 0x10);
	assert_int_equal(why, VG_UNWIND_NO_IMAGE);
	vg_unwinder_free(u);
}

/* ---- the frame-pointer walk on hand-made stacks ---- */

#define SP0 0x7ffc0000ull

static void put64(uint8_t *stack, uint64_t addr, uint64_t v)
{
	memcpy(stack + (addr - SP0), &v, 8);
}

static void fp_regs(struct vg_regs *r, uint64_t bp)
{
	memset(r, 0, sizeof *r);
	r->mask = 1ull << PERF_IP | 1ull << PERF_SP | 1ull << PERF_BP;
	r->regs[PERF_IP] = 0x401000;
	r->regs[PERF_SP] = SP0;
	r->regs[PERF_BP] = bp;
}

static void test_fp_walk(void **state)
{
	uint8_t stack[256] = { 0 };
	uint64_t ips[8];
	size_t n = 0;
	enum vg_unwind_stop why;
	struct vg_regs r;

	(void)state;
	/* Three frames: bp0 -> bp1 -> bp2 -> 0. */
	put64(stack, SP0 + 0x10, SP0 + 0x40);
	put64(stack, SP0 + 0x18, 0x401111);
	put64(stack, SP0 + 0x40, SP0 + 0x80);
	put64(stack, SP0 + 0x48, 0x402222);
	put64(stack, SP0 + 0x80, 0);
	put64(stack, SP0 + 0x88, 0x403333);
	fp_regs(&r, SP0 + 0x10);
	vg_unwind_fp(&r, stack, sizeof stack, ips, 8, &n, &why);
	assert_int_equal(n, 4);
	assert_int_equal(ips[0], 0x401000);
	assert_int_equal(ips[1], 0x401111);
	assert_int_equal(ips[2], 0x402222);
	assert_int_equal(ips[3], 0x403333);
	assert_int_equal(why, VG_UNWIND_OUTERMOST);

	vg_unwind_fp(&r, stack, sizeof stack, ips, 2, &n, &why);
	assert_int_equal(n, 2);
	assert_int_equal(why, VG_UNWIND_MAX_FRAMES);

	/* The copy ends inside the second record. */
	vg_unwind_fp(&r, stack, 0x48, ips, 8, &n, &why);
	assert_int_equal(n, 2);
	assert_int_equal(why, VG_UNWIND_STACK_END);

	/* A chain going down the stack (a loop) stops. */
	put64(stack, SP0 + 0x80, SP0 + 0x40);
	vg_unwind_fp(&r, stack, sizeof stack, ips, 8, &n, &why);
	assert_int_equal(n, 4);
	assert_int_equal(why, VG_UNWIND_BAD_FRAME);

	/* rbp below the sampled SP, or misaligned. */
	fp_regs(&r, SP0 - 0x100);
	vg_unwind_fp(&r, stack, sizeof stack, ips, 8, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_BAD_FRAME);
	fp_regs(&r, SP0 + 0x11);
	vg_unwind_fp(&r, stack, sizeof stack, ips, 8, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_BAD_FRAME);

	/* rbp not sampled. */
	fp_regs(&r, SP0 + 0x10);
	r.mask &= ~(1ull << PERF_BP);
	vg_unwind_fp(&r, stack, sizeof stack, ips, 8, &n, &why);
	assert_int_equal(n, 1);
	assert_int_equal(why, VG_UNWIND_NO_REGISTER);
}

static void test_stop_names(void **state)
{
	(void)state;
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_OUTERMOST), "outermost");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_STACK_END), "stack_end");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_NO_CFI), "no_cfi");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_UNSUPPORTED), "unsupported_rule");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_NO_IMAGE), "no_image");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_NO_REGISTER), "missing_register");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_BAD_FRAME), "bad_frame");
	assert_string_equal(vg_unwind_stop_name(VG_UNWIND_MAX_FRAMES), "max_frames");
	assert_string_equal(vg_unwind_stop_name((enum vg_unwind_stop)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp_walk),
		cmocka_unit_test(test_stop_names),
		cmocka_unit_test(test_dwarf_through_libc),
		cmocka_unit_test(test_fp_is_wrong_through_libc),
		cmocka_unit_test(test_dwarf_through_signal_frame),
		cmocka_unit_test(test_dwarf_cache),
		cmocka_unit_test(test_dwarf_stops),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
