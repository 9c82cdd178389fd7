/* scanset.h - scan sets on disk: the result of a scan, to be narrowed by a
 * later `vigil scan --from FILE`.
 *
 * Versioned, documented format (docs/scan-formats.md): a header with magic,
 * version, the target's identity (PID + start time + comm), the type and
 * the original VALUE text, then the matches with delta-encoded addresses
 * (LEB128) and their values, so that millions of matches stay small.  A
 * truncated or corrupt file is refused, never half-loaded. */
#ifndef VG_SCAN_SCANSET_H
#define VG_SCAN_SCANSET_H

#include <stdint.h>
#include <sys/types.h>

#include "scan/scan.h"
#include "util/error.h"

struct vg_scan_identity {
	pid_t pid;
	uint64_t start_time;     /* /proc/PID/stat field 22 (clock ticks) */
	char comm[17];
};

/* What a file holds besides the matches. */
struct vg_scanset_meta {
	struct vg_scan_identity id;
	enum vg_scan_type type;
	char value_text[256];    /* the VALUE of the first scan ("" for a
				    snapshot-derived set); needed to re-match
				    str/bytes patterns */
	uint64_t created_ns;     /* CLOCK_REALTIME when written */
	uint32_t generation;     /* 0 first scan, +1 per narrowing */
};

/* Write atomically and 0600 (util/outfile.h: only a regular file of the
 * user is replaced).  -errno with a sentence. */
int vg_scanset_save(const char *path, const struct vg_scanset_meta *meta,
		    const struct vg_match_set *set, struct vg_error *err);
/* -ENOENT, -EINVAL "not a vigil scan set" / "truncated" / "corrupt",
 * -EPROTO "version N is not supported".  set is initialised here. */
int vg_scanset_load(const char *path, struct vg_scanset_meta *meta,
		    struct vg_match_set *set, struct vg_error *err);

#endif
