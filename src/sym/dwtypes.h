/* dwtypes.h - C types and global variables of one image, from its DWARF,
 * in a small model that needs no libdw to read (src/expr and the reports
 * use it; libdw stays under src/sym).
 *
 * Lazy: nothing is read when the table is opened.  A variable lookup reads
 * the top level of the CU its ELF symbol leads to (dwvarsym.h) when the
 * symbol table proves the name has one definition; otherwise it walks the
 * top-level DIEs of every CU (never into functions) until it has every
 * definition of the name; a type is built from its DIE on first use and
 * cached by DIE offset, with what it reaches (members, pointees), so an
 * expression reads the types it touches and no others.  A struct only
 * declared in one CU (`struct conn;`) is completed by name from the other
 * CUs when it is needed (vg_dwtypes_complete).
 *
 * Strings (names) are borrowed from the DWARF file and live as long as the
 * table. */
#ifndef VG_DWTYPES_H
#define VG_DWTYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "util/error.h"

enum vg_type_kind {
	VG_TYPE_VOID,
	VG_TYPE_INT,        /* integers and characters: is_signed, is_char */
	VG_TYPE_BOOL,
	VG_TYPE_FLOAT,      /* size 4, 8 (10/16: long double, shown raw) */
	VG_TYPE_ENUM,
	VG_TYPE_POINTER,    /* also C++ references (is_reference) */
	VG_TYPE_STRUCT,
	VG_TYPE_UNION,
	VG_TYPE_CLASS,
	VG_TYPE_ARRAY,
	VG_TYPE_TYPEDEF,
	VG_TYPE_CONST,
	VG_TYPE_VOLATILE,
	VG_TYPE_FUNC,
	VG_TYPE_UNKNOWN,    /* a DWARF tag this model does not describe */
};

struct vg_type;

struct vg_type_member {
	const char *name;             /* NULL: anonymous struct/union member */
	const struct vg_type *type;
	uint64_t offset;              /* bytes from the start of the aggregate */
	/* Bit-fields: bit_size > 0; bit_offset counts from offset's byte
	 * (little-endian bit numbering, as DW_AT_data_bit_offset). */
	uint32_t bit_offset, bit_size;
	bool is_base;                 /* a C++ base class, shown as a member */
};

/* A C++ static data member: not layout, a variable of its own, shown in
 * its class's value as gdb does ("static count = 42"). */
struct vg_type_static {
	const char *name;
	const struct vg_type *type;
	size_t before;                /* shown before members[before]; n_members: last */
	uint64_t decl;                /* its declaration's DIE (vg_dwtypes_static_member) */
};

struct vg_type_enumerator {
	const char *name;             /* C++: qualified as gdb does (app::Mode::on) */
	int64_t value;
};

struct vg_type {
	enum vg_type_kind kind;
	const char *name;             /* tag, base or typedef name; NULL: anonymous */
	uint64_t size;                /* bytes; 0: unknown (incomplete, void) */
	bool is_signed, is_char;      /* INT (and ENUM: is_signed) */
	bool is_reference;            /* POINTER written T& in C++ */
	bool declaration;             /* struct/union/enum declared, not defined */
	/* POINTER: pointee; TYPEDEF, CONST, VOLATILE: the type named;
	 * ARRAY: element; FUNC: return type; ENUM: underlying (may be NULL).
	 * NULL where DWARF has none means void. */
	const struct vg_type *target;
	uint64_t count;               /* ARRAY: elements (count_known) */
	bool count_known;
	struct vg_type_member *members;
	size_t n_members;
	struct vg_type_static *statics;  /* STRUCT, CLASS, UNION (C++) */
	size_t n_statics;
	struct vg_type_enumerator *enumerators;
	size_t n_enumerators;
	bool flag_enum;               /* every enumerator 0 or distinct bits */
	const struct vg_type **params;  /* FUNC */
	size_t n_params;
	bool varargs;
	uint64_t die;                 /* DWARF DIE offset (0: made by vigil) */
};

struct vg_dwvar {
	const char *name;
	const char *cu_name;          /* the CU's DW_AT_name (source file) */
	uint64_t static_addr;         /* ELF virtual address (add the image bias);
				       * tls: the offset in the module's TLS block */
	const struct vg_type *type;
	bool external;                /* a global, not a file-scope static */
	bool tls;                     /* thread-local (expr/tls.h finds it per thread) */
	uint64_t cu;                  /* CU offset: where casts look up names first */
};

struct vg_dwtypes;

/* Debug info of img found as the symbolizer finds it (debuginfo.h;
 * target_root "/proc/PID/root" or NULL, debuginfod not asked).  *out is
 * NULL, with 0 returned, when img has no DWARF.  img is borrowed and must
 * outlive the table.  <0 only for out-of-memory. */
int vg_dwtypes_open(struct vg_image *img, const char *target_root,
		    struct vg_dwtypes **out, struct vg_error *err);
struct vg_dwtypes *vg_dwtypes_free(struct vg_dwtypes *dt);

/* Every definition of the variable called name at file scope (globals and
 * file-scope statics; C++ names qualified by namespace or class as
 * ns::name, Cls::s_static; an anonymous namespace is transparent), in
 * CU order, into out[0..max) (more are counted, not stored).  file, if
 * non-NULL, keeps only CUs whose name is file or ends with "/file".
 * Returns how many were found (0: none), or <0 with err (corrupt DWARF,
 * out of memory). */
int vg_dwtypes_find_var(struct vg_dwtypes *dt, const char *name, const char *file,
			struct vg_dwvar *out, size_t max, struct vg_error *err);

/* The variable defined at static_addr, whatever its DWARF name: an ELF
 * alias (glibc's program_invocation_short_name is __progname in DWARF).
 * out->name is label.  1 when found, 0 when not, <0 with err. */
int vg_dwtypes_find_var_at(struct vg_dwtypes *dt, uint64_t static_addr, const char *label,
			   struct vg_dwvar *out, struct vg_error *err);

/* Where the static data member declared at DIE decl is defined: its
 * static address (add the image bias).  1 when found, 0 when not (a
 * constant with no storage, or not defined in this image), <0 with err. */
int vg_dwtypes_static_member(struct vg_dwtypes *dt, uint64_t decl, uint64_t *static_addr,
			     struct vg_error *err);

/* The type called name in C: "struct NAME", "union NAME", "enum NAME",
 * "class NAME", a typedef, or a base type ("unsigned long", "char").
 * Looked for in CU cu first (the CU of the variable an expression uses;
 * 0: none), then in every CU.  NULL (err: -ENOENT) when no CU has it. */
const struct vg_type *vg_dwtypes_find_type(struct vg_dwtypes *dt, const char *name,
					   uint64_t cu, struct vg_error *err);

/* A pointer to t made by vigil (casts, &x): owned by dt.  NULL: ENOMEM. */
const struct vg_type *vg_dwtypes_pointer_to(struct vg_dwtypes *dt, const struct vg_type *t);

/* The definition of a struct/union/class/enum that is only declared here,
 * looked up by name in every CU; t itself when it is complete or when no
 * CU defines it. */
const struct vg_type *vg_dwtypes_complete(struct vg_dwtypes *dt, const struct vg_type *t);

/* t without typedefs and const/volatile (NULL: void). */
const struct vg_type *vg_type_strip(const struct vg_type *t);

/* The C spelling of t ("struct config *", "unsigned int [4]",
 * "int (*)(int, char *)") into buf; returns buf. */
char *vg_type_name(const struct vg_type *t, char *buf, size_t size);

/* sizeof t (typedefs and qualifiers followed); 0 when unknown. */
uint64_t vg_type_size(const struct vg_type *t);

#endif
