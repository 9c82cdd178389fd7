/* compare.h - what one scan compares, private to the scan: a VALUE turned
 * into a matcher (a kernel, its patterns or float bounds) once, then run
 * over buffers of target memory (compare.c).  scan.c's first scan and
 * narrowing use it; not part of the library's interface (scan.h is). */
#ifndef VG_SCAN_COMPARE_H
#define VG_SCAN_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scan/value.h"

/* Hits are buffer offsets shifted left by one, the low bit the variant. */
struct hits {
	uint64_t *v;
	size_t n, cap;
	bool oom;
};

/* A fixed byte pattern and up to four filter bytes of it. */
struct pattern {
	const uint8_t *bytes;
	const uint8_t *mask;     /* NULL: every byte */
	size_t len;
	unsigned nf;             /* 1..4 */
	size_t fo[4];            /* filter byte offsets */
	uint8_t fb[4];           /* filter byte values */
};

enum kernel {
	K_INT_ALIGNED,           /* width 2, 4, 8 at multiples of the width */
	K_PATTERNS,              /* pats[0..npat) at every offset */
	K_F32, K_F32_UNALIGNED,
	K_F64, K_F64_UNALIGNED,
};

struct matcher {
	enum kernel k;
	size_t width;            /* numbers; the longest pattern otherwise */
	uint8_t raw[8];
	struct pattern pats[2];
	size_t npat;
	float lo32, hi32;
	double lo64, hi64;
	bool avx2;
};

/* p at s (every significant byte of s equal). */
static inline bool pattern_at(const struct pattern *p, const uint8_t *s)
{
	if (!p->mask)
		return memcmp(s, p->bytes, p->len) == 0;
	for (size_t i = 0; i < p->len; i++)
		if ((s[i] & p->mask[i]) != (p->bytes[i] & p->mask[i]))
			return false;
	return true;
}

/* Prepare m to find v (aligned: numbers only at multiples of their width).
 * Picks AVX2 kernels when the CPU has them. */
void scan_matcher_init(struct matcher *m, const struct vg_scan_value *v,
		       bool aligned);

/* Every match starting in [a, own) of buf that lies within the readable
 * segment [a, b), appended to h in ascending offset order per variant;
 * h->oom is set when a hit could not be stored. */
void scan_range(const struct matcher *m, const uint8_t *buf, size_t a,
		size_t b, size_t own, struct hits *h);

#endif
