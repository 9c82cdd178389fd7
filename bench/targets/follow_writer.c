/* follow_writer: a pointer re-pointed N times, and a leaf write at known
 * delays after each re-point, for bench/watch.sh's re-bind measurement
 * (vigil watch --follow g_ptr+8).
 *
 *   follow_writer N PERIOD_MS DELAY_US...
 *
 * Prints "ready" and waits for SIGUSR1 (the go).  Then N times: stores the
 * next object into g_ptr (alternating between two), and for each DELAY_US
 * k, busy-waits until DELAY_US after the store and writes
 * g_ptr->field = (i << 8) | k; then sleeps PERIOD_MS.  A write earlier than
 * vigil's re-bind lands in the blind window and is not seen: the capture
 * per delay is the window, measured from the writer's side.  Prints "done"
 * and exits. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct obj {
	uint64_t tag;
	uint64_t field;                /* the leaf: g_ptr+8 */
};

__attribute__((used, aligned(64))) struct obj g_objs[2];
__attribute__((used, aligned(64))) struct obj *volatile g_ptr = &g_objs[0];

__attribute__((noipa)) void fw_repoint(struct obj *p);
__attribute__((noipa)) void fw_repoint(struct obj *p) { g_ptr = p; }
__attribute__((noipa)) void fw_leaf(struct obj *p, uint64_t v);
__attribute__((noipa)) void fw_leaf(struct obj *p, uint64_t v) { *(volatile uint64_t *)&p->field = v; }

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig, n, period_ms, nd = argc - 3;
	long delays[16];

	if (argc < 4 || nd > 16) {
		fprintf(stderr, "usage: follow_writer N PERIOD_MS DELAY_US... (at most 16)\n");
		return 2;
	}
	n = atoi(argv[1]);
	period_ms = atoi(argv[2]);
	for (int k = 0; k < nd; k++)
		delays[k] = atol(argv[3 + k]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig) != 0)
		return 1;
	for (int i = 1; i <= n; i++) {
		struct obj *p = &g_objs[i % 2];
		uint64_t t0;

		fw_repoint(p);
		t0 = now_ns();
		for (int k = 0; k < nd; k++) {
			while (now_ns() - t0 < (uint64_t)delays[k] * 1000)
				;
			fw_leaf(p, (uint64_t)i << 8 | (uint64_t)k);
		}
		struct timespec ts = { period_ms / 1000, (period_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}
