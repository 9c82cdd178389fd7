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

#endif
