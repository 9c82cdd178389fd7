/* maps.h - the report of `vigil maps`: every region of the process and,
 * per ELF image, its build-id, load bias and how the bias was derived.
 *
 * JSON (docs/json-schema/maps.json): the common header, maps_source,
 * region_count, images[] and regions[].  Table: a header line, one line
 * per region as /proc/PID/maps prints it (paths escaped, vg_text_put_path),
 * then one line per image. */
#ifndef VG_REPORT_MAPS_H
#define VG_REPORT_MAPS_H

#include <stdio.h>

#include "elf/image.h"
#include "target/maps.h"
#include "target/target.h"
#include "util/error.h"

/* Write the JSON document to out; method is how the maps were read
 * ("text", "procmap_query", ...).  The regions are streamed, one compact
 * line each, and the writing stops at the first failed write (the document
 * is then closed, and incomplete).  0; -ENOMEM (err filled, part of the
 * document may be written); -EIO when out has a write error, whose errno is
 * the stream's to report. */
int vg_report_maps_json(FILE *out, const struct vg_target *t, const struct vg_maps *maps,
			const struct vg_images *imgs, const char *method, struct vg_error *err);

/* Write the table to out.  0, or -EIO when out has a write error. */
int vg_report_maps_table(FILE *out, const struct vg_target *t, const struct vg_maps *maps,
			 const struct vg_images *imgs, const char *method);

#endif
