/* eval.h - an expression (parse.h) evaluated against a live process: its
 * images' DWARF types and its memory, read with process_vm_readv, never
 * stopping it.
 *
 * The result is an lvalue (an object at an address, with its type) or an
 * rvalue (a number or an address computed by the expression: &x, p + 1,
 * sizeof).  It also keeps the address chain that led to the object: every
 * pointer the evaluation read to get there (the slot it was read from and
 * the value it held), in evaluation order.  That chain is what a watch of
 * the expression needs: the hops to watch and re-bind, and the leaf.
 *
 * Names: globals and file-scope statics, in the main executable first,
 * then the other images in address order (as the ADDR forms);
 * IMAGE:name looks only in that image, FILE:name (a source file, "conn.c")
 * only in the CUs of that file.  A name defined as a static in several
 * files of one image is refused with the files listed.
 * Thread-local variables are those of the thread set by
 * vg_expr_env_set_thread (through libthread_db, expr/tls.h).
 * Not supported, with an error that says so: local variables (there is no frame: vigil does not stop the target), function
 * calls, assignments. */
#ifndef VG_EXPR_EVAL_H
#define VG_EXPR_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "expr/parse.h"
#include "sym/dwtypes.h"
#include "target/mem.h"
#include "util/error.h"

/* The images of one target and their type tables, opened lazily. */
struct vg_expr_env;

/* imgs, mem are borrowed and must outlive env; target_root as in
 * vg_dwtypes_open.  NULL on out-of-memory. */
struct vg_expr_env *vg_expr_env_new(const struct vg_images *imgs, struct vg_mem *mem,
				    const char *target_root);
struct vg_expr_env *vg_expr_env_free(struct vg_expr_env *env);

/* The thread whose thread-local variables (errno, __thread) names mean:
 * tid of process pid.  Without it thread-local names are refused. */
void vg_expr_env_set_thread(struct vg_expr_env *env, pid_t pid, pid_t tid);

struct vg_expr_hop {
	char *expr;                   /* the pointer's own expression ("cfg->next") */
	uint64_t slot;                /* where it was read */
	uint64_t value;               /* what it held */
};

struct vg_expr_result {
	const struct vg_type *type;
	bool lvalue;
	uint64_t addr;                /* lvalue: where the object is */
	uint32_t bit_offset, bit_size;  /* lvalue bit-field (bit_size > 0) */
	uint64_t bits;                /* rvalue: the integer or address */
	struct vg_expr_hop *hops;     /* the address chain, in evaluation order */
	size_t n_hops;
	/* Where the first variable of the expression was found. */
	const struct vg_image *image;
	const char *var_cu;           /* its CU (source file), borrowed */
	/* That variable itself when found by its DWARF name at a static
	 * address (not a thread-local, not an alias): an address inside it is
	 * named from it without loading the image's symbol table. */
	char *var_name;               /* owned (vg_expr_result_clear frees it) */
	uint64_t var_addr, var_size;
};

/* Evaluate e.  Errors name the failing part of the text:
 *   -ENOENT  unknown variable, member (with a suggestion) or type (exit 2)
 *   -EINVAL  an operation the types do not allow, ambiguous static (exit 2)
 *   -EFAULT  a pointer hop is null or unreadable (exit 1: the expression
 *            is fine, the target's value is not usable)
 *   -ESRCH   the target is gone. */
int vg_expr_eval(struct vg_expr_env *env, const struct vg_expr *e,
		 struct vg_expr_result *out, struct vg_error *err);
void vg_expr_result_clear(struct vg_expr_result *r);

/* "g_nodes+16" for an address inside a symbol of an image, else "" into
 * buf; returns buf. */
/* The same for an address inside r's first variable, from what the
 * evaluation knows (no symbol table read); else as vg_expr_env_describe. */
char *vg_expr_describe_result(struct vg_expr_env *env, const struct vg_expr_result *r,
			      uint64_t addr, char *buf, size_t size);

char *vg_expr_env_describe(struct vg_expr_env *env, uint64_t addr, char *buf, size_t size);

/* The type table of img (opened on first use), or NULL if no DWARF. */
struct vg_dwtypes *vg_expr_env_types(struct vg_expr_env *env, const struct vg_image *img);

/* Does name name a type (a typedef, or a C++ class, struct, union or enum
 * written without its keyword) rather than a variable in the target's
 * DWARF?  The main executable first, then the other images.  A
 * vg_expr_is_type_fn for vg_expr_parse_typed, ctx the env. */
bool vg_expr_env_is_type(const char *name, void *env);

/* The memory reader (borrowed). */
struct vg_mem *vg_expr_env_mem(struct vg_expr_env *env);

#endif
