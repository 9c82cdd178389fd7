/* text.h - target-controlled text (paths, comm, symbol names) in the table
 * views: one line stays one fact whatever the target's names hold. */
#ifndef VG_REPORT_TEXT_H
#define VG_REPORT_TEXT_H

#include <stdbool.h>
#include <stdio.h>

/* Write s to out with control characters, backslashes and bytes outside
 * valid UTF-8 as octal escapes ("\012", "\134"), as the kernel writes
 * "\012" in /proc/PID/maps.  s may be NULL (nothing is written).  A write
 * error is left in ferror(out) for the caller's final check. */
void vg_text_put(FILE *out, const char *s);

/* A region's path: vg_text_put, plus " (deleted)" when deleted, and a live
 * name that itself ends in " (deleted)" written with its space as "\040",
 * so the two never look alike. */
void vg_text_put_path(FILE *out, const char *path, bool deleted);

#endif
