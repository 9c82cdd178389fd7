/* stack.h - `vigil stack` reports: the table a person reads top to bottom
 * (threads with identical stacks grouped) and the JSON document
 * (docs/json-schema/live_stack.json).  Frames are symbolized here, each
 * return address at ip - 1 (the call) unless the unwinder said exact,
 * through the same symbolizer `vigil sym` uses, so the frames are the
 * ones `vigil sym` gives for those addresses.
 *
 * Besides the frames, each thread's system call, what it waits for, the
 * chain of owners behind that (a cycle is a deadlock, shown first), the
 * line it blocked at (its first frame outside libc, ld.so and the vDSO:
 * the caller of pthread_mutex_lock, read, ...) and its kernel stack. */
#ifndef VG_REPORT_STACK_H
#define VG_REPORT_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "stack/capture.h"
#include "stack/facts.h"
#include "stack/waits.h"
#include "sym/symbolizer.h"
#include "target/target.h"

/* What is known of a thread besides its stack (stack/facts.h). */
struct vg_report_stack_thread {
	const struct vg_thread_stack *st;
	const struct vg_stack_facts *facts;  /* name, state, CPU, system call,
	                                      * kernel stack; NULL unknown */
	const struct vg_wait *wait;          /* NULL: not classified */
};

struct vg_report_stack {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	const struct vg_report_stack_thread *threads;
	size_t n;
	const char *const *notes;   /* the capture's, NULL-terminated or NULL */
	bool no_kernel;             /* --no-kernel */
	const struct vg_wait_graph *graph;  /* owner chains, deadlocks; may be NULL */
	uint64_t elapsed_ns;        /* the whole snapshot */
};

/* 0 or -EIO (a write failed). */
int vg_report_stack_table(FILE *out, const struct vg_report_stack *r);
/* NULL only when out of memory; call when the snapshot is over (the
 * process header re-checks the target). */
cJSON *vg_report_stack_json(const struct vg_report_stack *r);

#endif
