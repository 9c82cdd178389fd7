/* stats.c - pairing, latency and value distributions for vigil probe.
 *
 * Pure bookkeeping on records already drained from the kernel: no I/O, no
 * globals, no kernel interface.  Entry, return and value records arrive by
 * the million per second, so the per-record paths (vg_pairing_entry,
 * vg_pairing_return, vg_latency_add, vg_values_add) do no allocation in
 * the steady state, touch a handful of cache lines and never sort; the
 * expensive work (sorting for exact percentiles, top-k) happens in the
 * summarize calls.
 *
 * Latency keeps two representations from the first duration on: the raw
 * durations (for exact nearest-rank percentiles, capped at
 * VG_LATENCY_EXACT_MAX) and a log-linear histogram (always), so crossing
 * the cap only frees the array; nothing is replayed and nothing can fail
 * at that moment.  Values below 64 have a bucket each; above, 64
 * sub-buckets per power of two bound the relative error at 1/64 (the
 * midpoint we report halves it).
 *
 * Threads live in an open-addressing table keyed by tid; each owns a stack
 * of open calls.  A per-site count of open calls (across threads) answers
 * in_flight directly and lets a return of a site with nothing open skip
 * the stack search, so a flood of unmatched returns stays cheap even under
 * deep recursion.  Stacks of threads that have exited are kept until
 * vg_pairing_free: there is no exit record to tell us. */
#include "probe/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* ---- latency ---------------------------------------------------------- */

#define LL_SUB_BITS 6
#define LL_SUB (1u << LL_SUB_BITS)                   /* sub-buckets per power of two */
#define LL_BUCKETS (LL_SUB + (64 - LL_SUB_BITS) * LL_SUB) /* 64 exact + 58 octaves */

struct vg_latency {
	uint64_t count, min, max, sum;
	uint64_t log2[VG_LOG2_BUCKETS];
	uint64_t *kept;        /* every duration while exact; NULL after */
	size_t n_kept, cap_kept;
	size_t n_sorted;       /* kept[0..n_sorted) is sorted */
	bool exact;
	uint64_t loglin[LL_BUCKETS];
};

static unsigned log2_floor(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static unsigned latency_log2_bucket(uint64_t ns)
{
	return ns < 2 ? 0 : log2_floor(ns);
}

static size_t loglin_index(uint64_t v)
{
	unsigned k;

	if (v < LL_SUB)
		return (size_t)v;
	k = log2_floor(v);
	return LL_SUB + (size_t)(k - LL_SUB_BITS) * LL_SUB +
	       (size_t)((v >> (k - LL_SUB_BITS)) & (LL_SUB - 1));
}

/* The value reported for a bucket: its midpoint, so the error is at most
 * half a bucket width (< 1/128 of the value above 64, 0 below). */
static uint64_t loglin_value(size_t i)
{
	size_t j, octave;
	uint64_t width, lo;

	if (i < LL_SUB)
		return i;
	j = i - LL_SUB;
	octave = j / LL_SUB;
	width = (uint64_t)1 << octave;
	lo = ((uint64_t)LL_SUB + j % LL_SUB) << octave;
	return lo + (width - 1) / 2;
}

struct vg_latency *vg_latency_new(void)
{
	struct vg_latency *l = calloc(1, sizeof(*l));

	if (l)
		l->exact = true;
	return l;
}

struct vg_latency *vg_latency_free(struct vg_latency *l)
{
	if (l) {
		free(l->kept);
		free(l);
	}
	return NULL;
}

static void latency_drop_kept(struct vg_latency *l)
{
	free(l->kept);
	l->kept = NULL;
	l->n_kept = l->cap_kept = l->n_sorted = 0;
	l->exact = false;
}

int vg_latency_add(struct vg_latency *l, uint64_t ns)
{
	if (l->count == 0 || ns < l->min)
		l->min = ns;
	if (ns > l->max)
		l->max = ns;
	if (__builtin_add_overflow(l->sum, ns, &l->sum))
		l->sum = UINT64_MAX;
	l->count++;
	l->log2[latency_log2_bucket(ns)]++;
	l->loglin[loglin_index(ns)]++;

	if (!l->exact)
		return 0;
	if (l->count > VG_LATENCY_EXACT_MAX) {
		latency_drop_kept(l);
		return 0;
	}
	if (l->n_kept == l->cap_kept && VG_GROW(l->kept, l->cap_kept, l->n_kept + 1) < 0) {
		/* The histogram already holds everything: only exactness is lost. */
		latency_drop_kept(l);
		return -ENOMEM;
	}
	l->kept[l->n_kept++] = ns;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the 1-based rank ceil(p/100 * n), at least 1. */
static uint64_t nearest_rank(unsigned p, uint64_t n)
{
	unsigned __int128 r = ((unsigned __int128)n * p + 99) / 100;

	return r ? (uint64_t)r : 1;
}

static uint64_t percentile_kept(const struct vg_latency *l, unsigned p)
{
	return l->kept[nearest_rank(p, l->n_kept) - 1];
}

static uint64_t percentile_loglin(const struct vg_latency *l, unsigned p)
{
	uint64_t rank = nearest_rank(p, l->count), seen = 0, v;
	size_t i;

	for (i = 0; i < LL_BUCKETS; i++) {
		seen += l->loglin[i];
		if (seen >= rank)
			break;
	}
	v = loglin_value(i < LL_BUCKETS ? i : LL_BUCKETS - 1);
	/* Both ends are known exactly; a midpoint past them would be wrong. */
	if (v < l->min)
		v = l->min;
	if (v > l->max)
		v = l->max;
	return v;
}

void vg_latency_summarize(struct vg_latency *l, struct vg_latency_summary *out)
{
	unsigned k;

	memset(out, 0, sizeof(*out));
	out->count = l->count;
	out->min_ns = l->min;
	out->max_ns = l->max;
	out->sum_ns = l->sum;
	out->exact = l->exact;
	memcpy(out->log2, l->log2, sizeof(out->log2));
	out->log2_lo = 1;
	out->log2_hi = 0;
	for (k = 0; k < VG_LOG2_BUCKETS; k++) {
		if (!l->log2[k])
			continue;
		if (out->log2_lo > out->log2_hi)
			out->log2_lo = k;
		out->log2_hi = k;
	}
	if (l->count == 0)
		return;
	if (l->exact) {
		/* Sorted lazily: adds stay O(1), and a later summarize after
		 * more adds sorts again. */
		if (l->n_sorted != l->n_kept) {
			qsort(l->kept, l->n_kept, sizeof(*l->kept), cmp_u64);
			l->n_sorted = l->n_kept;
		}
		out->p50_ns = percentile_kept(l, 50);
		out->p90_ns = percentile_kept(l, 90);
		out->p99_ns = percentile_kept(l, 99);
	} else {
		out->p50_ns = percentile_loglin(l, 50);
		out->p90_ns = percentile_loglin(l, 90);
		out->p99_ns = percentile_loglin(l, 99);
	}
}

/* ---- pairing ---------------------------------------------------------- */

struct open_call {
	uint64_t time_ns;
	uint32_t site;
	bool dropped;          /* the filter dropped it: its return is left out */
};

struct thread {
	uint32_t tid;
	bool used;
	size_t depth, cap;
	struct open_call *stack;
};

struct site {
	struct vg_latency *latency;
	uint64_t paired, unmatched, unreturned, dropped_nomem;
	uint64_t open;         /* open calls of this site across all threads */
	uint64_t open_dropped; /* of those, the ones the filter dropped */
};

struct vg_pairing {
	size_t n_sites;
	struct site *sites;
	struct thread *threads;   /* open addressing, power-of-two size */
	size_t n_threads, cap_threads;
	/* Records come in runs from one thread: remember the last one. */
	struct thread *last;
	uint64_t stop_ns;         /* vg_pairing_stop; 0: not stopped */
};

#define THREADS_INITIAL 64

static size_t tid_slot(uint32_t tid, size_t cap)
{
	return (size_t)((tid * 0x9E3779B1u) & (uint32_t)(cap - 1));
}

struct vg_pairing *vg_pairing_new(size_t n_sites)
{
	struct vg_pairing *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	p->n_sites = n_sites;
	p->sites = calloc(n_sites ? n_sites : 1, sizeof(*p->sites));
	p->threads = calloc(THREADS_INITIAL, sizeof(*p->threads));
	if (!p->sites || !p->threads)
		return vg_pairing_free(p);
	p->cap_threads = THREADS_INITIAL;
	for (i = 0; i < n_sites; i++)
		if (!(p->sites[i].latency = vg_latency_new()))
			return vg_pairing_free(p);
	return p;
}

struct vg_pairing *vg_pairing_free(struct vg_pairing *p)
{
	size_t i;

	if (!p)
		return NULL;
	if (p->sites)
		for (i = 0; i < p->n_sites; i++)
			vg_latency_free(p->sites[i].latency);
	if (p->threads)
		for (i = 0; i < p->cap_threads; i++)
			free(p->threads[i].stack);
	free(p->sites);
	free(p->threads);
	free(p);
	return NULL;
}

static struct thread *thread_probe(struct thread *tab, size_t cap, uint32_t tid)
{
	size_t i = tid_slot(tid, cap);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int threads_rehash(struct vg_pairing *p)
{
	size_t cap = p->cap_threads * 2, i;
	struct thread *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < p->cap_threads; i++)
		if (p->threads[i].used)
			*thread_probe(tab, cap, p->threads[i].tid) = p->threads[i];
	free(p->threads);
	p->threads = tab;
	p->cap_threads = cap;
	p->last = NULL;
	return 0;
}

/* The thread's slot; with create, a new empty one when absent.  NULL when
 * absent (and not created) or when the table cannot grow. */
static struct thread *thread_get(struct vg_pairing *p, uint32_t tid, bool create)
{
	struct thread *t;

	if (p->last && p->last->tid == tid)
		return p->last;
	t = thread_probe(p->threads, p->cap_threads, tid);
	if (!t->used) {
		if (!create)
			return NULL;
		/* Keep the load at most 1/2 so probes stay short. */
		if ((p->n_threads + 1) * 2 > p->cap_threads) {
			if (threads_rehash(p) < 0)
				return NULL;
			t = thread_probe(p->threads, p->cap_threads, tid);
		}
		t->used = true;
		t->tid = tid;
		p->n_threads++;
	}
	p->last = t;
	return t;
}

static int push_entry(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns,
		      bool dropped);

int vg_pairing_entry(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns)
{
	return push_entry(p, tid, site, time_ns, false);
}

int vg_pairing_entry_dropped(struct vg_pairing *p, uint32_t tid, uint32_t site,
			     uint64_t time_ns)
{
	return push_entry(p, tid, site, time_ns, true);
}

static int push_entry(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns,
		      bool dropped)
{
	struct thread *t;

	if (site >= p->n_sites)
		return -EINVAL;
	t = thread_get(p, tid, true);
	if (!t) {
		p->sites[site].dropped_nomem++;
		return -ENOMEM;
	}
	if (t->depth == t->cap && VG_GROW(t->stack, t->cap, t->depth + 1) < 0) {
		p->sites[site].dropped_nomem++;
		return -ENOMEM;
	}
	t->stack[t->depth++] = (struct open_call){ .time_ns = time_ns, .site = site,
						   .dropped = dropped };
	p->sites[site].open++;
	p->sites[site].open_dropped += dropped;
	return 0;
}

bool vg_pairing_return(struct vg_pairing *p, uint32_t tid, uint32_t site, uint64_t time_ns,
		       uint64_t *ns)
{
	struct thread *t;
	struct site *s;
	size_t i;
	uint64_t d;

	if (site >= p->n_sites)
		return false;
	s = &p->sites[site];
	t = s->open ? thread_get(p, tid, false) : NULL;
	i = t ? t->depth : 0;
	while (i > 0 && t->stack[i - 1].site != site)
		i--;
	if (i == 0) {
		/* After the stop, a return with nothing open is of a call
		 * entered after it: not a miss of this probe. */
		if (!p->stop_ns || time_ns < p->stop_ns)
			s->unmatched++;
		return false;
	}
	/* Calls above the match never returned (longjmp, exception, a lost
	 * return record): they are finished now, whatever they were. */
	while (t->depth > i) {
		const struct open_call *c = &t->stack[--t->depth];
		struct site *above = &p->sites[c->site];

		above->unreturned += !c->dropped;
		above->open_dropped -= c->dropped;
		above->open--;
	}
	t->depth--;
	s->open--;
	if (t->stack[t->depth].dropped) {
		/* The return of a call the filter dropped: paired, left out. */
		s->open_dropped--;
		return false;
	}
	d = time_ns >= t->stack[t->depth].time_ns ? time_ns - t->stack[t->depth].time_ns : 0;
	s->paired++;
	/* -ENOMEM only costs exactness of percentiles; the pairing stands. */
	(void)vg_latency_add(s->latency, d);
	if (ns)
		*ns = d;
	return true;
}

void vg_pairing_stop(struct vg_pairing *p, uint64_t time_ns)
{
	p->stop_ns = time_ns ? time_ns : 1;
}

void vg_pairing_site(const struct vg_pairing *p, uint32_t site, uint64_t now_ns,
		     struct vg_pairing_site_stats *out)
{
	const struct site *s;
	uint64_t oldest = UINT64_MAX;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	if (site >= p->n_sites)
		return;
	s = &p->sites[site];
	out->paired = s->paired;
	out->unmatched_returns = s->unmatched;
	out->unreturned = s->unreturned;
	out->dropped_nomem = s->dropped_nomem;
	out->in_flight = s->open - s->open_dropped;
	if (!out->in_flight)
		return;
	/* Each stack is in time order, so a thread's oldest open call of the
	 * site is the lowest one. */
	for (i = 0; i < p->cap_threads; i++) {
		const struct thread *t = &p->threads[i];

		if (!t->used)
			continue;
		for (j = 0; j < t->depth; j++) {
			if (t->stack[j].site != site || t->stack[j].dropped)
				continue;
			if (t->stack[j].time_ns < oldest)
				oldest = t->stack[j].time_ns;
			break;
		}
	}
	out->in_flight_oldest_ns = now_ns > oldest ? now_ns - oldest : 0;
}

struct vg_latency *vg_pairing_latency(struct vg_pairing *p, uint32_t site)
{
	return site < p->n_sites ? p->sites[site].latency : NULL;
}

/* ---- values ----------------------------------------------------------- */

/* Doubles up to 2 * VG_VALUES_DISTINCT_MAX slots (load at most 1/2). */
#define VALUES_INITIAL 64

struct vg_values {
	bool is_signed;
	uint64_t count, other, min, max;
	uint64_t log2[VG_LOG2_BUCKETS + 1];
	uint64_t neg_log2[VG_LOG2_BUCKETS + 1];
	/* Open addressing; count 0 marks an empty slot (value 0 is a value). */
	struct vg_value_count *tab;
	size_t n_distinct, cap;
};

static size_t value_slot(uint64_t v, size_t cap)
{
	/* Fibonacci hashing: arguments are often small, aligned or strided;
	 * the multiply spreads those into the high bits we keep. */
	return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

struct vg_values *vg_values_new(bool is_signed)
{
	struct vg_values *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->is_signed = is_signed;
	v->tab = calloc(VALUES_INITIAL, sizeof(*v->tab));
	if (!v->tab) {
		free(v);
		return NULL;
	}
	v->cap = VALUES_INITIAL;
	return v;
}

struct vg_values *vg_values_free(struct vg_values *v)
{
	if (v) {
		free(v->tab);
		free(v);
	}
	return NULL;
}

static struct vg_value_count *value_probe(struct vg_value_count *tab, size_t cap, uint64_t value)
{
	size_t i = value_slot(value, cap);

	while (tab[i].count && tab[i].value != value)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int values_rehash(struct vg_values *v)
{
	size_t cap = v->cap * 2, i;
	struct vg_value_count *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < v->cap; i++)
		if (v->tab[i].count)
			*value_probe(tab, cap, v->tab[i].value) = v->tab[i];
	free(v->tab);
	v->tab = tab;
	v->cap = cap;
	return 0;
}

static unsigned magnitude_bucket(uint64_t m)
{
	return m ? log2_floor(m) + 1 : 0;
}

static bool value_less(const struct vg_values *v, uint64_t a, uint64_t b)
{
	return v->is_signed ? (int64_t)a < (int64_t)b : a < b;
}

static void values_histogram(struct vg_values *v, uint64_t value)
{
	if (v->is_signed && (int64_t)value < 0)
		/* Unsigned negation: INT64_MIN becomes 2^63, no overflow. */
		v->neg_log2[magnitude_bucket(-value)]++;
	else
		v->log2[magnitude_bucket(value)]++;
}

int vg_values_add(struct vg_values *v, uint64_t value)
{
	struct vg_value_count *slot;

	if (v->count == 0 || value_less(v, value, v->min))
		v->min = value;
	if (v->count == 0 || value_less(v, v->max, value))
		v->max = value;
	v->count++;
	values_histogram(v, value);

	slot = value_probe(v->tab, v->cap, value);
	if (slot->count) {
		slot->count++;
		return 0;
	}
	if (v->n_distinct == VG_VALUES_DISTINCT_MAX) {
		v->other++;
		return 0;
	}
	if ((v->n_distinct + 1) * 2 > v->cap) {
		if (values_rehash(v) < 0) {
			v->other++;
			return -ENOMEM;
		}
		slot = value_probe(v->tab, v->cap, value);
	}
	slot->value = value;
	slot->count = 1;
	v->n_distinct++;
	return 0;
}

/* a ranks before b in the top list. */
static bool ranks_before(const struct vg_values *v, const struct vg_value_count *a,
			 const struct vg_value_count *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	return value_less(v, a->value, b->value);
}

/* Insertion into the caller's array keeps summarize allocation-free; k is
 * a display count (tens), the table at most VG_VALUES_DISTINCT_MAX. */
static void values_top(const struct vg_values *v, struct vg_value_count *top, size_t k,
		       size_t *n_top)
{
	size_t n = 0, i, j;

	for (i = 0; i < v->cap && k; i++) {
		const struct vg_value_count *e = &v->tab[i];

		if (!e->count)
			continue;
		if (n == k && !ranks_before(v, e, &top[k - 1]))
			continue;
		j = n < k ? n++ : k - 1;
		while (j > 0 && ranks_before(v, e, &top[j - 1])) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = *e;
	}
	*n_top = n;
}

void vg_values_summarize(const struct vg_values *v, struct vg_value_count *top, size_t k,
			 size_t *n_top, struct vg_values_summary *out)
{
	if (out) {
		memset(out, 0, sizeof(*out));
		out->count = v->count;
		out->distinct = v->n_distinct;
		out->other = v->other;
		out->is_signed = v->is_signed;
		out->min = v->min;
		out->max = v->max;
		memcpy(out->log2, v->log2, sizeof(out->log2));
		memcpy(out->neg_log2, v->neg_log2, sizeof(out->neg_log2));
	}
	if (n_top)
		values_top(v, top, k, n_top);
}
