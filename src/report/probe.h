/* probe.h - the report of `vigil probe`: per location its calls (exact,
 * a lower bound, or neither, and why), its sites, and what was asked
 * for: calls per thread, latency, argument values, callers.  A JSON
 * document (docs/json-schema/live_probe.json) and a table, of a session
 * that ran and was disarmed (vg_probe_run returned). */
#ifndef VG_REPORT_PROBE_H
#define VG_REPORT_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "probe/probe.h"
#include "stacktrie/stacks.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "util/error.h"

/* The document (the common header is built here, from t).  top: values
 * and stacks listed per location at most; the callers' frames are
 * symbolized through sym.  Caller owns it; NULL with err filled on
 * allocation failure. */
cJSON *vg_report_probe_json(struct vg_probe_session *s, struct vg_symbolizer *sym,
			    const struct vg_target *t, size_t top, struct vg_error *err);

/* The table: a header with the stop and the count notes, one row per
 * location (and per site when it has several), then the latency,
 * argument and caller sections asked for.  0, or -EIO when out has a
 * write error. */
int vg_report_probe_table(FILE *out, struct vg_probe_session *s, struct vg_symbolizer *sym,
			  const struct vg_target *t, size_t top);

/* What the stack writers say about the stacks of vg_probe_stacks: the
 * event "calls" (one count per hit, no time), the duration, the hits
 * whose stack is missing (records lost with a full ring, stacks past the
 * distinct limit) and the stacks cut short with why ("stack_end 3"),
 * written into why[size]. */
void vg_report_probe_stacks_meta(struct vg_probe_session *s, const struct vg_target *t,
				 struct vg_stacks_meta *m, char *why, size_t size);

#endif
