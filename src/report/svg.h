/* svg.h - a self-contained interactive flame graph.
 *
 * One SVG file, no external resource: the function view of the trie with
 * threads merged, root ("all") at the bottom, each frame a <g> with a
 * <rect>, a label cut to fit, and a <title> (function, file, samples,
 * share).  An embedded script shows the details of the frame under the
 * mouse, zooms into a frame on click (its ancestors stay, greyed), and
 * highlights the frames matching a search box (a regular expression, or a
 * substring if it is not one) with the share they cover.  Inlined frames
 * are blue-green and labelled "[inlined]", kernel frames orange; the rest
 * use FlameGraph's warm palette, a color per name.  Names are escaped and
 * invalid UTF-8 is written \xNN, so the file is well-formed XML whatever
 * the target's symbols hold. */
#ifndef VG_SVG_H
#define VG_SVG_H

#include <stdio.h>

#include "stacktrie/stacks.h"
#include "report/stack_format.h"
#include "util/error.h"

/* A vg_stack_writer: write the flame graph of s to out; o->meta (may be
 * NULL) gives the title.  0, -ENOMEM or the write's errno. */
vg_stack_writer vg_svg_write;

#endif
