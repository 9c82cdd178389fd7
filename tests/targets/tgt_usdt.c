/* tgt_usdt - USDT probes of its own (sys/sdt.h), for `vigil probe
 * usdt:...`.  usage: tgt_usdt TRUTH
 *
 * Writes the truth with "state ready", waits for SIGUSR1 (the go, once
 * vigil armed its probes), then fires:
 *   vigil:tick (i, len)  TICKS times, len = (i % 4) * 1000
 *   vigil:semtick (i)    only while its semaphore is non-zero, checked
 *                        SEMCHECKS times: the kernel raises the semaphore
 *                        while a uprobe with ref_ctr_offset is armed on it,
 *                        so every check fires when vigil probes it
 * and rewrites the truth ("ticks N", "len L COUNT" per len, "semtick N",
 * "semaphore_at_go V": the semaphore as read at the go, "state done").
 * Waits until killed. */
#define _SDT_HAS_SEMAPHORES 1
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#include "truth.h"

#define TICKS 1000
#define SEMCHECKS 300

/* The semaphores sys/sdt.h names for each probe (with
 * _SDT_HAS_SEMAPHORES every probe has one): in .probes, as dtrace -G
 * would put them.  tick fires whatever its semaphore says. */
unsigned short vigil_tick_semaphore __attribute__((section(".probes"), used));
unsigned short vigil_semtick_semaphore __attribute__((section(".probes"), used));

static volatile sig_atomic_t go;
static long ticks, lens[4], semticks;
static unsigned semaphore_at_go;

static void on_go(int sig)
{
	(void)sig;
	go = 1;
}

static void write_truth(const char *path, const char *state)
{
	FILE *f = truth_begin(path);

	truth_objects(f);
	fprintf(f, "ticks %ld\nsemtick %ld\nsemaphore_at_go %u\n", ticks, semticks, semaphore_at_go);
	for (int k = 0; k < 4; k++)
		fprintf(f, "len %d %ld\n", k * 1000, lens[k]);
	fprintf(f, "state %s\n", state);
	truth_end(f, path);
}

int main(int argc, char **argv)
{
	sigset_t none;

	if (argc != 2) {
		fprintf(stderr, "usage: tgt_usdt TRUTH\n");
		return 2;
	}
	truth_init(120);
	signal(SIGUSR1, on_go);
	write_truth(argv[1], "ready");
	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
	semaphore_at_go = *(volatile unsigned short *)&vigil_semtick_semaphore;
	for (long i = 0; i < TICKS; i++) {
		long len = (i % 4) * 1000;

		DTRACE_PROBE2(vigil, tick, i, len);
		ticks++;
		lens[i % 4]++;
	}
	for (long i = 0; i < SEMCHECKS; i++)
		if (*(volatile unsigned short *)&vigil_semtick_semaphore) {
			DTRACE_PROBE1(vigil, semtick, i);
			semticks++;
		}
	write_truth(argv[1], "done");
	truth_wait_forever();
}
