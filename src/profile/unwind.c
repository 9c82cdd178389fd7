/* unwind.c - user stacks by CFI (libdw) and by frame pointers, over a
 * sample's registers and stack copy.
 *
 * libdw answers "the rules at this address" (dwarf_cfi_addrframe); the
 * walk itself is done here, over the 17 x86-64 DWARF registers (rax..r15
 * and the return address column 16), because a row is cheap to apply and
 * expensive to find: libdw searches .eh_frame_hdr, re-runs the CIE and FDE
 * programs and mallocs a Dwarf_Frame on every call.  So each row, once
 * found, is compiled into a small table (CFA = register + offset; per
 * register: undefined, same value, saved at CFA+N, value CFA+N, copy of
 * another register) and kept in one 2-way set-associative cache shared by all
 * images, keyed by (image id, static lookup address).  Image ids are never
 * reused, so dropping an image after a refresh needs no cache sweep.
 *
 * Chosen over libdwfl's dwfl_attach_state + dwfl_thread_getframes (what
 * perf and eu-stack use): that route needs a Dwfl with every module
 * reported, a Dwfl_Thread_Callbacks state per sample and libdwfl's general
 * expression interpreter for every frame, and it does not cache rows
 * between samples; it also wants memory reads outside the stack copy to go
 * somewhere.  Here a warm unwind never leaves the copy and never allocates.
 *
 * Rules given as DWARF expressions (the CFA of PLT stubs, every rule of
 * glibc's signal trampoline __restore_rt) are copied into the row and run
 * by a small stack machine: constants, registers (DW_OP_breg*, with 16 =
 * the frame's IP), arithmetic, comparisons and 8-byte DW_OP_deref from the
 * stack copy.  Any other operation is unsupported: for the CFA or the
 * return address it stops the walk (VG_UNWIND_UNSUPPORTED); for another
 * register it makes it unknown, which only matters if a caller's CFA rule
 * needs it. */
#include "profile/unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#define NDW 17                 /* DWARF registers 0..15 + return address */
#define DW_RA 16
#define DW_SP 7
#define PERF_SP 7
#define PERF_IP 8

#define CACHE_SLOTS 4096       /* power of two (2-way sets); ~180 bytes each: ~0.7 MiB */

/* perf register index (<asm/perf_regs.h>) of each x86-64 DWARF register
 * (System V psABI, "DWARF Register Number Mapping"); 16 is the IP. */
static const int perf_of_dwarf[NDW] = {
	0 /* rax */, 3 /* rdx */, 2 /* rcx */, 1 /* rbx */,
	4 /* rsi */, 5 /* rdi */, 6 /* rbp */, 7 /* rsp */,
	16, 17, 18, 19, 20, 21, 22, 23 /* r8..r15 */,
	PERF_IP,
};

enum rule_kind {
	R_UNDEFINED = 0,
	R_SAME,          /* unchanged from the callee */
	R_OFFSET,        /* saved in memory at CFA + off */
	R_VAL_OFFSET,    /* the value CFA + off */
	R_REGISTER,      /* the callee's register `reg` */
	R_EXPRESSION,    /* saved at the address a DWARF expression gives */
	R_VAL_EXPRESSION, /* the value a DWARF expression gives */
	R_UNSUPPORTED,   /* a rule libdw could not give, or too large */
};

/* R_REGISTER: reg.  R_OFFSET, R_VAL_OFFSET: off.  R_EXPRESSION,
 * R_VAL_EXPRESSION: nops operations at row->exprs[off]. */
struct rule {
	uint8_t kind;
	uint8_t reg;
	uint8_t nops;
	int32_t off;
};

enum row_state {
	ROW_EMPTY = 0,
	ROW_OK,
	ROW_NO_CFI,          /* no FDE covers the address: cached too */
	ROW_CFA_EXPRESSION,  /* CFA: cfa_nops operations at exprs[cfa_off] */
	ROW_CFA_UNSUPPORTED, /* no CFA rule libdw could give */
};

/* One compiled CFI row.  key/image_id identify the lookup that made it. */
struct row {
	uint64_t key;
	uint32_t image_id;
	uint8_t state;
	uint8_t cfa_reg;
	bool signal;         /* the caller's IP is exact (signal frame) */
	uint8_t cfa_nops;
	int32_t cfa_off;
	uint32_t same;       /* registers whose rule is R_SAME */
	uint32_t work;       /* registers whose rule computes a value */
	struct rule rules[NDW];
	Dwarf_Op *exprs;     /* owned copies of the row's expressions, or NULL */
	size_t n_exprs;
};

#define MAX_EXPR_OPS 64
#define EVAL_DEPTH 16

/* The CFI of one image of the current set, opened on first use. */
struct image_cfi {
	const struct vg_image *img;
	uint32_t id;
	bool tried;           /* open attempted (result in eh/debug) */
	Dwarf_CFI *eh;        /* .eh_frame, owned (dwarf_cfi_end) */
	Dwarf *dw;            /* only for .debug_frame, owned (dwarf_end) */
	Dwarf_CFI *debug;     /* .debug_frame, owned by dw */
};

struct vg_unwinder {
	pid_t pid;
	const struct vg_images *images;
	struct image_cfi *cfi;   /* parallel to images->images (sorted by lo) */
	size_t n_cfi;
	uint32_t next_id;
	struct row *cache;       /* CACHE_SLOTS */
	struct vg_unwind_stats stats;
};

/* The state of one frame: the registers known in it. */
struct frame {
	uint64_t r[NDW];
	uint32_t known;          /* bit i: r[i] is known */
};

static void cfi_close(struct image_cfi *c)
{
	if (c->eh)
		dwarf_cfi_end(c->eh);
	if (c->dw)
		dwarf_end(c->dw);
	c->eh = NULL;
	c->dw = NULL;
	c->debug = NULL;
}


/* .eh_frame is what the runtime's own unwinder uses (exceptions,
 * backtrace()), so it is the table kept correct; .debug_frame serves code
 * that has none (-fno-asynchronous-unwind-tables with -g).  An image with
 * neither stays tried with both NULL: every IP in it is NO_CFI. */
static void cfi_open(struct vg_unwinder *u, struct image_cfi *c)
{
	Elf *elf = (Elf *)vg_image_elf(c->img);

	c->tried = true;
	if (!elf)
		return;
	c->eh = dwarf_getcfi_elf(elf);
	/* dwarf_begin_elf wants .debug_info as well on some elfutils
	 * versions: only try it when there is a .debug_frame to gain. */
	if (vg_elf_has_section(elf, ".debug_frame")) {
		c->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (c->dw)
			c->debug = dwarf_getcfi(c->dw);
	}
	u->stats.images_opened++;
}

static void cfi_init(struct vg_unwinder *u, struct image_cfi *c,
		     const struct vg_image *img)
{
	memset(c, 0, sizeof *c);
	c->img = img;
	c->id = u->next_id++;
}

int vg_unwinder_new(pid_t pid, const struct vg_images *images,
		    struct vg_unwinder **out, struct vg_error *err)
{
	struct vg_unwinder *u;
	int r;

	*out = NULL;
	u = calloc(1, sizeof *u);
	if (!u)
		return vg_error_set(err, -ENOMEM, "cannot allocate the unwinder for pid %d",
				    (int)pid);
	u->pid = pid;
	u->next_id = 1;
	u->cache = calloc(CACHE_SLOTS, sizeof *u->cache);
	if (!u->cache) {
		free(u);
		return vg_error_set(err, -ENOMEM,
				    "cannot allocate the unwind row cache for pid %d",
				    (int)pid);
	}
	r = vg_unwinder_set_images(u, images, err);
	if (r < 0) {
		vg_unwinder_free(u);
		return r;
	}
	*out = u;
	return 0;
}

struct vg_unwinder *vg_unwinder_free(struct vg_unwinder *u)
{
	if (!u)
		return NULL;
	for (size_t i = 0; i < u->n_cfi; i++)
		cfi_close(&u->cfi[i]);
	free(u->cfi);
	for (size_t i = 0; u->cache && i < CACHE_SLOTS; i++)
		free(u->cache[i].exprs);
	free(u->cache);
	free(u);
	return NULL;
}

int vg_unwinder_set_images(struct vg_unwinder *u, const struct vg_images *images,
			   struct vg_error *err)
{
	size_t n = images ? images->n : 0;
	struct image_cfi *fresh = NULL;

	if (n) {
		fresh = calloc(n, sizeof *fresh);
		if (!fresh) {
			for (size_t i = 0; i < u->n_cfi; i++)
				cfi_close(&u->cfi[i]);
			free(u->cfi);
			u->cfi = NULL;
			u->n_cfi = 0;
			u->images = NULL;
			return vg_error_set(err, -ENOMEM,
					    "cannot allocate the unwind state of %zu images of pid %d",
					    n, (int)u->pid);
		}
	}
	/* Both sets are alive here (the caller's contract), so an equal
	 * pointer is the same image object: it keeps its CFI, its id, and
	 * with the id its cached rows. */
	for (size_t i = 0; i < n; i++) {
		const struct vg_image *img = images->images[i];
		size_t j;

		for (j = 0; j < u->n_cfi; j++)
			if (u->cfi[j].img == img)
				break;
		if (j < u->n_cfi) {
			fresh[i] = u->cfi[j];
			u->cfi[j].img = NULL;   /* moved */
		} else {
			cfi_init(u, &fresh[i], img);
		}
	}
	for (size_t j = 0; j < u->n_cfi; j++)
		if (u->cfi[j].img)
			cfi_close(&u->cfi[j]);
	free(u->cfi);
	u->cfi = fresh;
	u->n_cfi = n;
	u->images = images;
	return 0;
}

/* The state slot of img: the image array is sorted by lo and ours is
 * parallel to it. */
static struct image_cfi *cfi_of(struct vg_unwinder *u, const struct vg_image *img)
{
	size_t lo = 0, hi = u->n_cfi;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->cfi[mid].img->lo < img->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < u->n_cfi && u->cfi[lo].img == img)
		return &u->cfi[lo];
	for (size_t i = 0; i < u->n_cfi; i++)   /* unsorted set: still right */
		if (u->cfi[i].img == img)
			return &u->cfi[i];
	return NULL;
}

/* Appends a copy of ops to row->exprs; the index of the first, or -1. */
static int32_t keep_expr(struct row *row, const Dwarf_Op *ops, size_t nops)
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

static void compile_rule(struct row *row, Dwarf_Frame *frame, int regno)
{
	struct rule *out = &row->rules[regno];
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int32_t at;
	bool value;

	memset(out, 0, sizeof *out);
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0) {
		out->kind = R_UNSUPPORTED;
		return;
	}
	if (nops == 0) {
		out->kind = ops ? R_UNDEFINED : R_SAME;
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
			out->kind = R_OFFSET;
			out->off = (int32_t)off;
			return;
		}
		if (off >= INT32_MIN && off <= INT32_MAX && k + 1 == nops &&
		    ops[k].atom == DW_OP_stack_value) {
			out->kind = R_VAL_OFFSET;
			out->off = (int32_t)off;
			return;
		}
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number < NDW) {
		out->kind = R_REGISTER;
		out->reg = (uint8_t)ops[0].number;
		return;
	}
	if (nops == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg16) {
		out->kind = R_REGISTER;
		out->reg = (uint8_t)(ops[0].atom - DW_OP_reg0);
		return;
	}
	/* DW_CFA_expression / val_expression: libdw has already put the
	 * implicit DW_OP_call_frame_cfa first, and stack_value last for a
	 * value. */
	value = ops[nops - 1].atom == DW_OP_stack_value;
	at = keep_expr(row, ops, value ? nops - 1 : nops);
	if (at < 0) {
		out->kind = R_UNSUPPORTED;
		return;
	}
	out->kind = value ? R_VAL_EXPRESSION : R_EXPRESSION;
	out->nops = (uint8_t)(value ? nops - 1 : nops);
	out->off = at;
}

static void compile_row(Dwarf_Frame *frame, struct row *row)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	int64_t off;
	unsigned reg;
	bool signal = false;
	int32_t at;

	row->state = ROW_CFA_UNSUPPORTED;
	if (dwarf_frame_info(frame, NULL, NULL, &signal) >= 0)
		row->signal = signal;
	for (int i = 0; i < NDW; i++) {
		compile_rule(row, frame, i);
		if (row->rules[i].kind == R_SAME)
			row->same |= 1u << i;
		else if (row->rules[i].kind != R_UNDEFINED &&
			 row->rules[i].kind != R_UNSUPPORTED)
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
		row->state = ROW_CFA_EXPRESSION;
		return;
	}
	if (reg >= NDW || off < INT32_MIN || off > INT32_MAX)
		return;
	row->cfa_reg = (uint8_t)reg;
	row->cfa_off = (int32_t)off;
	row->state = ROW_OK;
}

static size_t slot_of(uint32_t id, uint64_t key)
{
	uint64_t h = (key ^ (uint64_t)id << 40) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 52) & (CACHE_SLOTS - 1);
}

/* The compiled row for static address key of image c (never NULL). */
static const struct row *row_at(struct vg_unwinder *u, struct image_cfi *c,
				uint64_t key)
{
	/* Two ways per set: two hot addresses that hash alike (a few in a
	 * hundred stacks, with ASLR) do not evict each other on every
	 * sample.  A miss moves way 0 to way 1 and fills way 0. */
	struct row *w0 = &u->cache[slot_of(c->id, key) & ~(size_t)1], *w1 = w0 + 1, *row;
	Dwarf_Frame *frame = NULL;

	for (row = w0; row <= w1; row++) {
		if (row->state != ROW_EMPTY && row->image_id == c->id && row->key == key) {
			u->stats.rows_cached++;
			return row;
		}
	}
	u->stats.rows_decoded++;
	if (w0->state == ROW_EMPTY) {
		row = w0;
	} else if (w1->state == ROW_EMPTY) {
		row = w1;
	} else {
		free(w1->exprs);
		*w1 = *w0;
		w0->exprs = NULL;   /* moved with the row */
		row = w0;
	}
	if (!c->tried)
		cfi_open(u, c);
	free(row->exprs);
	memset(row, 0, sizeof *row);
	row->key = key;
	row->image_id = c->id;
	row->state = ROW_NO_CFI;
	if ((c->eh && dwarf_cfi_addrframe(c->eh, key, &frame) == 0) ||
	    (c->debug && dwarf_cfi_addrframe(c->debug, key, &frame) == 0)) {
		compile_row(frame, row);
		free(frame);
	}
	return row;
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
		 const struct frame *f, const uint8_t *stack, size_t len,
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

/* One step from f (whose IP is in the row's image) to its caller. */
static int step(const struct row *row, struct frame *f, const uint8_t *stack,
		size_t len, uint64_t sp0, enum vg_unwind_stop *why)
{
	struct frame caller = { .known = 0 };
	uint64_t cfa;

	if (row->state == ROW_NO_CFI) {
		*why = VG_UNWIND_NO_CFI;
		return -1;
	}
	if (row->state == ROW_CFA_UNSUPPORTED ||
	    row->rules[DW_RA].kind == R_UNSUPPORTED) {
		*why = VG_UNWIND_UNSUPPORTED;
		return -1;
	}
	if (row->rules[DW_RA].kind == R_UNDEFINED) {
		*why = VG_UNWIND_OUTERMOST;
		return -1;
	}
	if (row->state == ROW_CFA_EXPRESSION) {
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
		const struct rule *rl = &row->rules[i];
		uint64_t v = 0;
		bool ok = false;

		switch (rl->kind) {
		case R_OFFSET:
			ok = load8(stack, len, sp0, cfa + (uint64_t)(int64_t)rl->off, &v);
			if (!ok && i == DW_RA) {
				*why = VG_UNWIND_STACK_END;
				return -1;
			}
			break;
		case R_VAL_OFFSET:
			ok = true;
			v = cfa + (uint64_t)(int64_t)rl->off;
			break;
		case R_REGISTER:
			ok = f->known & 1u << rl->reg;
			v = f->r[rl->reg];
			break;
		case R_EXPRESSION:
		case R_VAL_EXPRESSION:
			ok = eval(row->exprs + rl->off, rl->nops, cfa, true, f,
				  stack, len, sp0, &v, why);
			if (ok && rl->kind == R_EXPRESSION &&
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

int vg_unwind_dwarf(struct vg_unwinder *u, const struct vg_regs *regs,
		    const uint8_t *stack, size_t stack_len, uint64_t *ips,
		    bool *exact, size_t max, size_t *n, enum vg_unwind_stop *why)
{
	struct frame f = { .known = 0 };
	bool exact_ip = true;   /* frame 0, or the caller of a signal frame */
	uint64_t sp0;

	*n = 0;
	*why = VG_UNWIND_NO_REGISTER;
	if ((regs->mask & (1ull << PERF_IP | 1ull << PERF_SP)) !=
	    (1ull << PERF_IP | 1ull << PERF_SP))
		return 0;
	for (int i = 0; i < NDW; i++) {
		int p = perf_of_dwarf[i];

		if (regs->mask & 1ull << p) {
			f.r[i] = regs->regs[p];
			f.known |= 1u << i;
		}
	}
	sp0 = f.r[DW_SP];
	if (!stack)
		stack_len = 0;
	for (;;) {
		uint64_t ip = f.r[DW_RA];
		const struct vg_image *img;
		struct image_cfi *c;
		const struct row *row;

		if (*n == max) {
			*why = VG_UNWIND_MAX_FRAMES;
			return 0;
		}
		if (exact)
			exact[*n] = exact_ip;
		ips[(*n)++] = ip;
		img = vg_images_find(u->images, ip);
		c = img ? cfi_of(u, img) : NULL;
		if (!c) {
			*why = VG_UNWIND_NO_IMAGE;
			return 0;
		}
		/* A return address follows the call, which may be the last
		 * instruction of the function (a noreturn call) and then
		 * belongs to the next function's row: look up the call.
		 * glibc starts the FDE of __restore_rt one nop early so that
		 * this lookup finds it too. */
		row = row_at(u, c, ip - img->bias - (exact_ip ? 0 : 1));
		/* The handler "returned" into the trampoline: its address
		 * is not after a call. */
		if (row->signal && exact)
			exact[*n - 1] = true;
		if (step(row, &f, stack, stack_len, sp0, why) < 0)
			return 0;
		exact_ip = row->signal;
		if (f.r[DW_RA] == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return 0;
		}
	}
}

void vg_unwind_fp(const struct vg_regs *regs, const uint8_t *stack,
		  size_t stack_len, uint64_t *ips, size_t max, size_t *n,
		  enum vg_unwind_stop *why)
{
	const uint64_t need = 1ull << PERF_IP | 1ull << PERF_SP | 1ull << 6;
	uint64_t sp0, bp, floor;

	*n = 0;
	*why = VG_UNWIND_NO_REGISTER;
	if (max == 0) {
		*why = VG_UNWIND_MAX_FRAMES;
		return;
	}
	if (!(regs->mask & 1ull << PERF_IP))
		return;
	ips[(*n)++] = regs->regs[PERF_IP];
	if ((regs->mask & need) != need)
		return;
	if (!stack)
		stack_len = 0;
	sp0 = regs->regs[PERF_SP];
	bp = regs->regs[6];
	floor = sp0;
	for (;;) {
		uint64_t next, ra;

		if (*n == max) {
			*why = VG_UNWIND_MAX_FRAMES;
			return;
		}
		if (bp == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return;
		}
		if (bp < floor || bp & 7) {
			*why = VG_UNWIND_BAD_FRAME;
			return;
		}
		if (!load8(stack, stack_len, sp0, bp, &next) ||
		    !load8(stack, stack_len, sp0, bp + 8, &ra)) {
			*why = VG_UNWIND_STACK_END;
			return;
		}
		if (ra == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return;
		}
		ips[(*n)++] = ra;
		floor = bp + 16;
		bp = next;
	}
}

void vg_unwinder_stats(const struct vg_unwinder *u, struct vg_unwind_stats *st)
{
	*st = u->stats;
}

const char *vg_unwind_stop_name(enum vg_unwind_stop why)
{
	static const char *const names[] = {
		[VG_UNWIND_OUTERMOST] = "outermost",
		[VG_UNWIND_STACK_END] = "stack_end",
		[VG_UNWIND_NO_CFI] = "no_cfi",
		[VG_UNWIND_UNSUPPORTED] = "unsupported_rule",
		[VG_UNWIND_NO_IMAGE] = "no_image",
		[VG_UNWIND_NO_REGISTER] = "missing_register",
		[VG_UNWIND_BAD_FRAME] = "bad_frame",
		[VG_UNWIND_MAX_FRAMES] = "max_frames",
	};

	if ((unsigned)why < sizeof names / sizeof names[0] && names[why])
		return names[why];
	return "unknown";
}
