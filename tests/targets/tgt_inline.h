/* tgt_inline.h - static inline helpers shared by tgt_inline.c and
 * tgt_inline2.c, so that inlined frames cross files: an address in a
 * worker of tgt_inline2.c can be inside ti_rotate, inlined into ti_mix,
 * inlined into ti_hash, inlined into a family function of
 * tgt_inline_family.h, inlined into the worker.  always_inline makes that
 * depth certain whatever gcc's heuristics think of it; plain static inline
 * lets gcc decide (and sometimes emit out-of-line or .constprop copies,
 * which are cases the symbolizer must handle too). */
#ifndef VG_TARGET_TGT_INLINE_H
#define VG_TARGET_TGT_INLINE_H

#include <stddef.h>
#include <stdint.h>

#define TI_ALWAYS static inline __attribute__((always_inline))

TI_ALWAYS uint64_t ti_rotate(uint64_t x, unsigned r)
{
	r &= 63;
	return r ? (x << r) | (x >> (64 - r)) : x;
}

TI_ALWAYS uint64_t ti_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x = ti_rotate(x, (unsigned)(x & 31) + 7);
	x ^= x >> 29;
	return x;
}

TI_ALWAYS uint64_t ti_hash(uint64_t a, uint64_t b)
{
	uint64_t h = ti_mix(a + 0x9e3779b97f4a7c15ULL);
	h ^= ti_mix(b ^ h);
	return ti_rotate(h, (unsigned)(b >> 58));
}

static inline uint64_t ti_checksum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = ti_hash(s, v[i]) + i;
	return s;
}

static inline void ti_swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

/* Lomuto partition: a loop with an inlined call inside an inlined call. */
static inline size_t ti_partition(uint64_t *v, size_t n)
{
	uint64_t pivot = v[n - 1];
	size_t store = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (ti_mix(v[i]) < ti_mix(pivot))
			ti_swap(&v[i], &v[store++]);
	}
	ti_swap(&v[store], &v[n - 1]);
	return store;
}

/* tgt_inline2.c */
uint64_t ti2_run_all(uint64_t *v, size_t n);
uint64_t ti2_fold(const uint64_t *v, size_t n, unsigned depth);

#endif
