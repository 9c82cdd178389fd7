/* stack_threads: a process whose threads block at a known depth, plus one
 * thread that measures its own longest stall, for bench/stack.sh (vigil
 * stack against eu-stack and gdb, which stop every thread for the dump).
 *
 *   stack_threads N GAPFILE
 *     N        threads in all (>= 2): N-2 blocked workers, the gap meter
 *              and the main thread (which waits in pthread_join)
 *     GAPFILE  where the gap meter writes "gap_max_ns NS iterations K"
 *
 * Workers rotate over three waits, each ~8 frames deep through a chain of
 * noinline and always_inline functions (so inline frames and lines are
 * part of the answer): pthread_cond_wait on a condition nobody signals,
 * read() on a pipe nobody writes, and nanosleep(1 h).
 *
 * The gap meter sleeps 200 us per iteration with clock_nanosleep and keeps
 * the longest time between two wake-ups minus the 200 us.  A tool that
 * stops the process for D ms adds about D ms to that figure; one that
 * stops nothing adds only its share of the machine's two cores.  SIGUSR1
 * resets the maximum, SIGUSR2 writes it to GAPFILE (atomically: .tmp then
 * rename).  Prints "ready" when every thread is blocked. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_never = PTHREAD_COND_INITIALIZER;
static int g_pipe[2];
static atomic_int g_blocked;
static atomic_int g_reset, g_report;
static const char *g_gapfile;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		atomic_store(&g_reset, 1);
	else
		atomic_store(&g_report, 1);
}

static void write_gap(uint64_t gap, uint64_t iters)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", g_gapfile);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "gap_max_ns %llu iterations %llu\n", (unsigned long long)gap,
		(unsigned long long)iters);
	fclose(f);
	rename(tmp, g_gapfile);
}

static void *gap_meter(void *arg)
{
	(void)arg;
	const uint64_t period = 200000;
	uint64_t max = 0, iters = 0, prev = now_ns();
	for (;;) {
		struct timespec ts = { 0, (long)period };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		uint64_t t = now_ns(), gap = t - prev;
		prev = t;
		iters++;
		if (gap > period && gap - period > max)
			max = gap - period;
		if (atomic_exchange(&g_reset, 0)) {
			max = 0;
			iters = 0;
		}
		if (atomic_exchange(&g_report, 0))
			write_gap(max, iters);
	}
	return NULL;
}

static void wait_forever(int kind)
{
	atomic_fetch_add(&g_blocked, 1);
	if (kind == 0) {
		pthread_mutex_lock(&g_mutex);
		for (;;)
			pthread_cond_wait(&g_never, &g_mutex);
	} else if (kind == 1) {
		char c;
		for (;;)
			if (read(g_pipe[0], &c, 1) <= 0)
				sleep(3600);
	} else {
		for (;;) {
			struct timespec ts = { 3600, 0 };
			nanosleep(&ts, NULL);
		}
	}
}

static inline __attribute__((always_inline)) void level3(int kind) { wait_forever(kind); }
static inline __attribute__((always_inline)) void level2(int kind) { level3(kind); }
__attribute__((noinline)) static void level1(int kind) { level2(kind); __asm__ volatile(""); }
__attribute__((noinline)) static void level0(int kind) { level1(kind); __asm__ volatile(""); }

static void *worker(void *arg)
{
	int kind = (int)(intptr_t)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", kind);
	pthread_setname_np(pthread_self(), name);
	level0(kind);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[1]) < 2) {
		fprintf(stderr, "usage: stack_threads N GAPFILE (N >= 2)\n");
		return 2;
	}
	int n = atoi(argv[1]);
	g_gapfile = argv[2];
	if (pipe(g_pipe) != 0)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_t meter;
	if (pthread_create(&meter, &attr, gap_meter, NULL) != 0)
		return 1;
	pthread_setname_np(meter, "gap-meter");
	for (int i = 0; i < n - 2; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, (void *)(intptr_t)(i % 3)) != 0) {
			fprintf(stderr, "stack_threads: pthread_create %d failed\n", i);
			return 1;
		}
	}
	while (atomic_load(&g_blocked) < n - 2)
		usleep(1000);
	usleep(50000); /* let the last ones reach their system call */
	printf("ready\n");
	fflush(stdout);
	pthread_join(meter, NULL);
	return 0;
}
