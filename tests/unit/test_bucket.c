/* test_bucket.c - util/bucket.c, util/ranges.h and util/radix.c: a
 * search started in a bucket counts exactly what a bisection of the whole
 * array counts, for every span of keys up to 2^64 - 1 (a hostile symbol
 * table's: the bucket count wrapped to zero there, and fuzz_elf found a
 * symbol that did not contain its address); overlapping and nested
 * ranges answer as a scan of all of them; the radix sort is stable. */
#include "util/bucket.h"
#include "util/radix.h"
#include "util/ranges.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static size_t bisect_le(const uint64_t *k, size_t n, uint64_t x)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += k[i] <= x;
	return c;
}

static void check_keys(const uint64_t *keys, size_t n)
{
	uint64_t probes[64];
	size_t np = 0;

	for (size_t i = 0; i < n && np + 3 <= 60; i++) {
		probes[np++] = keys[i];
		probes[np++] = keys[i] - 1;
		probes[np++] = keys[i] + 1;
	}
	probes[np++] = 0;
	probes[np++] = UINT64_MAX;
	probes[np++] = UINT64_MAX / 2;
	for (unsigned per = 1; per <= 8; per++) {
		struct vg_bucket b;

		assert_int_equal(vg_bucket_build(&b, keys, sizeof(*keys), n, per), 0);
		for (size_t i = 0; i < np; i++)
			assert_int_equal(vg_bucket_count_le(&b, keys, sizeof(*keys), n, probes[i]),
					 bisect_le(keys, n, probes[i]));
		vg_bucket_free(&b);
	}
	for (size_t i = 0; i < np; i++)
		assert_int_equal(vg_sorted_count_le(keys, sizeof(*keys), n, probes[i]),
				 bisect_le(keys, n, probes[i]));
}

static void test_bucket_spans(void **state)
{
	static const uint64_t full[] = { 0, 5, 5, 100, UINT64_MAX };
	static const uint64_t top[] = { UINT64_MAX - 4, UINT64_MAX - 3, UINT64_MAX - 3, UINT64_MAX };
	static const uint64_t same[] = { 7, 7, 7 };
	static const uint64_t one[] = { 42 };
	uint64_t dense[1000], sparse[300];

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		dense[i] = 0x400000 + i * 3 + (i % 7 == 0);
	for (size_t i = 0; i < 300; i++)
		sparse[i] = (uint64_t)i * i * i * 1000003u;
	check_keys(full, 5);
	check_keys(top, 4);
	check_keys(same, 3);
	check_keys(one, 1);
	check_keys(dense, 1000);
	check_keys(sparse, 300);
	check_keys(NULL, 0);
}

/* A record as the callers keep theirs: the range, then their own fields. */
struct range_rec {
	uint64_t lo, hi;
	uint32_t id;
};
VG_RANGE_HEAD_CHECK(struct range_rec, lo, hi);

/* Every range containing x, innermost (last by lo) first, as a scan says. */
static size_t scan_containing(const struct range_rec *r, size_t n, uint64_t x,
			      size_t *out)
{
	size_t k = 0;

	for (size_t i = n; i-- > 0;)
		if (r[i].lo <= x && x < r[i].hi)
			out[k++] = i;
	return k;
}

static void test_ranges_overlap(void **state)
{
	/* Sorted by lo: disjoint, nested three deep, a long one reaching
	 * over later ones, empty gaps, one up to the top of the space. */
	static const struct range_rec r[] = {
		{ 0x10, 0x20, 0 },   { 0x20, 0x30, 1 },   { 0x40, 0x100, 2 },
		{ 0x50, 0x90, 3 },   { 0x60, 0x70, 4 },   { 0x60, 0x61, 5 },
		{ 0x80, 0x400, 6 },  { 0x200, 0x210, 7 }, { 0x300, 0x301, 8 },
		{ 0x500, UINT64_MAX, 9 },
	};
	size_t n = sizeof(r) / sizeof(r[0]);
	uint64_t max_hi[sizeof(r) / sizeof(r[0])];

	(void)state;
	vg_ranges_max_hi(max_hi, r, sizeof(*r), n);
	for (size_t i = 0; i < n; i++)
		assert_true(max_hi[i] >= r[i].hi && (!i || max_hi[i] >= max_hi[i - 1]));
	for (uint64_t x = 0; x < 0x600; x++) {
		size_t want[16], k = scan_containing(r, n, x, want), got = 0;

		for (size_t i = vg_ranges_find(r, sizeof(*r), n, max_hi, x); i != SIZE_MAX;
		     i = vg_ranges_prev_containing(r, sizeof(*r), max_hi, i, x)) {
			assert_true(got < k);
			assert_int_equal(i, want[got++]);
		}
		assert_int_equal(got, k);
	}
	assert_int_equal(vg_ranges_find(r, sizeof(*r), n, max_hi, UINT64_MAX), SIZE_MAX);
	assert_int_equal(vg_ranges_find(NULL, sizeof(*r), 0, NULL, 0x15), SIZE_MAX);
}

static void test_radix_stable(void **state)
{
	struct vg_radix_item v[500], tmp[500];
	uint32_t x = 1;

	(void)state;
	for (size_t i = 0; i < 500; i++) {
		x = x * 1103515245u + 12345u;
		/* few distinct keys, some differing only in the top byte */
		v[i].key = (uint64_t)(x >> 28) | ((uint64_t)(x & 1) << 63);
		v[i].index = i;
	}
	vg_radix_sort(v, tmp, 500);
	for (size_t i = 1; i < 500; i++) {
		assert_true(v[i - 1].key <= v[i].key);
		if (v[i - 1].key == v[i].key)
			assert_true(v[i - 1].index < v[i].index);
	}
	vg_radix_sort(v, tmp, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_spans),
		cmocka_unit_test(test_ranges_overlap),
		cmocka_unit_test(test_radix_stable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
