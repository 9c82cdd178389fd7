/* tgt_threads - a process with several threads, for "a TID resolves to its
 * process".  usage: tgt_threads TRUTHFILE [leader-exit]
 * Writes "tid TID" for every thread but the leader, then waits.  With
 * leader-exit the main thread then calls pthread_exit: the process lives on
 * in its threads while the leader is a zombie without a memory map. */
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "truth.h"

#define NTHREADS 3

__attribute__((used)) volatile unsigned long long vg_magic = 0x1122334455667788ULL;

static pthread_barrier_t started;
static pid_t tids[NTHREADS];

static void *worker(void *arg)
{
	tids[(long)arg] = gettid();
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	pthread_barrier_init(&started, NULL, NTHREADS + 1);
	for (long i = 0; i < NTHREADS; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, (void *)i) != 0)
			return 99;
	}
	pthread_barrier_wait(&started);
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "vg_magic", &vg_magic, sizeof(vg_magic));
	for (int i = 0; i < NTHREADS; i++)
		fprintf(f, "tid %d\n", (int)tids[i]);
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	if (argc > 2 && strcmp(argv[2], "leader-exit") == 0)
		pthread_exit(NULL);
	truth_wait_forever();
}
