/* test_stack_capture.c - the task iterator's records (stack/task_regs.c):
 * the kernel's struct pt_regs mapped to perf register indices, checked
 * against the kernel's own headers (<asm/ptrace.h>, <asm/perf_regs.h>),
 * and the stream decoder on whole, short and lying records. */
#include "stack/task_regs.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <asm/perf_regs.h>
#include <asm/ptrace.h>
#include <cmocka.h>

/* Every register lands at its perf index: a bp/bx mix-up would unwind
 * frame-pointer code wrong without a single error. */
static void test_regs_to_perf(void **state)
{
	struct vg_task_regs_record rec;
	struct pt_regs pt;
	struct vg_regs r;
	uint64_t *w = (uint64_t *)&pt;

	(void)state;
	_Static_assert(sizeof(pt) == VG_TASK_REGS_NREGS * 8, "pt_regs is 21 words");
	memset(&rec, 0, sizeof(rec));
	for (size_t i = 0; i < VG_TASK_REGS_NREGS; i++)
		w[i] = 0x1000 + i;
	memcpy(rec.regs, &pt, sizeof(pt));
	vg_task_regs_to_perf(&rec, &r);
	assert_int_equal(r.regs[PERF_REG_X86_AX], pt.rax);
	assert_int_equal(r.regs[PERF_REG_X86_BX], pt.rbx);
	assert_int_equal(r.regs[PERF_REG_X86_CX], pt.rcx);
	assert_int_equal(r.regs[PERF_REG_X86_DX], pt.rdx);
	assert_int_equal(r.regs[PERF_REG_X86_SI], pt.rsi);
	assert_int_equal(r.regs[PERF_REG_X86_DI], pt.rdi);
	assert_int_equal(r.regs[PERF_REG_X86_BP], pt.rbp);
	assert_int_equal(r.regs[PERF_REG_X86_SP], pt.rsp);
	assert_int_equal(r.regs[PERF_REG_X86_IP], pt.rip);
	assert_int_equal(r.regs[PERF_REG_X86_FLAGS], pt.eflags);
	assert_int_equal(r.regs[PERF_REG_X86_CS], pt.cs);
	assert_int_equal(r.regs[PERF_REG_X86_SS], pt.ss);
	assert_int_equal(r.regs[PERF_REG_X86_R8], pt.r8);
	assert_int_equal(r.regs[PERF_REG_X86_R9], pt.r9);
	assert_int_equal(r.regs[PERF_REG_X86_R10], pt.r10);
	assert_int_equal(r.regs[PERF_REG_X86_R11], pt.r11);
	assert_int_equal(r.regs[PERF_REG_X86_R12], pt.r12);
	assert_int_equal(r.regs[PERF_REG_X86_R13], pt.r13);
	assert_int_equal(r.regs[PERF_REG_X86_R14], pt.r14);
	assert_int_equal(r.regs[PERF_REG_X86_R15], pt.r15);
	assert_true(r.mask & (1ull << PERF_REG_X86_BP));
	assert_true(r.mask & (1ull << PERF_REG_X86_R15));
	/* no registers: nothing known */
	rec.flags = VG_TASK_NO_REGS;
	vg_task_regs_to_perf(&rec, &r);
	assert_int_equal(r.mask, 0);
}

/* Still: off the CPU before and after, switch counts unchanged. */
static void test_still(void **state)
{
	struct vg_task_regs_record rec = { .csw_before = 7, .csw_after = 7 };

	(void)state;
	assert_true(vg_task_regs_still(&rec));
	rec.csw_after = 8;
	assert_false(vg_task_regs_still(&rec));
	rec.csw_after = 7;
	rec.flags = VG_TASK_ON_CPU_AFTER;
	assert_false(vg_task_regs_still(&rec));
}

static void test_stream(void **state)
{
	uint8_t buf[2 * sizeof(struct vg_task_regs_record) + 16];
	struct vg_task_regs_record a = { .tid = 11, .stack_len = 16 }, b = { .tid = 12 }, got;
	const uint8_t *stack;
	size_t off = 0;

	(void)state;
	memcpy(buf, &a, sizeof(a));
	memset(buf + sizeof(a), 0xab, 16);
	memcpy(buf + sizeof(a) + 16, &b, sizeof(b));
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf), &off, &got, &stack), 1);
	assert_int_equal(got.tid, 11);
	assert_int_equal(got.stack_len, 16);
	assert_ptr_equal(stack, buf + sizeof(a));
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf), &off, &got, &stack), 1);
	assert_int_equal(got.tid, 12);
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf), &off, &got, &stack), 0);
	/* cut inside the second record, and a stack_len past the end */
	off = 0;
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf) - 1, &off, &got, &stack), 1);
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf) - 1, &off, &got, &stack), -EINVAL);
	off = 0;
	assert_int_equal(vg_task_regs_next(buf, sizeof(a) + 15, &off, &got, &stack), -EINVAL);
	a.stack_len = VG_TASK_REGS_MAX_STACK + 8;
	memcpy(buf, &a, sizeof(a));
	off = 0;
	assert_int_equal(vg_task_regs_next(buf, sizeof(buf), &off, &got, &stack), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regs_to_perf),
		cmocka_unit_test(test_still),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
