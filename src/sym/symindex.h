/* symindex.h - the DWARF index of one debug file as one flat, mmap-able
 * file: what dwindex builds per CU (address ranges -> CU, segments ->
 * innermost scope, scopes with their call sites, line rows), every string
 * stored once.  Written by the first run that needs it (symcache.c decides
 * where); read by every later run without touching the DWARF.
 *
 * The file is untrusted input (another version of vigil, a disk error, a
 * hand edit): the magic, version, the key it was built for, CRC-32Cs
 * covering every byte an answer depends on and every section's bounds are
 * checked before a lookup uses them (a CU's bucket tables, each 1 KiB of
 * the CUs' tables, the symbol table and the strings when first needed,
 * so that a first answer does not read the whole file); every reference
 * between tables where a lookup follows it.  The order the searches rely on is the checksum's: out of
 * order (a file whose checksum passes by design), a search answers
 * wrong but never reads out of bounds.  Answers from it are byte-identical to
 * vg_dwindex_lookup's on the index it was written from.
 *
 * Layout (all little-endian, x86-64 only, sections 8-byte aligned):
 *   header    struct sx_header (symindex.c): magic "VIGILSX\0", version,
 *             header size, file size, CRC-32C (of the header with this
 *             field zero, the ranges, cus and str_crc), the key, then
 *             (offset, size) of each section, the symbol table's tag and
 *             bucket parameters, and the origin (version 5): where the
 *             DWARF came from and which file it was;
 *   ranges    {lo, hi, cu}          sorted by lo: address -> CU;
 *   cus       per CU: first and count in scopes, segs, rows and
 *             cu_buckets, and the CRC-32C of its slice of cu_buckets;
 *   scopes    {entry, name, parent, call file/line/column, linkage,
 *             inlined}; parent is an index within the CU's scopes;
 *   segs      {lo, scope}           sorted per CU;
 *   row_addr  u64 per row           sorted per CU;
 *   rows      {file, line, column | end_sequence << 31};
 *   cu_buckets per CU, the bucket tables (util/bucket.h) over its
 *             row_addr and its segs' lo, where their searches start
 *             (version 6: built by the writer, not by each run);
 *   strings   NUL-terminated; names and files are offsets into it
 *             (UINT32_MAX: none);
 *   str_crc   CRC-32C of each 1 KiB of strings;
 *   syms      the ELF symbol table the symbolizer reads for the keyed
 *             file, when the caller kept one (version 3): {vaddr, size,
 *             limit, name, dyn, ifunc} in elf/symbols.c's order, so that
 *             a run with the index neither reads .symtab nor sorts it;
 *   sym_max_end  u64 per symbol: the running maximum of sized ends;
 *   sym_buckets  the bucket table (util/bucket.h) over syms' addresses,
 *             its first key and width in the header, with the CRC-32C
 *             of the three (checked at the first symbol lookup);
 *   tab_crc   CRC-32C of each 1 KiB of the span from scopes to the end
 *             of rows (version 6), each checked when a search first
 *             reads in it. */
#ifndef VG_SYM_SYMINDEX_H
#define VG_SYM_SYMINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "sym/dwindex.h"
#include "util/error.h"

#define VG_SYMINDEX_VERSION 6
#define VG_SYMINDEX_KEY_MAX 255

struct vg_symindex;

/* The file the DWARF was read from when the index was written: the
 * caller's tag of where it came from (the symbolizer's enum
 * vg_debug_source; 0: not recorded) and its identity then (st_dev,
 * st_ino, size, mtime).  A later run that finds the same file in the
 * same place knows what opening it would give (sym/symbolizer.c). */
struct vg_symindex_origin {
	uint32_t source;
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/* Serialise ix (every CU indexed first, dwindex_build_all) for key into a
 * malloc'd buffer, with sym_img's symbol table tagged sym_of when both
 * are given (sym_of != 0: which of the keyed file's roles the table
 * played, for vg_symindex_symbol_at to compare) and origin when given
 * (NULL or source 0: none recorded).  0, -ENOMEM, or -EINVAL when the
 * index is not worth keeping: libdw refused part of the DWARF, or split
 * units were not found (a later run may find them), or the tables
 * overflow 32-bit references. */
int vg_symindex_serialize(struct vg_dwindex *ix, const struct vg_image *sym_img,
			  uint32_t sym_of, const struct vg_symindex_origin *origin,
			  const char *key, uint8_t **buf, size_t *len);

enum vg_symindex_flags {
	/* For the fuzz harness only: every check but the checksums, so that
	 * mutations reach the checks behind them. */
	VG_SYMINDEX_NO_CRC = 1u << 0,
	/* vg_symindex_prefetch_records works whatever the tables' size
	 * (else only when they outgrow the L2 cache): for the fuzz harness,
	 * whose inputs are small. */
	VG_SYMINDEX_PREFETCH_RECORDS = 1u << 1,
};

/* Check data (len bytes, 8-byte aligned) as an index built for key and
 * return a reader over it (data is borrowed: keep it mapped while the
 * reader lives).  What every lookup reads is checked here (header, its
 * checksum over the ranges and the CU table, section bounds, the ranges'
 * order); each CU's tables and each 1 KiB of strings when a lookup first
 * needs them (vg_symindex_lookup).  0, or -EINVAL with a sentence in err
 * saying what is wrong (truncated, checksum, foreign key, an offset out
 * of bounds), or -ENOMEM. */
int vg_symindex_open_mem(const void *data, size_t len, const char *key,
			 unsigned flags, struct vg_symindex **out,
			 struct vg_error *err);
struct vg_symindex *vg_symindex_free(struct vg_symindex *x);

/* Every checksum of the index file at data (len bytes, 8-byte aligned)
 * recomputed in place from what it holds, when its header and section
 * table are sound (the rest may be anything): for tests, so that an
 * edited file passes its checksums and the checks behind them are
 * reached (fuzz_symindex).  The writer seals with the same code.  0, or
 * -EINVAL with a sentence in err. */
int vg_symindex_reseal(void *data, size_t len, struct vg_error *err);

/* A hint: the lines of the index that a lookup of addr will read first
 * (its CU's line rows and scope segments, within their buckets) are
 * fetched into the cache, so that a batch that calls this some lookups
 * ahead finds them there instead of missing at every step of the
 * searches (half of an indexed batch's cycles).  Reads only what the
 * CU's check has validated; thread-safe, as vg_symindex_lookup. */
void vg_symindex_prefetch(const struct vg_symindex *x, uint64_t addr);

/* The second step of that hint, a lookup or so after the first: the
 * scope record and line row of addr, found through the lines the first
 * step fetched (the scope record was the miss that remained: 100,000
 * lookups of the generated binary took 11% less CPU time). */
void vg_symindex_prefetch_records(struct vg_symindex *x, uint64_t addr);

/* As vg_dwindex_lookup: 0 with *res filled (strings point into data), or
 * -ENOENT when no CU covers addr, or -EBADMSG when the tables or strings
 * it needed fail their checks (*res is then not an answer: the file is
 * bad, rebuild it).  Thread-safe: what it checks at first use is
 * checked once, whichever thread needs it first. */
int vg_symindex_lookup(struct vg_symindex *x, uint64_t addr,
		       struct vg_dw_result *res);

/* Does x keep a symbol table tagged of (nonzero)? */
bool vg_symindex_has_symbols(const struct vg_symindex *x, uint32_t of);

/* The origin x was written with (source 0: none recorded). */
void vg_symindex_origin(const struct vg_symindex *x, struct vg_symindex_origin *o);

/* A malloc'd copy of the index file data (len bytes, one that
 * vg_symindex_open_mem accepted) with its origin set to o and its header
 * checksum redone: for a debug file found again as another inode, whose
 * DWARF is the same (the key is its build-id).  0 or -ENOMEM. */
int vg_symindex_restamp(const void *data, size_t len, const struct vg_symindex_origin *o,
			uint8_t **out);

/* As vg_image_symbol_at and vg_image_symbol_before on the image the kept
 * table was written from (same answers, the name pointing into data): 0,
 * -ENOENT (no such symbol), -ENODATA (no table tagged of kept), or
 * -EBADMSG (the table or a name failed its checks: rebuild the file).
 * Thread-safe, as vg_symindex_lookup. */
int vg_symindex_symbol_at(struct vg_symindex *x, uint32_t of, uint64_t vaddr,
			  struct vg_symbol *sym);
int vg_symindex_symbol_before(struct vg_symindex *x, uint32_t of, uint64_t vaddr,
			      struct vg_symbol *sym);

#endif
