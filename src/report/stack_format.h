/* stack_format.h - every output of a set of stacks (struct vg_stacks,
 * stacktrie/stacks.h) as one table of {format, writer}.
 *
 * `vigil profile --format NAME` and `vigil probe --stacks --format NAME`
 * look NAME up here: every command that produces stacks writes them
 * through the same rows, so a format added here is one each gets.  Each writer has
 * the signature below and its own header (folded.h, pprof.h, speedscope.h,
 * svg.h, table_profile.h) that says what the format is. */
#ifndef VG_STACK_FORMAT_H
#define VG_STACK_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stacktrie/stacks.h"
#include "util/error.h"

/* What a writer may be told besides the stacks; each uses what it needs.
 * A NULL pointer to it means all zero. */
struct vg_stack_write_opts {
	const struct vg_stacks_meta *meta;  /* event, duration, losses; may be NULL */
	size_t top;                         /* table: functions per section (0: all) */
	bool per_thread;                    /* folded: each stack under "COMM-TID" */
};

/* Write s to out.  0, -ENOMEM, or the write's negative errno (-EIO when
 * it has none), with err filled. */
typedef int vg_stack_writer(FILE *out, const struct vg_stacks *s,
			    const struct vg_stack_write_opts *o, struct vg_error *err);

struct vg_stack_format {
	const char *name;          /* what --format takes: "folded" */
	bool binary;               /* not for a terminal (pprof: gzip) */
	vg_stack_writer *write;
};

/* table, folded, pprof, speedscope, svg; ended by a row with NULL name. */
extern const struct vg_stack_format vg_stack_formats[];

/* The row named name, or NULL. */
const struct vg_stack_format *vg_stack_format_find(const char *name);

#endif
