/* sym_batch.c - a batch of `vigil sym` input lines answered in address
 * order, on two threads when it is large, and written in input order.
 *
 * cmd_sym.c reads standard input in large blocks and hands each block's
 * lines here; the answers go to stdout byte for byte as one thread in
 * input order would write them. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sym_addr.h"
#include "cli/sym_batch.h"
#include "util/affinity.h"
#include "util/hugebuf.h"
#include "util/radix.h"

/* Where a line's answer is in r->table->text (or r->table2.text: the
 * SPAN_SECOND bit of note), written in address order and read in input
 * order: small, so that neither walk misses the cache much (the 48-byte
 * line records did, at a tenth of a batch). */
struct batch_span {
	uint64_t off;
	uint32_t len;             /* UINT32_MAX: not answered */
	uint32_t note;            /* 1 + index into the table's notes; 0: none */
};

#define SPAN_SECOND (1u << 31)

/* A batch this large (lines) is looked up on two threads when the
 * persistent index answers (sym_batch_answer): cmd_sym.c's 64 KiB read
 * holds 4,000 to 7,000 addresses. */
#define BATCH_TWO_THREADS 2048

/* How many lookups ahead lookup_keys asks for the index's lines: 800,000
 * addresses of the generated binary took 13% less time at 2, 9% at 8
 * (a lookup and its answer are long enough to cover a miss); and for
 * the records those lines lead to (300,000 addresses: 205 -> 182 ms of
 * CPU time at 1; 3 and 2, or a third step for the parent scope, did
 * worse). */
#define BATCH_PREFETCH 2
#define BATCH_PREFETCH_RECORDS 1

/* Keys a thread claims at a time from a part of a two-thread batch. */
#define BATCH_BLOCK 256

enum { PART_PENDING, PART_RUNNING, PART_TAKEN };

/* Part of a batch: keys[lo, hi) not yet claimed, sorted by address,
 * looked up and composed into the table of the thread that claims them.
 * Two threads (sym_batch_answer): each reads and sorts its half of the lines,
 * then claims its keys by blocks from the highest down; the one done
 * first claims the other's from the lowest up, or answers the other half
 * whole when its thread has not begun (a thread of a loaded machine
 * starts late or is preempted: fixed halves left one waiting for it). */
struct batch_part {
	struct sym_batch *r;
	const struct sym_pending *p;
	struct vg_radix_item *keys;
	size_t lo, hi;
	struct batch_span *spans;
	struct vg_report_sym_table *tb;
	struct vg_sym_result *res;
	uint32_t tag;             /* SPAN_SECOND, or 0 */
	/* The second thread's part that only helps with other's keys, from
	 * the bottom (lookup_sorted): no lines of its own. */
	bool help;
	/* Its own keys claimed from the lowest up (a helper takes them from
	 * the highest down): the other part goes down, so that the two
	 * threads' first lookups of a batch meet different CUs and check
	 * them side by side (symindex.c checks a CU once, the other thread
	 * waiting for the verdict: both from the top, the first batch's CU
	 * checks ran on one core at a time). */
	bool up;
	bool failed;              /* a lookup failed: err says why */
	struct vg_error err;
	/* Two threads: the lines [first, end), the other half, and the lock
	 * over both halves' state, sorted, lo and hi. */
	size_t first, end;
	struct batch_part *other;
	pthread_mutex_t *claim;
	int state;
	bool sorted;
};

/* keys[lo, hi) looked up and composed by exec, from the highest down. */
static void lookup_keys(struct batch_part *exec, const struct vg_radix_item *keys,
			size_t lo, size_t hi)
{
	struct vg_report_sym_table *tb = exec->tb;
	bool llvm = tb->style == VG_REPORT_SYM_LLVM;

	/* The block under one hold of the symbolizer's shared lock. */
	vg_sym_hold(exec->r->s);
	for (size_t k = hi; k-- > lo;) {
		size_t i = keys[k].index;
		uint64_t start = tb->len;
		uint32_t note = 0;

		/* The index lines of the lookup BATCH_PREFETCH ahead, fetched
		 * while this one runs (each missed the cache at every step). */
		if (k >= lo + BATCH_PREFETCH)
			vg_sym_prefetch_held(exec->r->s, keys[k - BATCH_PREFETCH].key, false);
		if (k >= lo + BATCH_PREFETCH_RECORDS)
			vg_sym_prefetch_held(exec->r->s, keys[k - BATCH_PREFETCH_RECORDS].key, true);

		if (vg_sym_lookup_held(exec->r->s, keys[k].key, exec->res, &exec->err) < 0) {
			exec->failed = true;
			break;
		}
		/* only vigil's style echoes a symbolic input */
		vg_report_sym_compose(tb, llvm ? NULL : exec->p[i].input, exec->res);
		for (size_t j = 0; tb->note_of && j < tb->n_notes; j++)
			if (tb->notes[j].img == tb->note_of)
				note = (uint32_t)j + 1;
		exec->spans[i] = (struct batch_span){ start, (uint32_t)(tb->len - start), note | exec->tag };
	}
	vg_sym_release(exec->r->s);
}

/* b's lines' addresses (0xHEX and bare hex; any other line is left
 * unanswered for the main thread), sorted, ready to be claimed. */
static void part_read(struct batch_part *b)
{
	size_t n_keys = 0;

	for (size_t i = b->first; i < b->end; i++) {
		uint64_t addr;

		b->spans[i].len = UINT32_MAX;
		if (!b->p[i].bad && sym_addr_hex(b->r->offline, b->p[i].input, true, &addr))
			b->keys[n_keys++] = (struct vg_radix_item){ addr, i };
	}
	vg_radix_sort(b->keys, b->keys + n_keys, n_keys);
	pthread_mutex_lock(b->claim);
	b->lo = 0;
	b->hi = n_keys;
	b->sorted = true;
	pthread_mutex_unlock(b->claim);
}

/* Blocks of v's keys, looked up by exec until none is left: in v's
 * direction when they are exec's own (from the top unless v->up), from
 * the other end when exec helps. */
static void claim_blocks(struct batch_part *exec, struct batch_part *v)
{
	for (;;) {
		size_t lo, hi;

		pthread_mutex_lock(exec->claim);
		if (!v->sorted || v->lo == v->hi || exec->failed) {
			pthread_mutex_unlock(exec->claim);
			return;
		}
		if ((exec == v) != v->up) {
			hi = v->hi;
			lo = hi - v->lo > BATCH_BLOCK ? hi - BATCH_BLOCK : v->lo;
			v->hi = lo;
		} else {
			lo = v->lo;
			hi = v->hi - lo > BATCH_BLOCK ? lo + BATCH_BLOCK : v->hi;
			v->lo = hi;
		}
		pthread_mutex_unlock(exec->claim);
		lookup_keys(exec, v->keys, lo, hi);
	}
}

/* One thread's share of a two-thread batch: its own half (unless the
 * other thread took it whole), then the other half, whole if its thread
 * has not begun, else block by block. */
static void part_run(struct batch_part *self)
{
	struct batch_part *o = self->other;
	bool mine, whole;

	pthread_mutex_lock(self->claim);
	mine = self->state == PART_PENDING;
	if (mine)
		self->state = PART_RUNNING;
	pthread_mutex_unlock(self->claim);
	if (!mine)
		return;
	part_read(self);
	claim_blocks(self, self);
	pthread_mutex_lock(self->claim);
	whole = o->state == PART_PENDING;
	if (whole)
		o->state = PART_TAKEN;
	pthread_mutex_unlock(self->claim);
	if (whole) {
		/* As o's thread would: into o's table. */
		part_read(o);
		claim_blocks(o, o);
	} else {
		claim_blocks(self, o);
	}
}

static void sem_wait_intr(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

/* The answer of a span: in the table of the thread that composed it. */
static const char *span_text(const struct sym_batch *r, const struct batch_span *sp)
{
	return (sp->note & SPAN_SECOND ? r->table2.text : r->table->text) + sp->off;
}

/* The answers of lines [lo, hi), in input order, copied to at. */
static void gather(const struct sym_batch *r, size_t lo, size_t hi, char *at)
{
	for (size_t i = lo; i < hi; i++) {
		memcpy(at, span_text(r, &r->spans[i]), r->spans[i].len);
		at += r->spans[i].len;
	}
}

/* p[0, n) to stdout by write(2), past stdio: how many bytes went out
 * before a write failed (n: all). */
static size_t write_fd(const char *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(STDOUT_FILENO, p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	return off;
}

/* r->whole[0, len) to stdout, on the second thread: what a failed write
 * leaves is kept for write_wait to give stdio. */
static void write_whole(struct sym_batch *r, size_t len)
{
	r->write_off = write_fd(r->whole, len);
	r->write_left = len - r->write_off;
}

static void *worker_main(void *arg)
{
	struct sym_batch *r = arg;

	for (;;) {
		struct batch_job job;

		sem_wait_intr(&r->worker.go);
		job = r->worker.jobs[r->worker.tail++ % 2];
		switch (job.kind) {
		case BATCH_JOB_EXIT:
			return NULL;
		case BATCH_JOB_PART:
			if (job.part->help)
				claim_blocks(job.part, job.part->other);
			else
				part_run(job.part);
			sem_post(&r->worker.done);
			break;
		case BATCH_JOB_GATHER:
			gather(r, job.lo, job.hi, job.at);
			sem_post(&r->worker.done);
			break;
		case BATCH_JOB_WRITE:
			write_whole(r, job.len);
			sem_post(&r->worker.written);
			break;
		}
	}
}

/* The second thread, started if need be: false when it cannot be. */
static bool worker_start(struct sym_batch *r)
{
	if (r->worker.started)
		return true;
	/* sem_init of a process-private semaphore cannot fail on Linux;
	 * pthread_create can. */
	if (sem_init(&r->worker.go, 0, 0) < 0 || sem_init(&r->worker.done, 0, 0) < 0 ||
	    sem_init(&r->worker.written, 0, 0) < 0)
		return false;
	r->worker.head = r->worker.tail = 0;
	if (pthread_create(&r->worker.thread, NULL, worker_main, r) != 0) {
		sem_destroy(&r->worker.go);
		sem_destroy(&r->worker.done);
		sem_destroy(&r->worker.written);
		return false;
	}
	r->worker.started = true;
	return true;
}

/* job queued for the started second thread.  At most two are queued:
 * a batch's write, then the next batch's part, whose done this thread
 * waits for before it queues more. */
static void worker_push(struct sym_batch *r, struct batch_job job)
{
	r->worker.jobs[r->worker.head++ % 2] = job;
	sem_post(&r->worker.go);
}

/* The second thread answers b (started first if need be): false when it
 * cannot be started. */
static bool worker_give(struct sym_batch *r, struct batch_part *b)
{
	if (!worker_start(r))
		return false;
	worker_push(r, (struct batch_job){ .kind = BATCH_JOB_PART, .part = b });
	return true;
}

static void worker_stop(struct sym_batch *r)
{
	if (!r->worker.started)
		return;
	worker_push(r, (struct batch_job){ .kind = BATCH_JOB_EXIT });
	pthread_join(r->worker.thread, NULL);
	sem_destroy(&r->worker.go);
	sem_destroy(&r->worker.done);
	sem_destroy(&r->worker.written);
	r->worker.started = false;
}

/* Is the batch large enough for two threads, and is there a second CPU
 * to run one?  Restricted to one CPU (taskset), a second thread only
 * costs. */
static bool batch_may_split(struct sym_batch *r, size_t n)
{
	if (n < BATCH_TWO_THREADS || !vg_affinity_two_cpus())
		return false;
	return r->res2 || (r->res2 = malloc(sizeof(*r->res2)));
}

/* Is the batch for two threads?  Large, and its lookups take the
 * symbolizer's lock shared (the persistent index answers, or an
 * in-memory index of every CU).  The first lookup in an image finds its
 * debug info and maps its index: before the first batch has looked
 * anything up, one of its addresses is looked up alone to know. */
static bool two_threads(struct sym_batch *r, const struct sym_pending *p, size_t n)
{
	struct vg_error err = { 0 };
	uint64_t addr;

	if (!batch_may_split(r, n))
		return false;
	if (vg_symbolizer_lookups_shared(r->s))
		return true;
	for (size_t i = 0; i < n && i < 64; i++) {
		if (p[i].bad || !sym_addr_hex(r->offline, p[i].input, true, &addr))
			continue;
		if (vg_sym_lookup(r->s, addr, r->res, &err) < 0)
			return false;  /* the batch says it, in its place */
		return vg_symbolizer_lookups_shared(r->s);
	}
	return false;
}

/* one's n_keys sorted keys, highest first, block by block, on this
 * thread: the cold path, whose lookups take the lock exclusive while
 * CUs are indexed.  Once they take it shared (the prefetch thread and
 * this one have indexed the last CU: vg_symbolizer_lookups_shared), the
 * second thread claims the keys left from the bottom while this one goes
 * on from the top, into two's table (the cold batch's answering thread
 * had two thirds of its samples after the other had run out of CUs).
 * True when the second thread helped. */
static bool lookup_sorted(struct sym_batch *r, struct batch_part *one,
			  struct batch_part *two, size_t n_keys, bool may_help)
{
	pthread_mutex_t claim = PTHREAD_MUTEX_INITIALIZER;
	size_t hi = n_keys;
	bool helped = false;

	while (hi > 0 && !one->failed) {
		size_t lo = hi > BATCH_BLOCK ? hi - BATCH_BLOCK : 0;

		lookup_keys(one, one->keys, lo, hi);
		hi = lo;
		if (!may_help || hi < 2 * BATCH_BLOCK || one->failed ||
		    !vg_symbolizer_lookups_shared(r->s))
			continue;
		one->claim = &claim;
		one->lo = 0;
		one->hi = hi;
		one->sorted = true;
		*two = (struct batch_part){ .r = r, .p = one->p, .keys = one->keys,
					    .spans = one->spans, .tb = &r->table2,
					    .res = r->res2, .tag = SPAN_SECOND, .help = true,
					    .other = one, .claim = &claim };
		r->table2.style = r->table->style;
		if (!worker_give(r, two)) {
			may_help = false;
			continue;
		}
		helped = true;
		claim_blocks(one, one);
		sem_wait_intr(&r->worker.done);
		break;
	}
	pthread_mutex_destroy(&claim);
	return helped;
}

/* The bytes gathered for stdout per write (sym_batch_answer). */
#define OUT_CHUNK (256u << 10)

/* p[0, n) to stdout after what stdio holds, in write(2)s of its own
 * (through fwrite, each answer was copied once more, and the calls were
 * a tenth of the main thread's share of an indexed batch).  A failed
 * write gives the rest to stdio, which meets the same error and keeps
 * it for ferror (cli_output_failed). */
static void out_direct(const char *p, size_t n)
{
	size_t done;

	if (fflush(stdout) != 0)
		return;
	done = write_fd(p, n);
	if (done < n) {
		fwrite_unlocked(p + done, 1, n - done, stdout);
		(void)fflush(stdout);
	}
}

/* The last batch's write on the second thread seen through (when
 * block, waited for; else only when it is over), before anything else
 * goes to stdout or stderr or r->whole is filled again.  What the write
 * could not take goes to stdio, which meets the same error and keeps it
 * for ferror, as out_direct does. */
static void write_wait(struct sym_batch *r, bool block)
{
	if (!r->write_pending)
		return;
	if (block) {
		sem_wait_intr(&r->worker.written);
	} else {
		/* errno may hold a failed write's reason, which the run's
		 * last message prints (cli_output_failed): not EAGAIN. */
		int saved = errno;

		if (sem_trywait(&r->worker.written) < 0) {
			errno = saved;
			return;
		}
	}
	r->write_pending = false;
	if (r->write_left) {
		fwrite_unlocked(r->whole + r->write_off, 1, r->write_left, stdout);
		(void)fflush(stdout);
		r->write_left = 0;
	}
}

/* The n lines' answers gathered into r->whole by both threads, each a
 * half, and queued for the second thread to write while this one goes
 * on with the next batch (written by this thread, the answers were a
 * tenth of a 100,000-address batch with the index, half of it in the
 * kernel, the other thread idle).  False, nothing done, when a line is
 * unanswered or carries an image note (written in order by this thread
 * with stdio), or the buffer cannot be had. */
static bool write_async(struct sym_batch *r, size_t n)
{
	size_t half = n / 2, first = 0, len = 0;

	for (size_t i = 0; i < n; i++) {
		const struct batch_span *sp = &r->spans[i];

		if (sp->len == UINT32_MAX || (sp->note & ~SPAN_SECOND))
			return false;
		len += sp->len;
		if (i + 1 == half)
			first = len;
	}
	if (len > r->whole_cap) {
		char *whole = vg_hugebuf_alloc(len);

		if (!whole)
			return false;
		vg_hugebuf_free(r->whole, r->whole_cap);
		r->whole = whole;
		r->whole_cap = vg_hugebuf_size(len);
	}
	worker_push(r, (struct batch_job){ .kind = BATCH_JOB_GATHER, .lo = half, .hi = n,
					   .at = r->whole + first });
	gather(r, 0, half, r->whole);
	sem_wait_intr(&r->worker.done);
	/* What stdio holds goes first; on its error, as out_direct. */
	if (fflush(stdout) == 0) {
		worker_push(r, (struct batch_job){ .kind = BATCH_JOB_WRITE, .len = len });
		r->write_pending = true;
	}
	return true;
}

/* The n lines' answers to stdout by this thread, in input order, up to
 * the first line a failure left unanswered, with each image note under
 * the first answer of its image (notes2: the second table's notes, by
 * image, before vg_report_sym_merge_notes); into a file or pipe gathered
 * OUT_CHUNK bytes at a time. */
static void write_in_order(struct sym_batch *r, size_t n, const struct vg_image *const *notes2)
{
	struct vg_report_sym_table *tb = r->table;
	const struct batch_span *spans = r->spans;

	for (size_t i = 0, out_len = 0; i < n && spans[i].len != UINT32_MAX && !tb->oom && !r->table2.oom; i++) {
		const struct batch_span *sp = &spans[i];
		uint32_t note = sp->note & ~SPAN_SECOND;

		if (r->direct_out && sp->len <= OUT_CHUNK) {
			if (out_len + sp->len > OUT_CHUNK) {
				out_direct(r->out, out_len);
				out_len = 0;
			}
			memcpy(r->out + out_len, span_text(r, sp), sp->len);
			out_len += sp->len;
		} else {
			if (out_len)
				out_direct(r->out, out_len);
			out_len = 0;
			fwrite_unlocked(span_text(r, sp), 1, sp->len, stdout);
		}
		if (note) {
			if (out_len)
				out_direct(r->out, out_len);
			out_len = 0;
			(void)vg_report_sym_note(stdout, tb, sp->note & SPAN_SECOND ? notes2[note - 1]
										: tb->notes[note - 1].img);
		}
		if (out_len && (i + 1 == n || spans[i + 1].len == UINT32_MAX))
			out_direct(r->out, out_len);
	}
}

static void room_free(struct sym_batch *r)
{
	if (r->room_huge)
		vg_hugebuf_free(r->room_mem, r->room_bytes);
	else
		free(r->room_mem);
	r->room_mem = NULL;
	r->keys = NULL;
	r->spans = NULL;
	r->out = NULL;
	r->room = 0;
}

/* Room for a batch of n lines: its keys (with the sort's scratch), spans
 * and output chunk, in one buffer kept for the next batch (freed and
 * allocated anew, they were faulted in anew: a fifth of a batch's page
 * faults).  A batch of BATCH_TWO_THREADS lines and more gets it in huge
 * pages, with room for as many lines as fit (util/hugebuf.h: in 4 KiB
 * pages, ~150 first writes of ~12 us each on a VM). */
static bool batch_room(struct sym_batch *r, size_t n)
{
	const size_t per_line = 2 * sizeof(*r->keys) + sizeof(*r->spans);
	bool huge = n >= BATCH_TWO_THREADS;
	size_t bytes;
	char *mem;

	if (n <= r->room && r->room_mem)
		return true;
	n = n ? n : 1;
	if (n > (SIZE_MAX - OUT_CHUNK) / per_line)
		return false;
	bytes = n * per_line + OUT_CHUNK;
	mem = huge ? vg_hugebuf_alloc(bytes) : malloc(bytes);
	if (!mem)
		return false;
	if (huge) {
		bytes = vg_hugebuf_size(bytes);
		n = (bytes - OUT_CHUNK) / per_line;
	}
	room_free(r);
	r->room_mem = mem;
	r->room_bytes = bytes;
	r->room_huge = huge;
	r->keys = (struct vg_radix_item *)mem;
	r->spans = (struct batch_span *)(mem + 2 * n * sizeof(*r->keys));
	r->out = mem + 2 * n * sizeof(*r->keys) + n * sizeof(*r->spans);
	r->room = n;
	return true;
}

/* The lines read so far, looked up in address order (neighbouring
 * addresses share the index's cache lines: 100,000 random addresses of a
 * 37 MB index took twice as long in input order) and written in input
 * order.  The text view only: JSON collects results in order anyway.
 *
 * Two threads when the batch is large and the persistent index answers
 * (two_threads): the machine's second core otherwise idles while one
 * looks up and composes, 80% of an indexed batch's instructions.  Each
 * thread reads, sorts, looks up and composes half of the lines into a
 * table of its own (the halves of the sorted keys were tried first: the
 * reading and the sort, 10% more, stayed on one core); lines that are
 * not plain hex are answered after, by this thread; the answers still go
 * out in input order, byte for byte.  Without the index (the cold path)
 * the prefetch thread has the other core while CUs are indexed: this
 * thread answers alone until the index is complete, then the second
 * helps (lookup_sorted), and later batches take the two-thread path. */
int sym_batch_answer(struct sym_batch *r, struct sym_pending *p, size_t n)
{
	struct vg_radix_item *keys;
	struct batch_span *spans;
	struct vg_report_sym_table *tb = r->table, *tb2 = &r->table2;
	struct batch_part one, two;
	const struct vg_image *notes2[sizeof(tb2->notes) / sizeof(tb2->notes[0])];
	struct vg_error err = { 0 };
	bool second = false;
	size_t n_keys = 0;
	int rc = 0;

	if (!batch_room(r, n)) {
		write_wait(r, true);
		return cli_out_of_memory(r->cli, "for the input");
	}
	/* A batch's answers are a megabyte or more: in huge pages from the
	 * start (advice: each table still grows as needed). */
	if (r->room_huge) {
		(void)vg_report_sym_reserve(tb, VG_HUGEBUF_MIN);
		(void)vg_report_sym_reserve(tb2, VG_HUGEBUF_MIN);
	}
	keys = r->keys;
	spans = r->spans;
	one = (struct batch_part){ .r = r, .p = p, .keys = keys, .spans = spans,
				   .tb = tb, .res = r->res };
	tb->len = tb2->len = 0;
	/* Before any lookup (two_threads makes the first): a large batch
	 * starts indexing the DWARF in the background as it is opened. */
	vg_symbolizer_expect_lookups(r->s, n);
	if (two_threads(r, p, n)) {
		pthread_mutex_t claim = PTHREAD_MUTEX_INITIALIZER;

		one.claim = &claim;
		two = one;
		two.tb = tb2;
		two.res = r->res2;
		two.tag = SPAN_SECOND;
		two.up = true;
		two.first = n / 2;
		two.end = n;
		two.keys = keys + 2 * (n / 2);  /* its keys and the sort's scratch */
		one.end = n / 2;
		one.other = &two;
		two.other = &one;
		tb2->style = tb->style;
		second = worker_give(r, &two);
		if (!second)
			one.end = n;   /* all of it on this thread, then */
		if (second) {
			part_run(&one);
			sem_wait_intr(&r->worker.done);
		} else {
			part_read(&one);
			claim_blocks(&one, &one);
		}
		pthread_mutex_destroy(&claim);
		/* The lines left: not plain hex (symbolic, or not an address),
		 * in input order. */
		for (size_t i = 0; i < n && !one.failed && !(second && two.failed); i++) {
			uint64_t addr = 0;

			if (spans[i].len != UINT32_MAX)
				continue;
			if (!p[i].bad && sym_addr_resolve(r->s, r->offline, p[i].input, true, &addr, &err) == 0) {
				keys[0] = (struct vg_radix_item){ addr, i };
				lookup_keys(&one, keys, 0, 1);
				continue;
			}
			spans[i].off = tb->len;
			vg_report_sym_compose_bad(tb, p[i].input, p[i].bad ? p[i].bad : err.msg);
			vg_error_clear(&err);
			r->n_bad_input++;
			spans[i].len = (uint32_t)(tb->len - spans[i].off);
			spans[i].note = 0;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			uint64_t addr = 0, start = tb->len;

			if (!p[i].bad && sym_addr_resolve(r->s, r->offline, p[i].input, true, &addr, &err) == 0) {
				keys[n_keys++] = (struct vg_radix_item){ addr, i };
				spans[i].len = UINT32_MAX;
				continue;
			}
			vg_report_sym_compose_bad(tb, p[i].input, p[i].bad ? p[i].bad : err.msg);
			vg_error_clear(&err);
			r->n_bad_input++;
			spans[i] = (struct batch_span){ start, (uint32_t)(tb->len - start), 0 };
		}
		/* Small keys, sorted without indirect compares (qsort was a
		 * tenth of a batch). */
		vg_radix_sort(keys, keys + n_keys, n_keys);
		/* Highest address first: without a persistent index, the
		 * prefetch thread indexes CUs from the last down (file order
		 * is mostly address order), and this thread follows right
		 * behind it, indexing the next CU itself rather than wait
		 * (dwindex.c's ensure_indexed); the rest on two threads once
		 * every CU is indexed. */
		second = lookup_sorted(r, &one, &two, n_keys, batch_may_split(r, n));
	}
	if (second) {
		/* The second table's notes, by image, for the writes below
		 * (vg_report_sym_note finds each by image in tb). */
		for (size_t j = 0; j < tb2->n_notes; j++)
			notes2[j] = tb2->notes[j].img;
		vg_report_sym_merge_notes(tb, tb2);
	}
	/* The last batch's answers are out (its write was queued before
	 * this batch's part: done already) before this one's or an error. */
	write_wait(r, true);
	if (one.failed)
		rc = cli_fail(r->cli, &one.err);
	else if (second && two.failed)
		rc = cli_fail(r->cli, &two.err);
	if ((tb->oom || tb2->oom) && !rc)
		rc = cli_out_of_memory(r->cli, "for the answers");
	/* Into a file or pipe, by the second thread; else here, in order. */
	if (rc || !second || !r->direct_out || !write_async(r, n))
		write_in_order(r, n, notes2);
	tb->len = tb2->len = 0;
	tb->oom = tb2->oom = false;
	return rc;
}

void sym_batch_flush(struct sym_batch *r)
{
	write_wait(r, true);
}

void sym_batch_reap(struct sym_batch *r)
{
	write_wait(r, false);
}

void sym_batch_free(struct sym_batch *r)
{
	write_wait(r, true);
	worker_stop(r);
	vg_hugebuf_free(r->whole, r->whole_cap);
	r->whole = NULL;
	r->whole_cap = 0;
	vg_report_sym_table_free(&r->table2);
	free(r->res2);
	r->res2 = NULL;
	room_free(r);
}
