/* scan_heap: a process holding SIZE bytes (default 1 GiB) of heap for
 * bench/scan.sh.
 *
 *   scan_heap [SIZE_MIB] [MANY]          (defaults 1024 1000000)
 *
 * One malloc'd block, every 8-byte word i = i * 0x9E3779B97F4A7C15 (a
 * pattern: every page touched and resident, not the zero page), then the
 * i32 VALUE 0x5eed1234 planted at 5 places (3 of them unaligned) and the i32
 * MANYVALUE 0x6d616e79 at MANY 8-byte aligned places spread over the block.
 * The process then counts, in its own block, every offset holding each
 * value (any offset and 4-aligned): what a scan of the block must find.
 * Prints "ready <hex address without 0x> <size> <value_any> <value_aligned>
 * <many_any> <many_aligned>" and sleeps until killed (or its parent dies).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define VALUE 0x5eed1234u
#define MANYVALUE 0x6d616e79u

static void count(const unsigned char *p, size_t n, uint32_t v, size_t *any, size_t *al)
{
	*any = *al = 0;
	for (size_t i = 0; i + 4 <= n; i++) {
		if (p[i] != (unsigned char)v)
			continue;
		uint32_t x;
		memcpy(&x, p + i, 4);
		if (x == v) {
			++*any;
			if (((uintptr_t)(p + i)) % 4 == 0)
				++*al;
		}
	}
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 1024;
	long many = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
	if (mib < 16 || many < 1 || (size_t)many * 64 > (size_t)mib << 20) {
		fprintf(stderr, "usage: %s [SIZE_MIB >= 16] [MANY, at most SIZE/64]\n", argv[0]);
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	size_t size = (size_t)mib << 20;
	unsigned char *p = malloc(size);
	if (!p) {
		perror("malloc");
		return 1;
	}
	uint64_t *w = (uint64_t *)p;
	for (size_t i = 0; i < size / 8; i++)
		w[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
	size_t stride = (size / (size_t)many) & ~(size_t)7;
	uint32_t m = MANYVALUE, v = VALUE;
	for (long k = 0; k < many; k++)
		memcpy(p + (size_t)k * stride, &m, 4);
	/* Between two MANY copies (stride >= 64), never overlapping them. */
	size_t at[5] = { 7, (size_t)many / 10, (size_t)many / 3, (size_t)many / 2, (size_t)many - 2 };
	size_t off[5] = { 21, 33, 40, 43, 48 };
	for (int i = 0; i < 5; i++)
		memcpy(p + at[i] * stride + off[i], &v, 4);
	size_t va, vl, ma, ml;
	count(p, size, VALUE, &va, &vl);
	count(p, size, MANYVALUE, &ma, &ml);
	printf("ready %lx %zu %zu %zu %zu %zu\n", (unsigned long)(uintptr_t)p, size, va, vl, ma, ml);
	fflush(stdout);
	for (;;)
		pause();
}
