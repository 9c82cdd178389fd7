/* cfi.c - the one CFI evaluator (cfi.h): rows found by libdw, compiled
 * here, applied over a frame's registers and a copy of the stack.
 *
 * Why compile instead of asking libdw at every step: a row is cheap to
 * apply and expensive to find (libdw searches .eh_frame_hdr, re-runs the
 * CIE and FDE programs and mallocs a Dwarf_Frame on every call), so a
 * compiled row can be cached by the caller and a warm unwind never calls
 * libdw.  Chosen over libdwfl's dwfl_attach_state + dwfl_thread_getframes
 * (what perf and eu-stack use): that route needs a Dwfl with every module
 * reported, a Dwfl_Thread_Callbacks state per sample and libdwfl's general
 * expression interpreter for every frame, does not cache rows between
 * samples, and wants memory reads outside the stack copy to go somewhere. */
#include "unwind/cfi.h"

#include "elf/image.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <gelf.h>

#define NDW VG_DWARF_NREGS
#define DW_RA VG_DWARF_RA
#define DW_SP VG_DWARF_SP

#define MAX_EXPR_OPS 64
#define EVAL_DEPTH 16

struct vg_cfi {
	Dwarf_CFI *eh;      /* .eh_frame, owned (dwarf_cfi_end) */
	Dwarf *dw;          /* only for .debug_frame, owned (dwarf_end) */
	Dwarf_CFI *debug;   /* .debug_frame, owned by dw */
};

/* .eh_frame serves what the runtime unwinds (exceptions, backtrace());
 * .debug_frame serves code that has none (-fno-asynchronous-unwind-tables
 * with -g). */
int vg_cfi_open(Elf *elf, struct vg_cfi **out, struct vg_error *err)
{
	struct vg_cfi *c;

	*out = NULL;
	c = calloc(1, sizeof *c);
	if (!c)
		return vg_error_set(err, -ENOMEM, "cannot allocate the CFI handle");
	c->eh = dwarf_getcfi_elf(elf);
	/* dwarf_begin_elf wants .debug_info too on some elfutils versions:
	 * only try it when there is a .debug_frame to gain, and a file that
	 * libdw refuses just has no .debug_frame for us. */
	if (vg_elf_has_section(elf, ".debug_frame")) {
		c->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (c->dw)
			c->debug = dwarf_getcfi(c->dw);
	}
	if (!c->eh && !c->debug) {
		vg_cfi_free(c);
		return vg_error_set(err, -ENOENT,
				    "no .eh_frame or .debug_frame in the file");
	}
	*out = c;
	return 0;
}

struct vg_cfi *vg_cfi_free(struct vg_cfi *c)
{
	if (!c)
		return NULL;
	if (c->eh)
		dwarf_cfi_end(c->eh);
	if (c->dw)
		dwarf_end(c->dw);
	free(c);
	return NULL;
}

/* Appends a copy of ops to row->exprs; the index of the first, or -1. */
static int32_t keep_expr(struct vg_cfi_row *row, const Dwarf_Op *ops, size_t nops)
{
	Dwarf_Op *grown;
	size_t at = row->n_exprs;

	if (nops == 0 || nops > MAX_EXPR_OPS)
		return -1;
	grown = realloc(row->exprs, (at + nops) * sizeof *grown);
	if (!grown)
		return -1;
	memcpy(grown + at, ops, nops * sizeof *ops);
	row->exprs = grown;
	row->n_exprs = at + nops;
	return (int32_t)at;
}

static void compile_rule(struct vg_cfi_row *row, Dwarf_Frame *frame, int regno)
{
	struct vg_cfi_rule *out = &row->rules[regno];
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int32_t at;
	bool value;

	memset(out, 0, sizeof *out);
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0) {
		out->kind = VG_RULE_UNSUPPORTED;
		return;
	}
	if (nops == 0) {
		out->kind = ops ? VG_RULE_UNDEFINED : VG_RULE_SAME;
		return;
	}
	/* libdw's own shapes (frame_register.c): offset(N) is
	 * [call_frame_cfa, plus_uconst N] (N == 0: the first alone), with
	 * stack_value appended for val_offset(N); register(R) is [regx R]. */
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		size_t k = 1;
		int64_t off = 0;

		if (k < nops && ops[k].atom == DW_OP_plus_uconst) {
			off = (int64_t)ops[k].number;   /* signed, stored unsigned */
			k++;
		}
		if (off >= INT32_MIN && off <= INT32_MAX && k == nops) {
			out->kind = VG_RULE_OFFSET;
			out->off = (int32_t)off;
			return;
		}
		if (off >= INT32_MIN && off <= INT32_MAX && k + 1 == nops &&
		    ops[k].atom == DW_OP_stack_value) {
			out->kind = VG_RULE_VAL_OFFSET;
			out->off = (int32_t)off;
			return;
		}
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number < NDW) {
		out->kind = VG_RULE_REGISTER;
		out->reg = (uint8_t)ops[0].number;
		return;
	}
	if (nops == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg16) {
		out->kind = VG_RULE_REGISTER;
		out->reg = (uint8_t)(ops[0].atom - DW_OP_reg0);
		return;
	}
	/* DW_CFA_expression / val_expression: libdw has already put the
	 * implicit DW_OP_call_frame_cfa first, and stack_value last for a
	 * value. */
	value = ops[nops - 1].atom == DW_OP_stack_value;
	at = keep_expr(row, ops, value ? nops - 1 : nops);
	if (at < 0) {
		out->kind = VG_RULE_UNSUPPORTED;
		return;
	}
	out->kind = value ? VG_RULE_VAL_EXPRESSION : VG_RULE_EXPRESSION;
	out->nops = (uint8_t)(value ? nops - 1 : nops);
	out->off = at;
}

static void compile_row(Dwarf_Frame *frame, struct vg_cfi_row *row)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	int64_t off;
	unsigned reg;
	bool signal = false;
	int32_t at;

	row->state = VG_ROW_CFA_UNSUPPORTED;
	if (dwarf_frame_info(frame, NULL, NULL, &signal) >= 0)
		row->signal = signal;
	for (int i = 0; i < NDW; i++) {
		compile_rule(row, frame, i);
		if (row->rules[i].kind == VG_RULE_SAME)
			row->same |= 1u << i;
		else if (row->rules[i].kind != VG_RULE_UNDEFINED &&
			 row->rules[i].kind != VG_RULE_UNSUPPORTED)
			row->work |= 1u << i;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0 || !ops)
		return;
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		reg = (unsigned)ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		/* DW_CFA_def_cfa_expression: a PLT stub's, a signal frame's. */
		at = keep_expr(row, ops, nops);
		if (at < 0)
			return;
		row->cfa_off = at;
		row->cfa_nops = (uint8_t)nops;
		row->state = VG_ROW_CFA_EXPRESSION;
		return;
	}
	if (reg >= NDW || off < INT32_MIN || off > INT32_MAX)
		return;
	row->cfa_reg = (uint8_t)reg;
	row->cfa_off = (int32_t)off;
	row->state = VG_ROW_OK;
}

static bool load8(const uint8_t *stack, size_t len, uint64_t sp0, uint64_t addr,
		  uint64_t *v)
{
	if (addr < sp0 || addr - sp0 > len || len - (addr - sp0) < 8)
		return false;
	memcpy(v, stack + (addr - sp0), 8);
	return true;
}

/* Runs one CFI expression over frame f: true with *out (the top of the
 * stack) when every operation is supported and every register and memory
 * word it needs is known; else false with *why.  cfa is pushed by
 * DW_OP_call_frame_cfa (libdw puts one first in a register rule; a CFA
 * rule has none). */
static bool eval(const Dwarf_Op *ops, size_t nops, uint64_t cfa, bool have_cfa,
		 const struct vg_cfi_frame *f, const uint8_t *stack, size_t len,
		 uint64_t sp0, uint64_t *out, enum vg_unwind_stop *why)
{
	uint64_t st[EVAL_DEPTH];
	size_t top = 0;

	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t a = op->atom;
		uint64_t x, y;

		/* Operations that push. */
		if (a == DW_OP_call_frame_cfa || (a >= DW_OP_lit0 && a <= DW_OP_lit31) ||
		    (a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx ||
		    a == DW_OP_const1u || a == DW_OP_const1s || a == DW_OP_const2u ||
		    a == DW_OP_const2s || a == DW_OP_const4u || a == DW_OP_const4s ||
		    a == DW_OP_const8u || a == DW_OP_const8s || a == DW_OP_constu ||
		    a == DW_OP_consts || a == DW_OP_dup) {
			unsigned reg;

			*why = VG_UNWIND_UNSUPPORTED;
			if (top == EVAL_DEPTH)
				return false;
			if (a == DW_OP_call_frame_cfa) {
				if (!have_cfa)
					return false;
				x = cfa;
			} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
				x = a - DW_OP_lit0;
			} else if (a == DW_OP_dup) {
				if (!top)
					return false;
				x = st[top - 1];
			} else if (a == DW_OP_bregx || (a >= DW_OP_breg0 && a <= DW_OP_breg31)) {
				reg = a == DW_OP_bregx ? (unsigned)op->number : (unsigned)(a - DW_OP_breg0);
				if (reg >= NDW)
					return false;
				if (!(f->known & 1u << reg)) {
					*why = VG_UNWIND_NO_REGISTER;
					return false;
				}
				x = f->r[reg] + (a == DW_OP_bregx ? op->number2 : op->number);
			} else {
				x = op->number;   /* libdw sign-extends the s forms */
			}
			st[top++] = x;
			continue;
		}
		*why = VG_UNWIND_UNSUPPORTED;
		if (!top)
			return false;
		x = st[top - 1];
		switch (a) {
		case DW_OP_deref:
			if (!load8(stack, len, sp0, x, &st[top - 1])) {
				*why = VG_UNWIND_STACK_END;
				return false;
			}
			continue;
		case DW_OP_plus_uconst:
			st[top - 1] = x + op->number;
			continue;
		case DW_OP_neg:
			st[top - 1] = -x;
			continue;
		case DW_OP_not:
			st[top - 1] = ~x;
			continue;
		default:
			break;
		}
		/* Binary operations: y = second, x = top. */
		if (top < 2)
			return false;
		y = st[top - 2];
		switch (a) {
		case DW_OP_plus: y += x; break;
		case DW_OP_minus: y -= x; break;
		case DW_OP_mul: y *= x; break;
		case DW_OP_and: y &= x; break;
		case DW_OP_or: y |= x; break;
		case DW_OP_xor: y ^= x; break;
		case DW_OP_shl: y = x < 64 ? y << x : 0; break;
		case DW_OP_shr: y = x < 64 ? y >> x : 0; break;
		case DW_OP_shra: y = x < 64 ? (uint64_t)((int64_t)y >> x) : 0; break;
		case DW_OP_ge: y = (int64_t)y >= (int64_t)x; break;
		case DW_OP_gt: y = (int64_t)y > (int64_t)x; break;
		case DW_OP_le: y = (int64_t)y <= (int64_t)x; break;
		case DW_OP_lt: y = (int64_t)y < (int64_t)x; break;
		case DW_OP_eq: y = y == x; break;
		case DW_OP_ne: y = y != x; break;
		default:
			return false;   /* DW_OP_skip, bra, pick, piece... */
		}
		st[top - 2] = y;
		top--;
	}
	*why = VG_UNWIND_UNSUPPORTED;
	if (!top)
		return false;
	*out = st[top - 1];
	return true;
}

/* One step from f (whose IP the row covers) to its caller (cfi.h). */
int vg_cfi_row_step(const struct vg_cfi_row *row, struct vg_cfi_frame *f,
		    const uint8_t *stack, size_t len, uint64_t sp0,
		    enum vg_unwind_stop *why)
{
	struct vg_cfi_frame caller = { .known = 0 };
	uint64_t cfa;

	if (row->state == VG_ROW_NO_CFI) {
		*why = VG_UNWIND_NO_CFI;
		return -1;
	}
	if (row->state == VG_ROW_CFA_UNSUPPORTED ||
	    row->rules[DW_RA].kind == VG_RULE_UNSUPPORTED) {
		*why = VG_UNWIND_UNSUPPORTED;
		return -1;
	}
	if (row->rules[DW_RA].kind == VG_RULE_UNDEFINED) {
		*why = VG_UNWIND_OUTERMOST;
		return -1;
	}
	if (row->state == VG_ROW_CFA_EXPRESSION) {
		if (!eval(row->exprs + row->cfa_off, row->cfa_nops, 0, false, f,
			  stack, len, sp0, &cfa, why))
			return -1;
	} else if (!(f->known & 1u << row->cfa_reg)) {
		*why = VG_UNWIND_NO_REGISTER;
		return -1;
	} else {
		cfa = f->r[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off;
	}
	/* Most rules say "unchanged" (or "undefined"): copy the frame and
	 * compute only the few saved or moved registers. */
	memcpy(caller.r, f->r, sizeof caller.r);
	caller.known = f->known & row->same;
	for (uint32_t todo = row->work; todo; todo &= todo - 1) {
		int i = __builtin_ctz(todo);
		const struct vg_cfi_rule *rl = &row->rules[i];
		uint64_t v = 0;
		bool ok = false;

		switch (rl->kind) {
		case VG_RULE_OFFSET:
			ok = load8(stack, len, sp0, cfa + (uint64_t)(int64_t)rl->off, &v);
			if (!ok && i == DW_RA) {
				*why = VG_UNWIND_STACK_END;
				return -1;
			}
			break;
		case VG_RULE_VAL_OFFSET:
			ok = true;
			v = cfa + (uint64_t)(int64_t)rl->off;
			break;
		case VG_RULE_REGISTER:
			ok = f->known & 1u << rl->reg;
			v = f->r[rl->reg];
			break;
		case VG_RULE_EXPRESSION:
		case VG_RULE_VAL_EXPRESSION:
			ok = eval(row->exprs + rl->off, rl->nops, cfa, true, f,
				  stack, len, sp0, &v, why);
			if (ok && rl->kind == VG_RULE_EXPRESSION &&
			    !load8(stack, len, sp0, v, &v)) {
				ok = false;
				*why = VG_UNWIND_STACK_END;
			}
			if (!ok && i == DW_RA)
				return -1;
			break;
		default:
			break;
		}
		if (ok) {
			caller.r[i] = v;
			caller.known |= 1u << i;
		}
	}
	/* On x86-64 the CFA is, by definition, the caller's rsp. */
	caller.r[DW_SP] = cfa;
	caller.known |= 1u << DW_SP;
	if (!(caller.known & 1u << DW_RA)) {
		*why = VG_UNWIND_NO_REGISTER;
		return -1;
	}
	/* A caller's frame lies above its callee's: a CFA at or below the
	 * callee's rsp is a corrupt row or a loop. */
	if (cfa <= f->r[DW_SP]) {
		*why = VG_UNWIND_BAD_FRAME;
		return -1;
	}
	*f = caller;
	return 0;
}

void vg_cfi_row_find(struct vg_cfi *c, uint64_t ip, struct vg_cfi_row *row)
{
	Dwarf_Frame *frame = NULL;

	memset(row, 0, sizeof *row);
	row->state = VG_ROW_NO_CFI;
	if (c && ((c->eh && dwarf_cfi_addrframe(c->eh, ip, &frame) == 0) ||
		  (c->debug && dwarf_cfi_addrframe(c->debug, ip, &frame) == 0))) {
		compile_row(frame, row);
		free(frame);
	}
}

void vg_cfi_row_clear(struct vg_cfi_row *row)
{
	free(row->exprs);
	memset(row, 0, sizeof *row);
}

void vg_cfi_frame_of(const struct vg_regs *regs, struct vg_cfi_frame *f)
{
	f->known = 0;
	for (int i = 0; i < NDW; i++) {
		int p = vg_perf_of_dwarf[i];

		f->r[i] = 0;
		if (regs->mask & 1ull << p) {
			f->r[i] = regs->regs[p];
			f->known |= 1u << i;
		}
	}
}

int vg_cfi_step(struct vg_cfi *c, uint64_t static_ip, const struct vg_regs *regs,
		const uint8_t *stack, size_t stack_len, uint64_t *return_address,
		uint64_t *caller_sp, struct vg_error *err)
{
	struct vg_cfi_row row;
	struct vg_cfi_frame f;
	enum vg_unwind_stop why = VG_UNWIND_OUTERMOST;
	uint64_t sp;
	int r;

	if (!(regs->mask & 1ull << VG_PERF_SP))
		return vg_error_set(err, -ENODATA, "rsp was not sampled");
	sp = regs->regs[VG_PERF_SP];
	vg_cfi_frame_of(regs, &f);
	vg_cfi_row_find(c, static_ip, &row);
	if (!stack)
		stack_len = 0;
	r = vg_cfi_row_step(&row, &f, stack, stack_len, sp, &why);
	if (r == 0) {
		*return_address = f.r[DW_RA];
		*caller_sp = f.r[DW_SP];
		vg_cfi_row_clear(&row);
		return 0;
	}
	switch (why) {
	case VG_UNWIND_NO_CFI:
		r = vg_error_set(err, -ENOENT, "no CFI row covers 0x%llx",
				 (unsigned long long)static_ip);
		break;
	case VG_UNWIND_OUTERMOST:
		r = vg_error_set(err, -ENOENT,
				 "the return address is undefined: outermost frame");
		break;
	case VG_UNWIND_NO_REGISTER:
		if (row.state == VG_ROW_OK && !(f.known & 1u << row.cfa_reg))
			r = vg_error_set(err, -ENODATA,
					 "CFA rule needs %s, which was not sampled",
					 vg_dwarf_reg_name(row.cfa_reg));
		else
			r = vg_error_set(err, -ENODATA,
					 "a CFI rule at 0x%llx needs a register that was not sampled",
					 (unsigned long long)static_ip);
		break;
	case VG_UNWIND_STACK_END:
		r = vg_error_set(err, -ERANGE,
				 "a saved slot is outside the %zu stack bytes copied at rsp 0x%llx",
				 stack_len, (unsigned long long)sp);
		break;
	case VG_UNWIND_BAD_FRAME:
		r = vg_error_set(err, -EINVAL,
				 "the CFA at 0x%llx is not above rsp 0x%llx",
				 (unsigned long long)static_ip, (unsigned long long)sp);
		break;
	default:
		r = vg_error_set(err, -ENOTSUP,
				 "the CFA or return address rule at 0x%llx is outside the supported forms",
				 (unsigned long long)static_ip);
		break;
	}
	vg_cfi_row_clear(&row);
	return r;
}
