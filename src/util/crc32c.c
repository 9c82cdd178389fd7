/* crc32c.c - CRC-32C (Castagnoli, the iSCSI polynomial): the checksum of
 * snapshot files from version 2 on (util/binfile.c), generic over bytes.
 *
 * Software: one table lookup per byte.  Hardware: the SSE4.2 crc32
 * instruction has a latency of 3 cycles and a throughput of 1, so three
 * independent streams over adjacent blocks run ~3x faster than one; the
 * three CRCs are then joined by "appending" the zeros of the blocks after
 * them (a linear operator on the 32-bit state, tabulated for the block
 * lengths) and xoring (the method of Mark Adler's crc32c.c). */
#include "util/crc32c.h"
#include "util/cpu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* crc32c_table, crc32c_short and crc32c_long, generated at build time
 * (gen-crc32c.py says why). */
#include "util/crc32c_tables.h"

#define CRC32C_POLY 0x82f63b78u
#define CRC32C_LONG 8192u
#define CRC32C_SHORT 256u
_Static_assert(CRC32C_LONG == CRC32C_TABLES_LONG && CRC32C_SHORT == CRC32C_TABLES_SHORT,
	       "the generated tables are for these block sizes");

static uint32_t crc32c_pow2[64][32];      /* append 2^k zero bytes */
static bool crc32c_hw_ok;
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;
/* The operators of vg_crc32c_combine only: 63 matrix squarings that a
 * one-address `vigil sym` (which checksums, never combines) need not pay. */
static pthread_once_t crc32c_pow2_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		sq[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends len zero bytes (a power of two) to a CRC
 * state (not inverted). */
static void crc32c_zeros_op(uint32_t *even, size_t len)
{
	uint32_t odd[32], row = 1;

	odd[0] = CRC32C_POLY;            /* one zero bit */
	for (int n = 1; n < 32; n++) {
		odd[n] = row;
		row <<= 1;
	}
	gf2_square(even, odd);           /* two zero bits */
	gf2_square(odd, even);           /* four */
	do {
		gf2_square(even, odd);   /* one zero byte, then 4, 16, ... */
		len >>= 1;
		if (len == 0)
			return;
		gf2_square(odd, even);
		len >>= 1;
	} while (len);
	memcpy(even, odd, sizeof(odd));
}

static inline uint32_t crc32c_shift(const uint32_t zeros[4][256], uint32_t crc)
{
	return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
	       zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

static void crc32c_pow2_init(void)
{
	crc32c_zeros_op(crc32c_pow2[0], 1);
	for (int k = 1; k < 64; k++)
		gf2_square(crc32c_pow2[k], crc32c_pow2[k - 1]);
}

static void crc32c_init(void)
{
	crc32c_hw_ok = vg_cpu_sse42();
}

uint32_t vg_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	pthread_once(&crc32c_once, crc32c_init);
	crc = ~crc;
	while (n--)
		crc = crc32c_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__)
static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Three streams of block bytes each, while 3 * block bytes remain. */
#define CRC32C_3WAY(block, zeros)                                             \
	while (n >= 3 * (block)) {                                            \
		uint64_t c1 = 0, c2 = 0;                                      \
		const uint8_t *end = b + (block);                             \
		do {                                                          \
			c0 = __builtin_ia32_crc32di(c0, load64(b));           \
			c1 = __builtin_ia32_crc32di(c1, load64(b + (block))); \
			c2 = __builtin_ia32_crc32di(c2, load64(b + 2 * (block))); \
			b += 8;                                               \
		} while (b < end);                                            \
		c0 = crc32c_shift(zeros, (uint32_t)c0) ^ c1;                  \
		c0 = crc32c_shift(zeros, (uint32_t)c0) ^ c2;                  \
		b += 2 * (block);                                             \
		n -= 3 * (block);                                             \
	}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *b, size_t n)
{
	uint64_t c0 = ~crc;

	while (n && ((uintptr_t)b & 7)) {
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *b++);
		n--;
	}
	CRC32C_3WAY(CRC32C_LONG, crc32c_long)
	CRC32C_3WAY(CRC32C_SHORT, crc32c_short)
	for (; n >= 8; n -= 8, b += 8)
		c0 = __builtin_ia32_crc32di(c0, load64(b));
	for (; n; n--)
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *b++);
	return ~(uint32_t)c0;
}
#endif

uint32_t vg_crc32c(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&crc32c_once, crc32c_init);
#if defined(__x86_64__)
	if (crc32c_hw_ok)
		return crc32c_hw(crc, p, n);
#endif
	return vg_crc32c_sw(crc, p, n);
}

uint32_t vg_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	pthread_once(&crc32c_pow2_once, crc32c_pow2_init);
	for (int k = 0; len2; k++, len2 >>= 1)
		if (len2 & 1)
			crc1 = gf2_times(crc32c_pow2[k], crc1);
	return crc1 ^ crc2;
}
