/* folded.h - collapsed stacks, the input format of FlameGraph
 * (flamegraph.pl) and one that speedscope imports.
 *
 * One line per distinct stack, root first, frames separated by ';', then a
 * space and the sample count: "main;work;hot_[i] 70".  Frame annotations
 * are FlameGraph's: "_[i]" an inlined frame, "_[k]" a kernel frame
 * (flamegraph.pl colors them and strips the suffix from the label). */
#ifndef VG_FOLDED_H
#define VG_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "stacktrie/stacks.h"
#include "report/stack_format.h"
#include "util/error.h"

/* A vg_stack_writer: write s (address or function trie; it is merged by
 * function here) to out.  o->per_thread: each stack starts with a
 * "COMM-TID" frame, as stackcollapse-perf.pl --tid writes it; otherwise
 * threads are merged.  Lines are sorted.  0, -ENOMEM, or -EIO (or the
 * write's errno) when out reports an error. */
vg_stack_writer vg_folded_write;

#endif
