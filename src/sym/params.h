/* params.h - a function's parameters as its entry holds them, from its
 * DWARF: which integer register holds each, its name, type and
 * signedness (vigil probe --args reads the registers).  In sym/ because
 * it is DWARF reading, which lives behind the symbolizer: libdw is
 * included only under sym/, elf/ and unwind/. */
#ifndef VG_SYM_PARAMS_H
#define VG_SYM_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "sym/symbolizer.h"
#include "util/error.h"

/* The first (at most max) integer-register arguments of the
 * function that starts at runtime address fn_addr, System V x86-64
 * order (rdi, rsi, rdx, rcx, r8, r9), named and typed from its DWARF
 * formal parameters when the image has them.  Parameters passed otherwise
 * (floating point in xmm, structs larger than 16 bytes in memory) take no
 * integer register and are skipped, as the ABI does; a struct of <= 16
 * bytes or anything vigil cannot classify ends the mapping (regs after it
 * are unnamed: name NULL).  Without DWARF every slot is unnamed ("arg1"
 * is the caller's to print) with kind UNKNOWN.
 *
 * The DWARF function is the out-of-line subprogram whose ranges contain
 * fn_addr (an address inside a function gives that function's
 * parameters, which only its entry holds in registers).  A struct over
 * 16 bytes returned by value takes rdi for its hidden pointer: the
 * parameters then start at rsi (reg 1).  A class passed by invisible
 * reference (DW_AT_calling_convention pass_by_reference) is a POINTER.
 * Varargs ("...") fill the remaining slots unnamed.  Type names are
 * DWARF's base names ("long int", "unsigned char"), typedefs as written
 * ("size_t"), pointers and qualifiers as C writes them ("const char *",
 * "char *const", "int (*)(int)"); restrict is dropped. */
enum vg_param_kind {
	VG_PARAM_UNKNOWN = 0,          /* no DWARF: print as hex */
	VG_PARAM_SIGNED,               /* int, long, enum with a signed base, char */
	VG_PARAM_UNSIGNED,             /* unsigned..., size_t, bool */
	VG_PARAM_POINTER,              /* any pointer, print as 0x... */
};
struct vg_sym_param {
	char name[64];                 /* "" when unnamed */
	char type[96];                 /* "size_t", "const char *", "" unknown */
	enum vg_param_kind kind;
	uint8_t size;                  /* bytes of the value (1, 2, 4, 8); 8 unknown */
	unsigned reg;                  /* 0..5: rdi rsi rdx rcx r8 r9 */
};
/* Fills params[0..*n); returns 0 (no DWARF is not an error: *n = max
 * unnamed slots), <0 only for out-of-memory or a bad image. */
int vg_sym_params(struct vg_symbolizer *sym, uint64_t fn_addr, struct vg_sym_param *params,
		    size_t max, size_t *n, struct vg_error *err);

/* The return value's type of the function that starts at fn_addr, as
 * rax holds it (name, type, kind, size; reg unused): an integer, enum,
 * bool or pointer is classified as a parameter is; void (type "void"), a
 * float, a struct, or no DWARF give kind UNKNOWN, size 8 (rax raw).
 * Returns 0, <0 only for out-of-memory or a bad image. */
int vg_sym_return_type(struct vg_symbolizer *sym, uint64_t fn_addr, struct vg_sym_param *out,
		       struct vg_error *err);

/* "rdi", "rsi", ... for reg 0..5; "?" for any other. */
const char *vg_sym_param_reg_name(unsigned reg);

#endif
