/* tgt_launch - a short-lived program for `vigil profile|probe -- CMD`:
 * everything it does happens in its first milliseconds, so only an
 * observer armed before its first instruction sees all of it.
 * usage: tgt_launch TRUTH N MS STATUS
 *   calls launch_counted() N times first thing in main (each stores
 *   g_launch_count = i + 1, the only writes of that global), then burns CPU in
 *   launch_burn() for MS ms, writes "calls N", "cpu_ns NS" (its CPU time
 *   so far: a loaded machine gives it a fraction of the MS ms) and "state
 *   done" to TRUTH, and exits with STATUS (a number), or kills itself with
 *   signal S (STATUS "sigS"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

int main(int argc, char **argv);
__attribute__((noinline)) void launch_counted(unsigned i);
__attribute__((noinline)) void launch_burn(long ms);

static volatile unsigned g_sink;
/* Written once per launch_counted() call and never otherwise: a watch
 * from the first instruction sees exactly N writes. */
volatile unsigned g_launch_count;

__attribute__((noinline)) void launch_counted(unsigned i)
{
	g_launch_count = i + 1;
	__asm__ volatile("" ::: "memory");
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void launch_burn(long ms)
{
	double end = now_ms() + (double)ms;

	while (now_ms() < end)
		for (unsigned i = 0; i < 10000; i++)
			g_sink += i;
}

int main(int argc, char **argv)
{
	unsigned n;
	struct timespec cpu;
	FILE *f;


	if (argc != 5)
		return 99;
	n = (unsigned)strtoul(argv[2], NULL, 10);
	for (unsigned i = 0; i < n; i++)
		launch_counted(i);
	launch_burn(strtol(argv[3], NULL, 10));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	f = truth_begin(argv[1]);
	fprintf(f, "pid %d\ncalls %u\ncpu_ns %llu\nstate done\n", (int)getpid(), n,
		(unsigned long long)cpu.tv_sec * 1000000000ull + (unsigned long long)cpu.tv_nsec);
	truth_end(f, argv[1]);
	if (strncmp(argv[4], "sig", 3) == 0) {
		signal(atoi(argv[4] + 3), SIG_DFL);
		raise(atoi(argv[4] + 3));
	}
	return atoi(argv[4]);
}
