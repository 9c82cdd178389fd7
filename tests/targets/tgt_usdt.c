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
 *   vigil:memtick (local, big)  MEMTICKS times from a function built at
 *                        -O0, whose arguments are therefore memory
 *                        operands ("-4@-4(%rbp) -8@-16(%rbp)"): local =
 *                        3k - 7, big = k << 20, k = i % 5
 * and rewrites the truth ("ticks N", "len L COUNT" per len, "semtick N",
 * "semaphore_at_go V": the semaphore as read at the go, "memtick N",
 * "memval LOCAL BIG COUNT" per k, "state done").
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
#define MEMTICKS 100

/* The semaphores sys/sdt.h names for each probe (with
 * _SDT_HAS_SEMAPHORES every probe has one): in .probes, as dtrace -G
 * would put them.  tick fires whatever its semaphore says. */
unsigned short vigil_tick_semaphore __attribute__((section(".probes"), used));
unsigned short vigil_semtick_semaphore __attribute__((section(".probes"), used));
unsigned short vigil_memtick_semaphore __attribute__((section(".probes"), used));

static volatile sig_atomic_t go;
static long ticks, lens[4], semticks, memticks;
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
	fprintf(f, "memtick %ld\n", memticks);
	for (long k = 0; k < 5 && memticks; k++)
		fprintf(f, "memval %ld %ld %ld\n", 3 * k - 7, k << 20, memticks / 5);
	fprintf(f, "state %s\n", state);
	truth_end(f, path);
}

/* At -O0 the locals live in the frame and sys/sdt.h's "nor" operands
 * name them there: memory arguments, as many distributions' builds of
 * debug code have them. */
__attribute__((optimize("O0"), noinline)) void memtick(long k);
__attribute__((optimize("O0"), noinline)) void memtick(long k)
{
	int local = (int)(3 * k) - 7;
	long big = k << 20;

	DTRACE_PROBE2(vigil, memtick, local, big);
}

int main(int argc, char **argv)
{
	sigset_t none;

	if (argc != 2) {
		fprintf(stderr, "usage: tgt_usdt TRUTH\n");
		return 2;
	}
	truth_init(TRUTH_MAX_SECONDS);
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
	for (long i = 0; i < MEMTICKS; i++) {
		memtick(i % 5);
		memticks++;
	}
	write_truth(argv[1], "done");
	truth_wait_forever();
}
