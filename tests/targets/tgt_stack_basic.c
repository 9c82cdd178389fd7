/* tgt_stack_basic - threads parked at known lines, for vigil stack.
 * usage: tgt_stack_basic TRUTHFILE
 *
 *   napper x2  nanosleep inside the always-inline nap(), called by
 *              napper_main: frames nap (inlined) then napper_main
 *   reader     read() on a pipe nobody writes, in wait_pipe(), called
 *              by reader_main
 *   spinner    spins in spin() (called by spinner_main), adding to
 *              spin_count: the test reads it before and after vigil
 *              stack, to see that the target ran on
 *
 * Truth lines (after the common ones):
 *   thread TID NAME
 *   expect NAME IDX FUNCTION LINE INLINED   the IDX-th frame of this
 *                                           program's own code, innermost
 *                                           first, in thread NAME's stack
 *   spin_lines FIRST LAST                   the lines of spin()'s loop
 * Built with -O2 and without frame pointers (tests/targets/meson.build):
 * nap is inlined, and only CFI unwinds these frames. */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

__attribute__((used)) volatile unsigned long long spin_count;

static pthread_barrier_t started;
static int pipe_fds[2];
static pid_t tids[4];
static int nap_line, napper_line, read_line, reader_line, spin_first, spin_last, spinner_line;

static inline __attribute__((always_inline)) void nap(void)
{
	struct timespec ts = { 100000, 0 };

	nap_line = __LINE__ + 1;
	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void *napper_main(void *arg)
{
	tids[(long)arg] = gettid();
	pthread_setname_np(pthread_self(), "napper");
	pthread_barrier_wait(&started);
	for (;;) {
		napper_line = __LINE__ + 1;
		nap();
		__asm__ volatile("" ::: "memory");   /* keeps the call a call */
	}
	return NULL;
}

static __attribute__((noinline)) void wait_pipe(void)
{
	char c;

	read_line = __LINE__ + 1;
	while (read(pipe_fds[0], &c, 1) != 0)
		;
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void *reader_main(void *arg)
{
	tids[(long)arg] = gettid();
	pthread_setname_np(pthread_self(), "reader");
	pthread_barrier_wait(&started);
	reader_line = __LINE__ + 1;
	wait_pipe();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static __attribute__((noinline)) void spin(void)
{
	spin_first = __LINE__ + 1;
	for (;;) {
		spin_count++;
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void *spinner_main(void *arg)
{
	tids[(long)arg] = gettid();
	pthread_setname_np(pthread_self(), "spinner");
	pthread_barrier_wait(&started);
	spinner_line = __LINE__ + 1;
	spin();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const names[4] = { "napper", "napper", "reader", "spinner" };
	void *(*fns[4])(void *) = { napper_main, napper_main, reader_main, spinner_main };

	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	if (pipe(pipe_fds) < 0)
		return 99;
	pthread_barrier_init(&started, NULL, 5);
	for (long i = 0; i < 4; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, fns[i], (void *)i) != 0)
			return 99;
	}
	pthread_barrier_wait(&started);
	/* Every thread at its blocking call before the truth is written: the
	 * nappers in clock_nanosleep, the reader in read, the spinner in its
	 * loop (a fixed 20 ms sleep here was a guess a loaded machine could
	 * lose: stack_nostop then saw a napper still running move its
	 * context-switch counts, and the line numbers could still be 0). */
	truth_wait_in_syscall(tids[0], SYS_clock_nanosleep);
	truth_wait_in_syscall(tids[1], SYS_clock_nanosleep);
	truth_wait_in_syscall(tids[2], SYS_read);
	while (__atomic_load_n(&spin_count, __ATOMIC_ACQUIRE) == 0)
		usleep(1000);
	spin_last = spin_first + 3;   /* the loop's closing brace */
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "spin_count", &spin_count, sizeof(spin_count));
	for (int i = 0; i < 4; i++)
		fprintf(f, "thread %d %s\n", (int)tids[i], names[i]);
	fprintf(f, "expect napper 0 nap %d 1\n", nap_line);
	fprintf(f, "expect napper 1 napper_main %d 0\n", napper_line);
	fprintf(f, "expect reader 0 wait_pipe %d 0\n", read_line);
	fprintf(f, "expect reader 1 reader_main %d 0\n", reader_line);
	fprintf(f, "expect spinner 1 spinner_main %d 0\n", spinner_line);
	fprintf(f, "spin_lines %d %d\n", spin_first, spin_last);
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	truth_wait_forever();
}
