/* demangle.h - C++ (Itanium) and Rust (legacy and v0) symbol names to
 * what a person reads, through libiberty's cplus_demangle, the demangler
 * binutils and gdb use, with llvm-symbolizer-14's spelling where the two
 * differ (clone suffixes, std::nullptr_t).  Rust legacy names lose their
 * "::h<16 hex>" hash, as rustfilt prints them (llvm-symbolizer-14 does not
 * know legacy Rust and prints the escaped Itanium form with the hash). */
#ifndef VG_DEMANGLE_H
#define VG_DEMANGLE_H

/* A malloc'ed demangled name (caller frees), or NULL when name is not
 * mangled (plain C: no "_Z"/"_R" prefix; returns without allocating), is
 * longer than 4096 bytes, or does not demangle, or on out-of-memory: the
 * caller then uses name itself.  Thread-safe; name may be NULL. */
char *vg_demangle(const char *name);

#endif
