/* dwvarsym.h - which CU defines a file-scope variable, through the ELF
 * symbol of its name, for dwtypes' name lookup (see dwvarsym.c for when
 * the symbol table can answer and when it cannot). */
#ifndef VG_DWVARSYM_H
#define VG_DWVARSYM_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* The offsets of the CU DIEs, in CU order, into cus[0..max), that may
 * define the variable called name (qualified for C++: ns::g_x), when
 * symelf's .symtab proves it has exactly one definition, at *addr (an ELF
 * virtual address).  Returns how many CUs were stored; 0: no answer (no
 * or several symbols, or no CU found), the caller walks every CU.  The
 * caller must check that a returned CU defines name at *addr. */
int vg_dwvar_symbol_cus(Dwarf *dw, Elf *symelf, const char *name, uint64_t *addr,
			uint64_t *cus, size_t max);

#endif
