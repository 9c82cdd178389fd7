/* tgt_procs - a target whose work leaves its own program or process, for
 * the process-tree cases of watch, probe and profile (issue 15 items 1-3).
 *
 *   tgt_procs TRUTH ifunc N    after the go (SIGUSR1): N calls of its own
 *                              IFUNC procs_pick (the resolver selects
 *                              procs_pick_b) and N calls of libc's strcmp
 *   tgt_procs TRUTH exec N     after the go: N writes of g_cell and N calls
 *                              of procs_work, then exec()s itself (same pid,
 *                              same file); the new program first calls
 *                              procs_work without a pause for 20 ms (so
 *                              that a probe still counting after the exec
 *                              counts some of them), then makes N more
 *                              writes and calls
 *   tgt_procs TRUTH fork N K   after the go: K child processes make N calls
 *                              of procs_work and N writes of g_cell each,
 *                              while the parent makes N of each itself
 *
 * Truth (truth.h), "state ready" before the go, "state done" after the work:

 *   emu cell 0xFILEOFF 0xRUNTIME 0xSTATIC PATH   the label right after the
 *                              store to g_cell (truth.h truth_emu): where
 *                              the watch tests' uprobe emulation traps
 *   addr NAME 0xRUNTIME        procs_pick, procs_pick_b, procs_work,
 *                              procs_unused (an IFUNC nothing refers to),
 *                              strcmp_impl (what the dynamic linker selected
 *                              for strcmp: dlsym runs the same resolver)
 *   calls N / strcmp_calls N   ifunc: calls made after the go
 *   before_exec N / after_exec N   exec: calls of procs_work in each program
 *   after_exec_writes N        exec: writes of g_cell in the new program
 *   parent_calls N / child_calls N / children K / child PID   fork
 * The work is paced (a 1 ms sleep every 64 iterations) so that it lasts
 * long enough for vigil to be in the middle of it. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

#define NOIPA __attribute__((noipa, noinline))

long procs_pick_a(long x);
long procs_pick_b(long x);
void procs_work(long i);
void procs_store(long v);

volatile long g_cell;
static volatile long work_sink;
static const char *truth_path;

static void die(const char *what)
{
	fprintf(stderr, "tgt_procs: %s\n", what);
	exit(99);
}

NOIPA long procs_pick_a(long x) { work_sink += 1; return x + 1; }
NOIPA long procs_pick_b(long x) { work_sink += 2; return x + 2; }
static long (*resolve_pick(void))(long)
{
	return procs_pick_b;
}
long procs_pick(long x) __attribute__((ifunc("resolve_pick")));
/* An IFUNC no relocation refers to: no selection to read. */
static long (*resolve_unused(void))(long)
{
	return procs_pick_a;
}
__attribute__((used)) long procs_unused(long x) __attribute__((ifunc("resolve_unused")));

NOIPA void procs_work(long i)
{
	work_sink += i;
}

/* g_cell = v, with a label right after the store: the trap IP of a
 * breakpoint on g_cell, where the uprobe emulation puts its uprobe. */
NOIPA void procs_store(long v)
{
	__asm__ volatile("movq %1, %0\n\t.globl procs_after_store\nprocs_after_store:"
			 : "=m"(g_cell) : "r"(v));
}
extern const char procs_after_store[];

static void pace(long i)
{
	if ((i & 63) == 63) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

static void wait_go(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigwait(&set, &sig) != 0)
		die("sigwait");
}

static void funcs(FILE *f)
{
	void *impl = dlsym(RTLD_DEFAULT, "strcmp");

	fprintf(f, "addr procs_pick_b 0x%llx\n", (unsigned long long)(uintptr_t)procs_pick_b);
	fprintf(f, "addr procs_work 0x%llx\n", (unsigned long long)(uintptr_t)procs_work);
	fprintf(f, "addr strcmp_impl 0x%llx\n", (unsigned long long)(uintptr_t)impl);
	truth_emu(f, "cell", procs_after_store);
}

static void truth(const char *state, const char *extra)
{
	FILE *f = truth_begin(truth_path);

	truth_objects(f);
	funcs(f);
	if (extra)
		fputs(extra, f);
	fprintf(f, "state %s\n", state);
	truth_end(f, truth_path);
}

static void do_ifunc(long n)
{
	char a[64], b[64], extra[128];
	volatile long hits = 0;
	long calls = 0, scalls = 0;
	int (*volatile cmp)(const char *, const char *) = strcmp;

	snprintf(a, sizeof(a), "%s", truth_path);
	snprintf(b, sizeof(b), "%s", truth_path);
	/* Bind the lazy PLT slots now, before the go. */
	hits += procs_pick(0) + (cmp(a, b) == 0);
	truth("ready", NULL);
	wait_go();
	for (long i = 0; i < n; i++) {
		hits += procs_pick(i);
		calls++;
		hits += cmp(a, b) == 0;
		scalls++;
		pace(i);
	}
	snprintf(extra, sizeof(extra), "calls %ld\nstrcmp_calls %ld\n", calls, scalls);
	truth("done", extra);
}

static void work(long n)
{
	for (long i = 0; i < n; i++) {
		procs_store(i);
		procs_work(i);
		pace(i);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Calls of procs_work for ms milliseconds, no pause; how many. */
static long burst(long ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	long k = 0;

	do {
		for (int i = 0; i < 16; i++)
			procs_work(k++);
	} while (now_ns() < end);
	return k;
}

static void do_exec(long n, long before)
{
	char extra[160], nb[32], nn[32];
	long first;

	if (before < 0) {
		truth("ready", NULL);
		wait_go();
		work(n);
		snprintf(nb, sizeof(nb), "%ld", n);
		snprintf(nn, sizeof(nn), "%ld", n);
		execl("/proc/self/exe", "tgt_procs", truth_path, "exec", nn, nb, (char *)NULL);
		die("exec");
	}
	first = burst(20);
	work(n);
	snprintf(extra, sizeof(extra), "before_exec %ld\nafter_exec %ld\nafter_exec_writes %ld\n",
		 before, first + n, n);
	truth("done", extra);
}

static void do_fork(long n, long k)
{
	char extra[4096];
	size_t used;
	pid_t kids[64];

	if (k < 1 || k > 64)
		die("fork: K must be 1..64");
	truth("ready", NULL);
	wait_go();
	for (long c = 0; c < k; c++) {
		kids[c] = fork();
		if (kids[c] < 0)
			die("fork");
		if (kids[c] == 0) {
			work(n);
			_exit(0);
		}
	}
	work(n);
	for (long c = 0; c < k; c++) {
		int st;

		if (waitpid(kids[c], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			die("a child failed");
	}
	used = (size_t)snprintf(extra, sizeof(extra), "parent_calls %ld\nchild_calls %ld\nchildren %ld\n",
				n, n * k, k);
	for (long c = 0; c < k && used < sizeof(extra); c++)
		used += (size_t)snprintf(extra + used, sizeof(extra) - used, "child %d\n", (int)kids[c]);
	truth("done", extra);
}

int main(int argc, char **argv)
{
	sigset_t set;
	long n;

	if (argc < 4)
		die("usage: tgt_procs TRUTH ifunc N | exec N | fork N K");
	truth_path = argv[1];
	n = strtol(argv[3], NULL, 10);
	/* The new program after an exec: straight to its calls (the alarm
	 * and the parent-death signal survive the exec). */
	if (argc > 4 && !strcmp(argv[2], "exec")) {
		do_exec(n, strtol(argv[4], NULL, 10));
		truth_wait_forever();
	}
	truth_init(TRUTH_MAX_SECONDS);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (!strcmp(argv[2], "ifunc"))
		do_ifunc(n);
	else if (!strcmp(argv[2], "exec"))
		do_exec(n, -1);
	else if (!strcmp(argv[2], "fork") && argc > 4)
		do_fork(n, strtol(argv[4], NULL, 10));
	else
		die("unknown mode");
	truth_wait_forever();
}
