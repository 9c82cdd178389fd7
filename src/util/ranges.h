/* ranges.h - searches of sorted arrays of addresses: "how many keys are
 * at or below x" (a bisection), and which of several address ranges
 * [lo, hi), sorted by lo, contain x when they may overlap or nest (a
 * file's compile units, JIT code in a perf map).  For the ranges, the
 * bisection finds the last one starting at or below x and the walk back
 * from there stops as soon as no earlier range can reach x, which max_hi
 * (the running maximum of hi over ranges 0..i) says: one step where
 * nothing overlaps.
 *
 * Keys may be fields of larger records, stride bytes apart, as in
 * bucket.h; a range record starts as struct vg_range_head (lo, hi), so
 * that an empty array may be NULL (no member of a null pointer is ever
 * formed).  Inline on purpose: the symbolizer's lookups call these for
 * every address, and with a constant stride they compile to the code of
 * a plain array walk (no call, no multiplication). */
#ifndef VG_RANGES_H
#define VG_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* Each range record starts with these two fields: [lo, hi). */
struct vg_range_head {
	uint64_t lo, hi;
};

/* A compile-time check that type starts as struct vg_range_head: its
 * fields lo_field and hi_field in that place. */
#define VG_RANGE_HEAD_CHECK(type, lo_field, hi_field)                                   \
	_Static_assert(offsetof(type, lo_field) == offsetof(struct vg_range_head, lo) && \
		       offsetof(type, hi_field) == offsetof(struct vg_range_head, hi),   \
		       #type " starts as struct vg_range_head")

/* The 64-bit field off bytes into record i. */
static inline uint64_t vg_key_at(const void *recs, size_t stride, size_t i, size_t off)
{
	uint64_t v;

	__builtin_memcpy(&v, (const unsigned char *)recs + i * stride + off, sizeof(v));
	return v;
}

/* How many of the sorted keys in [lo, hi) are <= x, plus lo: the index
 * after the last such key (lo when there is none). */
static inline size_t vg_sorted_count_le_in(const void *keys, size_t stride, size_t lo,
					   size_t hi, uint64_t x)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vg_key_at(keys, stride, mid, 0) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How many of n sorted keys are <= x (the last such key is at that
 * count - 1). */
static inline size_t vg_sorted_count_le(const void *keys, size_t stride, size_t n, uint64_t x)
{
	return vg_sorted_count_le_in(keys, stride, 0, n, x);
}

/* max_hi[i] = the largest hi of the n ranges 0..i (records stride bytes
 * apart, each starting as struct vg_range_head). */
static inline void vg_ranges_max_hi(uint64_t *max_hi, const void *recs, size_t stride, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t hi = vg_key_at(recs, stride, i, offsetof(struct vg_range_head, hi));

		max_hi[i] = i && max_hi[i - 1] > hi ? max_hi[i - 1] : hi;
	}
}

/* The last range before index end that contains x (lo <= x is taken as
 * given for every range before end): its index, or SIZE_MAX.  Called
 * again with that index as end, the next one down. */
static inline size_t vg_ranges_prev_containing(const void *recs, size_t stride,
					       const uint64_t *max_hi, size_t end, uint64_t x)
{
	for (size_t i = end; i-- > 0 && max_hi[i] > x;)
		if (x < vg_key_at(recs, stride, i, offsetof(struct vg_range_head, hi)))
			return i;
	return SIZE_MAX;
}

/* The range containing x that starts last (the innermost of nested
 * ones): its index, or SIZE_MAX.  n ranges sorted by lo, stride bytes
 * apart; max_hi from vg_ranges_max_hi. */
static inline size_t vg_ranges_find(const void *recs, size_t stride, size_t n,
				    const uint64_t *max_hi, uint64_t x)
{
	return vg_ranges_prev_containing(recs, stride, max_hi,
					 vg_sorted_count_le(recs, stride, n, x), x);
}

#endif
