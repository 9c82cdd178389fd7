/* value.h - the bytes of an evaluated expression, read once, with what
 * its pointers point to (the string a char * names, the symbol a pointer
 * lands in), so that a report formats it without reading the target.
 *
 * Every byte has a readable flag: an object that straddles an unreadable
 * page keeps the bytes that were read, and the report marks the others.
 * Nothing is zero-filled. */
#ifndef VG_EXPR_VALUE_H
#define VG_EXPR_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr/eval.h"

struct vg_value_opts {
	unsigned max_depth;           /* nested aggregates expanded (gdb: 20) */
	unsigned max_elements;        /* array elements and string bytes (gdb: 200) */
};

/* What a pointer found in the value points to. */
struct vg_value_ptr {
	uint64_t off;                 /* of the pointer in the value's bytes */
	char sym[160];                /* "g_nodes+16", "" when no symbol */
	bool is_string;               /* a char pointer, not null */
	unsigned char *str;           /* up to max_elements bytes, NUL excluded */
	size_t str_len;
	bool str_terminated;          /* a NUL was found within the limit */
	bool str_unreadable;          /* not even the first byte could be read */
};

/* A C++ static data member of a class in the value: its own variable,
 * read once per value (gdb shows it in every object of the class). */
struct vg_value_static {
	const struct vg_type *owner;  /* the class (stripped) */
	size_t index;                 /* in owner->statics */
	struct vg_value *value;       /* NULL: no storage found (a constant, or
				       * defined elsewhere) */
};

struct vg_value {
	const struct vg_type *type;
	bool has_addr;                /* an lvalue: addr is where it lives */
	uint64_t addr;
	char sym[160];                /* the symbol addr lies in, or "" */
	uint32_t bit_offset, bit_size;  /* a bit-field */
	uint64_t type_size;
	uint64_t size;                /* bytes fetched: type_size, capped */
	unsigned char *bytes, *ok;    /* size bytes; ok[i]: byte i was read */
	uint64_t n_unreadable;
	struct vg_value_ptr *ptrs;
	size_t n_ptrs;
	struct vg_value_static *statics;  /* not inside a static's own value */
	size_t n_statics;
};

#define VG_VALUE_MAX_BYTES (1u << 20)  /* larger objects: their first MiB */

/* Read the value r designates.  <0 only when the target is gone
 * (-ESRCH) or out of memory; unreadable bytes are marked, not errors. */
int vg_value_fetch(struct vg_expr_env *env, const struct vg_expr_result *r,
		   const struct vg_value_opts *o, struct vg_value **out, struct vg_error *err);
struct vg_value *vg_value_free(struct vg_value *v);

/* What v knows of static member index of class owner, or NULL when it
 * was not read (inside a static's own value). */
const struct vg_value_static *vg_value_static_of(const struct vg_value *v,
						 const struct vg_type *owner, size_t index);

/* The pointer note at byte offset off, or NULL. */
const struct vg_value_ptr *vg_value_ptr_at(const struct vg_value *v, uint64_t off);

#endif
