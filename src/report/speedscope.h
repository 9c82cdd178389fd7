/* speedscope.h - speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * One "sampled" profile per thread, named "COMM (tid N)", over one shared
 * frame table {name, file}: the function view of the trie, so a function
 * is one frame wherever it was sampled.  Inlined frames are named
 * "NAME [inlined]", kernel frames "NAME [kernel]" (the format has no field
 * for either).  samples[] are frame indices root first, weights[] their
 * sample counts, or nanoseconds (unit "nanoseconds") when meta->sample_ns
 * is known; endValue is the sum of the weights. */
#ifndef VG_SPEEDSCOPE_H
#define VG_SPEEDSCOPE_H

#include <stdio.h>

#include "stacktrie/stacks.h"
#include "report/stack_format.h"
#include "util/error.h"

#define VG_SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A vg_stack_writer: write s as one speedscope JSON document to out;
 * o->meta may be NULL.  0, -ENOMEM or the write's errno. */
vg_stack_writer vg_speedscope_write;

#endif
