/* cfa.c - one CFI step with elfutils libdw, for a sampled frame-pointer-less
 * leaf (the libc wrapper a kernel write was made from).
 *
 * libdw finds the row (dwarf_cfi_addrframe) and hands back the rules as
 * DWARF expressions: the CFA of an x86-64 row is one DW_OP_bregx (reg,
 * offset), and the return address (DWARF register 16) is the location
 * [DW_OP_call_frame_cfa, DW_OP_plus_uconst N].  Those two shapes are all
 * that compilers emit outside hand-written assembly and PLT stubs, so they
 * are evaluated here directly instead of through a general expression
 * interpreter; anything else is -ENOTSUP.  The saved slot is read from the
 * caller's copy of the stack, never from the target.  Only one step: the
 * caller's rbp is not recovered. */
#include "sym/cfa.h"

#include "elf/image.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#define DWARF_REG_RA 16

/* perf register index (<asm/perf_regs.h>) of each x86-64 DWARF register
 * number (System V psABI, figure "DWARF Register Number Mapping"). */
static const int perf_of_dwarf[16] = {
	0 /* rax */, 3 /* rdx */, 2 /* rcx */, 1 /* rbx */,
	4 /* rsi */, 5 /* rdi */, 6 /* rbp */, 7 /* rsp */,
	16, 17, 18, 19, 20, 21, 22, 23 /* r8..r15 */,
};
#define PERF_REG_SP 7

static const char *const dwarf_reg_name[16] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

struct vg_cfi {
	Dwarf_CFI *eh;      /* .eh_frame, owned (dwarf_cfi_end) */
	Dwarf *dw;          /* only for .debug_frame, owned (dwarf_end) */
	Dwarf_CFI *debug;   /* .debug_frame, owned by dw */
};

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

/* The row for ip: .eh_frame first (what the runtime unwinder uses, so it is
 * the one kept correct), .debug_frame when .eh_frame has no FDE for it. */
static int frame_at(struct vg_cfi *c, uint64_t ip, Dwarf_Frame **frame,
		    struct vg_error *err)
{
	const char *why = NULL;

	if (c->eh && dwarf_cfi_addrframe(c->eh, ip, frame) == 0)
		return 0;
	if (c->eh)
		why = dwarf_errmsg(-1);
	if (c->debug && dwarf_cfi_addrframe(c->debug, ip, frame) == 0)
		return 0;
	if (c->debug)
		why = dwarf_errmsg(-1);
	return vg_error_set(err, -ENOENT, "no CFI row covers 0x%llx: %s",
			    (unsigned long long)ip, why);
}

static int reg_value(const struct vg_regs *regs, unsigned dwreg, uint64_t *v,
		     struct vg_error *err)
{
	int p;

	if (dwreg >= 16)
		return vg_error_set(err, -ENOTSUP,
				    "CFA rule uses DWARF register %u, not a general register",
				    dwreg);
	p = perf_of_dwarf[dwreg];
	if (!(regs->mask & 1ull << p))
		return vg_error_set(err, -ENODATA,
				    "CFA rule needs %s, which was not sampled",
				    dwarf_reg_name[dwreg]);
	*v = regs->regs[p];
	return 0;
}

static int cfa_of(Dwarf_Frame *frame, const struct vg_regs *regs, uint64_t *cfa,
		  struct vg_error *err)
{
	Dwarf_Op *ops;
	size_t nops;
	unsigned reg;
	int64_t off = 0;
	uint64_t base = 0;
	int r;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return vg_error_set(err, -EINVAL, "cannot read the CFA rule: %s",
				    dwarf_errmsg(-1));
	if (nops != 1 || !ops)
		return vg_error_set(err, -ENOTSUP,
				    "CFA rule is a DWARF expression (%zu operations), not register + offset",
				    nops);
	if (ops[0].atom == DW_OP_bregx) {
		reg = (unsigned)ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return vg_error_set(err, -ENOTSUP,
				    "CFA rule is DW_OP 0x%x, not register + offset",
				    ops[0].atom);
	}
	r = reg_value(regs, reg, &base, err);
	if (r < 0)
		return r;
	*cfa = base + (uint64_t)off;
	return 0;
}

/* Offset from the CFA of the slot holding the return address. */
static int ra_slot(Dwarf_Frame *frame, int64_t *off, struct vg_error *err)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, DWARF_REG_RA, mem, &ops, &nops) != 0)
		return vg_error_set(err, -EINVAL,
				    "cannot read the return address rule: %s",
				    dwarf_errmsg(-1));
	if (nops == 0 && ops)
		/* "undefined": _start, clone's child, a thread's start. */
		return vg_error_set(err, -ENOENT,
				    "the return address is undefined: outermost frame");
	if (nops >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		if (nops == 1) {
			*off = 0;
			return 0;
		}
		/* libdw stores the signed offset in the unsigned operand. */
		if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
			*off = (int64_t)ops[1].number;
			return 0;
		}
		if (nops == 3 && ops[1].atom == DW_OP_consts &&
		    ops[2].atom == DW_OP_plus) {
			*off = (int64_t)ops[1].number;
			return 0;
		}
	}
	return vg_error_set(err, -ENOTSUP,
			    "the return address rule is not a slot at CFA + offset (%zu operations)",
			    nops);
}

int vg_cfi_step(struct vg_cfi *c, uint64_t static_ip, const struct vg_regs *regs,
		const uint8_t *stack, size_t stack_len, uint64_t *return_address,
		uint64_t *caller_sp, struct vg_error *err)
{
	Dwarf_Frame *frame = NULL;
	uint64_t cfa = 0, sp, slot;
	int64_t off = 0;
	int r;

	if (!(regs->mask & 1ull << PERF_REG_SP))
		return vg_error_set(err, -ENODATA, "rsp was not sampled");
	sp = regs->regs[PERF_REG_SP];
	r = frame_at(c, static_ip, &frame, err);
	if (r < 0)
		return r;
	r = cfa_of(frame, regs, &cfa, err);
	if (r == 0)
		r = ra_slot(frame, &off, err);
	free(frame);
	if (r < 0)
		return r;
	slot = cfa + (uint64_t)off;
	if (slot < sp || slot - sp > stack_len || stack_len - (slot - sp) < 8)
		return vg_error_set(err, -ERANGE,
				    "return address slot 0x%llx is outside the %zu stack bytes copied at rsp 0x%llx",
				    (unsigned long long)slot, stack_len,
				    (unsigned long long)sp);
	memcpy(return_address, stack + (slot - sp), 8);
	*caller_sp = cfa;
	return 0;
}
