/* parse.h - the C subset `vigil print` accepts, parsed into a tree.
 *
 * Grammar (C precedence):
 *   expr    := binary                       | ^ & << >> + - * / %
 *   unary   := ('-' | '+' | '~' | '!' | '*' | '&') unary
 *            | 'sizeof' unary | 'sizeof' '(' type ')'
 *            | '(' type ')' unary           a cast
 *            | postfix
 *   postfix := primary ('.' NAME | '->' NAME | '[' expr ']')*
 *   primary := NUMBER | NAME | SCOPE ':' NAME | '(' expr ')'
 *   type    := ['const'] ('struct'|'union'|'enum'|'class') NAME | base words
 *              | NAME, then '*'...
 * NAME may hold C++ '::'.  SCOPE is an image file name (libc.so.6) or a
 * source file (conn.c) that picks one of several statics of one name.
 * '(NAME)' is a cast when a number, a name or '(' follows it
 * ('(size_t)x'); when a unary operator follows ('(my_t)*p', '(len_t)-x'),
 * C itself needs to know whether NAME names a type, so the caller's
 * is_type answers (the target's DWARF); without it, or when it says no,
 * '(NAME)' is a parenthesized variable ('(x) - 1', '(n) * 2').
 * Nothing here knows the target: names are resolved by eval.c.
 * Errors (-EINVAL, exit 2) say the column and what was expected. */
#ifndef VG_EXPR_PARSE_H
#define VG_EXPR_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum vg_expr_op {
	VG_E_NUM, VG_E_VAR, VG_E_MEMBER, VG_E_ARROW, VG_E_INDEX,
	VG_E_DEREF, VG_E_ADDR, VG_E_NEG, VG_E_POS, VG_E_NOT, VG_E_BITNOT,
	VG_E_ADD, VG_E_SUB, VG_E_MUL, VG_E_DIV, VG_E_MOD,
	VG_E_SHL, VG_E_SHR, VG_E_AND, VG_E_OR, VG_E_XOR,
	VG_E_CAST, VG_E_SIZEOF_EXPR, VG_E_SIZEOF_TYPE,
};

struct vg_expr_typename {
	char *base;                  /* "struct conn", "size_t", "unsigned long" */
	unsigned n_ptr;              /* trailing '*'s */
};

struct vg_expr_node {
	enum vg_expr_op op;
	size_t start, end;           /* span in the text, for messages */
	struct vg_expr_node *a, *b;
	uint64_t num;                /* NUM */
	char *name;                  /* VAR: the variable; MEMBER/ARROW: member */
	char *scope;                 /* VAR: IMAGE or source file before ':', or NULL */
	struct vg_expr_typename type;  /* CAST, SIZEOF_TYPE */
};

struct vg_expr {
	char *text;
	struct vg_expr_node *root;
	struct vg_expr_node **nodes; /* every node, for freeing */
	size_t n_nodes, cap_nodes;
};

/* Does name (a bare or C++-qualified identifier) name a type? */
typedef bool (*vg_expr_is_type_fn)(const char *name, void *ctx);

int vg_expr_parse(const char *text, struct vg_expr **out, struct vg_error *err);
/* The same, asking is_type(name, ctx) where '(NAME)' before a unary
 * operator may be a cast (is_type may be NULL). */
int vg_expr_parse_typed(const char *text, vg_expr_is_type_fn is_type, void *ctx,
			struct vg_expr **out, struct vg_error *err);
struct vg_expr *vg_expr_free(struct vg_expr *e);

/* The source text of node n ("cfg->limits"), into buf; returns buf. */
char *vg_expr_text(const struct vg_expr *e, const struct vg_expr_node *n,
		   char *buf, size_t size);

#endif
