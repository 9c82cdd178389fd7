/* test_writer.c - the writer of a watched location, decoded from real
 * instructions: each case below is assembled into this binary as a tiny
 * "function" (a prologue, then the writer), and the bytes from its start
 * label to its end label (the trap IP) go to the exact decoder, which must
 * name the instruction, its width, its memory operand and where the value
 * comes from.  The heuristic decoder gets hand-made byte strings whose
 * suffixes also decode, and the sampled registers must pick the candidate
 * (or none). */
#include <asm/perf_regs.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "watch/writer.h"

/* A case: global start label, prologue, the instruction(s), global end
 * label.  ud2 after the end keeps anything from falling through: these
 * are decoded, never run. */
#define CASE(name, insns)                                             \
	".globl " #name "\n.hidden " #name "\n" #name ":\n"             \
	"\tpush %rbp\n\tmov %rsp, %rbp\n" insns "\n"                    \
	".globl " #name "_end\n.hidden " #name "_end\n" #name "_end:\n" \
	"\tud2\n"

__asm__(
	".pushsection .data.vgw, \"aw\", @progbits\n"
	".globl vgw_data\n.hidden vgw_data\nvgw_data: .quad 0\n"
	".popsection\n"
	".pushsection .text.vgw, \"ax\", @progbits\n"
	CASE(vgw_mov8, "\tmov %al, (%rdi)")
	CASE(vgw_mov_ah, "\tmov %ah, 8(%rdi)")
	CASE(vgw_mov_r9b, "\tmov %r9b, (%rax,%rbx,4)")
	CASE(vgw_mov16, "\tmov %si, (%rdi)")
	CASE(vgw_mov32, "\tmov %eax, (%rdi)")
	CASE(vgw_mov64, "\tmov %r15, -16(%rbp)")
	CASE(vgw_imm64, "\tmovq $-1, (%rdi)")
	CASE(vgw_imm8, "\tmovb $0x80, (%rdi)")
	CASE(vgw_imm16, "\tmovw $-2, 2(%rdi)")
	CASE(vgw_lock_add, "\tlock addl $1, (%rdi)")
	CASE(vgw_xchg, "\txchg %eax, (%rdi)")
	CASE(vgw_cmpxchg, "\tlock cmpxchg %rcx, (%rdi)")
	CASE(vgw_inc, "\tincl 4(%rdi)")
	CASE(vgw_sub_reg, "\tsub %rsi, (%rdi)")
	CASE(vgw_sub_imm, "\tsubl $5, (%rdi)")
	CASE(vgw_dec16, "\tdecw (%rdi)")
	CASE(vgw_adc, "\tadcl $1, (%rdi)")
	CASE(vgw_rep_stosb, "\trep stosb")
	CASE(vgw_stosq, "\tstosq")
	CASE(vgw_rep_movsb, "\trep movsb")
	CASE(vgw_movups, "\tmovups %xmm0, (%rdi)")
	CASE(vgw_vmovdqu, "\tvmovdqu %ymm1, 32(%rdi)")
	CASE(vgw_push_reg, "\tpush %rbx")
	CASE(vgw_push_imm, "\tpush $-5")
	CASE(vgw_pushfq, "\tpushfq")
	CASE(vgw_load, "\tmov (%rdi), %eax")
	CASE(vgw_lea, "\tlea (%rdi,%rcx,4), %rax")
	CASE(vgw_rip, "\tmov %edx, vgw_data(%rip)")
	CASE(vgw_sete, "\tsete (%rdi)")
	CASE(vgw_movbe, "\tmovbe %eax, (%rdi)")
	CASE(vgw_call, "\tcall 1f\n1:")
	CASE(vgw_pop, "\tpopq 8(%rsp)")
	CASE(vgw_fxsave, "\tfxsave (%rdi)")
	CASE(vgw_movnti, "\tmovnti %rdx, (%rdi)")
	".popsection\n");

#define DECLARE(name) extern const uint8_t name[], name##_end[]
DECLARE(vgw_mov8); DECLARE(vgw_mov_ah); DECLARE(vgw_mov_r9b); DECLARE(vgw_mov16);
DECLARE(vgw_mov32); DECLARE(vgw_mov64); DECLARE(vgw_imm64); DECLARE(vgw_imm8);
DECLARE(vgw_imm16); DECLARE(vgw_lock_add); DECLARE(vgw_xchg); DECLARE(vgw_cmpxchg);
DECLARE(vgw_inc); DECLARE(vgw_sub_reg); DECLARE(vgw_sub_imm); DECLARE(vgw_dec16); DECLARE(vgw_adc);
DECLARE(vgw_rep_stosb); DECLARE(vgw_stosq); DECLARE(vgw_rep_movsb);
DECLARE(vgw_movups); DECLARE(vgw_vmovdqu); DECLARE(vgw_push_reg); DECLARE(vgw_push_imm);
DECLARE(vgw_pushfq); DECLARE(vgw_load); DECLARE(vgw_lea); DECLARE(vgw_rip);
DECLARE(vgw_sete); DECLARE(vgw_movbe); DECLARE(vgw_call); DECLARE(vgw_pop);
DECLARE(vgw_fxsave); DECLARE(vgw_movnti);
extern uint64_t vgw_data;

#define PROLOGUE_LEN 4   /* push %rbp (1) + mov %rsp, %rbp (3) */

/* Exact decode of [start, end): must succeed and end at end. */
static struct vg_writer exact(const uint8_t *start, const uint8_t *end)
{
	struct vg_writer w;
	int r = vg_writer_decode_exact(start, (size_t)(end - start),
				       (uint64_t)(uintptr_t)start, &w);

	if (r != 0)
		fail_msg("decode at %p: %d", (const void *)start, r);
	assert_int_equal(w.confidence, VG_CONF_EXACT);
	assert_int_equal(w.ip + w.length, (uint64_t)(uintptr_t)end);
	assert_int_equal(w.ip, (uint64_t)(uintptr_t)start + PROLOGUE_LEN);
	assert_int_equal(w.candidates, 0);
	return w;
}
#define EXACT(name) exact(name, name##_end)

static void expect_text(const struct vg_writer *w, const char *text)
{
	if (strcmp(w->text, text) != 0)
		fail_msg("text '%s', want '%s'", w->text, text);
}

static void expect_mem(const struct vg_writer *w, int base, int index,
		       unsigned scale, int64_t disp)
{
	assert_int_equal(w->mem_base, base);
	assert_int_equal(w->mem_index, index);
	assert_int_equal(w->mem_scale, scale);
	assert_int_equal(w->mem_disp, disp);
	assert_false(w->rip_relative);
}

static void expect_register(const struct vg_writer *w, int reg, const char *name,
			    unsigned shift)
{
	assert_int_equal(w->value_kind, VG_VALUE_REGISTER);
	assert_int_equal(w->value_reg, reg);
	assert_string_equal(w->value_reg_name, name);
	assert_int_equal(w->value_shift, shift);
	assert_null(w->why);
}

static void expect_immediate(const struct vg_writer *w, uint64_t imm)
{
	assert_int_equal(w->value_kind, VG_VALUE_IMMEDIATE);
	assert_int_equal(w->immediate, imm);
	assert_int_equal(w->value_reg, -1);
	assert_null(w->why);
}

static void expect_unknown_value(const struct vg_writer *w, const char *why)
{
	assert_int_equal(w->value_kind, VG_VALUE_UNKNOWN);
	assert_int_equal(w->value_reg, -1);
	assert_non_null(w->why);
	assert_string_equal(w->why, why);
}

/* Every register known, each with a distinct byte pattern. */
static struct vg_regs all_regs(void)
{
	struct vg_regs r = { .mask = (1ull << VG_NREGS) - 1 };

	for (int i = 0; i < VG_NREGS; i++)
		r.regs[i] = 0x1122334455667700ull + (uint64_t)i;
	r.regs[PERF_REG_X86_AX] = 0x1122334455667788ull;
	return r;
}

static uint64_t value_of(const struct vg_writer *w, const struct vg_regs *regs)
{
	uint64_t v = 0;
	const char *why = NULL;

	if (!vg_writer_value(w, regs, &v, &why))
		fail_msg("no value: %s", why ? why : "(null)");
	return v;
}

/* ---- plain stores ---- */

static void test_store_registers(void **state)
{
	struct vg_regs regs = all_regs();
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_mov8);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "mov");
	assert_false(w.lock);
	assert_false(w.rep);
	assert_int_equal(w.width, 1);
	expect_text(&w, "mov byte ptr [rdi], al");
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 0);
	expect_register(&w, PERF_REG_X86_AX, "al", 0);
	assert_null(w.caveat);
	assert_int_equal(value_of(&w, &regs), 0x88);

	w = EXACT(vgw_mov_ah);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.length, 3);
	assert_int_equal(w.width, 1);
	expect_text(&w, "mov byte ptr [rdi+0x8], ah");
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 8);
	expect_register(&w, PERF_REG_X86_AX, "ah", 8);
	assert_int_equal(value_of(&w, &regs), 0x77);

	w = EXACT(vgw_mov_r9b);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.length, 4);
	assert_int_equal(w.width, 1);
	expect_text(&w, "mov byte ptr [rax+rbx*4], r9b");
	expect_mem(&w, PERF_REG_X86_AX, PERF_REG_X86_BX, 4, 0);
	expect_register(&w, PERF_REG_X86_R9, "r9b", 0);
	assert_int_equal(value_of(&w, &regs), 0x11);   /* 0x...7700 + 17 */

	w = EXACT(vgw_mov16);
	assert_int_equal(w.length, 3);
	assert_int_equal(w.width, 2);
	expect_text(&w, "mov word ptr [rdi], si");
	expect_register(&w, PERF_REG_X86_SI, "si", 0);
	assert_int_equal(value_of(&w, &regs), 0x7704);

	w = EXACT(vgw_mov32);
	assert_int_equal(w.length, 2);
	assert_int_equal(w.width, 4);
	expect_text(&w, "mov dword ptr [rdi], eax");
	expect_register(&w, PERF_REG_X86_AX, "eax", 0);
	assert_int_equal(value_of(&w, &regs), 0x55667788);

	w = EXACT(vgw_mov64);
	assert_int_equal(w.length, 4);
	assert_int_equal(w.width, 8);
	expect_text(&w, "mov qword ptr [rbp-0x10], r15");
	expect_mem(&w, PERF_REG_X86_BP, -1, 0, -16);
	expect_register(&w, PERF_REG_X86_R15, "r15", 0);
	assert_int_equal(value_of(&w, &regs), 0x1122334455667717ull);

	w = EXACT(vgw_movnti);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_string_equal(w.mnemonic, "movnti");
	assert_int_equal(w.width, 8);
	expect_register(&w, PERF_REG_X86_DX, "rdx", 0);
}

static void test_store_immediates(void **state)
{
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_imm64);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.length, 7);
	assert_int_equal(w.width, 8);
	expect_text(&w, "mov qword ptr [rdi], 0xffffffffffffffff");
	expect_immediate(&w, 0xffffffffffffffffull);
	/* An immediate needs no registers. */
	assert_int_equal(value_of(&w, NULL), 0xffffffffffffffffull);

	w = EXACT(vgw_imm8);
	assert_int_equal(w.length, 3);
	assert_int_equal(w.width, 1);
	expect_immediate(&w, 0x80);

	w = EXACT(vgw_imm16);
	assert_int_equal(w.length, 6);
	assert_int_equal(w.width, 2);
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 2);
	expect_immediate(&w, 0xfffe);
}

static void test_store_others(void **state)
{
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_sete);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_string_equal(w.mnemonic, "setz");
	assert_int_equal(w.width, 1);
	expect_unknown_value(&w, "setcc: the value (0 or 1) depends on the flags before the instruction");

	w = EXACT(vgw_movbe);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_string_equal(w.mnemonic, "movbe");
	assert_int_equal(w.width, 4);
	expect_unknown_value(&w, "movbe: the register is stored byte-swapped");

	w = EXACT(vgw_pop);
	assert_int_equal(w.kind, VG_WRITER_OTHER);
	assert_string_equal(w.mnemonic, "pop");
	assert_int_equal(w.width, 8);
	expect_mem(&w, PERF_REG_X86_SP, -1, 0, 8);
	expect_unknown_value(&w, "the value was read from memory");

	/* 512 bytes do not fit the width field: 0 = unknown. */
	w = EXACT(vgw_fxsave);
	assert_int_equal(w.kind, VG_WRITER_OTHER);
	assert_string_equal(w.mnemonic, "fxsave");
	assert_int_equal(w.width, 0);
	assert_int_equal(w.value_kind, VG_VALUE_UNKNOWN);
}

/* ---- read-modify-write ---- */

static void test_rmw(void **state)
{
	static const char rmw[] = "read-modify-write: the value depends on the old contents";
	struct vg_regs regs = all_regs();
	struct vg_writer w;
	uint64_t v = 0;
	const char *why = NULL;

	(void)state;
	w = EXACT(vgw_lock_add);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_int_equal(w.length, 4);
	assert_string_equal(w.mnemonic, "lock add");
	assert_true(w.lock);
	assert_int_equal(w.width, 4);
	expect_text(&w, "lock add dword ptr [rdi], 0x1");
	/* The old contents are unknown, what was added is known. */
	assert_int_equal(w.value_kind, VG_VALUE_ADD_IMMEDIATE);
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(v, 1);
	assert_int_equal(vg_writer_delta(&w, v), 1);

	w = EXACT(vgw_xchg);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "xchg");
	assert_true(w.lock);   /* implicit with a memory operand */
	assert_int_equal(w.width, 4);
	expect_unknown_value(&w, "xchg: the register now holds the old value");

	w = EXACT(vgw_cmpxchg);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_int_equal(w.length, 5);
	assert_string_equal(w.mnemonic, "lock cmpxchg");
	assert_true(w.lock);
	assert_int_equal(w.width, 8);
	expect_text(&w, "lock cmpxchg qword ptr [rdi], rcx");
	expect_unknown_value(&w, rmw);

	w = EXACT(vgw_inc);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_int_equal(w.length, 3);
	assert_string_equal(w.mnemonic, "inc");
	assert_false(w.lock);
	assert_int_equal(w.width, 4);
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 4);
	assert_int_equal(w.value_kind, VG_VALUE_ADD_IMMEDIATE);
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(vg_writer_delta(&w, v), 1);

	/* sub of a register: minus the sampled register, at the width. */
	w = EXACT(vgw_sub_reg);
	assert_int_equal(w.value_kind, VG_VALUE_ADD_REGISTER);
	assert_string_equal(w.value_reg_name, "rsi");
	regs.regs[PERF_REG_X86_SI] = 3;
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(vg_writer_delta(&w, v), -3);
	w = EXACT(vgw_sub_imm);
	assert_int_equal(w.value_kind, VG_VALUE_ADD_IMMEDIATE);
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(v, 0xfffffffb);
	assert_int_equal(vg_writer_delta(&w, v), -5);
	w = EXACT(vgw_dec16);
	assert_int_equal(w.width, 2);
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(v, 0xffff);
	assert_int_equal(vg_writer_delta(&w, v), -1);
	/* adc adds the carry too: unknown. */
	w = EXACT(vgw_adc);
	expect_unknown_value(&w, rmw);
	assert_false(vg_writer_value(&w, &regs, &v, &why));
	assert_string_equal(why, rmw);
}

/* ---- string, vector, stack ---- */

static void test_string(void **state)
{
	struct vg_regs regs = all_regs();
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_rep_stosb);
	assert_int_equal(w.kind, VG_WRITER_STRING);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "rep stosb");
	assert_true(w.rep);
	assert_false(w.lock);
	assert_int_equal(w.width, 1);
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 0);
	assert_non_null(w.caveat);
	assert_non_null(strstr(w.caveat, "once per iteration"));
	/* stos leaves rax alone, so al is the value even one element late. */
	expect_register(&w, PERF_REG_X86_AX, "al", 0);
	assert_int_equal(value_of(&w, &regs), 0x88);

	w = EXACT(vgw_stosq);
	assert_int_equal(w.kind, VG_WRITER_STRING);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "stosq");
	assert_false(w.rep);
	assert_int_equal(w.width, 8);
	expect_register(&w, PERF_REG_X86_AX, "rax", 0);

	w = EXACT(vgw_rep_movsb);
	assert_int_equal(w.kind, VG_WRITER_STRING);
	assert_string_equal(w.mnemonic, "rep movsb");
	assert_true(w.rep);
	assert_int_equal(w.width, 1);
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 0);
	expect_unknown_value(&w, "movs: the value was copied from memory");
}

static void test_vector(void **state)
{
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_movups);
	assert_int_equal(w.kind, VG_WRITER_VECTOR);
	assert_int_equal(w.length, 3);
	assert_string_equal(w.mnemonic, "movups");
	assert_int_equal(w.width, 16);
	expect_text(&w, "movups xmmword ptr [rdi], xmm0");
	assert_int_equal(w.value_kind, VG_VALUE_UNKNOWN);
	assert_non_null(strstr(w.why, "vector store"));

	w = EXACT(vgw_vmovdqu);
	assert_int_equal(w.kind, VG_WRITER_VECTOR);
	assert_string_equal(w.mnemonic, "vmovdqu");
	assert_int_equal(w.width, 32);
	expect_mem(&w, PERF_REG_X86_DI, -1, 0, 32);
	expect_text(&w, "vmovdqu ymmword ptr [rdi+0x20], ymm1");
}

static void test_stack(void **state)
{
	struct vg_regs regs = all_regs();
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_push_reg);
	assert_int_equal(w.kind, VG_WRITER_PUSH);
	assert_int_equal(w.length, 1);
	assert_string_equal(w.mnemonic, "push");
	assert_int_equal(w.width, 8);
	expect_mem(&w, PERF_REG_X86_SP, -1, 0, 0);
	expect_register(&w, PERF_REG_X86_BX, "rbx", 0);
	assert_int_equal(value_of(&w, &regs), 0x1122334455667701ull);

	w = EXACT(vgw_push_imm);
	assert_int_equal(w.kind, VG_WRITER_PUSH);
	assert_int_equal(w.length, 2);
	assert_int_equal(w.width, 8);
	expect_immediate(&w, 0xfffffffffffffffbull);

	w = EXACT(vgw_pushfq);
	assert_int_equal(w.kind, VG_WRITER_PUSH);
	assert_string_equal(w.mnemonic, "pushfq");
	assert_int_equal(w.value_kind, VG_VALUE_UNKNOWN);

	/* A call to the next instruction is its own writer: it stored the
	 * address of that instruction. */
	w = EXACT(vgw_call);
	assert_int_equal(w.kind, VG_WRITER_CALL);
	assert_int_equal(w.length, 5);
	assert_int_equal(w.width, 8);
	expect_immediate(&w, (uint64_t)(uintptr_t)vgw_call_end);
}

/* ---- not a writer, or no instruction ends at the trap IP ---- */

static void test_not_a_writer(void **state)
{
	static const char why[] =
		"the instruction before the trap IP does not write memory: the "
		"trap IP is a jump target or the write was not by this thread's code";
	struct vg_writer w;

	(void)state;
	w = EXACT(vgw_load);
	assert_int_equal(w.kind, VG_WRITER_UNKNOWN);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "mov");
	assert_int_equal(w.width, 0);
	assert_int_equal(w.mem_base, -1);
	assert_int_equal(w.value_kind, VG_VALUE_UNKNOWN);
	assert_string_equal(w.why, why);

	/* lea only forms an address */
	w = EXACT(vgw_lea);
	assert_int_equal(w.kind, VG_WRITER_UNKNOWN);
	assert_string_equal(w.mnemonic, "lea");
	assert_string_equal(w.why, why);
}

static void test_no_boundary(void **state)
{
	static const uint8_t bad[] = { 0x90, 0x06, 0x90 };   /* push es: invalid in 64-bit */
	const uint8_t *s = vgw_imm64;
	struct vg_writer w;

	(void)state;
	/* The trap IP inside the 7-byte store: the decode steps over it. */
	for (size_t n = PROLOGUE_LEN + 1; n < PROLOGUE_LEN + 7; n++)
		assert_int_equal(vg_writer_decode_exact(s, n, (uint64_t)(uintptr_t)s, &w),
				 -ENOENT);
	assert_int_equal(w.confidence, VG_CONF_NONE);
	/* The trap IP at the start: nothing ends there. */
	assert_int_equal(vg_writer_decode_exact(s, 0, 0x1000, &w), -ENOENT);
	assert_int_equal(vg_writer_decode_exact(bad, sizeof(bad), 0x1000, &w), -EINVAL);
	/* The prologue alone: mov %rsp, %rbp is the instruction before. */
	assert_int_equal(vg_writer_decode_exact(s, PROLOGUE_LEN, 0x1000, &w), 0);
	assert_int_equal(w.ip, 0x1001);
	assert_int_equal(w.kind, VG_WRITER_UNKNOWN);
}

static void test_rip_relative(void **state)
{
	struct vg_writer w = EXACT(vgw_rip);
	uint64_t target = (uint64_t)(uintptr_t)&vgw_data;
	char want[64];

	(void)state;
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.length, 6);
	assert_int_equal(w.width, 4);
	assert_true(w.rip_relative);
	assert_int_equal(w.mem_base, -1);
	assert_int_equal(w.mem_index, -1);
	assert_int_equal(w.mem_disp, (int64_t)(target - (uint64_t)(uintptr_t)vgw_rip_end));
	expect_register(&w, PERF_REG_X86_DX, "edx", 0);
	/* The text names the absolute target, not rip+disp. */
	snprintf(want, sizeof(want), "mov dword ptr [0x%llx], edx",
		 (unsigned long long)target);
	expect_text(&w, want);
}

/* fs: and gs: stores: the executable's thread-locals.  perf does not
 * sample the segment bases; with the thread's fs base given (the thread
 * pointer libthread_db lists) an fs: store's destination is known, a gs:
 * one never is. */
static void test_segment_stores(void **state)
{
	/* mov qword ptr fs:[-0x40], rax ; mov qword ptr gs:[-0x40], rax ;
	 * mov dword ptr fs:[rbx+0x10], ecx */
	static const uint8_t fs_abs[] = { 0x64, 0x48, 0x89, 0x04, 0x25, 0xc0, 0xff, 0xff, 0xff };
	static const uint8_t gs_abs[] = { 0x65, 0x48, 0x89, 0x04, 0x25, 0xc0, 0xff, 0xff, 0xff };
	static const uint8_t fs_base_reg[] = { 0x64, 0x89, 0x4b, 0x10 };
	struct vg_regs regs = { 0 };
	struct vg_writer w;
	uint64_t ea = 0, fs = 0x7f0000001000;
	const char *why = NULL;

	(void)state;
	assert_int_equal(vg_writer_decode_at(fs_abs, sizeof(fs_abs), 0x1000, &w), 0);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.addr_rule, VG_ADDR_FS_OPERAND);
	assert_false(vg_writer_store_address(&w, &regs, NULL, &ea, &why));
	assert_string_equal(why, "the store has an fs:/gs: segment, whose base is not sampled");
	assert_true(vg_writer_store_address(&w, &regs, &fs, &ea, &why));
	assert_int_equal(ea, fs - 0x40);

	assert_int_equal(vg_writer_decode_at(gs_abs, sizeof(gs_abs), 0x1000, &w), 0);
	assert_int_equal(w.addr_rule, VG_ADDR_UNKNOWN);
	assert_false(vg_writer_store_address(&w, &regs, &fs, &ea, &why));

	assert_int_equal(vg_writer_decode_at(fs_base_reg, sizeof(fs_base_reg), 0x1000, &w), 0);
	assert_int_equal(w.addr_rule, VG_ADDR_FS_OPERAND);
	assert_int_equal(w.width, 4);
	/* rbx not sampled: unknown even with the base. */
	assert_false(vg_writer_store_address(&w, &regs, &fs, &ea, &why));
	regs.mask = 1ull << PERF_REG_X86_BX;
	regs.regs[PERF_REG_X86_BX] = 0x20;
	assert_true(vg_writer_store_address(&w, &regs, &fs, &ea, &why));
	assert_int_equal(ea, fs + 0x30);
}

/* ---- value of one execution ---- */

static void test_value(void **state)
{
	struct vg_regs regs = all_regs(), none = { 0 };
	struct vg_writer w = EXACT(vgw_mov32);
	uint64_t v = 42;
	const char *why = NULL;

	(void)state;
	assert_false(vg_writer_value(&w, NULL, &v, &why));
	assert_string_equal(why, "registers not sampled (use --regs)");
	why = NULL;
	assert_false(vg_writer_value(&w, &none, &v, &why));
	assert_string_equal(why, "registers not sampled (use --regs)");
	why = NULL;
	regs.mask &= ~(1ull << PERF_REG_X86_AX);
	assert_false(vg_writer_value(&w, &regs, &v, &why));
	assert_string_equal(why, "the source register was not sampled");
	assert_int_equal(v, 42);
	regs.mask = 1ull << PERF_REG_X86_AX;
	assert_true(vg_writer_value(&w, &regs, &v, &why));
	assert_int_equal(v, 0x55667788);
	/* why may be NULL */
	regs.mask = 0;
	assert_false(vg_writer_value(&w, &regs, &v, NULL));
}

/* ---- heuristic ---- */

#define TRAP 0x400100ull
#define WATCH 0x7ffd0000ull

/* 8 nops, then `mov dword ptr [rsi], 0x789` written as the REX.W form:
 * 48 c7 06 89 07 00 00 = mov qword ptr [rsi], 0x789.  Its suffixes also
 * end at the trap IP: c7 06 89 07 00 00 (mov dword ptr [rsi], 0x789) and
 * 00 00 (add byte ptr [rax], al); the nops decode to one byte each and
 * 89 07 / 07 / 06 do not end there. */
static const uint8_t suffixes[] = {
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x48, 0xc7, 0x06, 0x89, 0x07, 0x00, 0x00,
};

static int heuristic(const uint8_t *code, size_t n, uint64_t watch,
		     const struct vg_regs *regs, struct vg_writer *w)
{
	return vg_writer_decode_heuristic(code, n, TRAP, watch, 4, regs, w);
}

static void test_heuristic_no_regs(void **state)
{
	struct vg_writer w;

	(void)state;
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, NULL, &w), 0);
	assert_int_equal(w.confidence, VG_CONF_HEURISTIC);
	assert_int_equal(w.candidates, 3);
	assert_int_equal(w.length, 7);
	assert_int_equal(w.ip, TRAP - 7);
	assert_int_equal(w.kind, VG_WRITER_STORE);
	assert_int_equal(w.width, 8);
	expect_text(&w, "mov qword ptr [rsi], 0x789");
	expect_immediate(&w, 0x789);
	assert_non_null(w.caveat);
	assert_non_null(strstr(w.caveat, "no function start known"));

	/* Only the last 15 bytes count: more in front changes nothing. */
	uint8_t longer[40];
	memset(longer, 0x90, sizeof(longer));
	memcpy(longer + sizeof(longer) - sizeof(suffixes), suffixes, sizeof(suffixes));
	assert_int_equal(heuristic(longer, sizeof(longer), WATCH, NULL, &w), 0);
	assert_int_equal(w.candidates, 3);
	assert_int_equal(w.length, 7);
}

static void test_heuristic_regs(void **state)
{
	struct vg_regs regs = all_regs();
	struct vg_writer w;

	(void)state;
	/* rsi at the watched location, rax elsewhere: the two [rsi] forms. */
	regs.regs[PERF_REG_X86_SI] = WATCH;
	regs.regs[PERF_REG_X86_AX] = WATCH + 0x1000;
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 2);
	assert_int_equal(w.length, 7);
	expect_mem(&w, PERF_REG_X86_SI, -1, 0, 0);

	/* A qword at WATCH-4 overlaps the watched dword; a dword there does not. */
	regs.regs[PERF_REG_X86_SI] = WATCH - 4;
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 1);
	assert_int_equal(w.length, 7);

	/* rax at the watched location: only the short guess is left. */
	regs.regs[PERF_REG_X86_SI] = WATCH + 0x1000;
	regs.regs[PERF_REG_X86_AX] = WATCH;
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 1);
	assert_int_equal(w.length, 2);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_string_equal(w.mnemonic, "add");
	expect_mem(&w, PERF_REG_X86_AX, -1, 0, 0);

	/* Neither: nothing survives. */
	regs.regs[PERF_REG_X86_AX] = WATCH + 0x2000;
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, &regs, &w), -ENOENT);
	assert_int_equal(w.confidence, VG_CONF_NONE);

	/* rsi not sampled: its address is unknown, so both [rsi] forms stay. */
	regs.mask &= ~(1ull << PERF_REG_X86_SI);
	assert_int_equal(heuristic(suffixes, sizeof(suffixes), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 2);
	assert_int_equal(w.length, 7);
}

static void test_heuristic_special_bases(void **state)
{
	/* mov dword ptr [rip+0x10], eax */
	static const uint8_t rip[] = { 0x89, 0x05, 0x10, 0x00, 0x00, 0x00 };
	static const uint8_t push_rbx[] = { 0x90, 0x53 };
	static const uint8_t rep_stosb[] = { 0x90, 0xf3, 0xaa };
	/* xchg qword ptr [rax], rax: its base changes, so its address is unknown */
	static const uint8_t xchg_self[] = { 0x90, 0x48, 0x87, 0x00 };
	struct vg_regs regs = all_regs();
	struct vg_writer w;

	(void)state;
	/* rip-relative: relative to the trap IP. */
	assert_int_equal(heuristic(rip, sizeof(rip), TRAP + 0x10, &regs, &w), 0);
	assert_int_equal(w.length, 6);
	assert_true(w.rip_relative);
	assert_int_equal(w.mem_disp, 0x10);
	assert_int_equal(heuristic(rip, sizeof(rip), TRAP + 0x20, &regs, &w), -ENOENT);

	/* push stores at the sampled (already decremented) rsp. */
	regs.regs[PERF_REG_X86_SP] = WATCH;
	assert_int_equal(heuristic(push_rbx, sizeof(push_rbx), WATCH, &regs, &w), 0);
	assert_int_equal(w.kind, VG_WRITER_PUSH);
	assert_int_equal(w.candidates, 1);
	regs.regs[PERF_REG_X86_SP] = WATCH + 8;
	assert_int_equal(heuristic(push_rbx, sizeof(push_rbx), WATCH, &regs, &w), -ENOENT);

	/* stos stored one element behind the sampled rdi (DF clear), or
	 * ahead of it (DF set); the watched location is [WATCH, WATCH+4).
	 * stosb alone is a candidate too. */
	regs.regs[PERF_REG_X86_DI] = WATCH + 4;
	regs.regs[PERF_REG_X86_FLAGS] = 0x202;
	assert_int_equal(heuristic(rep_stosb, sizeof(rep_stosb), WATCH, &regs, &w), 0);
	assert_int_equal(w.kind, VG_WRITER_STRING);
	assert_int_equal(w.candidates, 2);
	assert_int_equal(w.length, 2);
	assert_string_equal(w.mnemonic, "rep stosb");
	assert_non_null(strstr(w.caveat, "no function start known"));
	assert_non_null(strstr(w.caveat, "one element"));
	regs.regs[PERF_REG_X86_FLAGS] = 0x602;
	assert_int_equal(heuristic(rep_stosb, sizeof(rep_stosb), WATCH, &regs, &w), -ENOENT);
	regs.regs[PERF_REG_X86_DI] = WATCH - 1;
	assert_int_equal(heuristic(rep_stosb, sizeof(rep_stosb), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 2);
	regs.regs[PERF_REG_X86_FLAGS] = 0x202;
	assert_int_equal(heuristic(rep_stosb, sizeof(rep_stosb), WATCH, &regs, &w), -ENOENT);
	/* Without the flags the direction, and so the address, is unknown. */
	regs.mask &= ~(1ull << PERF_REG_X86_FLAGS);
	assert_int_equal(heuristic(rep_stosb, sizeof(rep_stosb), WATCH, &regs, &w), 0);
	assert_int_equal(w.candidates, 2);

	/* Far from the watched location, but the address is not knowable. */
	regs.regs[PERF_REG_X86_AX] = WATCH + 0x5000;
	assert_int_equal(heuristic(xchg_self, sizeof(xchg_self), WATCH, &regs, &w), 0);
	assert_int_equal(w.kind, VG_WRITER_RMW);
	assert_int_equal(w.length, 3);
	assert_int_equal(w.candidates, 2);   /* 48 87 00 and 87 00 */

	assert_int_equal(heuristic(rip, 0, WATCH, &regs, &w), -ENOENT);
}

/* ---- small things ---- */

static void test_after_syscall(void **state)
{
	static const uint8_t sys[2] = { 0x0f, 0x05 }, other[2] = { 0x0f, 0x04 },
		sysenter[2] = { 0x0f, 0x34 };

	(void)state;
	assert_true(vg_writer_after_syscall(sys));
	assert_false(vg_writer_after_syscall(other));
	assert_false(vg_writer_after_syscall(sysenter));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(vg_writer_kind_name(VG_WRITER_UNKNOWN), "unknown");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_STORE), "store");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_RMW), "read_modify_write");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_STRING), "string_store");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_VECTOR), "vector_store");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_PUSH), "push");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_CALL), "call");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_KERNEL), "kernel_write");
	assert_string_equal(vg_writer_kind_name(VG_WRITER_OTHER), "other_write");
	assert_string_equal(vg_writer_confidence_name(VG_CONF_NONE), "none");
	assert_string_equal(vg_writer_confidence_name(VG_CONF_EXACT), "exact");
	assert_string_equal(vg_writer_confidence_name(VG_CONF_HEURISTIC), "heuristic");
	assert_string_equal(vg_value_kind_name(VG_VALUE_UNKNOWN), "unknown");
	assert_string_equal(vg_value_kind_name(VG_VALUE_REGISTER), "register_store");
	assert_string_equal(vg_value_kind_name(VG_VALUE_IMMEDIATE), "immediate_store");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_registers),
		cmocka_unit_test(test_store_immediates),
		cmocka_unit_test(test_store_others),
		cmocka_unit_test(test_rmw),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_not_a_writer),
		cmocka_unit_test(test_no_boundary),
		cmocka_unit_test(test_rip_relative),
		cmocka_unit_test(test_segment_stores),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_heuristic_no_regs),
		cmocka_unit_test(test_heuristic_regs),
		cmocka_unit_test(test_heuristic_special_bases),
		cmocka_unit_test(test_after_syscall),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
