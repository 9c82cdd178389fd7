/* stats.h - what vigil probe computes from its records: entry/return
 * pairing per thread, latency distributions, and value distributions of
 * arguments.  No I/O, no kernel: pure bookkeeping, unit-tested alone.
 *
 * Pairing: each thread has a stack of open calls (site, entry time).  A
 * return of site S pops the innermost open call of S; open calls above it
 * (entered, never returned: longjmp, an exception, a lost return record)
 * are dropped and counted as unreturned.  A return with no open call of
 * its site (its entry record was lost, or entered before recording began)
 * is counted as unmatched.  Recursion and nesting of several probed
 * functions therefore pair correctly as long as records arrive in each
 * thread's own order (vg_bpf_output_drain gives time order).
 *
 * Latency: count, min, max, sum, a log2 histogram (bucket k holds
 * durations in [2^k, 2^(k+1)) ns; bucket 0 also holds 0 and 1), and
 * percentiles: exact (nearest-rank on every duration kept) while a site
 * has at most VG_LATENCY_EXACT_MAX durations; beyond that from a
 * log-linear histogram with 64 sub-buckets per power of two, so within
 * 1/64 (1.6 %) of the true value, and the result says so. */
#ifndef VG_PROBE_STATS_H
#define VG_PROBE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_LATENCY_EXACT_MAX (1u << 20)
#define VG_LOG2_BUCKETS 64

struct vg_latency;

/* NULL when out of memory.  _free(NULL) is a no-op; returns NULL. */
struct vg_latency *vg_latency_new(void);
struct vg_latency *vg_latency_free(struct vg_latency *l);
/* -ENOMEM only (the duration is then still in count/min/max/histograms;
 * percentiles switch to the histogram, exact = false). */
int vg_latency_add(struct vg_latency *l, uint64_t ns);

struct vg_latency_summary {
	uint64_t count, min_ns, max_ns, sum_ns;
	uint64_t p50_ns, p90_ns, p99_ns;   /* 0 when count == 0 */
	bool exact;                        /* percentiles exact, else within 1/64 */
	uint64_t log2[VG_LOG2_BUCKETS];    /* counts per [2^k, 2^(k+1)) ns */
	unsigned log2_lo, log2_hi;         /* first and last non-empty bucket (hi < lo: none) */
};
/* Percentiles by nearest rank: the smallest value with at least p% of the
 * durations <= it.  Not const: sorts the kept durations when new ones came
 * since the last call (so it may be called again after more adds).  When
 * not exact, each percentile is the midpoint of its histogram bucket,
 * clamped to [min, max]. */
void vg_latency_summarize(struct vg_latency *l, struct vg_latency_summary *out);

struct vg_pairing;

/* n_sites: sites numbered 0..n_sites-1; latency per site.  NULL when out
 * of memory.  _free(NULL) is a no-op; returns NULL. */
struct vg_pairing *vg_pairing_new(size_t n_sites);
struct vg_pairing *vg_pairing_free(struct vg_pairing *p);
/* -ENOMEM when the thread's stack cannot grow (the entry is then counted
 * as dropped_nomem); -EINVAL when site >= n_sites (nothing counted). */
int vg_pairing_entry(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns);
/* Returns true and *ns (the duration, also added to the site's latency;
 * 0 when time_ns precedes the entry) when it paired; ns may be NULL.
 * false when it did not (counted as unmatched_returns) or when
 * site >= n_sites (nothing counted). */
bool vg_pairing_return(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns,
		       uint64_t *ns);
/* The entry of a call the filter dropped (--filter with --latency or
 * --retval): its return pairs with it, so that it pairs with no counted
 * call, and vg_pairing_return then returns false without counting it
 * (not paired, not unmatched, not in flight).  Errors as
 * vg_pairing_entry. */
int vg_pairing_entry_dropped(struct vg_pairing *p, uint32_t tid, uint32_t site,
			     uint64_t time_ns);

/* Entries stopped being recorded at time_ns (the probes' stop): from
 * then on a return with no open call of its site is of a call entered
 * after the stop, and is ignored instead of counted as unmatched.  Returns
 * of calls entered before still pair. */
void vg_pairing_stop(struct vg_pairing *p, uint64_t time_ns);

struct vg_pairing_site_stats {
	uint64_t paired;
	uint64_t unmatched_returns;   /* a return with no open call of the site */
	uint64_t unreturned;          /* open calls dropped by a return of an outer call */
	uint64_t dropped_nomem;
	/* Calls still open now (call at the end, after the last drain):
	 * running at the stop; their elapsed time so far is
	 * in_flight_oldest_ns = now - the oldest entry. */
	uint64_t in_flight;
	uint64_t in_flight_oldest_ns;
};
/* now_ns: the time the probe stopped (for in_flight_oldest_ns).  An
 * out-of-range site gives all zeros.  Walks every thread's stack: call it
 * for the report, not per record. */
void vg_pairing_site(const struct vg_pairing *p, uint32_t site, uint64_t now_ns,
		     struct vg_pairing_site_stats *out);
/* The site's latency (borrowed, valid until vg_pairing_free; summarize
 * it).  NULL when site >= n_sites. */
struct vg_latency *vg_pairing_latency(struct vg_pairing *p, uint32_t site);

/* Distribution of one argument's values: exact counts of up to
 * VG_VALUES_DISTINCT_MAX distinct values (values first seen after that
 * are counted in other), and a log2 histogram of magnitudes: for signed
 * values negative ones go to neg_log2 by |v|; bucket 0 holds 0, bucket
 * k >= 1 holds [2^(k-1), 2^k). */
#define VG_VALUES_DISTINCT_MAX 4096
struct vg_values;

/* NULL when out of memory.  _free(NULL) is a no-op; returns NULL. */
struct vg_values *vg_values_new(bool is_signed);
struct vg_values *vg_values_free(struct vg_values *v);
/* 0, or -ENOMEM when the table of distinct values cannot grow (the value
 * is then counted in other; count, min, max and histograms still have it). */
int vg_values_add(struct vg_values *v, uint64_t value);

struct vg_value_count {
	uint64_t value;
	uint64_t count;
};
struct vg_values_summary {
	uint64_t count;                /* values added */
	uint64_t distinct;             /* distinct values seen (exact while no other) */
	uint64_t other;                /* adds of values beyond the distinct limit */
	bool is_signed;
	uint64_t min, max;             /* as signed when is_signed (cast) */
	uint64_t log2[VG_LOG2_BUCKETS + 1];
	uint64_t neg_log2[VG_LOG2_BUCKETS + 1];
};
/* top: the k most frequent values, by count descending then value
 * ascending (ties by value, so the order is deterministic); *n_top <= k.
 * top/n_top may be NULL (k 0) and out may be NULL when only one half is
 * wanted.  Allocates nothing; O(distinct * k) at worst. */
void vg_values_summarize(const struct vg_values *v, struct vg_value_count *top, size_t k,
			 size_t *n_top, struct vg_values_summary *out);

#endif
