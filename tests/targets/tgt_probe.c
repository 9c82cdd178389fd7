/* tgt_probe - a target that counts its own calls, for `vigil probe`.
 * usage: tgt_probe TRUTH MODE [ARG]
 *   count N     probe_counted() called N times in all: by the main thread,
 *               by a thread created before the go and by one created after
 *               it (after the probe is armed); each thread counts its own
 *   latency     probe_sleep(us): 20 x 10000 us and 20 x 1000 us, interleaved
 *               (nanosleep inside), each call timed by the target too
 *   recursive   probe_recurse(10) 50 times: 11 entries each, 550 in all
 *   fileline    a line of an always-inlined helper (PROBE_INLINE_LINE),
 *               inlined into probe_caller_a (300 calls) and probe_caller_b
 *               (200 calls)
 *   args        probe_args(4096, -5, name_a, 1) x7, (512, 3, name_b, 0) x3
 *   stacks      probe_leaf() from stack_a x60 and from stack_b x40
 *   spin SECS   probe_bench(i) in a tight loop for SECS seconds (bench/probe.sh)
 *   exit MS     probe_counted() in a loop for MS ms, then exit(0) (no wait)
 *   inflight    probe_sleep(100 us) 10 times, then probe_sleep(60 s),
 *               which writes "state done" once entered: a call still
 *               running when vigil stops
 *               ("calls 11"; no SIGUSR2 service: the main thread sleeps)
 *   leader N    a worker calls probe_counted() N times, 200 us apart; the
 *               main thread calls pthread_exit once the worker made N/4
 *               ("calls_before_exit K"): the thread vigil's probes are
 *               opened on is gone while the process goes on
 *
 * Writes the truth (truth.h) with "state ready", waits for SIGUSR1 (the go:
 * sent once vigil has armed its probes), does the calls, rewrites the truth
 * with what it did and "state done", then waits until killed (exit: exits).
 * Each SIGUSR2 after that rewrites the truth once more with the probed
 * functions' bytes read again ("code_final" lines) and "state final": the
 * test sends it after vigil has exited, to prove the code is restored.
 *
 * Truth lines besides pid/obj/state:
 *   mode MODE
 *   func NAME 0xRUNTIME 0xFILEOFFSET PATH   each probed function
 *   code NAME HEX          its first 32 bytes as the target reads them, at start
 *   code_after NAME HEX    the same at the end of the work (probes still armed)
 *   code_final NAME HEX    the same on SIGUSR2 (after vigil exited)
 *   calls N                calls (entries) of the probed function in the work
 *   thread TID calls K ROLE   count/exit: per thread (ROLE main|early|late)
 *   latency: sleep US COUNT, dur US NS... (the target's own timing of each
 *            call, ns, in call order), calls 40
 *   fileline: line L (PROBE_INLINE_LINE), caller_a 300, caller_b 200
 *   args: args_call SIZE DELTA 0xNAME FLAG COUNT, arg name_a 0xPTR,
 *         arg name_b 0xPTR, args_ret VALUE COUNT (what the calls returned)
 *   stacks: stack_a 60, stack_b 40
 *   spin: calls N, seconds S (from the go to the last call), rate CALLS_PER_S
 *
 * Every probed function is noipa (no inlining, cloning, identical-code
 * folding) and has a side effect of its own, so each exists once, at its
 * own address, and is entered exactly once per call. */
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

#define NOIPA __attribute__((noipa))
#define CODE_BYTES 32

long probe_counted(long i);
long probe_sleep(long us);
long probe_recurse(int depth);
long probe_caller_a(long x);
long probe_caller_b(long x);
long probe_args(size_t size, int delta, const char *name, unsigned char flag);
long probe_leaf(long x);
long stack_a(long x);
long stack_b(long x);
long probe_bench(long i);

/* Side effects the compiler must keep. */
volatile long g_sink;
long g_fl_hits;
static long recurse_entries;

NOIPA long probe_counted(long i)
{
	__asm__ volatile("" : "+r"(i));
	g_sink += i;
	return i;
}

/* Called inside probe_sleep once it has been entered (inflight: the entry
 * uprobe has fired when the truth says done). */
static void (*volatile g_in_sleep)(void);

NOIPA long probe_sleep(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
	if (g_in_sleep)
		g_in_sleep();
	while (nanosleep(&ts, &ts) != 0)
		;
	g_sink += us;
	return us;
}

/* Not a loop: the result is used after the call, through an asm the
 * compiler cannot see into, so no tail call or accumulator rewrite.  A
 * plain increment (one thread): the kernel refuses a uprobe on a
 * lock-prefixed first instruction. */
NOIPA long probe_recurse(int depth)
{
	recurse_entries++;
	if (depth <= 0)
		return 1;
	long r = probe_recurse(depth - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* The line marked PROBE_INLINE_LINE is one instruction in each caller. */
enum { FL_LINE = __LINE__ + 4 };
static inline __attribute__((always_inline)) void fl_helper(long x)
{
	g_sink += x;
	__asm__ volatile("incq %0" : "+m"(g_fl_hits)); /* PROBE_INLINE_LINE */
}

NOIPA long probe_caller_a(long x)
{
	fl_helper(x);
	return x + 1;
}

NOIPA long probe_caller_b(long x)
{
	fl_helper(x * 7);
	g_sink -= 3;
	return x + 2;
}

static const char name_a[] = "alpha";
static const char name_b[] = "bravo";

NOIPA long probe_args(size_t size, int delta, const char *name, unsigned char flag)
{
	long r = (long)size + delta + name[0] + flag;
	g_sink += r;
	return r;
}

NOIPA long probe_leaf(long x)
{
	g_sink += x;
	return x * 3;
}

/* The result is used after the call: a real call, not a tail jump, so the
 * caller is on the stack when probe_leaf runs. */
NOIPA long stack_a(long x)
{
	long r = probe_leaf(x);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

NOIPA long stack_b(long x)
{
	long r = probe_leaf(x + 100);
	__asm__ volatile("" : "+r"(r));
	return r + 2;
}

NOIPA long probe_bench(long i)
{
	__asm__ volatile("" : "+r"(i));
	g_sink = i;
	return i;
}

struct func {
	const char *name;
	const void *addr;
};

#define F(fn) { #fn, (const void *)(fn) }
static const struct func funcs[] = {
	F(probe_counted), F(probe_sleep), F(probe_recurse), F(probe_caller_a),
	F(probe_caller_b), F(probe_args), F(probe_leaf), F(stack_a), F(stack_b),
	F(probe_bench),
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))

static const char *truth_path, *mode;
static long arg;
static unsigned char code_start[NFUNCS][CODE_BYTES], code_after[NFUNCS][CODE_BYTES];
static int have_after;

enum role { MAIN, EARLY, LATE, NTHREADS };
static const char *const role_names[] = { "main", "early", "late" };
static struct {
	pid_t tid;
	long count;
} th[NTHREADS];
static pthread_barrier_t go_bar;

static long calls;                 /* the work's calls, all threads */
static long lat_dur[40], lat_us[40];
static long fl_a, fl_b, st_a, st_b, args_n1, args_n2, args_r1, args_r2;
static double spin_secs;
static long leader_before_exit;

static void die(const char *what)
{
	fprintf(stderr, "tgt_probe: %s\n", what);
	exit(99);
}

struct find_off {
	uintptr_t addr;
	long long off;
};

static int find_off_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
	struct find_off *fo = data;
	(void)sz;
	if (info->dlpi_name && *info->dlpi_name)
		return 0;                      /* the main program only */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && fo->addr >= lo && fo->addr < lo + ph->p_filesz) {
			fo->off = (long long)(fo->addr - lo + ph->p_offset);
			return 1;
		}
	}
	return 0;
}

static void read_code(unsigned char out[NFUNCS][CODE_BYTES])
{
	for (size_t i = 0; i < NFUNCS; i++)
		for (size_t j = 0; j < CODE_BYTES; j++)
			out[i][j] = ((const volatile unsigned char *)funcs[i].addr)[j];
}

static void code_lines(FILE *f, const char *key, unsigned char code[NFUNCS][CODE_BYTES])
{
	for (size_t i = 0; i < NFUNCS; i++) {
		fprintf(f, "%s %s ", key, funcs[i].name);
		for (size_t j = 0; j < CODE_BYTES; j++)
			fprintf(f, "%02x", code[i][j]);
		fputc('\n', f);
	}
}

static void write_truth(const char *state)
{
	char exe[PATH_MAX];
	FILE *f = truth_begin(truth_path);
	truth_objects(f);
	fprintf(f, "mode %s\n", mode);
	/* thread-self: /proc/self/exe is gone once the main thread exited (leader) */
	if (!realpath("/proc/thread-self/exe", exe))
		die("realpath /proc/thread-self/exe");
	for (size_t i = 0; i < NFUNCS; i++) {
		struct find_off fo = { (uintptr_t)funcs[i].addr, -1 };
		dl_iterate_phdr(find_off_cb, &fo);
		if (fo.off < 0)
			die("no file offset for a function");
		fprintf(f, "func %s 0x%llx 0x%llx %s\n", funcs[i].name,
			(unsigned long long)(uintptr_t)funcs[i].addr, fo.off, exe);
	}
	code_lines(f, "code", code_start);
	fprintf(f, "line %d\n", FL_LINE);
	fprintf(f, "arg name_a 0x%llx\narg name_b 0x%llx\n",
		(unsigned long long)(uintptr_t)name_a, (unsigned long long)(uintptr_t)name_b);
	if (have_after) {
		code_lines(f, "code_after", code_after);
		fprintf(f, "calls %ld\n", calls);
		if (!strcmp(mode, "leader"))
			fprintf(f, "calls_before_exit %ld\n", leader_before_exit);
		if (!strcmp(mode, "count") || !strcmp(mode, "exit") || !strcmp(mode, "leader")) {
			for (int r = 0; r < NTHREADS; r++)
				if (th[r].tid)
					fprintf(f, "thread %d calls %ld %s\n", (int)th[r].tid,
						th[r].count, role_names[r]);
		} else if (!strcmp(mode, "latency")) {
			fprintf(f, "sleep 10000 20\nsleep 1000 20\n");
			for (int i = 0; i < 40; i++)
				fprintf(f, "dur %ld %ld\n", lat_us[i], lat_dur[i]);
		} else if (!strcmp(mode, "fileline")) {
			fprintf(f, "caller_a %ld\ncaller_b %ld\nfl_hits %ld\n", fl_a, fl_b, g_fl_hits);
		} else if (!strcmp(mode, "args")) {
			fprintf(f, "args_call 4096 -5 0x%llx 1 %ld\n",
				(unsigned long long)(uintptr_t)name_a, args_n1);
			fprintf(f, "args_call 512 3 0x%llx 0 %ld\n",
				(unsigned long long)(uintptr_t)name_b, args_n2);
			fprintf(f, "args_ret %ld %ld\nargs_ret %ld %ld\n", args_r1, args_n1, args_r2, args_n2);
		} else if (!strcmp(mode, "stacks")) {
			fprintf(f, "stack_a %ld\nstack_b %ld\n", st_a, st_b);
		} else if (!strcmp(mode, "spin")) {
			fprintf(f, "seconds %.6f\nrate %.1f\n", spin_secs,
				spin_secs > 0 ? (double)calls / spin_secs : 0.0);
		}
	}
	if (!strcmp(state, "final")) {
		unsigned char now[NFUNCS][CODE_BYTES];
		read_code(now);
		code_lines(f, "code_final", now);
	}
	fprintf(f, "state %s\n", state);
	truth_end(f, truth_path);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void wait_signal(int signo)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, signo);
	do {
		if (sigwait(&set, &sig) != 0)
			die("sigwait");
	} while (sig != signo);
}

/* count: each thread makes its share of calls and counts them. */
static void counted_calls(enum role r)
{
	__atomic_store_n(&th[r].tid, gettid(), __ATOMIC_RELEASE);
	long n = arg / NTHREADS + (r < arg % NTHREADS);
	for (long i = 0; i < n; i++) {
		probe_counted(i);
		th[r].count++;
	}
}

static void *early_thread(void *p)
{
	(void)p;
	__atomic_store_n(&th[EARLY].tid, gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&go_bar);
	counted_calls(EARLY);
	return NULL;
}

static void *late_thread(void *p)
{
	(void)p;
	counted_calls(LATE);
	return NULL;
}

static void do_count(void)
{
	pthread_t early, late;
	pthread_barrier_init(&go_bar, NULL, 2);
	if (pthread_create(&early, NULL, early_thread, NULL))
		die("pthread_create");
	while (!__atomic_load_n(&th[EARLY].tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	write_truth("ready");
	wait_signal(SIGUSR1);
	if (pthread_create(&late, NULL, late_thread, NULL))
		die("pthread_create after the go");
	pthread_barrier_wait(&go_bar);
	counted_calls(MAIN);
	pthread_join(early, NULL);
	pthread_join(late, NULL);
	for (int r = 0; r < NTHREADS; r++)
		calls += th[r].count;
}

static void do_exit(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	th[MAIN].tid = gettid();
	double end = now_s() + arg / 1000.0;
	while (now_s() < end) {
		for (int i = 0; i < 64; i++) {
			probe_counted(i);
			th[MAIN].count++;
		}
	}
	calls = th[MAIN].count;
}

static void do_latency(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (int i = 0; i < 40; i++) {
		lat_us[i] = i % 2 ? 1000 : 10000;
		long t0 = now_ns();
		probe_sleep(lat_us[i]);
		lat_dur[i] = now_ns() - t0;
		calls++;
	}
}

/* "done" is written from inside the long call: by then its entry was
 * counted, so a stop right after "done" finds it in flight. */
static void inflight_done(void)
{
	g_in_sleep = NULL;
	write_truth("done");
}

static void do_inflight(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (int i = 0; i < 10; i++)
		probe_sleep(100);
	calls = 11;
	read_code(code_after);
	have_after = 1;
	g_in_sleep = inflight_done;
	probe_sleep(60 * 1000 * 1000);
	exit(0);
}

static void do_recursive(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (int i = 0; i < 50; i++)
		probe_recurse(10);
	calls = recurse_entries;
}

static void do_fileline(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (long i = 0; i < 300; i++) {
		probe_caller_a(i);
		fl_a++;
		if (i < 200) {
			probe_caller_b(i);
			fl_b++;
		}
	}
	calls = fl_a + fl_b;
}

static void do_args(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (int i = 0; i < 10; i++) {
		if (i % 3 == 2 && args_n2 < 3) {
			args_r2 = probe_args(512, 3, name_b, 0);
			args_n2++;
		} else {
			args_r1 = probe_args(4096, -5, name_a, 1);
			args_n1++;
		}
	}
	calls = args_n1 + args_n2;
}

static void do_stacks(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	for (long i = 0; i < 100; i++) {
		if (i % 5 < 3) {
			stack_a(i);
			st_a++;
		} else {
			stack_b(i);
			st_b++;
		}
	}
	calls = st_a + st_b;
}

static void do_spin(void)
{
	write_truth("ready");
	wait_signal(SIGUSR1);
	double t0 = now_s(), end = t0 + (double)arg, t = t0;
	long n = 0;
	while (t < end) {
		for (int i = 0; i < 256; i++)
			probe_bench(n++);
		t = now_s();
	}
	calls = n;
	spin_secs = t - t0;
}

static void finish_and_serve(void);

/* leader: the worker does all the calls, and the rest of main's job. */
static void *leader_worker(void *p)
{
	(void)p;
	__atomic_store_n(&th[EARLY].tid, gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&go_bar);
	for (long i = 0; i < arg; i++) {
		probe_counted(i);
		__atomic_store_n(&th[EARLY].count, th[EARLY].count + 1, __ATOMIC_RELEASE);
		usleep(200);
	}
	/* Let main's exit finish before the truth reads its count. */
	while (!__atomic_load_n(&leader_before_exit, __ATOMIC_ACQUIRE))
		usleep(1000);
	calls = th[EARLY].count;
	finish_and_serve();
	return NULL;
}

static void do_leader(void)
{
	pthread_t w;

	pthread_barrier_init(&go_bar, NULL, 2);
	th[MAIN].tid = gettid();
	if (pthread_create(&w, NULL, leader_worker, NULL))
		die("pthread_create");
	while (!__atomic_load_n(&th[EARLY].tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	write_truth("ready");
	wait_signal(SIGUSR1);
	pthread_barrier_wait(&go_bar);
	while (__atomic_load_n(&th[EARLY].count, __ATOMIC_ACQUIRE) < arg / 4)
		usleep(100);
	__atomic_store_n(&leader_before_exit, th[EARLY].count, __ATOMIC_RELEASE);
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		die("usage: tgt_probe TRUTH count N|latency|recursive|fileline|args|stacks|spin SECS|exit MS|leader N|inflight");
	truth_path = argv[1];
	mode = argv[2];
	arg = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	truth_init(!strcmp(mode, "spin") ? (unsigned)arg + TRUTH_MAX_SECONDS : TRUTH_MAX_SECONDS);

	/* SIGUSR1/2 blocked in every thread: the main thread takes them by sigwait. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	read_code(code_start);

	if (!strcmp(mode, "count") && arg > 0)
		do_count();
	else if (!strcmp(mode, "exit") && arg > 0)
		do_exit();
	else if (!strcmp(mode, "latency"))
		do_latency();
	else if (!strcmp(mode, "recursive"))
		do_recursive();
	else if (!strcmp(mode, "fileline"))
		do_fileline();
	else if (!strcmp(mode, "args"))
		do_args();
	else if (!strcmp(mode, "stacks"))
		do_stacks();
	else if (!strcmp(mode, "spin") && arg > 0)
		do_spin();
	else if (!strcmp(mode, "leader") && arg > 0)
		do_leader();
	else if (!strcmp(mode, "inflight"))
		do_inflight();
	else
		die("unknown mode or missing argument");
	finish_and_serve();
	return 0;
}

static void finish_and_serve(void)
{
	read_code(code_after);
	have_after = 1;
	write_truth("done");
	if (!strcmp(mode, "exit"))
		exit(0);
	for (;;) {
		wait_signal(SIGUSR2);
		write_truth("final");
	}
}
