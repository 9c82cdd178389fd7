/* scan.c - see scan.h.
 *
 * First scan: the selected regions are cut into chunks (4 MiB by default,
 * a multiple of the page size, so a chunk starts page-aligned and a buffer
 * offset has the alignment of its address).  Worker threads take chunk
 * numbers from an atomic counter, read the chunk plus the width-1 bytes
 * that follow it in the same region (so a value straddling two chunks is
 * found by the first one; no read ever crosses into another region) into
 * a buffer each owns, and compare in place.  A start offset belongs to the
 * chunk it lies in, so nothing is found twice.  Each chunk's matches are
 * kept apart and concatenated in chunk order at the end: the set comes out
 * sorted without a sort.
 *
 * Reads that come back short or fail with EFAULT (a page unmapped or made
 * unreadable under us) go on after the failing page; the buffer then holds
 * several readable segments and a value never spans two of them.
 *
 * The compare kernels are compare.c; the match set is matchset.c.
 *
 * Narrowing re-reads only the matches: nearby ones are grouped into one
 * remote iovec, up to IOV_MAX iovecs per process_vm_readv. */
#include "scan/scan.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "scan/compare.h"
#include "scan/vmread.h"
#include "target/target.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

#define DEFAULT_CHUNK ((size_t)4 << 20)
/* Bytes per read within a chunk: the buffer stays in L2 between the
 * kernel's copy and the compare (measured: 2 threads scan 1 GiB at about
 * 6 GB/s in 256 KiB reads, 3-4 GB/s in 4 MiB reads). */
#define PIECE ((size_t)256 << 10)

/* ---- small helpers --------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

/* ---- first scan: the job and its workers ----------------------------- */

struct sel_region {
	uint64_t start, end;
	uint64_t first_chunk;    /* index of its first chunk */
	uint64_t nchunks;
	uint64_t bytes_read;     /* atomic */
	uint64_t chunks_left;    /* atomic */
};

struct chunk_res {
	uint64_t *addr;
	uint8_t *val;
	uint8_t *var;
	size_t n;
};

struct job {
	pid_t pid;
	const struct vg_scan_opts *o;
	const struct vg_scan_value *v;
	struct matcher m;
	size_t value_size;       /* bytes stored per match */
	size_t chunk, overlap, page;
	size_t piece;            /* bytes per read: <= chunk, a page multiple */
	struct sel_region *regs;
	size_t nregs;
	uint64_t nchunks;
	struct chunk_res *res;

	/* atomics */
	uint64_t next;
	uint64_t bytes_scanned, bytes_skipped, matches;
	uint64_t regions_scanned, regions_skipped;
	uint64_t regions_too_large;      /* set before the workers start */
	int fatal;
	int interrupted;

	uint64_t bytes_total;
	uint64_t t0;
	uint64_t interval_ns;
	uint64_t next_progress;  /* atomic */
	pthread_mutex_t progress_lock;
};

struct segment {
	size_t a, b;             /* readable [a, b) of the buffer */
};

struct worker {
	struct job *j;
	uint8_t *buf;            /* one piece: j->piece + j->overlap bytes */
	struct segment *seg;
	size_t segcap;
	struct hits h;           /* hits of the current piece */
	struct chunk_res acc;    /* matches of the current chunk so far */
	size_t acc_cap;
	pthread_t th;
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

static void set_fatal(struct job *j, int code)
{
	int zero = 0;

	__atomic_compare_exchange_n(&j->fatal, &zero, code, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void stats_snapshot(struct job *j, struct vg_scan_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->bytes_total = j->bytes_total;
	st->bytes_scanned = LOAD(j->bytes_scanned);
	st->bytes_skipped = LOAD(j->bytes_skipped);
	st->regions_scanned = LOAD(j->regions_scanned);
	st->regions_skipped = LOAD(j->regions_skipped);
	st->regions_too_large = j->regions_too_large;
	st->matches = LOAD(j->matches);
	st->interrupted = LOAD(j->interrupted) != 0;
	st->seconds = (double)(now_ns() - j->t0) / 1e9;
}

static void maybe_progress(struct job *j)
{
	uint64_t t;
	struct vg_scan_stats st;

	if (!j->o->progress)
		return;
	t = now_ns();
	if (t < LOAD(j->next_progress) || pthread_mutex_trylock(&j->progress_lock) != 0)
		return;
	if (t >= LOAD(j->next_progress)) {
		__atomic_store_n(&j->next_progress, t + j->interval_ns, __ATOMIC_RELAXED);
		stats_snapshot(j, &st);
		j->o->progress(j->o->progress_arg, &st);
	}
	pthread_mutex_unlock(&j->progress_lock);
}

/* Read [addr, addr + want) into buf, going on after each page that cannot
 * be read.  Fills w->seg; *nseg readable segments; *skipped the unreadable
 * bytes below own.  0 or a fatal negative errno. */
static int read_chunk(struct worker *w, uint64_t addr, size_t own, size_t want,
		      size_t *nseg, uint64_t *skipped)
{
	struct job *j = w->j;
	size_t off = 0, n = 0;

	*skipped = 0;
	while (off < want) {
		struct iovec l = { w->buf + off, want - off };
		struct iovec r = { (void *)(uintptr_t)(addr + off), want - off };
		ssize_t got = process_vm_readv(j->pid, &l, 1, &r, 1, 0);

		if (got > 0) {
			if (n > 0 && w->seg[n - 1].b == off) {
				w->seg[n - 1].b += (size_t)got;
			} else {
				w->seg[n].a = off;
				w->seg[n++].b = off + (size_t)got;
			}
			off += (size_t)got;
			continue;
		}
		if (got < 0) {
			int c = vg_vmread_errno_class(errno);

			if (c < 0)
				return c;
		}
		/* Skip the page holding addr + off. */
		size_t next = (size_t)(((addr + off) / j->page + 1) * j->page - addr);

		if (next > want)
			next = want;
		if (off < own)
			*skipped += (next < own ? next : own) - off;
		off = next;
	}
	*nseg = n;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Append the hits of the piece read at paddr to the chunk's matches
 * (values copied from buf while it still holds the piece). */
static int piece_result(struct worker *w, uint64_t paddr)
{
	struct job *j = w->j;
	struct hits *h = &w->h;
	struct chunk_res *r = &w->acc;
	size_t n = h->n, vs = j->value_size;
	bool var = vg_scan_type_is_pattern(j->v->type);

	if (n == 0)
		return 0;
	if (j->m.npat > 1) {
		/* Two encodings: sort by offset, one match per offset (the
		 * lower variant). */
		size_t k = 0;

		qsort(h->v, n, sizeof(*h->v), key_cmp);
		for (size_t i = 0; i < n; i++)
			if (k == 0 || h->v[k - 1] >> 1 != h->v[i] >> 1)
				h->v[k++] = h->v[i];
		n = k;
	}
	if (r->n + n > w->acc_cap) {
		size_t cap = w->acc_cap ? w->acc_cap : 64;
		void *a, *v, *t = r->var;

		while (cap < r->n + n)
			cap *= 2;
		a = realloc(r->addr, cap * sizeof(*r->addr));
		if (a)
			r->addr = a;
		v = realloc(r->val, cap * vs);
		if (v)
			r->val = v;
		if (var) {
			t = realloc(r->var, cap);
			if (t)
				r->var = t;
		}
		if (!a || !v || (var && !t))
			return -ENOMEM;
		w->acc_cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		size_t off = (size_t)(h->v[i] >> 1), len = vs, to = r->n + i;
		unsigned variant = (unsigned)(h->v[i] & 1);

		r->addr[to] = paddr + off;
		if (var) {
			r->var[to] = (uint8_t)variant;
			len = j->m.pats[variant].len;
			memset(r->val + to * vs + len, 0, vs - len);
		}
		memcpy(r->val + to * vs, w->buf + off, len);
	}
	r->n += n;
	return 0;
}

/* The chunk's result: the accumulated matches change hands (no copy;
 * the worker starts a new accumulator). */
static int chunk_result(struct worker *w, struct chunk_res *r)
{
	if (w->acc.n == 0)
		return 0;
	*r = w->acc;
	memset(&w->acc, 0, sizeof(w->acc));
	w->acc_cap = 0;
	return 0;
}

static void do_chunk(struct worker *w, uint64_t c)
{
	struct job *j = w->j;
	size_t lo = 0, hi = j->nregs;
	struct sel_region *rg;
	uint64_t caddr, skipped = 0, read_own = 0;
	size_t own;

	/* The region holding chunk c: the last with first_chunk <= c. */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (j->regs[mid].first_chunk <= c)
			lo = mid;
		else
			hi = mid;
	}
	rg = &j->regs[lo];
	caddr = rg->start + (c - rg->first_chunk) * j->chunk;
	own = (size_t)(rg->end - caddr < j->chunk ? rg->end - caddr : j->chunk);

	/* In pieces small enough to stay in cache between the copy and the
	 * compare; each piece reads the overlap after it, as chunks do. */
	w->acc.n = 0;
	for (size_t at = 0; at < own; at += j->piece) {
		uint64_t paddr = caddr + at, sk;
		size_t pown = own - at < j->piece ? own - at : j->piece;
		size_t want = (size_t)(rg->end - paddr < pown + j->overlap ?
				       rg->end - paddr : pown + j->overlap);
		size_t nseg = 0;
		int rc = read_chunk(w, paddr, pown, want, &nseg, &sk);

		if (rc < 0) {
			set_fatal(j, rc);
			return;
		}
		skipped += sk;
		w->h.n = 0;
		for (size_t s = 0; s < nseg; s++) {
			size_t a = w->seg[s].a, b = w->seg[s].b;

			if (a >= pown)
				break;
			read_own += (b < pown ? b : pown) - a;
			scan_range(&j->m, w->buf, a, b, pown, &w->h);
		}
		if (w->h.oom || piece_result(w, paddr) < 0) {
			set_fatal(j, -ENOMEM);
			return;
		}
	}
	if (chunk_result(w, &j->res[c]) < 0) {
		set_fatal(j, -ENOMEM);
		return;
	}
	ADD(j->bytes_scanned, read_own);
	ADD(j->bytes_skipped, skipped);
	ADD(j->matches, j->res[c].n);
	ADD(rg->bytes_read, read_own);
	if (ADD(rg->chunks_left, -(uint64_t)1) == 1) {
		/* Last chunk of the region done. */
		if (LOAD(rg->bytes_read) > 0)
			ADD(j->regions_scanned, 1);
		else
			ADD(j->regions_skipped, 1);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct job *j = w->j;

	for (;;) {
		uint64_t c;

		if (LOAD(j->fatal))
			break;
		if (j->o->stop && *j->o->stop) {
			__atomic_store_n(&j->interrupted, 1, __ATOMIC_RELAXED);
			break;
		}
		c = ADD(j->next, 1);
		if (c >= j->nchunks)
			break;
		do_chunk(w, c);
		maybe_progress(j);
	}
	return NULL;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

static int check_value(const struct vg_scan_value *v, struct vg_error *err)
{
	if (!v)
		return vg_error_set(err, -EINVAL, "no value to scan for");
	if (vg_scan_type_width(v->type) == 0) {
		if (v->npat == 0 || v->npat > 2)
			return vg_error_set(err, -EINVAL, "the %s value has no pattern to scan for",
					    vg_scan_type_name(v->type));
		for (size_t i = 0; i < v->npat; i++)
			if (v->pat[i].len == 0 || !v->pat[i].bytes)
				return vg_error_set(err, -EINVAL, "the %s value has an empty pattern",
						    vg_scan_type_name(v->type));
	}
	return 0;
}

int vg_scan_first(pid_t pid, const struct vg_maps *maps,
		  const struct vg_scan_opts *opts, struct vg_match_set *out,
		  struct vg_scan_stats *st, struct vg_error *err)
{
	struct job *j;
	struct worker *ws = NULL;
	unsigned nth = 0, started = 0;
	size_t total = 0;
	int rc;

	vg_match_set_init(out, opts->value ? opts->value->type : VG_SCAN_I32, 0);
	if (st)
		memset(st, 0, sizeof(*st));
	rc = check_value(opts->value, err);
	if (rc < 0)
		return rc;
	j = calloc(1, sizeof(*j));
	if (!j)
		return vg_error_set(err, -ENOMEM, "cannot scan pid %d: out of memory", (int)pid);
	j->t0 = now_ns();
	j->pid = pid;
	j->o = opts;
	j->v = opts->value;
	scan_matcher_init(&j->m, opts->value, opts->aligned);
	j->value_size = j->m.width;
	out->value_size = j->value_size;
	j->page = page_size();
	j->chunk = opts->chunk ? opts->chunk : DEFAULT_CHUNK;
	j->chunk = (j->chunk + j->page - 1) / j->page * j->page;
	j->piece = j->chunk < PIECE ? j->chunk : PIECE;
	j->piece = (j->piece + j->page - 1) / j->page * j->page;
	j->overlap = j->m.width - 1;
	j->interval_ns = (uint64_t)(opts->interval_ms ? opts->interval_ms : 200) * 1000000u;
	j->next_progress = j->t0;   /* the first report after the first chunk */
	pthread_mutex_init(&j->progress_lock, NULL);

	j->regs = calloc(maps && maps->n ? maps->n : 1, sizeof(*j->regs));
	if (!j->regs) {
		rc = vg_error_set(err, -ENOMEM, "cannot scan pid %d: out of memory", (int)pid);
		goto out;
	}
	for (size_t i = 0; maps && i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];
		struct sel_region *s;

		if (!vg_scan_region_selected(&opts->select, r))
			continue;
		/* Terabytes of address space reserved rw (a sanitizer's shadow)
		 * would take hours to read and make the target's kernel build
		 * page tables for all of it: left out, and said. */
		if (r->end - r->start > VG_SCAN_MAX_REGION) {
			j->regions_too_large++;
			ADD(j->regions_skipped, 1);
			continue;
		}
		s = &j->regs[j->nregs++];
		s->start = r->start;
		s->end = r->end;
		s->first_chunk = j->nchunks;
		s->nchunks = (r->end - r->start + j->chunk - 1) / j->chunk;
		s->chunks_left = s->nchunks;
		j->nchunks += s->nchunks;
		j->bytes_total += r->end - r->start;
	}
	j->res = calloc(j->nchunks ? j->nchunks : 1, sizeof(*j->res));
	nth = opts->threads ? opts->threads : online_cpus();
	if (nth > j->nchunks)
		nth = j->nchunks ? (unsigned)j->nchunks : 1;
	ws = calloc(nth, sizeof(*ws));
	if (!j->res || !ws) {
		rc = vg_error_set(err, -ENOMEM, "cannot scan pid %d: out of memory", (int)pid);
		goto out;
	}
	for (unsigned t = 0; t < nth; t++) {
		ws[t].j = j;
		ws[t].buf = malloc(j->piece + j->overlap);
		ws[t].segcap = (j->piece + j->overlap) / j->page + 2;
		ws[t].seg = malloc(ws[t].segcap * sizeof(*ws[t].seg));
		if (!ws[t].buf || !ws[t].seg) {
			rc = vg_error_set(err, -ENOMEM, "cannot scan pid %d: out of memory (%u buffers of %zu bytes)",
					  (int)pid, nth, j->piece + j->overlap);
			goto out;
		}
	}
	if (j->nchunks > 0) {
		for (unsigned t = 1; t < nth; t++) {
			if (pthread_create(&ws[t].th, NULL, worker_main, &ws[t]) != 0)
				break;
			started++;
		}
		worker_main(&ws[0]);
		for (unsigned t = 1; t <= started; t++)
			pthread_join(ws[t].th, NULL);
	}
	if (j->fatal) {
		rc = vg_vmread_fail(err, j->fatal, pid);
		goto out;
	}

	for (uint64_t c = 0; c < j->nchunks; c++)
		total += j->res[c].n;
	for (uint64_t c = 0; c < j->nchunks; c++) {
		struct chunk_res *r = &j->res[c];

		/* All the matches in one chunk: its arrays become the set's. */
		if (r->n && r->n == total) {
			out->addr = r->addr;
			out->value = r->val;
			out->variant = r->var;
			out->n = out->cap = total;
			memset(r, 0, sizeof(*r));
			break;
		}
	}
	if (out->n == 0 && vg_match_set_reserve(out, total) < 0) {
		rc = vg_error_set(err, -ENOMEM, "cannot scan pid %d: out of memory for %zu matches",
				  (int)pid, total);
		goto out;
	}
	for (uint64_t c = 0; c < j->nchunks; c++) {
		struct chunk_res *r = &j->res[c];

		if (!r->n)
			continue;
		memcpy(out->addr + out->n, r->addr, r->n * sizeof(*r->addr));
		memcpy(out->value + out->n * j->value_size, r->val, r->n * j->value_size);
		if (out->variant)
			memcpy(out->variant + out->n, r->var, r->n);
		out->n += r->n;
		free(r->addr);
		free(r->val);
		free(r->var);
		r->addr = NULL;
		r->val = r->var = NULL;
	}
	rc = 0;
	if (st) {
		stats_snapshot(j, st);
		/* Regions not reached (interrupted) are neither. */
		st->matches = out->n;
	}
out:
	if (rc < 0)
		vg_match_set_clear(out);
	for (uint64_t c = 0; j->res && c < j->nchunks; c++) {
		free(j->res[c].addr);
		free(j->res[c].val);
		free(j->res[c].var);
	}
	for (unsigned t = 0; ws && t < nth; t++) {
		free(ws[t].buf);
		free(ws[t].seg);
		free(ws[t].h.v);
		free(ws[t].acc.addr);
		free(ws[t].acc.val);
		free(ws[t].acc.var);
	}
	free(ws);
	pthread_mutex_destroy(&j->progress_lock);
	free(j->res);
	free(j->regs);
	free(j);
	return rc;
}

/* ---- re-reading matches ----------------------------------------------
 * Cost model of process_vm_readv (measured on x86-64, 6.x kernel): about
 * 0.26 us per remote iovec (VMA lookup, page walk, pin, unpin) plus about
 * 0.18 ns per byte copied, so matches less than SPAN_GAP apart share one
 * iovec and the bytes between them are copied for nothing.  Big sets are
 * split among threads by index range. */
#define SPAN_GAP 1536
#define SPAN_MAX ((size_t)256 << 10)
#define BATCH_BYTES ((size_t)4 << 20)
#define PARALLEL_MIN 65536       /* matches per thread worth starting one */

struct span {
	uint64_t start;
	size_t len;
	size_t first, last;      /* matches [first, last) */
	size_t off;              /* in the batch buffer */
};

/* Called for each match of [lo, hi) in ascending order: data is its bytes
 * now, or NULL when the address cannot be read. */
typedef void (*reread_fn)(void *arg, size_t i, const uint8_t *data);

struct reread {
	pid_t pid;
	const uint64_t *addr;
	size_t lo, hi;
	size_t (*len)(void *arg, size_t i);
	reread_fn fn;
	void *arg;
	size_t page;
	uint64_t bytes_read;
	int rc;
	pthread_t th;
};

static int reread(struct reread *rr)
{
	struct span *sp = malloc(IOV_MAX * sizeof(*sp));
	struct iovec *riov = malloc(IOV_MAX * sizeof(*riov));
	size_t bufcap = BATCH_BYTES, i = rr->lo;
	uint8_t *buf = malloc(bufcap);
	int rc = 0;

	if (!sp || !riov || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < rr->hi) {
		size_t ns = 0, used = 0, cur;
		struct iovec liov;
		ssize_t got;

		/* A batch: spans of nearby matches. */
		while (i < rr->hi && ns < IOV_MAX) {
			uint64_t start = rr->addr[i], end = start + rr->len(rr->arg, i);
			size_t first = i++;

			while (i < rr->hi && rr->addr[i] >= start &&
			       rr->addr[i] <= end + SPAN_GAP) {
				uint64_t e = rr->addr[i] + rr->len(rr->arg, i);

				if (e > end && e - start > SPAN_MAX)
					break;
				if (e > end)
					end = e;
				i++;
			}
			if (ns > 0 && used + (end - start) > bufcap) {
				i = first;
				break;
			}
			if (used + (end - start) > bufcap) {
				/* One span longer than the buffer. */
				void *p = realloc(buf, end - start);

				if (!p) {
					rc = -ENOMEM;
					goto out;
				}
				buf = p;
				bufcap = end - start;
			}
			sp[ns] = (struct span){ start, (size_t)(end - start), first, i, used };
			riov[ns].iov_base = (void *)(uintptr_t)start;
			riov[ns].iov_len = (size_t)(end - start);
			used += (size_t)(end - start);
			ns++;
		}
		liov.iov_base = buf;
		liov.iov_len = used;
		got = process_vm_readv(rr->pid, &liov, 1, riov, ns, 0);
		if (got < 0) {
			int c = vg_vmread_errno_class(errno);

			if (c < 0) {
				rc = c;
				goto out;
			}
			got = 0;
		}
		rr->bytes_read += (uint64_t)got;
		/* Hand out what was read; at the first short span, drop the
		 * matches touching the page that failed and start the next
		 * batch after it. */
		cur = sp[ns - 1].last;
		for (size_t s = 0; s < ns; s++) {
			size_t k;
			uint64_t bad, bad_end;

			if (sp[s].off + sp[s].len <= (size_t)got) {
				for (size_t m = sp[s].first; m < sp[s].last; m++)
					rr->fn(rr->arg, m, buf + sp[s].off + (rr->addr[m] - sp[s].start));
				continue;
			}
			k = (size_t)got > sp[s].off ? (size_t)got - sp[s].off : 0;
			bad = (sp[s].start + k) / rr->page * rr->page;
			bad_end = bad + rr->page;
			cur = sp[s].last;
			for (size_t m = sp[s].first; m < sp[s].last; m++) {
				uint64_t a = rr->addr[m], e = a + rr->len(rr->arg, m);

				if (e <= sp[s].start + k) {
					rr->fn(rr->arg, m, buf + sp[s].off + (a - sp[s].start));
				} else if (a < bad_end) {
					rr->fn(rr->arg, m, NULL);
				} else {
					cur = m;
					break;
				}
			}
			break;
		}
		i = cur;
	}
out:
	free(sp);
	free(riov);
	free(buf);
	return rc;
}

static void *reread_main(void *arg)
{
	struct reread *rr = arg;

	rr->rc = reread(rr);
	return NULL;
}

/* Split [0, n) among up to the online CPUs; rr[0] is the template (pid,
 * addr, len, fn, page); part t gets arg = args + t * arg_size, prepared
 * with prep(arg, first index) before any part runs.  The number of parts
 * in *nparts; returns the first fatal error (-ESRCH first) or 0. */
static int reread_parallel(struct reread *rr, size_t n, void *args,
			   size_t arg_size, void (*prep)(void *arg, size_t lo),
			   unsigned *nparts)
{
	unsigned nt = online_cpus(), started = 0;
	int rc = 0;

	if (nt > 8)
		nt = 8;
	if (n / PARALLEL_MIN < nt)
		nt = (unsigned)(n / PARALLEL_MIN);
	if (nt < 1)
		nt = 1;
	for (unsigned t = 0; t < nt; t++) {
		rr[t] = rr[0];
		rr[t].lo = n * t / nt;
		rr[t].hi = n * (t + 1) / nt;
		rr[t].arg = (char *)args + t * arg_size;
		rr[t].bytes_read = 0;
		rr[t].rc = 0;
		if (prep)
			prep(rr[t].arg, rr[t].lo);
	}
	for (unsigned t = 1; t < nt; t++) {
		if (pthread_create(&rr[t].th, NULL, reread_main, &rr[t]) != 0)
			break;
		started++;
	}
	/* Parts whose thread did not start run here. */
	for (unsigned t = started + 1; t < nt; t++)
		rr[t].rc = reread(&rr[t]);
	rr[0].rc = reread(&rr[0]);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(rr[t].th, NULL);
	for (unsigned t = 0; t < nt; t++) {
		if (rr[t].rc == -ESRCH || (rc == 0 && rr[t].rc < 0))
			rc = rr[t].rc;
	}
	*nparts = nt;
	return rc;
}

struct narrow_ctx {
	struct vg_match_set *set;
	const struct vg_scan_value *value;
	const struct vg_narrow *n;
	size_t w;                /* numeric width, 0 for patterns */
	size_t base;             /* kept matches go to base, base + 1, ... */
	size_t kept;
	uint64_t unreadable;
};

static void narrow_prep(void *arg, size_t lo)
{
	((struct narrow_ctx *)arg)->base = lo;
}

static size_t narrow_len(void *arg, size_t i)
{
	struct narrow_ctx *c = arg;

	return c->w ? c->w : vg_match_set_len(c->set, c->value, i);
}

static void narrow_one(void *arg, size_t i, const uint8_t *data)
{
	struct narrow_ctx *c = arg;
	struct vg_match_set *s = c->set;
	size_t vs = s->value_size, len, to;
	const uint8_t *old = s->value + i * vs;
	bool keep;

	if (!data) {
		c->unreadable++;
		return;
	}
	if (c->w) {
		keep = vg_narrow_test(s->type, c->n, old, data);
		len = c->w;
	} else {
		unsigned var = s->variant ? s->variant[i] : 0;

		len = narrow_len(c, i);
		if (c->n->op == VG_NARROW_EQ) {
			const struct vg_scan_pattern *p = &c->value->pat[var];
			struct pattern pt = { .bytes = p->bytes, .mask = p->mask, .len = p->len };

			keep = pattern_at(&pt, data);
		} else {
			bool same = memcmp(old, data, len) == 0;

			keep = c->n->op == VG_NARROW_UNCHANGED ? same : !same;
		}
	}
	if (!keep)
		return;
	/* Compaction in place: to <= i, and i's old value was read above. */
	to = c->base + c->kept++;
	s->addr[to] = s->addr[i];
	if (s->variant)
		s->variant[to] = s->variant[i];
	memcpy(s->value + to * vs, data, len);
	if (len < vs)
		memset(s->value + to * vs + len, 0, vs - len);
}

static int check_set_value(const struct vg_match_set *set,
			   const struct vg_scan_value *value, bool need,
			   struct vg_error *err)
{
	if (vg_scan_type_width(set->type) != 0)
		return 0;
	if (!value)
		return need ? vg_error_set(err, -EINVAL, "narrowing %s matches with eq needs the VALUE",
					   vg_scan_type_name(set->type)) : 0;
	if (value->type != set->type)
		return vg_error_set(err, -EINVAL, "the VALUE is a %s, but the matches are %s",
				    vg_scan_type_name(value->type), vg_scan_type_name(set->type));
	for (size_t k = 0; k < value->npat; k++)
		if (value->pat[k].len > set->value_size)
			return vg_error_set(err, -EINVAL,
					    "the VALUE is longer (%zu bytes) than the matches store (%zu): narrow with the VALUE of the first scan",
					    value->pat[k].len, set->value_size);
	for (size_t i = 0; need && set->variant && i < set->n; i++)
		if (set->variant[i] >= value->npat)
			return vg_error_set(err, -EINVAL, "match %zu was found with encoding %u, which the VALUE does not have",
					    i, set->variant[i]);
	return 0;
}

#define MAX_PARTS 8

int vg_scan_narrow(pid_t pid, struct vg_match_set *set,
		   const struct vg_scan_value *value, const struct vg_narrow *n,
		   struct vg_scan_stats *st, struct vg_error *err)
{
	struct narrow_ctx c[MAX_PARTS];
	struct reread rr[MAX_PARTS];
	uint64_t t0 = now_ns(), bytes = 0, unreadable = 0;
	size_t kept = 0;
	unsigned parts;
	int rc;

	if (st)
		memset(st, 0, sizeof(*st));
	rc = vg_narrow_check(set->type, n, err);
	if (rc < 0)
		return rc;
	rc = check_set_value(set, value, n->op == VG_NARROW_EQ, err);
	if (rc < 0)
		return rc;
	if (vg_scan_type_width(set->type) && set->value_size < vg_scan_type_width(set->type))
		return vg_error_set(err, -EINVAL, "the matches store %zu bytes per %s value",
				    set->value_size, vg_scan_type_name(set->type));
	for (unsigned t = 0; t < MAX_PARTS; t++)
		c[t] = (struct narrow_ctx){ .set = set, .value = value, .n = n,
					    .w = vg_scan_type_width(set->type) };
	memset(&rr[0], 0, sizeof(rr[0]));
	rr[0].pid = pid;
	rr[0].addr = set->addr;
	rr[0].len = narrow_len;
	rr[0].fn = narrow_one;
	rr[0].page = page_size();
	/* Each part compacts into the start of its own index range. */
	rc = reread_parallel(rr, set->n, c, sizeof(c[0]), narrow_prep, &parts);
	if (rc < 0)
		return vg_vmread_fail(err, rc, pid);
	for (unsigned t = 0; t < parts; t++) {
		size_t from = rr[t].lo, k = c[t].kept;

		if (k && from != kept) {
			memmove(set->addr + kept, set->addr + from, k * sizeof(*set->addr));
			memmove(set->value + kept * set->value_size, set->value + from * set->value_size,
				k * set->value_size);
			if (set->variant)
				memmove(set->variant + kept, set->variant + from, k);
		}
		kept += k;
		bytes += rr[t].bytes_read;
		unreadable += c[t].unreadable;
	}
	set->n = kept;
	if (st) {
		st->bytes_total = bytes;
		st->bytes_scanned = bytes;
		st->matches = kept;
		st->matches_unreadable = unreadable;
		st->seconds = (double)(now_ns() - t0) / 1e9;
	}
	return 0;
}

struct refresh_ctx {
	const struct vg_match_set *set;
	uint8_t *now;
	bool *readable;
};

static size_t refresh_len(void *arg, size_t i)
{
	return ((struct refresh_ctx *)arg)->set->value_size;
}

static void refresh_one(void *arg, size_t i, const uint8_t *data)
{
	struct refresh_ctx *c = arg;
	size_t vs = c->set->value_size;

	c->readable[i] = data != NULL;
	memcpy(c->now + i * vs, data ? data : c->set->value + i * vs, vs);
}

int vg_scan_refresh(pid_t pid, const struct vg_match_set *set,
		    uint8_t *values_now, bool *readable, struct vg_error *err)
{
	struct refresh_ctx c[MAX_PARTS];
	struct reread rr[MAX_PARTS];
	unsigned parts;
	int rc;

	if (set->value_size == 0 || set->n == 0)
		return 0;
	for (unsigned t = 0; t < MAX_PARTS; t++)
		c[t] = (struct refresh_ctx){ set, values_now, readable };
	memset(&rr[0], 0, sizeof(rr[0]));
	rr[0].pid = pid;
	rr[0].addr = set->addr;
	rr[0].len = refresh_len;
	rr[0].fn = refresh_one;
	rr[0].page = page_size();
	rc = reread_parallel(rr, set->n, c, sizeof(c[0]), NULL, &parts);
	return rc < 0 ? vg_vmread_fail(err, rc, pid) : 0;
}
