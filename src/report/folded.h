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

#include "profile/stacks.h"
#include "util/error.h"

/* Write s (address or function trie; it is merged by function here) to
 * out.  per_thread: each stack starts with a "COMM-TID" frame, as
 * stackcollapse-perf.pl --tid writes it; otherwise threads are merged.
 * Lines are sorted.  0, -ENOMEM, or -EIO (or the write's errno) when out
 * reports an error. */
int vg_folded_write(FILE *out, const struct vg_stacks *s, bool per_thread,
		    struct vg_error *err);

#endif
