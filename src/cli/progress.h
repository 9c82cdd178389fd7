/* progress.h - the progress line of long work on a terminal.
 *
 * cli_progress returns p set up to print "# WHAT: 1.2 of 3.4 GiB (35%),
 * 0.8 GB/s" on stderr, rewritten in place at most four times a second, when
 * stderr is a terminal and not off (JSON output, or a terminal stdout the
 * line would cut into); else NULL, and the work runs silent (pipes, files,
 * scripts, tests).  cli_progress_done clears the
 * line if one was printed. */
#ifndef VG_CLI_PROGRESS_H
#define VG_CLI_PROGRESS_H

#include <stdbool.h>

#include "util/progress.h"

struct vg_progress *cli_progress(struct vg_progress *p, bool off, const char *what);
void cli_progress_done(struct vg_progress *p);

#endif
