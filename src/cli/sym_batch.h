/* sym_batch.h - a batch of `vigil sym` input lines: looked up in address
 * order (on two threads when large and the lookups can share the
 * symbolizer), answered in input order. */
#ifndef VIGIL_CLI_SYM_BATCH_H
#define VIGIL_CLI_SYM_BATCH_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "report/sym.h"
#include "sym/symbolizer.h"

/* One line of a batch read from standard input. */
struct sym_pending {
	char *input;
	const char *bad;          /* not an address: why */
};

struct batch_part;
struct batch_span;
struct vg_radix_item;

/* A job for the batch's second thread (sym_batch.c). */
struct batch_job {
	enum { BATCH_JOB_EXIT, BATCH_JOB_PART, BATCH_JOB_GATHER, BATCH_JOB_WRITE } kind;
	struct batch_part *part;           /* PART */
	size_t lo, hi;                     /* GATHER: the lines [lo, hi) */
	char *at;                          /* GATHER: where their text goes */
	size_t len;                        /* WRITE: r->whole[0, len) */
};

/* The batch engine's state, kept from batch to batch.  The caller sets
 * cli, s, offline, table, res and direct_out; the rest is the engine's. */
struct sym_batch {
	struct vg_cli *cli;
	struct vg_symbolizer *s;
	bool offline;                      /* --bin: @0xHEX and bare hex */
	/* The caller's table and scratch answer, shared with its answers
	 * one at a time (the first thread composes into them). */
	struct vg_report_sym_table *table;
	struct vg_sym_result *res;
	/* Stdout is a file or pipe whose stdio buffer the caller set: a
	 * batch's answers are gathered in input order, OUT_CHUNK bytes at a
	 * time, and written past stdio (out_direct). */
	bool direct_out;
	size_t n_bad_input;                /* lines that were not addresses */
	/* The second thread's answers are composed here; its scratch answer
	 * is its own. */
	struct vg_report_sym_table table2;
	struct vg_sym_result *res2;
	/* The largest batch's keys (and the sort's scratch), spans and
	 * output chunk: room lines' worth, in room_mem (room_bytes, in
	 * huge pages when room_huge).  NULL until the first batch. */
	struct vg_radix_item *keys;
	struct batch_span *spans;
	char *out;
	size_t room;
	void *room_mem;
	size_t room_bytes;
	bool room_huge;
	/* That thread: started at the first large batch and kept for the
	 * next (one started per batch began 1-4 ms late on a loaded
	 * machine, a tenth of a batch).  Each post of go hands it the next
	 * job of the ring (a batch's write is queued before the next
	 * batch's part); done says a part or gather is finished, written
	 * that a write is. */
	struct {
		pthread_t thread;
		bool started;
		sem_t go, done, written;
		struct batch_job jobs[2];
		unsigned head, tail;       /* pushed by this thread, taken by it */
	} worker;
	/* A batch's answers gathered whole in input order (whole_cap bytes,
	 * huge pages), written by the second thread while this one reads
	 * and looks up the next batch.  write_pending until this thread has
	 * seen it written; what the write could not take is left at
	 * whole[write_off, write_off + write_left) for stdio to fail on. */
	char *whole;
	size_t whole_cap;
	bool write_pending;
	size_t write_off, write_left;
};

/* p[0, n) answered to stdout in input order, after what stdio holds.  A
 * line that is not an address is answered with the error in its place
 * and counted in n_bad_input.  0, or the exit code of a failure that ends
 * the run (said already: target gone, out of memory); the answers before
 * the first line a failure left unanswered are out, or being written by
 * the second thread (sym_batch_flush). */
int sym_batch_answer(struct sym_batch *b, struct sym_pending *p, size_t n);

/* The answers still being written by the second thread are out (a
 * failed write is then in stdio's error flag: cli_output_failed).  Call
 * it before writing to stdout or stderr after a batch. */
void sym_batch_flush(struct sym_batch *b);

/* The same, only when that write is over already: never waits (before a
 * read of standard input that may wait, so that a failed write is seen
 * then). */
void sym_batch_reap(struct sym_batch *b);

/* The answers out (sym_batch_flush), the second thread stopped, the
 * engine's memory freed (b itself and the caller's parts are not). */
void sym_batch_free(struct sym_batch *b);

#endif
