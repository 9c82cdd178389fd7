/* tgt_exit - a target that exits on its own, for "exits while being read".
 * usage: tgt_exit TRUTHFILE MILLISECONDS [MIB]
 * Maps and fills a MIB-MiB buffer (default 8) with 0xa5, writes its address,
 * lives for MILLISECONDS, then exits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	long ms = strtol(argv[2], NULL, 10);
	size_t len = (size_t)(argc > 3 ? strtoul(argv[3], NULL, 10) : 8) << 20;
	unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 99;
	memset(buf, 0xa5, len);
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	fprintf(f, "buf 0x%llx %zu\n", (unsigned long long)(uintptr_t)buf, len);
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
	return 0;
}
