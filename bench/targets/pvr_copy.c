/* pvr_copy: the raw copy rate out of another process, for bench/scan.sh.
 *
 *   pvr_copy PID HEXADDR SIZE [REPS]      (REPS default 3)
 *
 * Reads SIZE bytes at HEXADDR of PID with process_vm_readv, 1 MiB at a
 * time into one page-aligned 1 MiB buffer (what any reader of another
 * process must do at least once per byte), and touches nothing else.
 * Prints "pvr_copy GB/s" (best of REPS, GB = 1e9 bytes).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s PID HEXADDR SIZE [REPS]\n", argv[0]);
		return 2;
	}
	pid_t pid = (pid_t)strtol(argv[1], NULL, 10);
	uint64_t addr = strtoull(argv[2], NULL, 16);
	size_t size = strtoull(argv[3], NULL, 10);
	int reps = argc > 4 ? atoi(argv[4]) : 3;
	size_t chunk = 1 << 20;
	void *buf = aligned_alloc(4096, chunk);
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		for (size_t o = 0; o < size; o += chunk) {
			size_t n = size - o < chunk ? size - o : chunk;
			struct iovec l = { buf, n }, rm = { (void *)(uintptr_t)(addr + o), n };
			if (process_vm_readv(pid, &l, 1, &rm, 1, 0) != (ssize_t)n) {
				perror("process_vm_readv");
				return 1;
			}
		}
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	printf("pvr_copy %.3f\n", (double)size / best / 1e9);
	return 0;
}
