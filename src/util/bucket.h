/* bucket.h - a coarse position table over a sorted array of 64-bit keys
 * (addresses), so that "the last element at or below x" starts its search
 * within one bucket of the key space instead of bisecting the whole
 * array: one read of the table (small: it stays in cache) and a few of
 * the array, where a bisection of a large array misses the cache at
 * nearly every step (the symbol index's line rows and segments: 1.3
 * million rows in one 37 MB file).
 *
 * The keys may be fields of larger records (stride bytes apart).  The
 * bucket width is a power of two chosen so that there are about as many
 * buckets as keys / per_bucket, capped by the key span.  The search
 * inside the bucket is ranges.h's bisection. */
#ifndef VG_BUCKET_H
#define VG_BUCKET_H

#include <stddef.h>
#include <stdint.h>

#include "util/ranges.h"

struct vg_bucket {
	uint64_t base;          /* the first key */
	unsigned shift;         /* bucket width: 1 << shift */
	uint32_t n_buckets;
	uint32_t n;             /* keys */
	/* first[b]: index of the first key >= base + (b << shift);
	 * first[n_buckets] == n. */
	uint32_t *first;
};

/* Build over n sorted keys (n < UINT32_MAX), key i at keys + i * stride.
 * 0, or -ENOMEM (b left empty: vg_bucket_last falls back to bisection). */
int vg_bucket_build(struct vg_bucket *b, const void *keys, size_t stride,
		    size_t n, unsigned per_bucket);
void vg_bucket_free(struct vg_bucket *b);

/* [*lo, *hi): where among n keys the search for x ends, by the bucket
 * table alone (the whole array when it has none). */
static inline void vg_bucket_span(const struct vg_bucket *b, size_t n, uint64_t x,
				  size_t *lo, size_t *hi)
{
	*lo = 0;
	*hi = n;
	if (b->first && b->n == n) {
		uint64_t d;

		if (n == 0 || x < b->base) {
			*hi = 0;
			return;
		}
		d = (x - b->base) >> b->shift;
		if (d < b->n_buckets) {
			*lo = b->first[d];
			*hi = b->first[d + 1];
		} else {
			*lo = b->first[b->n_buckets];
		}
	}
}

/* A hint for a search about to run over [p, p + len) (a bucket's span):
 * the cache lines it starts and ends in, and the middle one, fetched
 * (a bisection's first steps; the span is a few lines at most). */
static inline void vg_prefetch_span(const void *p, size_t len)
{
	const char *c = p;

	__builtin_prefetch(c);
	__builtin_prefetch(c + len / 2);
	__builtin_prefetch(c + (len ? len - 1 : 0));
}

/* How many keys are <= x (the last such key is at that count - 1), as a
 * bisection of the whole array would say. */
static inline size_t vg_bucket_count_le(const struct vg_bucket *b, const void *keys,
					size_t stride, size_t n, uint64_t x)
{
	size_t lo, hi;

	vg_bucket_span(b, n, x, &lo, &hi);
	return vg_sorted_count_le_in(keys, stride, lo, hi, x);
}

#endif
