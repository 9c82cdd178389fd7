/* watch.h - the report of `vigil watch`: JSON document and table of a
 * stopped (disarmed) watch session. */
#ifndef VG_REPORT_WATCH_H
#define VG_REPORT_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "target/target.h"
#include "util/error.h"
#include "watch/watch.h"

/* What the document says besides the session: the target (header), the
 * options the watch ran with, and where symbols came from (--bin). */
struct vg_report_watch_meta {
	const struct vg_target *target;
	const struct vg_watch_options *opt;
	const char *bin_match;         /* NULL: the running executable */
	bool has_load_bias;            /* the main executable's bias is known */
	uint64_t load_bias;
};

/* The JSON document (the common header is built here: call it once the
 * watch is over).  Caller owns it; NULL with err filled on allocation
 * failure. */
cJSON *vg_report_watch_json(const struct vg_watch_session *s, const struct vg_report_watch_meta *m,
			    struct vg_error *err);

/* The table: one line per watch, writer site, write; coverage and what
 * was lost at the end.  0, or -EIO when out failed. */
int vg_report_watch_table(FILE *out, const struct vg_watch_session *s, const struct vg_target *t);

#endif
