/* read.h - the report of `vigil read`: bytes of a live process as an
 * xxd-style dump or typed values (table), or one JSON document
 * (docs/json-schema/read.json), with the region they lie in and the
 * source that served each piece.
 *
 * The table is written in parts because the dump streams: a header line,
 * the dump of each chunk as it is read (or the values), then a footer
 * that says how many bytes came and from where.  Nothing is padded: a
 * read that stopped shows what it got. */
#ifndef VG_REPORT_READ_H
#define VG_REPORT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "elf/addrspec.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "util/error.h"

/* A type of --as: elements are little-endian. */
enum vg_read_kind { VG_READ_UNSIGNED, VG_READ_SIGNED, VG_READ_FLOAT, VG_READ_PTR, VG_READ_STR };

struct vg_read_type {
	const char *name;            /* "u32": what --as takes */
	size_t size;                 /* of one element; str: the default length */
	enum vg_read_kind kind;
};

/* The type called name (u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 ptr str),
 * or NULL.  Borrowed from a static table. */
const struct vg_read_type *vg_read_type_find(const char *name);

/* What one read produced, accumulated over its chunks. */
struct vg_read_outcome {
	uint64_t addr;
	uint64_t length;             /* asked for */
	uint64_t bytes_read;         /* from addr on, contiguous */
	struct vg_mem_segment seg[VG_MEM_MAX_SEGMENTS];
	size_t n_seg;
	struct vg_error err;         /* why the read stopped, if it did */
};

/* Join the segments of one chunk's result to o: adjacent pieces from one
 * source become one; past VG_MEM_MAX_SEGMENTS the last one grows. */
void vg_read_outcome_add(struct vg_read_outcome *o, const struct vg_mem_result *res);

/* Everything a report of one read shows; all borrowed. */
struct vg_read_view {
	const struct vg_read_outcome *o;
	const struct vg_addr *addr;        /* how ADDR resolved (symbol, image) */
	const struct vg_region *region;    /* the region o->addr lies in */
	const struct vg_maps *maps;        /* where a ptr value points */
	const struct vg_read_type *as;     /* --as, or NULL */
	const unsigned char *bytes;        /* o->bytes_read bytes (JSON and --as) */
	const char *bin_match;             /* how --bin matched, or NULL */
	const char *expression;            /* g_config.port (sym/dwname.h), or NULL */
	bool mapping_stable;               /* every region spanned unchanged after */
};

/* The JSON document (the common header from t: build it after the read).
 * Caller owns it; NULL only on allocation failure. */
cJSON *vg_report_read_json(const struct vg_target *t, const struct vg_read_view *v);

/* Table parts.  Each returns 0, or -EIO when out has a write error (its
 * errno is the stream's to report). */
/* "# pid P: N bytes at 0x... (EXPRESSION) in PERMS START-END PATH", the
 * expression where DWARF names it, else SYMBOL+OFF. */
int vg_report_read_header(FILE *out, const struct vg_target *t, const struct vg_read_view *v);
/* xxd-style lines of n bytes at addr, 16 a line. */
int vg_report_read_dump(FILE *out, uint64_t addr, const unsigned char *buf, size_t n);
/* v->as decoded, one line per element (v->as must be set). */
int vg_report_read_values(FILE *out, const struct vg_read_view *v);
/* "# N of M bytes via SOURCE", and one line per segment when mixed. */
int vg_report_read_footer(FILE *out, const struct vg_read_outcome *o);

#endif
