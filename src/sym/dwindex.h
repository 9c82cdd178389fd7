/* dwindex.h - the lookup index of one DWARF file: address -> inline chain
 * and file:line:column, by binary search.
 *
 * Built once per debug file, lazily per compilation unit: the first lookup
 * in a CU flattens its scope tree (DW_TAG_subprogram and every
 * DW_TAG_inlined_subroutine, with their ranges) into sorted, disjoint
 * address segments that each name their innermost scope, and copies its
 * line table into compact rows.  libdw walks DIE scopes on every
 * dwarf_getscopes call; this walks them once per CU.
 *
 * Lookups are not thread-safe while CUs are left to index: the
 * symbolizer serializes them (symbolizer.h); the optional prefetch
 * thread is synchronized per CU.  Once vg_dwindex_complete, they are. */
#ifndef VG_DWINDEX_H
#define VG_DWINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "util/error.h"

#define VG_DW_MAX_FRAMES 64

struct vg_dw_frame {
	/* Linkage name when the DIE has one (mangled; demangle for display),
	 * else DW_AT_name; NULL when the scope has neither. */
	const char *name;
	bool name_is_linkage;
	const char *file;     /* NULL: unknown */
	uint32_t line;        /* 0: unknown */
	uint32_t column;      /* 0: unknown */
	bool inlined;         /* an inlined_subroutine, not the subprogram */
	uint64_t entry;       /* static address of the scope's entry (low pc) */
};

struct vg_dw_result {
	/* frames[0] is the innermost scope: its file:line:column is the line
	 * row of the address; frames[i + 1]'s is the call site of frames[i]. */
	struct vg_dw_frame frames[VG_DW_MAX_FRAMES];
	size_t n_frames;      /* 0: no scope covers the address */
	bool truncated;       /* deeper than VG_DW_MAX_FRAMES */
	/* The line row of the address even when no scope covers it
	 * (padding between functions): */
	const char *file;
	uint32_t line, column;
	bool has_line;
};

struct vg_dwindex;

/* dwarf is borrowed and must outlive the index. */
int vg_dwindex_new(Dwarf *dwarf, struct vg_dwindex **out, struct vg_error *err);
struct vg_dwindex *vg_dwindex_free(struct vg_dwindex *ix);

/* Index every CU in a background thread, from the last down, through dwarf:
 * a second Dwarf handle of the same file (libdw handles are not
 * thread-safe), begun by the caller on the ELF handle of the first, whose
 * sections libdw has decompressed in place already, so that it costs
 * little and the sections are inflated once.  The handle must outlive the
 * index (the CUs the thread built point into it).  Lookups index a CU
 * themselves when the thread has not reached it, and when it is building
 * it index the one below meanwhile; each CU is indexed once.  For batch
 * symbolizing, where all CUs will be needed: the two halves of the build
 * run on two cores.
 * vg_dwindex_free stops and joins the thread.  -EINVAL if already
 * running or dwarf is NULL. */
int vg_dwindex_prefetch(struct vg_dwindex *ix, Dwarf *dwarf);

/* Stop the prefetch thread after the CU it is indexing and join it (the
 * CUs it indexed stay); lookups and dwindex_build_all index the rest.
 * Before a fork: the child has no second thread.  No-op if not running. */
void vg_dwindex_stop_prefetch(struct vg_dwindex *ix);

/* Look up a static address.  0 with *res filled (strings borrowed from the
 * Dwarf and the index, valid until both are freed), -ENOENT when no CU
 * covers addr (res->n_frames = 0, has_line false). */
int vg_dwindex_lookup(struct vg_dwindex *ix, uint64_t addr,
		      struct vg_dw_result *res);

/* A hint: the lines of the index a lookup of addr will search first
 * (its CU's rows and segments within their buckets) fetched into the
 * cache, for a batch that calls this a few lookups ahead.  Nothing for
 * a CU not indexed yet.  Reads only tables published as indexed: safe
 * beside lookups and the prefetch thread. */
void vg_dwindex_prefetch_lookup(struct vg_dwindex *ix, uint64_t addr);

/* How many CUs have code; *built_by_lookups (if non-NULL): how many of
 * them lookups had to index themselves so far. */
size_t vg_dwindex_cus(const struct vg_dwindex *ix, size_t *built_by_lookups);

/* Is every CU indexed (by lookups or the prefetch thread)?  From then
 * on vg_dwindex_lookup reads the tables and writes nothing, touches no
 * libdw handle, and may run on several threads at once (the symbolizer
 * then takes its lock shared: a cold batch's lookups on both cores once
 * the prefetch thread is done); vg_dwindex_corrupt is final too. */
bool vg_dwindex_complete(const struct vg_dwindex *ix);

/* Did libdw refuse part of the DWARF (a unit, a DIE, nesting deeper than
 * real code)?  Answers may then lack frames; lookups so far decide it, as
 * CUs are indexed lazily. */
bool vg_dwindex_corrupt(const struct vg_dwindex *ix);


/* Skeleton units (-gsplit-dwarf) whose split unit libdw did not find:
 * no .dwo at DW_AT_comp_dir/DW_AT_dwo_name (nor next to the file), or a
 * .dwp package, which libdw reads only from elfutils 0.191.  Their lines
 * still come from the skeleton; functions and inline frames do not. */
size_t vg_dwindex_missing_dwo(const struct vg_dwindex *ix);

#endif
