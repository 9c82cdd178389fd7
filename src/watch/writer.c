/* writer.c - which instruction wrote a watched location, decoded with Zydis.
 *
 * A data breakpoint traps after the write, so the writer is the instruction
 * that ends at the trap IP.  Exact decode walks forward from a known
 * instruction boundary; heuristic decode tries every start 1..15 bytes back
 * and keeps the candidates that write memory where the sampled registers
 * say the watched location is.  Zydis's operand list, with its hidden
 * operands, says what is written (push's [rsp], stos's [rdi]), so the kind
 * of a writer follows from the memory operand it writes and a table of
 * mnemonics, never from the text.
 *
 * The value written is known only when it sits unchanged in one sampled
 * general-purpose register after the instruction (mov, push, stos) or in
 * the instruction itself (an immediate); anything that mixes in the old
 * contents or another register file is reported with the reason.
 *
 * Never reads the target and never prints: the caller supplies the bytes.
 * The only file besides disasm.c that includes <Zydis/Zydis.h>. */
#include "watch/writer.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_INSN_LEN 15           /* the architectural limit */
#define RFLAGS_DF (1ull << 10)

static const char CAVEAT_STRING[] =
	"a rep string instruction traps once per iteration over the watched bytes "
	"(the IP stays on it while iterations remain): those traps are one write; "
	"rdi and rcx are sampled one element on";
static const char CAVEAT_HEURISTIC[] =
	"no function start known: decoded backwards from the trap IP; the "
	"longest memory-writing candidate that ends there was chosen "
	"(candidates says how many survived)";
static const char CAVEAT_HEURISTIC_STRING[] =
	"no function start known: decoded backwards from the trap IP; the "
	"longest memory-writing candidate that ends there was chosen "
	"(candidates says how many survived); a rep string instruction traps "
	"once per iteration, rdi and rcx sampled one element on";

static const char WHY_NOT_WRITER[] =
	"the instruction before the trap IP does not write memory: the trap "
	"IP is a jump target or the write was not by this thread's code";
static const char WHY_RMW[] =
	"read-modify-write: the value depends on the old contents";
static const char WHY_XCHG[] = "xchg: the register now holds the old value";
static const char WHY_MOVS[] = "movs: the value was copied from memory";
static const char WHY_VECTOR[] =
	"vector store: the source is an SSE/AVX/AVX-512 or mask register, "
	"which is not sampled";
static const char WHY_MOVBE[] = "movbe: the register is stored byte-swapped";
static const char WHY_SETCC[] =
	"setcc: the value (0 or 1) depends on the flags before the instruction";
static const char WHY_PUSHF[] =
	"pushf: the stored flags image is not the sampled flags register";
static const char WHY_PUSH_RSP[] =
	"push rsp: rsp has moved since its old value was pushed";
static const char WHY_FROM_MEMORY[] = "the value was read from memory";
static const char WHY_SOURCE_OTHER[] =
	"the source is neither a general-purpose register nor an immediate";
static const char WHY_OTHER[] =
	"the value is not taken from one sampled register or an immediate";
static const char WHY_NO_REGS[] = "registers not sampled (use --regs)";
static const char WHY_REG_MISSING[] = "the source register was not sampled";

struct insn {
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const ZydisDecodedOperand *store;   /* the written memory operand, or NULL */
};

/* ---- registers ---- */

/* perf register index of a general-purpose register of any width (al, ah,
 * ax, eax, rax, r9b ...), -1 for anything else.  Zydis orders the 64-bit
 * registers as the encoding does (rax rcx rdx rbx rsp rbp rsi rdi r8..);
 * perf orders them ax bx cx dx si di bp sp ip flags ... r8.. . */
static int perf_reg(ZydisRegister r)
{
	static const int by_zydis[] = {
		PERF_REG_X86_AX, PERF_REG_X86_CX, PERF_REG_X86_DX, PERF_REG_X86_BX,
		PERF_REG_X86_SP, PERF_REG_X86_BP, PERF_REG_X86_SI, PERF_REG_X86_DI,
		PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
		PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	};
	ZydisRegisterClass c = ZydisRegisterGetClass(r);
	ZydisRegister full;

	if (c != ZYDIS_REGCLASS_GPR8 && c != ZYDIS_REGCLASS_GPR16 &&
	    c != ZYDIS_REGCLASS_GPR32 && c != ZYDIS_REGCLASS_GPR64)
		return -1;
	full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (full < ZYDIS_REGISTER_RAX || full > ZYDIS_REGISTER_R15)
		return -1;
	return by_zydis[full - ZYDIS_REGISTER_RAX];
}

static bool is_high_byte(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_BH ||
	       r == ZYDIS_REGISTER_CH || r == ZYDIS_REGISTER_DH;
}

static bool is_vector_reg(ZydisRegister r)
{
	switch (ZydisRegisterGetClass(r)) {
	case ZYDIS_REGCLASS_MMX:
	case ZYDIS_REGCLASS_XMM:
	case ZYDIS_REGCLASS_YMM:
	case ZYDIS_REGCLASS_ZMM:
	case ZYDIS_REGCLASS_MASK:
		return true;
	default:
		return false;
	}
}

static bool reg_known(const struct vg_regs *regs, int idx)
{
	return regs && idx >= 0 && idx < VG_NREGS && (regs->mask >> idx & 1);
}

static uint64_t truncate_to(uint64_t v, unsigned width)
{
	return width >= 8 || width == 0 ? v : v & ((1ull << (width * 8)) - 1);
}

/* ---- decoding ---- */

/* The first memory operand the instruction writes (explicit or hidden).
 * lea and nop-like operands only form an address (AGEN) and are skipped. */
static const ZydisDecodedOperand *written_memory(const struct insn *d)
{
	for (unsigned i = 0; i < d->in.operand_count; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    op->mem.type != ZYDIS_MEMOP_TYPE_AGEN &&
		    (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return op;
	}
	return NULL;
}

/* Decode one instruction from code[0..n).  -ENOENT when the bytes end
 * inside it (it would run past the end), -EINVAL when they are not an
 * instruction. */
static int decode_one(const uint8_t *code, size_t n, struct insn *d)
{
	ZydisDecoder dec;
	ZyanStatus s;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	s = ZydisDecoderDecodeFull(&dec, code, n, &d->in, d->ops);
	if (s == ZYDIS_STATUS_NO_MORE_DATA)
		return -ENOENT;
	if (!ZYAN_SUCCESS(s))
		return -EINVAL;
	d->store = written_memory(d);
	return 0;
}

/* ---- kind ---- */

static bool is_rmw_mnemonic(ZydisMnemonic m)
{
	static const ZydisMnemonic rmw[] = {
		ZYDIS_MNEMONIC_ADD, ZYDIS_MNEMONIC_ADC, ZYDIS_MNEMONIC_SUB,
		ZYDIS_MNEMONIC_SBB, ZYDIS_MNEMONIC_AND, ZYDIS_MNEMONIC_OR,
		ZYDIS_MNEMONIC_XOR, ZYDIS_MNEMONIC_INC, ZYDIS_MNEMONIC_DEC,
		ZYDIS_MNEMONIC_NOT, ZYDIS_MNEMONIC_NEG, ZYDIS_MNEMONIC_SHL,
		ZYDIS_MNEMONIC_SHR, ZYDIS_MNEMONIC_SAR, ZYDIS_MNEMONIC_ROL,
		ZYDIS_MNEMONIC_ROR, ZYDIS_MNEMONIC_RCL, ZYDIS_MNEMONIC_RCR,
		ZYDIS_MNEMONIC_SHLD, ZYDIS_MNEMONIC_SHRD, ZYDIS_MNEMONIC_XCHG,
		ZYDIS_MNEMONIC_XADD, ZYDIS_MNEMONIC_CMPXCHG,
		ZYDIS_MNEMONIC_CMPXCHG8B, ZYDIS_MNEMONIC_CMPXCHG16B,
		ZYDIS_MNEMONIC_BTS, ZYDIS_MNEMONIC_BTR, ZYDIS_MNEMONIC_BTC,
	};

	for (size_t i = 0; i < ARRAY_SIZE(rmw); i++)
		if (rmw[i] == m)
			return true;
	return false;
}

static bool has_vector_operand(const struct insn *d)
{
	for (unsigned i = 0; i < d->in.operand_count; i++)
		if (d->ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    is_vector_reg(d->ops[i].reg.value))
			return true;
	return false;
}

/* Categories before mnemonics: Zydis's MOVSD is both the string move and
 * the SSE scalar store, and only the category tells them apart. */
static enum vg_writer_kind classify(const struct insn *d)
{
	ZydisMnemonic m = d->in.mnemonic;

	if (!d->store)
		return VG_WRITER_UNKNOWN;
	switch (d->in.meta.category) {
	case ZYDIS_CATEGORY_CALL:
		return VG_WRITER_CALL;
	case ZYDIS_CATEGORY_PUSH:
		return VG_WRITER_PUSH;
	case ZYDIS_CATEGORY_STRINGOP:
		return VG_WRITER_STRING;
	case ZYDIS_CATEGORY_SETCC:
		return VG_WRITER_STORE;
	default:
		break;
	}
	if (has_vector_operand(d))
		return VG_WRITER_VECTOR;
	if (is_rmw_mnemonic(m))
		return VG_WRITER_RMW;
	if (m == ZYDIS_MNEMONIC_MOV || m == ZYDIS_MNEMONIC_MOVNTI ||
	    m == ZYDIS_MNEMONIC_MOVBE)
		return VG_WRITER_STORE;
	return VG_WRITER_OTHER;
}

/* ---- value ---- */

/* The first explicit operand that is read and is not the store itself:
 * the source of mov/movnti/push. */
static const ZydisDecodedOperand *explicit_source(const struct insn *d)
{
	for (unsigned i = 0; i < d->in.operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];

		if (op != d->store && (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			return op;
	}
	return NULL;
}

static void value_from_register(struct vg_writer *w, ZydisRegister r)
{
	w->value_kind = VG_VALUE_REGISTER;
	w->value_reg = perf_reg(r);
	w->value_shift = is_high_byte(r) ? 8 : 0;
	snprintf(w->value_reg_name, sizeof(w->value_reg_name), "%s",
		 ZydisRegisterGetString(r));
}

/* REGISTER, IMMEDIATE or UNKNOWN with why, for a mov or push source. */
static void value_from_operand(struct vg_writer *w, const ZydisDecodedOperand *src)
{
	if (!src) {
		w->why = WHY_SOURCE_OTHER;
	} else if (src->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		   perf_reg(src->reg.value) >= 0) {
		value_from_register(w, src->reg.value);
	} else if (src->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		/* Zydis sign-extends to 64 bits as the CPU does for
		 * `mov r/m64, imm32` and `push imm8`; the store keeps the low
		 * width bytes. */
		w->value_kind = VG_VALUE_IMMEDIATE;
		w->immediate = truncate_to(src->imm.value.u, w->width);
	} else if (src->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		w->why = WHY_FROM_MEMORY;
	} else {
		w->why = WHY_SOURCE_OTHER;
	}
}

static bool is_movs(ZydisMnemonic m)
{
	return m == ZYDIS_MNEMONIC_MOVSB || m == ZYDIS_MNEMONIC_MOVSW ||
	       m == ZYDIS_MNEMONIC_MOVSD || m == ZYDIS_MNEMONIC_MOVSQ;
}

/* stos stores al/ax/eax/rax, which it does not change (only rdi and rcx
 * move), so the sampled rax is the value even one element late. */
static void value_of_string(const struct insn *d, struct vg_writer *w)
{
	if (is_movs(d->in.mnemonic)) {
		w->why = WHY_MOVS;
		return;
	}
	for (unsigned i = 0; i < d->in.operand_count; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    perf_reg(op->reg.value) == PERF_REG_X86_AX &&
		    (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)) {
			value_from_register(w, op->reg.value);
			return;
		}
	}
	w->why = WHY_OTHER;
}

/* add/sub/inc/dec of a constant or an unchanged register: the old
 * contents are not known, but what was added is (adc/sbb depend on the
 * carry, xadd leaves the old value in its register). */
static bool value_of_delta(const struct insn *d, struct vg_writer *w)
{
	ZydisMnemonic m = d->in.mnemonic;
	const ZydisDecodedOperand *src;
	bool sub = m == ZYDIS_MNEMONIC_SUB || m == ZYDIS_MNEMONIC_DEC;

	if (m == ZYDIS_MNEMONIC_INC || m == ZYDIS_MNEMONIC_DEC) {
		w->value_kind = VG_VALUE_ADD_IMMEDIATE;
		w->immediate = truncate_to(sub ? (uint64_t)-1 : 1, w->width);
		return true;
	}
	if (m != ZYDIS_MNEMONIC_ADD && m != ZYDIS_MNEMONIC_SUB)
		return false;
	/* The memory operand is both read and written: the source is the
	 * other visible operand. */
	src = NULL;
	for (unsigned i = 0; i < d->in.operand_count_visible; i++)
		if (d->ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY)
			src = &d->ops[i];
	if (src && src->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		w->value_kind = VG_VALUE_ADD_IMMEDIATE;
		w->immediate = truncate_to(sub ? (uint64_t)0 - src->imm.value.u : src->imm.value.u, w->width);
		return true;
	}
	if (src && src->type == ZYDIS_OPERAND_TYPE_REGISTER && perf_reg(src->reg.value) >= 0) {
		value_from_register(w, src->reg.value);
		w->value_kind = VG_VALUE_ADD_REGISTER;
		w->negate = sub;
		return true;
	}
	return false;
}

static void describe_value(const struct insn *d, struct vg_writer *w)
{
	const ZydisDecodedOperand *src;
	ZydisMnemonic m = d->in.mnemonic;

	switch (w->kind) {
	case VG_WRITER_STORE:
		if (m == ZYDIS_MNEMONIC_MOVBE)
			w->why = WHY_MOVBE;
		else if (d->in.meta.category == ZYDIS_CATEGORY_SETCC)
			w->why = WHY_SETCC;
		else
			value_from_operand(w, explicit_source(d));
		break;
	case VG_WRITER_PUSH:
		src = explicit_source(d);
		if (m == ZYDIS_MNEMONIC_PUSHF || m == ZYDIS_MNEMONIC_PUSHFQ ||
		    m == ZYDIS_MNEMONIC_PUSHFD)
			w->why = WHY_PUSHF;
		else if (src && src->type == ZYDIS_OPERAND_TYPE_REGISTER &&
			 perf_reg(src->reg.value) == PERF_REG_X86_SP)
			w->why = WHY_PUSH_RSP;
		else
			value_from_operand(w, src);
		break;
	case VG_WRITER_CALL:
		/* The return address: the instruction after the call. */
		w->value_kind = VG_VALUE_IMMEDIATE;
		w->immediate = truncate_to(w->ip + w->length, w->width);
		break;
	case VG_WRITER_STRING:
		value_of_string(d, w);
		break;
	case VG_WRITER_RMW:
		if (!value_of_delta(d, w))
			w->why = m == ZYDIS_MNEMONIC_XCHG ? WHY_XCHG : WHY_RMW;
		break;
	case VG_WRITER_VECTOR:
		w->why = WHY_VECTOR;
		break;
	case VG_WRITER_OTHER:
		w->why = m == ZYDIS_MNEMONIC_POP ? WHY_FROM_MEMORY : WHY_OTHER;
		break;
	default:
		w->why = WHY_NOT_WRITER;
		break;
	}
}

/* ---- filling the result ---- */

static void clear(struct vg_writer *w)
{
	memset(w, 0, sizeof(*w));
	w->value_reg = -1;
	w->mem_base = -1;
	w->mem_index = -1;
}

static void format_text(const struct insn *d, uint64_t ip, struct vg_writer *w)
{
	ZydisFormatter f;

	/* Always "dword ptr": a report shows the width of a store even when
	 * the register operand would imply it; lower-case unpadded hex. */
	if (!ZYAN_SUCCESS(ZydisFormatterInit(&f, ZYDIS_FORMATTER_STYLE_INTEL)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_DISP_PADDING, ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_IMM_PADDING, ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&f, &d->in, d->ops,
			d->in.operand_count_visible, w->text, sizeof(w->text), ip, NULL)))
		snprintf(w->text, sizeof(w->text), "%s", ZydisMnemonicGetString(d->in.mnemonic));
}

static const char WHY_ADDR_SEGMENT[] =
	"the store has an fs:/gs: segment, whose base is not sampled";
static const char WHY_ADDR_CLOBBERED[] =
	"the instruction changed its own base or index register";
static const char WHY_ADDR_VSIB[] = "the store is a scatter with a vector index";

/* How the written address follows from the registers after d ran. */
static void address_rule(const struct insn *d, struct vg_writer *w)
{
	const ZydisDecodedOperandMem *m = &d->store->mem;
	int base = perf_reg(m->base), index = perf_reg(m->index);

	w->address_width = (uint8_t)d->in.address_width;
	if (m->segment == ZYDIS_REGISTER_GS) {
		w->addr_rule = VG_ADDR_UNKNOWN;
		w->addr_why = WHY_ADDR_SEGMENT;
		return;
	}
	switch (d->in.meta.category) {
	case ZYDIS_CATEGORY_PUSH:
	case ZYDIS_CATEGORY_CALL:
		w->addr_rule = VG_ADDR_STACK;
		return;
	case ZYDIS_CATEGORY_STRINGOP:
		w->addr_rule = VG_ADDR_STRING;
		return;
	case ZYDIS_CATEGORY_POP:
		/* pop computes an rsp-based destination after incrementing
		 * rsp: the sampled rsp is the one it used. */
		w->addr_rule = VG_ADDR_OPERAND;
		return;
	default:
		break;
	}
	if (m->index != ZYDIS_REGISTER_NONE && index < 0) {
		w->addr_rule = VG_ADDR_UNKNOWN;
		w->addr_why = WHY_ADDR_VSIB;
		return;
	}
	for (unsigned i = 0; i < d->in.operand_count; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];
		int r;

		if (op->type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		r = perf_reg(op->reg.value);
		if (r >= 0 && (r == base || r == index)) {
			w->addr_rule = VG_ADDR_UNKNOWN;
			w->addr_why = WHY_ADDR_CLOBBERED;
			return;
		}
	}
	w->addr_rule = m->segment == ZYDIS_REGISTER_FS ? VG_ADDR_FS_OPERAND : VG_ADDR_OPERAND;
}

static void fill_memory_operand(const ZydisDecodedOperand *mem, struct vg_writer *w)
{
	unsigned bytes = mem->size / 8;

	w->width = bytes <= UINT8_MAX ? (uint8_t)bytes : 0;
	w->rip_relative = mem->mem.base == ZYDIS_REGISTER_RIP;
	w->mem_base = perf_reg(mem->mem.base);
	w->mem_index = perf_reg(mem->mem.index);
	w->mem_scale = w->mem_index >= 0 ? mem->mem.scale : 0;
	w->mem_disp = mem->mem.disp.value;
}

/* Everything that follows from one decoded instruction at ip. */
static void fill(const struct insn *d, uint64_t ip, enum vg_writer_confidence conf,
		 struct vg_writer *w)
{
	const char *prefix = "";

	clear(w);
	w->confidence = conf;
	w->ip = ip;
	w->length = d->in.length;
	w->kind = classify(d);
	w->lock = (d->in.attributes & ZYDIS_ATTRIB_HAS_LOCK) ||
		  /* xchg with memory asserts the lock without the prefix */
		  (d->in.mnemonic == ZYDIS_MNEMONIC_XCHG && d->store);
	w->rep = d->in.attributes & ZYDIS_ATTRIB_HAS_REP;
	if (d->in.attributes & ZYDIS_ATTRIB_HAS_LOCK)
		prefix = "lock ";
	else if (w->rep)
		prefix = "rep ";
	snprintf(w->mnemonic, sizeof(w->mnemonic), "%s%s", prefix,
		 ZydisMnemonicGetString(d->in.mnemonic));
	format_text(d, ip, w);
	if (d->store) {
		fill_memory_operand(d->store, w);
		address_rule(d, w);
	}
	describe_value(d, w);
	if (w->kind == VG_WRITER_STRING)
		w->caveat = CAVEAT_STRING;
}

/* ---- exact ---- */

int vg_writer_decode_exact(const uint8_t *code, size_t n, uint64_t start,
			   struct vg_writer *out)
{
	struct insn d;
	size_t off = 0;
	int r;

	clear(out);
	while (off < n) {
		r = decode_one(code + off, n - off, &d);
		if (r < 0)
			return r;
		if (off + d.in.length == n) {
			fill(&d, start + off, VG_CONF_EXACT, out);
			return 0;
		}
		off += d.in.length;
	}
	return -ENOENT;
}

int vg_writer_decode_at(const uint8_t *code, size_t n, uint64_t ip,
			struct vg_writer *out)
{
	struct insn d;
	int r;

	clear(out);
	r = decode_one(code, n, &d);
	if (r < 0)
		return r;
	fill(&d, ip, VG_CONF_EXACT, out);
	return 0;
}

/* ---- where it wrote ---- */

static const char WHY_ADDR_NO_REGS[] = "the registers that form the address were not sampled";
static const char WHY_ADDR_NO_FLAGS[] =
	"the flags were not sampled: the direction of the string instruction is unknown";
static const char WHY_ADDR_NO_STORE[] = "the instruction writes no memory";

bool vg_writer_overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	alen = alen ? alen : 1;
	blen = blen ? blen : 1;
	return a < b + blen && b < a + alen;
}

bool vg_writer_store_address(const struct vg_writer *w, const struct vg_regs *regs,
			     const uint64_t *fs_base, uint64_t *ea, const char **why)
{
	uint64_t a = 0;

	switch (w->addr_rule) {
	case VG_ADDR_NONE:
		*why = WHY_ADDR_NO_STORE;
		return false;
	case VG_ADDR_UNKNOWN:
		*why = w->addr_why ? w->addr_why : WHY_OTHER;
		return false;
	case VG_ADDR_STACK:
		if (!reg_known(regs, PERF_REG_X86_SP))
			goto no_regs;
		*ea = regs->regs[PERF_REG_X86_SP];
		return true;
	case VG_ADDR_STRING:
		if (!reg_known(regs, PERF_REG_X86_DI))
			goto no_regs;
		if (!reg_known(regs, PERF_REG_X86_FLAGS)) {
			*why = WHY_ADDR_NO_FLAGS;
			return false;
		}
		a = regs->regs[PERF_REG_X86_DI];
		a = regs->regs[PERF_REG_X86_FLAGS] & RFLAGS_DF ? a + w->width : a - w->width;
		break;
	case VG_ADDR_FS_OPERAND:
	case VG_ADDR_OPERAND:
		if (w->addr_rule == VG_ADDR_FS_OPERAND && !fs_base) {
			*why = WHY_ADDR_SEGMENT;
			return false;
		}
		if (w->rip_relative)
			a = w->ip + w->length;
		else if (w->mem_base >= 0 && !reg_known(regs, w->mem_base))
			goto no_regs;
		else if (w->mem_base >= 0)
			a = regs->regs[w->mem_base];
		if (w->mem_index >= 0) {
			if (!reg_known(regs, w->mem_index))
				goto no_regs;
			a += regs->regs[w->mem_index] * w->mem_scale;
		}
		a += (uint64_t)w->mem_disp;
		break;
	}
	if (w->address_width && w->address_width < 64)
		a &= (1ull << w->address_width) - 1;
	/* The segment base is added to the (truncated) effective address. */
	if (w->addr_rule == VG_ADDR_FS_OPERAND)
		a += *fs_base;
	*ea = a;
	return true;
no_regs:
	*why = WHY_ADDR_NO_REGS;
	return false;
}

/* ---- heuristic ---- */

/* A candidate survives when it writes memory and its store can be the
 * watched location: the address is unknown, or it overlaps. */
static bool survives(const struct insn *d, uint64_t trap_ip, uint64_t watch_addr,
		     unsigned watch_len, const struct vg_regs *regs)
{
	struct vg_writer w;
	uint64_t ea;
	const char *why;

	if (!d->store)
		return false;
	fill(d, trap_ip - d->in.length, VG_CONF_HEURISTIC, &w);
	if (!vg_writer_store_address(&w, regs, NULL, &ea, &why))
		return true;
	return vg_writer_overlaps(ea, w.width, watch_addr, watch_len);
}

/* The longest survivor wins: a shorter candidate that ends at the trap IP
 * is usually the tail of the longer real instruction (the ModRM, SIB or
 * displacement bytes of a mov read as an instruction of their own). */
int vg_writer_decode_heuristic(const uint8_t *code, size_t n, uint64_t trap_ip,
			       uint64_t watch_addr, unsigned watch_len,
			       const struct vg_regs *regs, struct vg_writer *out)
{
	struct insn d, best;
	size_t max = n < MAX_INSN_LEN ? n : MAX_INSN_LEN;
	unsigned survivors = 0;

	clear(out);
	for (size_t len = max; len >= 1; len--) {
		if (decode_one(code + n - len, len, &d) < 0 || d.in.length != len)
			continue;
		if (!survives(&d, trap_ip, watch_addr, watch_len, regs))
			continue;
		if (survivors++ == 0)
			best = d;
	}
	if (survivors == 0)
		return -ENOENT;
	/* best.store points into the copy's own operand array. */
	best.store = written_memory(&best);
	fill(&best, trap_ip - best.in.length, VG_CONF_HEURISTIC, out);
	out->candidates = survivors;
	out->caveat = out->kind == VG_WRITER_STRING ? CAVEAT_HEURISTIC_STRING
						    : CAVEAT_HEURISTIC;
	return 0;
}

/* ---- value of one execution ---- */

bool vg_writer_value(const struct vg_writer *w, const struct vg_regs *regs,
		     uint64_t *value, const char **why)
{
	const char *unused;

	if (!why)
		why = &unused;
	switch (w->value_kind) {
	case VG_VALUE_IMMEDIATE:
	case VG_VALUE_ADD_IMMEDIATE:
		*value = w->immediate;
		return true;
	case VG_VALUE_ADD_REGISTER:
	case VG_VALUE_REGISTER:
		if (!regs || regs->mask == 0) {
			*why = WHY_NO_REGS;
			return false;
		}
		if (!reg_known(regs, w->value_reg)) {
			*why = WHY_REG_MISSING;
			return false;
		}
		*value = regs->regs[w->value_reg] >> w->value_shift;
		if (w->value_kind == VG_VALUE_ADD_REGISTER && w->negate)
			*value = 0 - *value;
		*value = truncate_to(*value, w->width);
		return true;
	default:
		*why = w->why ? w->why : WHY_OTHER;
		return false;
	}
}

int64_t vg_writer_delta(const struct vg_writer *w, uint64_t value)
{
	unsigned bits = w->width && w->width < 8 ? w->width * 8u : 64u;

	if (bits < 64 && (value >> (bits - 1) & 1))
		value |= ~0ull << bits;   /* sign-extend */
	return (int64_t)value;
}

bool vg_writer_after_syscall(const uint8_t code[2])
{
	return code[0] == 0x0f && code[1] == 0x05;
}

/* ---- names ---- */

const char *vg_writer_kind_name(enum vg_writer_kind k)
{
	static const char *const names[] = {
		[VG_WRITER_UNKNOWN] = "unknown",
		[VG_WRITER_STORE] = "store",
		[VG_WRITER_RMW] = "read_modify_write",
		[VG_WRITER_STRING] = "string_store",
		[VG_WRITER_VECTOR] = "vector_store",
		[VG_WRITER_PUSH] = "push",
		[VG_WRITER_CALL] = "call",
		[VG_WRITER_KERNEL] = "kernel_write",
		[VG_WRITER_OTHER] = "other_write",
	};

	return (unsigned)k < ARRAY_SIZE(names) && names[k] ? names[k] : "unknown";
}

const char *vg_writer_confidence_name(enum vg_writer_confidence c)
{
	static const char *const names[] = {
		[VG_CONF_NONE] = "none",
		[VG_CONF_EXACT] = "exact",
		[VG_CONF_HEURISTIC] = "heuristic",
	};

	return (unsigned)c < ARRAY_SIZE(names) ? names[c] : "none";
}

const char *vg_value_kind_name(enum vg_value_kind k)
{
	static const char *const names[] = {
		[VG_VALUE_UNKNOWN] = "unknown",
		[VG_VALUE_REGISTER] = "register_store",
		[VG_VALUE_IMMEDIATE] = "immediate_store",
		[VG_VALUE_ADD_IMMEDIATE] = "add_immediate",
		[VG_VALUE_ADD_REGISTER] = "add_register",
	};

	return (unsigned)k < ARRAY_SIZE(names) ? names[k] : "unknown";
}
