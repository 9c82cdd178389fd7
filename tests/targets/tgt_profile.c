/* tgt_profile - burns CPU in known functions, for vigil profile.
 * usage: tgt_profile TRUTH split|inline|qsort
 *        tgt_profile TRUTH dlopen LIBPATH
 *        tgt_profile TRUTH exit MS
 * Writes "pid", "mode MODE", one "sym NAME ..." line per hot function and
 * "state ready", then burns CPU until killed:
 *   split   main -> split_loop -> hot_a (7 units) and hot_b (3 units) of
 *           identical work: 70 % / 30 % of the samples;
 *   inline  main -> inline_caller -> hot_inline, always inlined (the loop
 *           is inline_caller's code but hot_inline's lines);
 *   dlopen  main -> before_load until SIGUSR1, then dlopens LIBPATH
 *           (libvgprof.so), rewrites the truth ("sym vgprof_hot ...",
 *           "state loaded") and loops main -> vgprof_hot;
 *   qsort   main -> sort_loop -> qsort (libc, no frame pointers) ->
 *           cmp_slow, which does 64 steps of extra work per comparison;
 *   exit    main -> burn_until until SIGUSR1, then for MS ms more of wall
 *           time, then rewrites the truth ("work ...", "state exiting":
 *           the CPU time it used, which a test can no longer read in
 *           /proc once it is reaped) and exits 0 (the test signals once
 *           vigil samples).
 * On SIGUSR2 (split, inline, qsort) it rewrites the truth with a line
 * "work UNITS WALL_NS CPU_NS": units done so far, CLOCK_MONOTONIC and
 * CLOCK_PROCESS_CPUTIME_ID, for bench/profile.sh's slowdown measurement.
 * Built -O2 -g -fno-omit-frame-pointer whatever the buildtype. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "truth.h"

/* noipa: hot_a and hot_b are the same code, which -O2's identical code
 * folding would otherwise merge into one function. */
#define NOINLINE __attribute__((noipa))
/* One unit: UNIT_STEPS dependent read-modify-writes of a volatile, so the
 * compiler keeps every step and the work per unit is the same everywhere. */
#define UNIT_STEPS 20000u

static volatile uint64_t g_acc;
static volatile sig_atomic_t g_report;
static volatile sig_atomic_t g_go;
static uint64_t g_units;
static const char *g_truth;
static const char *g_mode;

NOINLINE void hot_a(unsigned units);
NOINLINE void hot_b(unsigned units);
NOINLINE void inline_caller(void);
NOINLINE void before_load(void);
NOINLINE int cmp_slow(const void *a, const void *b);
NOINLINE uint64_t sort_loop(unsigned rounds);
NOINLINE void burn_until(long ms);
int main(int argc, char **argv);

static uint64_t ns_of(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_truth(const char *state)
{
	FILE *f = truth_begin(g_truth);
	truth_objects(f);
	fprintf(f, "mode %s\n", g_mode);
	truth_symbol(f, "main", (const void *)(uintptr_t)main, 1);
	truth_symbol(f, "hot_a", (const void *)(uintptr_t)hot_a, 1);
	truth_symbol(f, "hot_b", (const void *)(uintptr_t)hot_b, 1);
	truth_symbol(f, "inline_caller", (const void *)(uintptr_t)inline_caller, 1);
	truth_symbol(f, "before_load", (const void *)(uintptr_t)before_load, 1);
	truth_symbol(f, "cmp_slow", (const void *)(uintptr_t)cmp_slow, 1);
	truth_symbol(f, "sort_loop", (const void *)(uintptr_t)sort_loop, 1);
	truth_symbol(f, "burn_until", (const void *)(uintptr_t)burn_until, 1);
	fprintf(f, "work %llu %llu %llu\n", (unsigned long long)g_units,
		(unsigned long long)ns_of(CLOCK_MONOTONIC),
		(unsigned long long)ns_of(CLOCK_PROCESS_CPUTIME_ID));
	fprintf(f, "state %s\n", state);
	truth_end(f, g_truth);
}

static void on_usr2(int sig)
{
	(void)sig;
	g_report = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	g_go = 1;
}

static void account(unsigned units)
{
	g_units += units;
	if (g_report) {
		g_report = 0;
		write_truth("ready");
	}
}

void hot_a(unsigned units)
{
	for (unsigned i = 0; i < units * UNIT_STEPS; i++)
		g_acc = g_acc * 31 + i;
}

void hot_b(unsigned units)
{
	for (unsigned i = 0; i < units * UNIT_STEPS; i++)
		g_acc = g_acc * 31 + i;
}

static inline __attribute__((always_inline)) void hot_inline(unsigned units)
{
	for (unsigned i = 0; i < units * UNIT_STEPS; i++)
		g_acc = g_acc * 37 + i;
}

void inline_caller(void)
{
	hot_inline(10);
	__asm__ volatile("" ::: "memory"); /* no tail position for the loop */
}

void before_load(void)
{
	for (unsigned i = 0; i < UNIT_STEPS; i++)
		g_acc = g_acc * 41 + i;
}

int cmp_slow(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	for (unsigned i = 0; i < 64; i++)
		g_acc = g_acc * 43 + i;
	return (x > y) - (x < y);
}

#define SORT_N 4096
static int g_array[SORT_N];

uint64_t sort_loop(unsigned rounds)
{
	static uint32_t seed = 12345;
	uint64_t sum = 0;
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < SORT_N; i++) {
			seed = seed * 1103515245u + 12345u;
			g_array[i] = (int)(seed >> 8);
		}
		qsort(g_array, SORT_N, sizeof(g_array[0]), cmp_slow);
		sum += (uint64_t)g_array[SORT_N / 2];
	}
	return sum;
}

void burn_until(long ms)
{
	uint64_t end = ns_of(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000u;
	while (ns_of(CLOCK_MONOTONIC) < end)
		for (unsigned i = 0; i < UNIT_STEPS; i++)
			g_acc = g_acc * 47 + i;
}

static int run_dlopen(const char *lib)
{
	sigset_t set;
	struct timespec zero = { 0, 0 };
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	write_truth("ready");
	while (sigtimedwait(&set, NULL, &zero) != SIGUSR1)
		before_load();
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "target: %s\n", dlerror());
		return 99;
	}
	void (*hot)(unsigned) = (void (*)(unsigned))dlsym(h, "vgprof_hot");
	if (!hot) {
		fprintf(stderr, "target: no vgprof_hot in '%s'\n", lib);
		return 99;
	}
	FILE *f = truth_begin(g_truth);
	truth_objects(f);
	fprintf(f, "mode %s\n", g_mode);
	truth_symbol(f, "vgprof_hot", (const void *)(uintptr_t)hot, 1);
	truth_symbol(f, "before_load", (const void *)(uintptr_t)before_load, 1);
	fprintf(f, "loaded_ns %llu\n", (unsigned long long)ns_of(CLOCK_MONOTONIC));
	fprintf(f, "state loaded\n");
	truth_end(f, g_truth);
	for (;;) {
		hot(10);
		__asm__ volatile("" ::: "memory");
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	g_truth = argv[1];
	g_mode = argv[2];
	signal(SIGUSR2, on_usr2);
	if (strcmp(g_mode, "dlopen") == 0)
		return argc > 3 ? run_dlopen(argv[3]) : 99;
	if (strcmp(g_mode, "exit") == 0) {
		if (argc < 4)
			return 99;
		signal(SIGUSR1, on_usr1);
		write_truth("ready");
		while (!g_go)
			burn_until(1);
		burn_until(strtol(argv[3], NULL, 10));
		write_truth("exiting");
		return 0;

	}
	if (strcmp(g_mode, "split") != 0 && strcmp(g_mode, "inline") != 0 &&
	    strcmp(g_mode, "qsort") != 0)
		return 99;
	write_truth("ready");
	uint64_t sink = 0;
	for (;;) {
		if (strcmp(g_mode, "split") == 0) {
			hot_a(7);
			hot_b(3);
			account(10);
		} else if (strcmp(g_mode, "inline") == 0) {
			inline_caller();
			account(10);
		} else {
			sink += sort_loop(1);
			account(1);
		}
		__asm__ volatile("" : : "r"(sink) : "memory");
	}
}
