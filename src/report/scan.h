/* scan.h - the report of `vigil scan`: the matches of a first scan or a
 * narrowing (from a scan set or a snapshot), a snapshot taken, and the
 * pointer chains to an address; each as a JSON document
 * (docs/json-schema/live_scan.json) and as a table.
 *
 * Every match and chain names a form `vigil watch` takes, so the hunt goes
 * on with one command.  The target's notes (warnings, exit during the
 * scan) are the CLI's to print, after the table. */
#ifndef VG_REPORT_SCAN_H
#define VG_REPORT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "elf/image.h"
#include "scan/pointers.h"
#include "scan/scan.h"
#include "scan/snapshot.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "util/error.h"

/* What the report says about a scan that found matches. */
struct vg_report_scan_meta {
	const char *mode;           /* "first", "narrow", "snapshot_compare" */
	enum vg_scan_type type;
	const char *value_text;     /* NULL for a narrowing without operand */
	const char *op;             /* NULL for a first scan */
	const char *operand;        /* NULL: none */
	bool aligned;
	uint32_t generation;
	const char *regions;        /* --regions; NULL for a narrowing */
	const char *from;           /* --from, or NULL */
	const char *saved_to;       /* --save, or NULL (the table says it
				       only when the scan was not interrupted) */
	size_t max_list;            /* matches listed at most */
};

/* The matches: set (values compared against pattern for str and bytes;
 * pattern NULL: none to re-match), located in maps and imgs.  Caller owns
 * the document; NULL with err filled on allocation failure. */
cJSON *vg_report_scan_matches_json(const struct vg_target *t, const struct vg_report_scan_meta *m,
				   const struct vg_match_set *set,
				   const struct vg_scan_value *pattern,
				   const struct vg_scan_stats *st, const struct vg_maps *maps,
				   const struct vg_images *imgs, struct vg_error *err);
/* The same as a table; 0, or -EIO when out has a write error. */
int vg_report_scan_matches_table(FILE *out, const struct vg_target *t,
				 const struct vg_report_scan_meta *m, const struct vg_match_set *set,
				 const struct vg_scan_value *pattern, const struct vg_scan_stats *st,
				 const struct vg_maps *maps, const struct vg_images *imgs);

/* A snapshot of the regions selected by regions (--regions), saved to
 * path. */
cJSON *vg_report_scan_snapshot_json(const struct vg_target *t, const char *regions,
				    const char *path, const struct vg_snapshot_stats *st,
				    struct vg_error *err);
int vg_report_scan_snapshot_table(FILE *out, const struct vg_target *t, const char *path,
				  const struct vg_snapshot_stats *st);

/* Pointer chains to o->target (target_input: the ADDR as given), the
 * first max_list of n listed.  Each chain's --follow form needs the
 * current address of its last slot, read through mem (a chain whose slot
 * cannot be read has none). */
struct vg_report_scan_ptr_meta {
	const char *target_input;
	const struct vg_ptr_opts *opts;
	size_t max_list;
};
cJSON *vg_report_scan_pointers_json(const struct vg_target *t,
				    const struct vg_report_scan_ptr_meta *m,
				    const struct vg_ptr_chain *chains, size_t n,
				    const struct vg_ptr_stats *st, struct vg_mem *mem,
				    struct vg_error *err);
int vg_report_scan_pointers_table(FILE *out, const struct vg_target *t,
				  const struct vg_report_scan_ptr_meta *m,
				  const struct vg_ptr_chain *chains, size_t n,
				  const struct vg_ptr_stats *st, struct vg_mem *mem);

#endif
