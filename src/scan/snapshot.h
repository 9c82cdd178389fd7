/* snapshot.h - the readable memory of a target, compressed on disk, for
 * values whose initial value is unknown: `vigil scan PID --snapshot FILE`,
 * then `--from FILE --changed` (and the other narrowing ops) compares the
 * live memory with it region by region, so vigil's own memory stays bounded
 * whatever the target's size.  zlib (deflate) per chunk; the format is in
 * docs/scan-formats.md.  A file that is a snapshot rather than a scan set
 * is recognised by its magic (vg_snapshot_is()). */
#ifndef VG_SCAN_SNAPSHOT_H
#define VG_SCAN_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "scan/scan.h"
#include "scan/scanset.h"
#include "target/maps.h"
#include "util/error.h"
#include "util/progress.h"

struct vg_snapshot_stats {
	uint64_t regions;
	uint64_t bytes;              /* captured */
	uint64_t bytes_compressed;   /* on disk */
	uint64_t regions_skipped;
	uint64_t bytes_skipped;
	bool interrupted;
	double seconds;
};

/* Capture the regions select picks.  Written atomically.  progress (may
 * be NULL) counts the bytes of the selected regions as they are written. */
int vg_snapshot_save(pid_t pid, const struct vg_maps *maps,
		     const struct vg_scan_select *select,
		     const struct vg_scan_identity *id, const char *path,
		     const volatile sig_atomic_t *stop, struct vg_progress *progress,
		     struct vg_snapshot_stats *st, struct vg_error *err);

/* true if path starts with the snapshot magic. */
bool vg_snapshot_is(const char *path);

/* Compare the live memory of pid with the snapshot at path: for each
 * captured region still mapped at the same range, every offset (aligned
 * to the type width when aligned) where vg_narrow_test(type, n, old, new)
 * holds becomes a match with its new value.  type must be numeric.
 * Regions gone or unreadable are counted in st.  id receives the
 * snapshot's identity (the caller checks it before trusting the result:
 * call with pid = 0 to read only the identity). */
int vg_snapshot_compare(const char *path, pid_t pid,
			const struct vg_maps *maps, enum vg_scan_type type,
			bool aligned, const struct vg_narrow *n,
			struct vg_scan_identity *id, struct vg_match_set *out,
			struct vg_scan_stats *st, struct vg_error *err);

#endif
