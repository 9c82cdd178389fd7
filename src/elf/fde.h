/* fde.h - the functions an ELF file's .eh_frame describes, symbol or not.
 *
 * Every function a compiler emits gets an FDE (Frame Description Entry) in
 * .eh_frame, whose initial_location and address_range are exactly the
 * function's code: stripping a binary removes .symtab, never .eh_frame
 * (the runtime unwinder needs it).  So an address without a covering
 * symbol but inside an FDE is in a function whose symbol is gone, not in
 * padding.  The table is read from the section's bytes alone (CIE
 * augmentation "zR" pointer encodings; pcrel relative to the section's
 * address), with every length and pointer bounds-checked: the bytes come
 * from the target.  Pure: no I/O, never prints. */
#ifndef VG_FDE_H
#define VG_FDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_fde_range {
	uint64_t start, end;   /* [start, end), static addresses */
};

struct vg_fde_table {
	struct vg_fde_range *r;  /* sorted by start; overlaps kept */
	size_t n;
};

/* Parse .eh_frame bytes (size bytes, loaded at static address addr).
 * Entries that do not parse end the walk (what came before is kept);
 * FDEs of length 0 range are skipped.  Returns 0 with *t filled (n may be
 * 0), or -ENOMEM. */
int vg_fde_table_build(const uint8_t *data, size_t size, uint64_t addr,
		       struct vg_fde_table *t);
void vg_fde_table_release(struct vg_fde_table *t);

/* The FDE whose range contains vaddr (the innermost start at or below
 * it); false if none. */
bool vg_fde_table_find(const struct vg_fde_table *t, uint64_t vaddr,
		       struct vg_fde_range *out);

#endif
