/* test_probe_stats.c - entry/return pairing (nesting, deep recursion,
 * unreturned and unmatched calls, interleaved threads, in-flight calls),
 * latency histograms and percentiles (exact and past the exact limit) and
 * value distributions, all on exact expected values.  Also prints the
 * per-record rates as TAP comments (measured, not asserted). */
#include "probe/stats.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define MS 1000000ull

static struct vg_pairing_site_stats site_stats(struct vg_pairing *p, uint32_t site, uint64_t now)
{
	struct vg_pairing_site_stats s;

	vg_pairing_site(p, site, now, &s);
	return s;
}

static struct vg_latency_summary latency_of(struct vg_pairing *p, uint32_t site)
{
	struct vg_latency_summary s;

	vg_latency_summarize(vg_pairing_latency(p, site), &s);
	return s;
}

static void expect_return(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t t,
			  uint64_t want_ns)
{
	uint64_t ns = 12345;

	assert_true(vg_pairing_return(p, tid, site, t, &ns));
	assert_int_equal(ns, want_ns);
}

static void expect_unmatched(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t t)
{
	uint64_t ns = 12345;

	assert_false(vg_pairing_return(p, tid, site, t, &ns));
	assert_int_equal(ns, 12345);
}

/* A{ B{} B{} } then A again: each return pairs with its own entry. */
static void test_nested_two_sites(void **state)
{
	struct vg_pairing *p = vg_pairing_new(2);
	struct vg_pairing_site_stats a, b;
	struct vg_latency_summary la, lb;

	(void)state;
	assert_non_null(p);
	assert_int_equal(vg_pairing_entry(p, 7, 0, 100), 0);
	assert_int_equal(vg_pairing_entry(p, 7, 1, 110), 0);
	expect_return(p, 7, 1, 115, 5);
	assert_int_equal(vg_pairing_entry(p, 7, 1, 120), 0);
	expect_return(p, 7, 1, 127, 7);
	expect_return(p, 7, 0, 200, 100);
	assert_int_equal(vg_pairing_entry(p, 7, 0, 300), 0);
	expect_return(p, 7, 0, 350, 50);

	a = site_stats(p, 0, 1000);
	b = site_stats(p, 1, 1000);
	assert_int_equal(a.paired, 2);
	assert_int_equal(b.paired, 2);
	assert_int_equal(a.unmatched_returns + a.unreturned + a.in_flight + a.dropped_nomem, 0);
	assert_int_equal(b.unmatched_returns + b.unreturned + b.in_flight + b.dropped_nomem, 0);
	assert_int_equal(a.in_flight_oldest_ns, 0);
	la = latency_of(p, 0);
	lb = latency_of(p, 1);
	assert_int_equal(la.count, 2);
	assert_int_equal(la.min_ns, 50);
	assert_int_equal(la.max_ns, 100);
	assert_int_equal(la.sum_ns, 150);
	assert_int_equal(lb.count, 2);
	assert_int_equal(lb.min_ns, 5);
	assert_int_equal(lb.max_ns, 7);
	assert_int_equal(lb.sum_ns, 12);
	vg_pairing_free(p);
}

/* --filter with --latency, recursing: A(counted){ A(dropped){ A(counted){} } }.
 * Each return pairs with its own entry; the dropped call's return is
 * neither paired nor unmatched, and a dropped call open is not in flight. */
static void test_dropped_entries(void **state)
{
	struct vg_pairing *p = vg_pairing_new(1);
	struct vg_pairing_site_stats a;
	struct vg_latency_summary la;
	uint64_t ns = 0;

	(void)state;
	assert_non_null(p);
	assert_int_equal(vg_pairing_entry(p, 7, 0, 100), 0);
	assert_int_equal(vg_pairing_entry_dropped(p, 7, 0, 110), 0);
	assert_int_equal(vg_pairing_entry(p, 7, 0, 120), 0);
	expect_return(p, 7, 0, 125, 5);
	assert_false(vg_pairing_return(p, 7, 0, 130, &ns));
	a = site_stats(p, 0, 140);
	assert_int_equal(a.in_flight, 1);
	assert_int_equal(a.in_flight_oldest_ns, 40);
	expect_return(p, 7, 0, 200, 100);
	assert_int_equal(vg_pairing_entry_dropped(p, 7, 0, 300), 0);
	a = site_stats(p, 0, 310);
	assert_int_equal(a.in_flight, 0);
	assert_int_equal(a.in_flight_oldest_ns, 0);
	assert_false(vg_pairing_return(p, 7, 0, 320, &ns));
	a = site_stats(p, 0, 1000);
	assert_int_equal(a.paired, 2);
	assert_int_equal(a.unmatched_returns + a.unreturned + a.in_flight + a.dropped_nomem, 0);
	la = latency_of(p, 0);
	assert_int_equal(la.count, 2);
	assert_int_equal(la.min_ns, 5);
	assert_int_equal(la.max_ns, 100);
	vg_pairing_free(p);
}

/* 10000 nested calls of one site: the i-th entry (at t = i) returns at
 * t = 20000 - 1 - i, so durations are the odd numbers 1..19999. */
static void test_deep_recursion(void **state)
{
	enum { DEPTH = 10000 };
	struct vg_pairing *p = vg_pairing_new(1);
	struct vg_pairing_site_stats s;
	struct vg_latency_summary l;
	uint64_t i;

	(void)state;
	assert_non_null(p);
	for (i = 0; i < DEPTH; i++)
		assert_int_equal(vg_pairing_entry(p, 42, 0, i), 0);
	s = site_stats(p, 0, DEPTH + 5);
	assert_int_equal(s.in_flight, DEPTH);
	assert_int_equal(s.in_flight_oldest_ns, DEPTH + 5);
	for (i = 0; i < DEPTH; i++)
		expect_return(p, 42, 0, DEPTH + i, 2 * i + 1);
	s = site_stats(p, 0, 3 * DEPTH);
	assert_int_equal(s.paired, DEPTH);
	assert_int_equal(s.in_flight, 0);
	assert_int_equal(s.unreturned, 0);
	assert_int_equal(s.unmatched_returns, 0);
	l = latency_of(p, 0);
	assert_true(l.exact);
	assert_int_equal(l.count, DEPTH);
	assert_int_equal(l.min_ns, 1);
	assert_int_equal(l.max_ns, 2 * DEPTH - 1);
	assert_int_equal(l.sum_ns, (uint64_t)DEPTH * DEPTH);
	assert_int_equal(l.p50_ns, 9999);   /* rank 5000: 2*5000-1 */
	assert_int_equal(l.p90_ns, 17999);  /* rank 9000 */
	assert_int_equal(l.p99_ns, 19799);  /* rank 9900 */
	/* The stack is empty again: one more return is unmatched. */
	expect_unmatched(p, 42, 0, 1);
	assert_int_equal(site_stats(p, 0, 0).unmatched_returns, 1);
	vg_pairing_free(p);
}

/* Mutual recursion A{B{A{B{}}}}: the return of A pairs with the inner A. */
static void test_interleaved_recursion(void **state)
{
	struct vg_pairing *p = vg_pairing_new(2);

	(void)state;
	assert_int_equal(vg_pairing_entry(p, 1, 0, 10), 0);
	assert_int_equal(vg_pairing_entry(p, 1, 1, 20), 0);
	assert_int_equal(vg_pairing_entry(p, 1, 0, 30), 0);
	assert_int_equal(vg_pairing_entry(p, 1, 1, 40), 0);
	expect_return(p, 1, 1, 41, 1);
	expect_return(p, 1, 0, 43, 13);
	expect_return(p, 1, 1, 47, 27);
	expect_return(p, 1, 0, 60, 50);
	assert_int_equal(site_stats(p, 0, 0).paired, 2);
	assert_int_equal(site_stats(p, 1, 0).paired, 2);
	assert_int_equal(latency_of(p, 0).sum_ns, 63);
	assert_int_equal(latency_of(p, 1).sum_ns, 28);
	vg_pairing_free(p);
}

/* Outer A returns while B, C and another B are open above it (longjmp):
 * those three are unreturned for their sites, A pairs. */
static void test_unreturned(void **state)
{
	struct vg_pairing *p = vg_pairing_new(3);
	struct vg_pairing_site_stats a, b, c;

	(void)state;
	assert_int_equal(vg_pairing_entry(p, 5, 0, 100), 0);
	assert_int_equal(vg_pairing_entry(p, 5, 1, 110), 0);
	assert_int_equal(vg_pairing_entry(p, 5, 2, 120), 0);
	assert_int_equal(vg_pairing_entry(p, 5, 1, 130), 0);
	expect_return(p, 5, 0, 400, 300);
	/* Nothing is left open: the late return of B is unmatched. */
	expect_unmatched(p, 5, 1, 410);
	a = site_stats(p, 0, 500);
	b = site_stats(p, 1, 500);
	c = site_stats(p, 2, 500);
	assert_int_equal(a.paired, 1);
	assert_int_equal(a.unreturned, 0);
	assert_int_equal(b.paired, 0);
	assert_int_equal(b.unreturned, 2);
	assert_int_equal(b.unmatched_returns, 1);
	assert_int_equal(c.unreturned, 1);
	assert_int_equal(a.in_flight + b.in_flight + c.in_flight, 0);
	assert_int_equal(latency_of(p, 1).count, 0);
	vg_pairing_free(p);
}

/* Returns with no entry: never seen thread, other thread's open call,
 * out-of-range site; and a return that precedes its entry in time. */
static void test_unmatched(void **state)
{
	struct vg_pairing *p = vg_pairing_new(2);
	struct vg_pairing_site_stats s;

	(void)state;
	expect_unmatched(p, 9, 0, 50);
	assert_int_equal(vg_pairing_entry(p, 10, 0, 100), 0);
	expect_unmatched(p, 11, 0, 150);   /* open call is thread 10's */
	expect_unmatched(p, 10, 1, 150);   /* open call is of site 0 */
	assert_false(vg_pairing_return(p, 10, 2, 150, NULL));
	assert_int_equal(vg_pairing_entry(p, 10, 2, 150), -EINVAL);
	s = site_stats(p, 0, 200);
	assert_int_equal(s.unmatched_returns, 2);
	assert_int_equal(s.in_flight, 1);
	assert_int_equal(s.in_flight_oldest_ns, 100);
	assert_int_equal(site_stats(p, 1, 200).unmatched_returns, 1);
	assert_null(vg_pairing_latency(p, 2));
	expect_return(p, 10, 0, 90, 0);    /* clock skew: 0, not a wrap */
	assert_int_equal(latency_of(p, 0).max_ns, 0);
	vg_pairing_free(p);
}

/* After vg_pairing_stop(t): a return with nothing open at or after t is
 * of a call entered after the stop (ignored); before t it is still
 * unmatched; a call entered before t still pairs after it. */
static void test_stop(void **state)
{
	struct vg_pairing *p = vg_pairing_new(1);

	(void)state;
	assert_int_equal(vg_pairing_entry(p, 10, 0, 100), 0);
	vg_pairing_stop(p, 500);
	assert_false(vg_pairing_return(p, 11, 0, 400, NULL));   /* before the stop */
	assert_false(vg_pairing_return(p, 11, 0, 600, NULL));   /* entered after it */
	expect_return(p, 10, 0, 700, 600);
	assert_int_equal(site_stats(p, 0, 800).unmatched_returns, 1);
	assert_int_equal(site_stats(p, 0, 800).paired, 1);
	vg_pairing_free(p);
}

/* 3000 threads with records interleaved round-robin, each nesting
 * A{B{}} with durations that depend on the tid; 100 threads leave an A
 * open for in_flight. */
static void test_threads_interleaved(void **state)
{
	enum { THREADS = 3000, OPEN = 100 };
	struct vg_pairing *p = vg_pairing_new(2);
	struct vg_pairing_site_stats a, b;
	struct vg_latency_summary la, lb;
	uint32_t t;
	uint64_t sum_a = 0, sum_b = 0;

	(void)state;
	for (t = 0; t < THREADS; t++)
		assert_int_equal(vg_pairing_entry(p, 1000 + t * 7, 0, 1000 + t), 0);
	for (t = 0; t < THREADS; t++)
		assert_int_equal(vg_pairing_entry(p, 1000 + t * 7, 1, 10000 + t), 0);
	for (t = 0; t < THREADS; t++) {
		expect_return(p, 1000 + t * 7, 1, 20000 + 2 * t, 10000 + t);
		sum_b += 10000 + t;
	}
	for (t = OPEN; t < THREADS; t++) {
		expect_return(p, 1000 + t * 7, 0, 30000 + 3 * t, 29000 + 2 * t);
		sum_a += 29000 + 2 * t;
	}
	a = site_stats(p, 0, 50000);
	b = site_stats(p, 1, 50000);
	assert_int_equal(a.paired, THREADS - OPEN);
	assert_int_equal(a.in_flight, OPEN);
	assert_int_equal(a.in_flight_oldest_ns, 50000 - 1000);  /* thread 0's entry */
	assert_int_equal(b.paired, THREADS);
	assert_int_equal(b.in_flight, 0);
	assert_int_equal(b.in_flight_oldest_ns, 0);
	la = latency_of(p, 0);
	lb = latency_of(p, 1);
	assert_int_equal(la.sum_ns, sum_a);
	assert_int_equal(lb.sum_ns, sum_b);
	assert_int_equal(lb.min_ns, 10000);
	assert_int_equal(lb.max_ns, 10000 + THREADS - 1);
	vg_pairing_free(p);
}

/* 20 durations of 10 ms and 20 of 1 ms. */
static void test_latency_two_modes(void **state)
{
	struct vg_latency *l = vg_latency_new();
	struct vg_latency_summary s;
	unsigned k;

	(void)state;
	vg_latency_summarize(l, &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(s.p50_ns, 0);
	assert_true(s.log2_hi < s.log2_lo);
	for (k = 0; k < 20; k++) {
		assert_int_equal(vg_latency_add(l, 10 * MS), 0);
		assert_int_equal(vg_latency_add(l, 1 * MS), 0);
	}
	vg_latency_summarize(l, &s);
	assert_int_equal(s.count, 40);
	assert_int_equal(s.min_ns, 1 * MS);
	assert_int_equal(s.max_ns, 10 * MS);
	assert_int_equal(s.sum_ns, 220 * MS);
	assert_true(s.exact);
	assert_int_equal(s.p50_ns, 1 * MS);   /* 20 of 40 <= 1 ms */
	assert_int_equal(s.p90_ns, 10 * MS);
	assert_int_equal(s.p99_ns, 10 * MS);
	/* 1e6 in [2^19, 2^20), 1e7 in [2^23, 2^24). */
	assert_int_equal(s.log2_lo, 19);
	assert_int_equal(s.log2_hi, 23);
	for (k = 0; k < VG_LOG2_BUCKETS; k++)
		assert_int_equal(s.log2[k], k == 19 || k == 23 ? 20 : 0);
	/* One more short call moves the median; summarize sees the new add. */
	assert_int_equal(vg_latency_add(l, 0), 0);
	assert_int_equal(vg_latency_add(l, 1), 0);
	assert_int_equal(vg_latency_add(l, 2), 0);
	vg_latency_summarize(l, &s);
	assert_int_equal(s.count, 43);
	assert_int_equal(s.min_ns, 0);
	assert_int_equal(s.log2[0], 2);   /* 0 and 1 */
	assert_int_equal(s.log2[1], 1);   /* 2 */
	assert_int_equal(s.log2_lo, 0);
	assert_int_equal(s.p50_ns, 1 * MS);   /* rank 22: 3 small + 19th 1 ms */
	assert_int_equal(vg_latency_add(l, UINT64_MAX), 0);
	vg_latency_summarize(l, &s);
	assert_int_equal(s.log2[63], 1);
	assert_int_equal(s.log2_hi, 63);
	assert_int_equal(s.sum_ns, UINT64_MAX);   /* saturates */
	vg_latency_free(l);
}

/* 1..1000 in a fixed permutation (i * 7 mod 1000 + 1; 7 is coprime to
 * 1000): nearest-rank percentiles exactly. */
static void test_latency_exact_percentiles(void **state)
{
	struct vg_latency *l = vg_latency_new();
	struct vg_latency_summary s;
	unsigned i;

	(void)state;
	for (i = 0; i < 1000; i++)
		assert_int_equal(vg_latency_add(l, (uint64_t)(i * 7 % 1000) + 1), 0);
	vg_latency_summarize(l, &s);
	assert_true(s.exact);
	assert_int_equal(s.count, 1000);
	assert_int_equal(s.min_ns, 1);
	assert_int_equal(s.max_ns, 1000);
	assert_int_equal(s.sum_ns, 500500);
	assert_int_equal(s.p50_ns, 500);
	assert_int_equal(s.p90_ns, 900);
	assert_int_equal(s.p99_ns, 990);
	/* log2: [2^k, 2^(k+1)) for k = 1..8, 1 in bucket 0, 512..1000 in 9. */
	assert_int_equal(s.log2[0], 1);
	assert_int_equal(s.log2[1], 2);
	assert_int_equal(s.log2[8], 256);
	assert_int_equal(s.log2[9], 489);
	assert_int_equal(s.log2_hi, 9);
	vg_latency_free(l);
	vg_latency_free(NULL);

	/* Ranks that are not whole numbers round up: 7 values, p50 is rank
	 * ceil(3.5) = 4, p90 rank ceil(6.3) = 7; one value is every
	 * percentile. */
	l = vg_latency_new();
	for (i = 7; i >= 1; i--)
		vg_latency_add(l, i * 10);
	vg_latency_summarize(l, &s);
	assert_int_equal(s.p50_ns, 40);
	assert_int_equal(s.p90_ns, 70);
	assert_int_equal(s.p99_ns, 70);
	vg_latency_free(l);
	l = vg_latency_new();
	vg_latency_add(l, 5);
	vg_latency_summarize(l, &s);
	assert_int_equal(s.p50_ns, 5);
	assert_int_equal(s.p99_ns, 5);
	vg_latency_free(l);
}

static void expect_within_64th(uint64_t got, uint64_t want)
{
	uint64_t diff = got > want ? got - want : want - got;

	if (diff * 64 > want)
		fail_msg("percentile %llu not within 1/64 of %llu", (unsigned long long)got,
			 (unsigned long long)want);
}

/* Past VG_LATENCY_EXACT_MAX: values 1..N (N = 2^20 + 1000) fed in a
 * permuted order.  Exactly at the limit percentiles are still exact; one
 * more and they come from the histogram, within 1/64. */
static void test_latency_past_exact_limit(void **state)
{
	const uint64_t n = VG_LATENCY_EXACT_MAX + 1000ull;
	struct vg_latency *l = vg_latency_new();
	struct vg_latency_summary s;
	uint64_t i, v;

	(void)state;
	/* 1000003 is prime and does not divide n: i -> i * 1000003 mod n is a
	 * permutation of 0..n-1. */
	for (i = 0; i < n; i++) {
		v = i * 1000003ull % n + 1;
		assert_int_equal(vg_latency_add(l, v), 0);
		if (i + 1 == VG_LATENCY_EXACT_MAX) {
			vg_latency_summarize(l, &s);
			assert_true(s.exact);
			assert_int_equal(s.count, VG_LATENCY_EXACT_MAX);
		}
	}
	vg_latency_summarize(l, &s);
	assert_false(s.exact);
	assert_int_equal(s.count, n);
	assert_int_equal(s.min_ns, 1);
	assert_int_equal(s.max_ns, n);
	assert_int_equal(s.sum_ns, n * (n + 1) / 2);
	/* Nearest rank of 1..n: ceil(p * n / 100). */
	expect_within_64th(s.p50_ns, (50 * n + 99) / 100);
	expect_within_64th(s.p90_ns, (90 * n + 99) / 100);
	expect_within_64th(s.p99_ns, (99 * n + 99) / 100);
	assert_int_equal(s.log2[20], n - ((1ull << 20) - 1));   /* 2^20..n */
	vg_latency_free(l);

	/* A constant distribution past the limit: the clamp to [min, max]
	 * makes every percentile exact even from the histogram. */
	l = vg_latency_new();
	for (i = 0; i < n; i++)
		vg_latency_add(l, 1000003);
	vg_latency_summarize(l, &s);
	assert_false(s.exact);
	assert_int_equal(s.p50_ns, 1000003);
	assert_int_equal(s.p99_ns, 1000003);
	/* Small values have a bucket each: exact too. */
	for (i = 0; i < n; i++)
		vg_latency_add(l, 37);
	vg_latency_summarize(l, &s);
	assert_int_equal(s.p50_ns, 37);   /* rank n of 2n is the last 37 */
	assert_int_equal(s.p90_ns, 1000003);
	vg_latency_free(l);
}

static struct vg_values_summary values_of(const struct vg_values *v, struct vg_value_count *top,
					  size_t k, size_t *n_top)
{
	struct vg_values_summary s;

	vg_values_summarize(v, top, k, n_top, &s);
	return s;
}

static void expect_top(const struct vg_value_count *top, size_t i, uint64_t value,
		       uint64_t count)
{
	assert_int_equal(top[i].value, value);
	assert_int_equal(top[i].count, count);
}

static void test_values_signed(void **state)
{
	struct vg_values *v = vg_values_new(true);
	struct vg_value_count top[8];
	struct vg_values_summary s;
	size_t n_top = 99;
	unsigned k;

	(void)state;
	s = values_of(v, top, 8, &n_top);
	assert_int_equal(n_top, 0);
	assert_int_equal(s.count, 0);
	/* -5 x3, INT64_MIN x3, 0 x3, 7 x1, INT64_MAX x2, -1 x1 */
	for (k = 0; k < 3; k++) {
		assert_int_equal(vg_values_add(v, (uint64_t)-5), 0);
		assert_int_equal(vg_values_add(v, (uint64_t)INT64_MIN), 0);
		assert_int_equal(vg_values_add(v, 0), 0);
	}
	assert_int_equal(vg_values_add(v, 7), 0);
	assert_int_equal(vg_values_add(v, INT64_MAX), 0);
	assert_int_equal(vg_values_add(v, INT64_MAX), 0);
	assert_int_equal(vg_values_add(v, (uint64_t)-1), 0);
	s = values_of(v, top, 8, &n_top);
	assert_true(s.is_signed);
	assert_int_equal(s.count, 13);
	assert_int_equal(s.distinct, 6);
	assert_int_equal(s.other, 0);
	assert_int_equal((int64_t)s.min, INT64_MIN);
	assert_int_equal((int64_t)s.max, INT64_MAX);
	/* Ties at 3 ordered by signed value: INT64_MIN < -5 < 0. */
	assert_int_equal(n_top, 6);
	expect_top(top, 0, (uint64_t)INT64_MIN, 3);
	expect_top(top, 1, (uint64_t)-5, 3);
	expect_top(top, 2, 0, 3);
	expect_top(top, 3, INT64_MAX, 2);
	expect_top(top, 4, (uint64_t)-1, 1);
	expect_top(top, 5, 7, 1);
	/* Magnitudes: 0 -> 0; 7 -> [4,8) = 3; INT64_MAX -> 63;
	 * -5 -> |5| in [4,8) = 3; -1 -> 1; INT64_MIN -> 2^63 = 64. */
	for (k = 0; k <= VG_LOG2_BUCKETS; k++) {
		uint64_t pos = k == 0 ? 3 : k == 3 ? 1 : k == 63 ? 2 : 0;
		uint64_t neg = k == 3 ? 3 : k == 1 ? 1 : k == 64 ? 3 : 0;

		assert_int_equal(s.log2[k], pos);
		assert_int_equal(s.neg_log2[k], neg);
	}
	/* Top 2 only: the best two of the same order. */
	s = values_of(v, top, 2, &n_top);
	assert_int_equal(n_top, 2);
	expect_top(top, 0, (uint64_t)INT64_MIN, 3);
	expect_top(top, 1, (uint64_t)-5, 3);
	vg_values_free(v);
}

static void test_values_unsigned(void **state)
{
	struct vg_values *v = vg_values_new(false);
	struct vg_value_count top[4];
	struct vg_values_summary s;
	size_t n_top;
	unsigned k;

	(void)state;
	for (k = 0; k < 7; k++)
		vg_values_add(v, 4096);
	for (k = 0; k < 3; k++)
		vg_values_add(v, 512);
	vg_values_add(v, UINT64_MAX);
	vg_values_add(v, UINT64_MAX);
	vg_values_add(v, 1);
	vg_values_add(v, 2);
	s = values_of(v, top, 4, &n_top);
	assert_false(s.is_signed);
	assert_int_equal(s.count, 14);
	assert_int_equal(s.distinct, 5);
	assert_int_equal(s.min, 1);
	assert_int_equal(s.max, UINT64_MAX);   /* unsigned: not -1 */
	assert_int_equal(n_top, 4);
	expect_top(top, 0, 4096, 7);
	expect_top(top, 1, 512, 3);
	expect_top(top, 2, UINT64_MAX, 2);
	expect_top(top, 3, 1, 1);   /* ties by value: 1 before 2 */
	/* 4096 in [2^12, 2^13) = 13; 512 -> 10; UINT64_MAX -> 64; 1 -> 1; 2 -> 2. */
	assert_int_equal(s.log2[13], 7);
	assert_int_equal(s.log2[10], 3);
	assert_int_equal(s.log2[64], 2);
	assert_int_equal(s.log2[1], 1);
	assert_int_equal(s.log2[2], 1);
	assert_int_equal(s.log2[0], 0);
	for (k = 0; k <= VG_LOG2_BUCKETS; k++)
		assert_int_equal(s.neg_log2[k], 0);
	vg_values_free(v);
	vg_values_free(NULL);
}

/* VG_VALUES_DISTINCT_MAX distinct values are counted exactly (value 0 and
 * values colliding in the hash included); later new ones go to other,
 * repeats of known ones still count. */
static void test_values_distinct_limit(void **state)
{
	struct vg_values *v = vg_values_new(false);
	struct vg_value_count top[3];
	struct vg_values_summary s;
	size_t n_top;
	uint64_t i;

	(void)state;
	/* Multiples of 2^32 all share the low bits. */
	for (i = 0; i < VG_VALUES_DISTINCT_MAX; i++)
		assert_int_equal(vg_values_add(v, i << 32), 0);
	for (i = 0; i < 500; i++)
		assert_int_equal(vg_values_add(v, 0xdead0000 + i), 0);
	assert_int_equal(vg_values_add(v, 0), 0);
	assert_int_equal(vg_values_add(v, 0), 0);
	assert_int_equal(vg_values_add(v, 5ull << 32), 0);
	s = values_of(v, top, 3, &n_top);
	assert_int_equal(s.count, VG_VALUES_DISTINCT_MAX + 503);
	assert_int_equal(s.distinct, VG_VALUES_DISTINCT_MAX);
	assert_int_equal(s.other, 500);
	assert_int_equal(s.max, 4095ull << 32);
	assert_int_equal(n_top, 3);
	expect_top(top, 0, 0, 3);
	expect_top(top, 1, 5ull << 32, 2);
	expect_top(top, 2, 1ull << 32, 1);
	/* The histogram still sees the values counted in other. */
	assert_int_equal(s.log2[32], 500);    /* 0xdead0000.. in [2^31, 2^32) */
	assert_int_equal(s.log2[0], 3);
	vg_values_free(v);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Rates on a realistic mix: 64 threads, 4 sites, nesting depth 3.  Printed,
 * not asserted (sanitizer builds are several times slower). */
static void test_rates(void **state)
{
	enum { ROUNDS = 200000, THREADS = 64 };
	struct vg_pairing *p = vg_pairing_new(4);
	struct vg_values *v = vg_values_new(true);
	struct timespec t0;
	uint64_t t = 0, records = 0, i;
	double dt;
	uint32_t tid;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ROUNDS; i++) {
		tid = 1000 + (uint32_t)(i % THREADS);
		vg_pairing_entry(p, tid, 0, t++);
		vg_pairing_entry(p, tid, 1, t++);
		vg_pairing_entry(p, tid, (uint32_t)(2 + i % 2), t++);
		vg_pairing_return(p, tid, (uint32_t)(2 + i % 2), t++, NULL);
		vg_pairing_return(p, tid, 1, t++, NULL);
		vg_pairing_return(p, tid, 0, t++, NULL);
		records += 6;
	}
	dt = seconds_since(&t0);
	printf("# pairing: %.1f M records/s (%llu records)\n", (double)records / dt / 1e6,
	       (unsigned long long)records);
	assert_int_equal(site_stats(p, 0, t).paired, ROUNDS);

	/* Worst case for the thread table: every record from another of 3000
	 * threads, so the last-thread shortcut never hits. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	records = 0;
	for (i = 0; i < 400; i++) {
		for (tid = 0; tid < 3000; tid++)
			vg_pairing_entry(p, 50000 + tid * 13, 3, t++);
		for (tid = 0; tid < 3000; tid++)
			vg_pairing_return(p, 50000 + tid * 13, 3, t++, NULL);
		records += 6000;
	}
	dt = seconds_since(&t0);
	printf("# pairing, 3000 threads round-robin: %.1f M records/s\n",
	       (double)records / dt / 1e6);
	assert_int_equal(site_stats(p, 3, t).in_flight, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 3000000; i++)
		vg_values_add(v, (i * 2654435761u) % 10000 - 5000);
	dt = seconds_since(&t0);
	printf("# values: %.1f M adds/s (10000 values, 4096 kept)\n", 3.0 / dt);
	vg_pairing_free(p);
	vg_values_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_two_sites),
		cmocka_unit_test(test_dropped_entries),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_deep_recursion),
		cmocka_unit_test(test_interleaved_recursion),
		cmocka_unit_test(test_unreturned),
		cmocka_unit_test(test_unmatched),
		cmocka_unit_test(test_threads_interleaved),
		cmocka_unit_test(test_latency_two_modes),
		cmocka_unit_test(test_latency_exact_percentiles),
		cmocka_unit_test(test_latency_past_exact_limit),
		cmocka_unit_test(test_values_signed),
		cmocka_unit_test(test_values_unsigned),
		cmocka_unit_test(test_values_distinct_limit),
		cmocka_unit_test(test_rates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
