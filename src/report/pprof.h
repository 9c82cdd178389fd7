/* pprof.h - the gzipped profile.proto that `go tool pprof`, Pyroscope,
 * Parca and most profilers read.
 *
 * Written from the address trie: one Mapping per image (a pseudo mapping
 * "[kernel.kallsyms]" / "[unknown]" for frames without one), one Location
 * per address whose Lines are the inline chain innermost first (pprof's
 * convention: the last Line is the function the address is in), one
 * Function per (name, file).  Sample types are ("samples","count") and,
 * when meta->sample_ns is known, ("cpu","nanoseconds"); each sample is
 * labelled with its thread ("tid" number, "thread" name).  Comments carry
 * vigil's version, the target and the lost/throttled counts. */
#ifndef VG_PPROF_H
#define VG_PPROF_H

#include <stdio.h>

#include "stacktrie/stacks.h"
#include "report/stack_format.h"
#include "util/error.h"

/* A vg_stack_writer: write the gzipped profile of s (an address trie, not
 * a function view) to out; o->meta may be NULL.  0, -ENOMEM, -EIO
 * (compression) or the write's errno. */
vg_stack_writer vg_pprof_write;

#endif
