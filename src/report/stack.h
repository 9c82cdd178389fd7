/* stack.h - `vigil stack` reports: the table a person reads top to bottom
 * (threads with identical stacks grouped) and the JSON document
 * (docs/json-schema/live_stack.json).  Frames are symbolized here, each
 * return address at ip - 1 (the call) unless the unwinder said exact,
 * through the same symbolizer `vigil sym` uses, so the frames are the
 * ones `vigil sym` gives for those addresses. */
#ifndef VG_REPORT_STACK_H
#define VG_REPORT_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "stack/capture.h"
#include "sym/symbolizer.h"
#include "target/target.h"

/* What is known of a thread besides its stack. */
struct vg_report_stack_thread {
	const struct vg_thread_stack *st;
	char name[64];              /* comm; "" unknown */
	char state;                 /* /proc/TID/stat field 3; 0 unknown */
	int64_t cpu_ns;             /* user + system CPU time, -1 unknown */
};

struct vg_report_stack {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	const struct vg_report_stack_thread *threads;
	size_t n;
	const char *const *notes;   /* the capture's, NULL-terminated or NULL */
	bool no_kernel;             /* --no-kernel */
	uint64_t elapsed_ns;        /* the whole snapshot */
};

/* 0 or -EIO (a write failed). */
int vg_report_stack_table(FILE *out, const struct vg_report_stack *r);
/* NULL only when out of memory; call when the snapshot is over (the
 * process header re-checks the target). */
cJSON *vg_report_stack_json(const struct vg_report_stack *r);

#endif
