/* inflate.h - libdw's handle on an ELF file whose debug sections are
 * compressed, decompressed fast first.
 *
 * dwarf_begin_elf inflates every SHF_COMPRESSED .debug_* section in turn
 * as it opens the file (Debian's debug packages compress them: libc6-dbg's
 * 3.7 MB inflate to 10 MB), with zlib, into memory malloc returns in
 * 4 KiB pages.  On a VM that shadows the guest's page tables, the first
 * write to each page costs ~12 us: 2,400 of them for libc.  Together that
 * was 70 ms on one core, a third of a cold 100,000-address batch.
 *
 * vg_dwarf_begin builds a copy of the file in memory instead, the
 * compressed sections decompressed (libdeflate, the largest on a second
 * thread), in one buffer in 2 MiB pages
 * (util/hugebuf.h), and opens that with elf_memory and dwarf_begin_elf:
 * 70 -> 20-40 ms for libc6-dbg's sections, the largest (.debug_info, on
 * the critical path) 42 -> ~15 ms.
 *
 * The copy holds only what libdw reads (the .debug_* sections, the dwz
 * link, the section names): every other section keeps its header, as
 * NOBITS.  Each byte of the file is copied or decompressed once at most,
 * every step of the layout is checked for overflow, and a copy over
 * 8 GiB is not made: the file is untrusted input.
 *
 * The copy has no file behind it, so libdw cannot look next to the file
 * for what a relative path names.  A file that may need that keeps the
 * slower way (libelf inflating in place, the sections split between two
 * threads): a .gnu_debugaltlink (dwz) that is not an absolute path, and
 * skeleton units (split DWARF: the .dwo may lie next to the file).  So
 * does a file whose sections are not zlib-compressed, are not worth it
 * (under 256 KiB compressed), or do not decompress to the size their
 * header says: dwarf_begin_elf then reports on it as it always did. */
#ifndef VG_ELF_INFLATE_H
#define VG_ELF_INFLATE_H

#include <stddef.h>

#include <elfutils/libdw.h>
#include <libelf.h>

/* The in-memory copy a Dwarf reads; freed after its dwarf_end. */
struct vg_inflated;

/* dwarf_begin_elf(elf, DWARF_C_READ) with its compressed debug sections
 * decompressed first, as above.  *keep: the copy the Dwarf reads (NULL
 * when it reads elf itself), to free with vg_inflated_free once the
 * Dwarf has ended.  NULL (and *keep NULL) where dwarf_begin_elf fails;
 * dwarf_errmsg(-1) says why. */
Dwarf *vg_dwarf_begin(Elf *elf, struct vg_inflated **keep);

/* The copy of elf as above, its compressed sections decompressed, whatever
 * their total (vg_dwarf_begin asks for at least 256 KiB of them); 0, or
 * -ENOTSUP when elf is one of the files above that keep the slower way,
 * -EINVAL when a section does not decompress, -ENOMEM.  For the fuzz
 * harness and vg_dwarf_begin. */
int vg_inflate_copy(Elf *elf, size_t min_compressed, struct vg_inflated **out);

/* The slower way: elf's compressed debug sections (those libdw reads)
 * inflated in place by libelf, split by size between the calling thread
 * and a helper (the calling thread alone with one CPU, or under 256 KiB
 * compressed).  Each thread works on its own sections only (the headers
 * are loaded before the helper starts).  A section that fails stays
 * compressed, and dwarf_begin_elf reports it as it would have. */
void vg_elf_inflate_debug(Elf *elf);

/* The copy's ELF handle (valid until vg_inflated_free). */
Elf *vg_inflated_elf(const struct vg_inflated *x);

struct vg_inflated *vg_inflated_free(struct vg_inflated *x);

#endif
