/* dwindex_priv.h - one CU's tables, private to the DWARF index: built by
 * dwscope.c (scopes and segments) and dwindex.c (line rows, lookups).  Not
 * part of the library's interface: dwindex.h is. */
#ifndef VG_SYM_DWINDEX_PRIV_H
#define VG_SYM_DWINDEX_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "sym/dwindex.h"
#include "sym/dwline.h"
#include "util/bucket.h"

#define NO_SCOPE UINT32_MAX

/* A CU is indexed once, by whichever thread claims it first: the lookup
 * that needs it, or the prefetch thread (vg_dwindex_prefetch). */
enum { CU_IDLE, CU_BUILDING, CU_DONE };
#define ROW_BLOCK 16
/* Deeper DIE nesting than this is not real code (hostile or corrupt). */
#define MAX_DIE_DEPTH 256

struct scope {
	const char *name;
	uint64_t entry;
	uint32_t parent;
	uint32_t call_file;     /* index into the CU's file table */
	uint32_t call_line;
	uint32_t call_column;
	bool linkage;
	bool inlined;
};

struct seg {
	uint64_t lo;
	uint32_t scope;         /* NO_SCOPE: a gap inside the CU */
};

/* The addresses of the rows are a separate array: the binary search then
 * touches 8 bytes per step, not 24 (it was half of the lookup's time on
 * libc, all of it cache misses). */
struct row {
	const char *file;
	uint32_t line;
	uint32_t column : 31;
	uint32_t end_sequence : 1;
};

struct cu {
	Dwarf_Die die;
	/* Split DWARF (-gsplit-dwarf): die is the split unit of the .dwo or
	 * .dwp libdw found; skel the skeleton unit in the main file, which
	 * holds the ranges, DW_AT_comp_dir and the line table. */
	Dwarf_Die skel;
	bool split;
	int state;              /* CU_IDLE, CU_BUILDING, CU_DONE (atomic) */
	/* Indexing ran out of memory: the tables are empty and every lookup
	 * in the CU fails with -ENOMEM rather than answer short. */
	bool failed;
	struct scope *scopes;
	size_t n_scopes;
	struct seg *segs;
	size_t n_segs;
	uint64_t *row_addr;
	/* row_addr of every ROW_BLOCK-th row: a search array 16 times
	 * smaller, which stays in cache, narrows the range first. */
	uint64_t *row_block;
	size_t n_blocks;
	struct row *rows;
	size_t n_rows;
	/* Absolute file names, by file-table index (composed lazily). */
	const char **files;
	size_t n_files;
	/* The file table: libdw's, or dwline.c's when it decoded the line
	 * program (then dw_files is NULL). */
	Dwarf_Files *dw_files;
	struct dwline_file *line_files;
	const char *comp_dir;
	/* Every call site's file name is composed (index_cu): a lookup
	 * then only reads files[], as lookups under the shared lock must. */
	bool calls_named;
	/* Composed names this CU allocated (freed with the index). */
	char **owned;
	size_t n_owned, cap_owned;
	/* Where the row and segment searches start, built once the CU is
	 * indexed (symindex.c builds the same over its file): a bisection
	 * of a 32,000-segment CU missed the cache at nearly every step.
	 * Empty (out of memory): the searches bisect. */
	struct vg_bucket rows_fast, segs_fast;
};

/* A name cache by DIE: inlined copies of one function share the abstract
 * origin, so its names are looked up once.  The key is the DIE's address
 * in its mapped section, not its offset: with dwz, an origin may sit in
 * the alternate file, whose offsets overlap the main file's. */
struct origin_name {
	uintptr_t off;          /* the DIE's address; 0: empty slot */
	const char *linkage, *name;
};

struct names {
	struct origin_name *slots;
	size_t n, cap;
};

/* One address range of a CU (the CU DIE's low/high pc or ranges). */
struct cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

/* For test_dwline: true makes every CU's line rows come from libdw
 * (dwarf_getsrclines), as before dwline.c; the test compares the two.
 * dwindex_lines_direct counts the CUs whose rows dwline.c gave. */
extern bool dwindex_lines_via_libdw;
extern size_t dwindex_lines_direct;

/* For the persistent index (symindex.c), which copies the tables out. */
/* Index every CU not yet indexed (lookups and a prefetch thread may
 * share the work).  0, or -ENOMEM when some CU could not be indexed. */
int dwindex_build_all(struct vg_dwindex *ix);
/* The i-th CU with code (i < vg_dwindex_cus), else NULL. */
struct cu *dwindex_cu(struct vg_dwindex *ix, size_t i);
/* Every CU range, sorted by lo. */
const struct cu_range *dwindex_ranges(const struct vg_dwindex *ix, size_t *n);
/* The absolute name of c's file-table entry idx (composed on first use),
 * or NULL. */
const char *dwindex_file_name(struct cu *c, uint32_t idx);

/* Fills c's scopes and segments from cudie: the scope tree of subprograms
 * and inlined subroutines, painted into disjoint segments (dwscope.c).
 * names caches abstract-origin names for one libdw handle; *corrupt is
 * set (atomically: lookups read it meanwhile) when libdw refused part of
 * the DIE tree.  0, or -ENOMEM with c half-built. */
int dwindex_build_scopes(struct cu *c, struct names *names, Dwarf_Die *cudie,
			 bool *corrupt);

/* The answer of a lookup, the same in both indexes (dwindex.c's and
 * symindex.c's copy of it): empty to start with... */
static inline void dw_result_clear(struct vg_dw_result *res)
{
	res->n_frames = 0;
	res->truncated = false;
	res->file = NULL;
	res->line = res->column = 0;
	res->has_line = false;
}

/* ...then a frame per scope, innermost first, the first at the address's
 * line: the new frame, or NULL with truncated set when res is full... */
static inline struct vg_dw_frame *dw_result_push(struct vg_dw_result *res, const char *name,
						 bool linkage, bool inlined, uint64_t entry)
{
	struct vg_dw_frame *f;

	if (res->n_frames == VG_DW_MAX_FRAMES) {
		res->truncated = true;
		return NULL;
	}
	f = &res->frames[res->n_frames];
	f->name = name;
	f->name_is_linkage = linkage;
	f->inlined = inlined;
	f->entry = entry;
	if (res->n_frames == 0) {
		f->file = res->file;
		f->line = res->line;
		f->column = res->column;
	}
	res->n_frames++;
	return f;
}

/* ...and after an inlined scope's frame, the frame that encloses it
 * stands at its call site: that frame, for the caller to set its
 * location, or NULL when res is full. */
static inline struct vg_dw_frame *dw_result_next(struct vg_dw_result *res)
{
	return res->n_frames < VG_DW_MAX_FRAMES ? &res->frames[res->n_frames] : NULL;
}

#endif
