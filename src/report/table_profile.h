/* table_profile.h - vigil profile's default view: the top functions.
 *
 * Two sections, "by self" and "by total", each one line per function:
 *
 *   self  70.00%      70  total  70.00%      70  hot (inlined)
 *
 * self = samples where the function is the leaf, total = samples where it
 * is anywhere on the stack (once per sample under recursion); percentages
 * are of all samples.  When stacks were cut before their outermost frame
 * (meta->stacks_cut), a second header line says how many and why: the
 * callers of a cut stack are missing from every total.  Inlined functions
 * say "(inlined)", kernel ones
 * "[kernel]".  Control characters in names are written \ooo, so one line
 * stays one function. */
#ifndef VG_TABLE_PROFILE_H
#define VG_TABLE_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "stacktrie/stacks.h"
#include "report/stack_format.h"
#include "util/error.h"

/* A vg_stack_writer: write the header line and the o->top functions of
 * each section (0: all); o->meta may be NULL.  0, -ENOMEM, or the write
 * error. */
vg_stack_writer vg_table_profile_write;

#endif
