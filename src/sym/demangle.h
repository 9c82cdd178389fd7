/* demangle.h - C++ (Itanium) and Rust (legacy and v0) symbol names to
 * what a person reads, through libiberty's cplus_demangle, the demangler
 * binutils and gdb use.  Rust legacy names lose their "::h<16 hex>" hash,
 * as rustfilt and llvm-symbolizer print them. */
#ifndef VG_DEMANGLE_H
#define VG_DEMANGLE_H

/* A malloc'ed demangled name, or NULL when name is not mangled (plain C)
 * or not demangleable: the caller then uses name itself. */
char *vg_demangle(const char *name);

#endif
