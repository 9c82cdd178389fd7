/* cfi.h - the one CFI evaluator: the call frame rules of an ELF file
 * (.eh_frame, else its own .debug_frame), compiled per row and applied to
 * a frame's registers over a copy of the stack.
 *
 * libdw finds the row at an address (dwarf_cfi_addrframe); applying it is
 * done here, over the 17 x86-64 DWARF registers (rax..r15 and the return
 * address column 16).  A row is compiled once into a small table (CFA =
 * register + offset or a DWARF expression; per register: undefined, same
 * value, saved at CFA+N, value CFA+N, copy of another register, or a
 * DWARF expression) that the caller may keep (unwind.c caches rows), so a
 * step needs no libdw call and no allocation.
 *
 * Expressions (the CFA of PLT stubs, every rule of glibc's signal
 * trampoline __restore_rt) run on a small stack machine: constants,
 * registers (DW_OP_breg*, 16 = the frame's IP), arithmetic, comparisons
 * and 8-byte DW_OP_deref from the stack copy.  Any other operation is
 * unsupported: for the CFA or the return address it stops the walk; for
 * another register it makes it unknown, which only matters if a caller's
 * rule needs it.
 *
 * Only the stack copy is read: no byte of the target is touched, and a
 * rule whose slot lies beyond the copy stops the walk (VG_UNWIND_STACK_END). */
#ifndef VG_UNWIND_CFI_H
#define VG_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <libelf.h>

#include "unwind/regs.h"
#include "util/error.h"

/* Why a walk (or one step) stopped. */
enum vg_unwind_stop {
	VG_UNWIND_OUTERMOST = 0,  /* "outermost": return address undefined
	                           * (_start, clone) or 0, or rbp 0 (fp) */
	VG_UNWIND_STACK_END,      /* "stack_end": a saved slot or frame lies
	                           * beyond the stack copy */
	VG_UNWIND_NO_CFI,         /* "no_cfi": no CFI row covers the IP, or the
	                           * image has no .eh_frame/.debug_frame */
	VG_UNWIND_UNSUPPORTED,    /* "unsupported_rule": the CFA or return
	                           * address rule is an expression using an
	                           * operation outside the supported set
	                           * (branches, pieces, non-general registers) */
	VG_UNWIND_NO_IMAGE,       /* "no_image": IP in no ELF image (JIT code,
	                           * a stale image set; the vDSO is an image) */
	VG_UNWIND_NO_REGISTER,    /* "missing_register": a rule needs a
	                           * register not sampled or not recovered */
	VG_UNWIND_BAD_FRAME,      /* "bad_frame": the stack pointer (or rbp)
	                           * did not move up the stack: corrupt or
	                           * looping chain */
	VG_UNWIND_MAX_FRAMES,     /* "max_frames": the ips array is full */
};
#define VG_UNWIND_NSTOPS 8

struct vg_cfi;   /* the CFI of one ELF file */

/* elf is borrowed and must outlive the result.  Returns 0 with *out, or
 * -ENOENT (*out NULL) when the file has neither .eh_frame nor
 * .debug_frame, -ENOMEM. */
int vg_cfi_open(Elf *elf, struct vg_cfi **out, struct vg_error *err);
struct vg_cfi *vg_cfi_free(struct vg_cfi *c);

enum vg_cfi_rule_kind {
	VG_RULE_UNDEFINED = 0,
	VG_RULE_SAME,          /* unchanged from the callee */
	VG_RULE_OFFSET,        /* saved in memory at CFA + off */
	VG_RULE_VAL_OFFSET,    /* the value CFA + off */
	VG_RULE_REGISTER,      /* the callee's register `reg` */
	VG_RULE_EXPRESSION,    /* saved at the address a DWARF expression gives */
	VG_RULE_VAL_EXPRESSION, /* the value a DWARF expression gives */
	VG_RULE_UNSUPPORTED,   /* a rule libdw could not give, or too large */
};

/* REGISTER: reg.  OFFSET, VAL_OFFSET: off.  EXPRESSION, VAL_EXPRESSION:
 * nops operations at row->exprs[off]. */
struct vg_cfi_rule {
	uint8_t kind;
	uint8_t reg;
	uint8_t nops;
	int32_t off;
};

enum vg_cfi_row_state {
	VG_ROW_EMPTY = 0,
	VG_ROW_OK,
	VG_ROW_NO_CFI,          /* no FDE covers the address */
	VG_ROW_CFA_EXPRESSION,  /* CFA: cfa_nops operations at exprs[cfa_off] */
	VG_ROW_CFA_UNSUPPORTED, /* no CFA rule libdw could give */
};

/* One compiled CFI row.  A zeroed row is VG_ROW_EMPTY. */
struct vg_cfi_row {
	uint8_t state;
	uint8_t cfa_reg;
	bool signal;         /* a signal frame: the caller's IP is exact */
	uint8_t cfa_nops;
	int32_t cfa_off;
	uint32_t same;       /* registers whose rule is SAME */
	uint32_t work;       /* registers whose rule computes a value */
	struct vg_cfi_rule rules[VG_DWARF_NREGS];
	Dwarf_Op *exprs;     /* owned copies of the row's expressions, or NULL */
	size_t n_exprs;
};

/* The registers known in one frame, by DWARF number (16: its IP). */
struct vg_cfi_frame {
	uint64_t r[VG_DWARF_NREGS];
	uint32_t known;      /* bit i: r[i] is known */
};

/* Compiles the row of c at static address ip into row (which must be
 * empty or cleared): VG_ROW_NO_CFI when c is NULL or no FDE covers ip.
 * .eh_frame first (what the runtime's own unwinder uses, so the table
 * kept correct), .debug_frame when .eh_frame has no FDE for ip. */
void vg_cfi_row_find(struct vg_cfi *c, uint64_t ip, struct vg_cfi_row *row);
/* Frees the row's expressions and empties it. */
void vg_cfi_row_clear(struct vg_cfi_row *row);

/* The frame of a sample: every sampled register CFI has a column for,
 * the IP in column 16. */
void vg_cfi_frame_of(const struct vg_regs *regs, struct vg_cfi_frame *f);

/* One step from f (whose IP the row covers) to its caller: 0 with f
 * replaced by the caller's frame (its rsp = the CFA, its IP in column
 * 16); -1 with *why.  stack holds len bytes copied at address sp0. */
int vg_cfi_row_step(const struct vg_cfi_row *row, struct vg_cfi_frame *f,
		    const uint8_t *stack, size_t len, uint64_t sp0,
		    enum vg_unwind_stop *why);

/* One step with an error sentence, for a caller without an unwinder:
 * static_ip = the sampled IP minus the image's load bias (for a return
 * address already stepped to, pass ip - 1 so the call's own row is used:
 * caller's job); regs holds at least SP (and whatever the rules use);
 * stack holds stack_len bytes read at regs SP.  On success
 * *return_address is the caller's IP and *caller_sp the CFA.  -ENOENT: no
 * FDE covers static_ip, or the row says the return address is undefined
 * (the outermost frame); -ENOTSUP: a rule outside the supported forms;
 * -ENODATA: a rule needs a register regs does not hold; -ERANGE: the slot
 * lies outside the bytes given; -EINVAL: the CFA is not above rsp. */
int vg_cfi_step(struct vg_cfi *c, uint64_t static_ip, const struct vg_regs *regs,
		const uint8_t *stack, size_t stack_len, uint64_t *return_address,
		uint64_t *caller_sp, struct vg_error *err);

#endif
