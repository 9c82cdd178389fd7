/* inflate.h - an ELF file's compressed debug sections, decompressed on
 * two threads before libdw would decompress them on one.
 *
 * dwarf_begin_elf inflates every SHF_COMPRESSED .debug_* section in turn
 * as it opens the file (Debian's debug packages compress them: libc6-dbg's
 * 3.7 MB inflate to 9.9 MB, a quarter of a cold 100,000-address batch's
 * CPU time, on one core while the other waited).  Called first, this
 * inflates the sections libdw reads, split by size between the calling
 * thread and a helper (on the calling thread alone when there is one
 * CPU, or too little to share); libdw then finds them decompressed.
 * Each thread works on its own sections only: libelf's per-section
 * state (the headers are loaded before the helper starts), zlib and
 * malloc.  A section that fails stays compressed, and dwarf_begin_elf
 * reports it as it would have. */
#ifndef VG_ELF_INFLATE_H
#define VG_ELF_INFLATE_H

#include <libelf.h>

void vg_elf_inflate_debug(Elf *elf);

#endif
