/* symtab.h - an address-sorted symbol table as the lookups by address
 * read it, wherever it lives: an image's, built from its ELF sections at
 * first use (symbols.c), or the copy the persistent symbol index keeps
 * (sym/symindex.c), so that both answer through one search and a run with
 * a valid index neither reads .symtab nor sorts it.
 *
 * Each record starts with three 64-bit fields: vaddr, size, and limit
 * (for an unsized symbol, the end of its section; vaddr + 1 when not in
 * one).  Records are in symbols.c's order: by address, equal addresses
 * bigger first, the shown alias last. */
#ifndef VG_ELF_SYMTAB_H
#define VG_ELF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bucket.h"

struct vg_symtab_head {
	uint64_t vaddr, size, limit;
};

struct vg_symtab {
	const void *recs;               /* n records, stride bytes apart */
	size_t stride, n;
	/* max_end[i]: the largest vaddr + size of the sized records
	 * 0..i (0 for none): how far back a containing symbol can start. */
	const uint64_t *max_end;
	/* Where a search by address starts; may be empty (bisection). */
	const struct vg_bucket *by_addr;
	/* NULL, or asked before a search reads records [first, end) and
	 * their max_end: false when they cannot be trusted (the persistent
	 * index checks a chunk's checksum at its first read), and the
	 * search then answers VG_SYMTAB_BAD. */
	bool (*vouch)(void *ctx, size_t first, size_t end);
	void *vouch_ctx;
};

/* What a search answers when vouch refused what it had to read. */
#define VG_SYMTAB_BAD (SIZE_MAX - 1)

/* The innermost symbol containing vaddr: the nearest sized one that
 * covers it, else an unsized label right before it in the same section
 * with no sized symbol in between.  Its index, SIZE_MAX for none, or
 * VG_SYMTAB_BAD. */
size_t vg_symtab_at(const struct vg_symtab *t, uint64_t vaddr);

/* The nearest symbol starting at or below vaddr, sized or not: its
 * index, SIZE_MAX for none, or VG_SYMTAB_BAD. */
size_t vg_symtab_before(const struct vg_symtab *t, uint64_t vaddr);

#endif
