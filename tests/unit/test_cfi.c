/* test_cfi.c - one CFI step of the one evaluator (unwind/cfi.h) on this
 * test's own frames.  A noinline function records its rsp, rbp and an IP
 * inside its body in one asm block (so the three belong to the same CFI
 * row), copies the top of its stack, and records
 * __builtin_return_address(0): the step from that IP, with the test
 * executable's .eh_frame, must give exactly that address.  Once without a
 * frame pointer (CFA = rsp + n) and once with (CFA = rbp + 16), told apart
 * by leaving rbp out of the sampled registers.  The same step through a
 * compiled row (what the unwinder caches) must give the same caller and
 * recover the caller's rsp and rbp. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind/cfi.h"

#define PERF_BP 6
#define PERF_SP 7
#define PERF_IP 8
#define STACK_COPY 512

struct capture {
	uint64_t ip, sp, bp;
	uint64_t want_ra;
	uint8_t stack[STACK_COPY];
};

/* A raw copy of the live stack, as the kernel makes for a sample: under
 * ASan the stack holds poisoned redzones that an instrumented memcpy would
 * report, so this copy is not instrumented (byte by byte, volatile, so it
 * is not turned back into a memcpy call). */
__attribute__((no_sanitize_address, noinline))
static void copy_stack(uint8_t *dst, const volatile uint8_t *src)
{
	for (size_t i = 0; i < STACK_COPY; i++)
		dst[i] = src[i];
}

/* One asm block so that no instruction moving rsp lies between the IP and
 * the registers; early-clobber outputs so that lea cannot overwrite rbp
 * before it is read. */
#define CAPTURE(c) do { \
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" \
			 : "=&r"((c)->ip), "=&r"((c)->sp), "=&r"((c)->bp)); \
	copy_stack((c)->stack, (const volatile uint8_t *)(uintptr_t)(c)->sp); \
	(c)->want_ra = (uint64_t)(uintptr_t)__builtin_return_address(0); \
} while (0)

#if defined(__GNUC__) && !defined(__clang__)
#define NO_FP __attribute__((noinline, optimize("omit-frame-pointer")))
#define WITH_FP __attribute__((noinline, optimize("no-omit-frame-pointer")))
#define HAVE_FP_CONTROL 1
#else
#define NO_FP __attribute__((noinline))
#define WITH_FP __attribute__((noinline))
#define HAVE_FP_CONTROL 0
#endif

static NO_FP void capture_nofp(struct capture *c)
{
	CAPTURE(c);
}

static WITH_FP void capture_fp(struct capture *c)
{
	CAPTURE(c);
}

/* The callers: the empty asm after the call keeps it a call (no tail
 * jump), so the return address is in this function. */
static NO_FP void outer_nofp(struct capture *c)
{
	capture_nofp(c);
	__asm__ volatile("" ::: "memory");
}

static NO_FP void outer_fp(struct capture *c)
{
	capture_fp(c);
	__asm__ volatile("" ::: "memory");
}

struct fixture {
	int fd;
	Elf *elf;
	struct vg_cfi *cfi;
	uint64_t bias;
};

/* The first object dl_iterate_phdr reports is the main program. */
static int first_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

static int setup(void **state)
{
	static struct fixture f;
	struct vg_error err = { 0 };
	int r;

	elf_version(EV_CURRENT);
	f.fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(f.fd >= 0);
	f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(f.elf);
	r = vg_cfi_open(f.elf, &f.cfi, &err);
	if (r != 0)
		fail_msg("vg_cfi_open: %d %s", r, err.msg);
	dl_iterate_phdr(first_bias, &f.bias);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	vg_cfi_free(f->cfi);
	elf_end(f->elf);
	close(f->fd);
	return 0;
}

static struct vg_regs regs_of(const struct capture *c, bool with_bp)
{
	struct vg_regs regs = { 0 };

	regs.regs[PERF_SP] = c->sp;
	regs.regs[PERF_IP] = c->ip;
	regs.mask = 1ull << PERF_SP | 1ull << PERF_IP;
	if (with_bp) {
		regs.regs[PERF_BP] = c->bp;
		regs.mask |= 1ull << PERF_BP;
	}
	return regs;
}

/* Step from c and check the return address and that the CFA is the rsp
 * just before the call (the slot at CFA - 8 holds the return address). */
static void expect_step(struct fixture *f, const struct capture *c, bool with_bp)
{
	struct vg_regs regs = regs_of(c, with_bp);
	struct vg_error err = { 0 };
	uint64_t ra = 0, csp = 0, slot;
	int r;

	r = vg_cfi_step(f->cfi, c->ip - f->bias, &regs, c->stack, sizeof c->stack,
			&ra, &csp, &err);
	if (r != 0)
		fail_msg("step from 0x%llx: %d %s", (unsigned long long)c->ip, r, err.msg);
	assert_int_equal(ra, c->want_ra);
	assert_true(csp > c->sp && csp - 8 - c->sp < STACK_COPY);
	memcpy(&slot, c->stack + (csp - 8 - c->sp), 8);
	assert_int_equal(slot, c->want_ra);
}

static void test_step_without_frame_pointer(void **state)
{
	struct fixture *f = *state;
	static struct capture c;   /* not on the stack it copies */

	outer_nofp(&c);
	expect_step(f, &c, true);
	/* The rule is rsp-based: rbp is not needed. */
	expect_step(f, &c, false);
}

static void test_step_with_frame_pointer(void **state)
{
	struct fixture *f = *state;
	static struct capture c;   /* not on the stack it copies */
	struct vg_regs regs;
	struct vg_error err = { 0 };
	uint64_t ra, csp;

	outer_fp(&c);
	expect_step(f, &c, true);
	if (!HAVE_FP_CONTROL)
		skip();
	/* CFA = rbp + 16 here, so without rbp the step cannot be made. */
	regs = regs_of(&c, false);
	assert_int_equal(vg_cfi_step(f->cfi, c.ip - f->bias, &regs, c.stack,
				     sizeof c.stack, &ra, &csp, &err), -ENODATA);
	assert_non_null(strstr(err.msg, "rbp"));
}

static void test_no_fde(void **state)
{
	struct fixture *f = *state;
	static struct capture c;   /* not on the stack it copies */
	struct vg_regs regs;
	struct vg_error err = { 0 };
	uint64_t ra, csp;

	outer_nofp(&c);
	regs = regs_of(&c, true);
	assert_int_equal(vg_cfi_step(f->cfi, 0, &regs, c.stack, sizeof c.stack,
				     &ra, &csp, &err), -ENOENT);
	assert_int_equal(err.code, -ENOENT);
}

/* The slot must lie wholly inside the copy: one byte short is -ERANGE,
 * exactly enough succeeds. */
static void test_short_stack(void **state)
{
	struct fixture *f = *state;
	static struct capture c;   /* not on the stack it copies */
	struct vg_regs regs;
	struct vg_error err = { 0 };
	uint64_t ra, csp;
	size_t need;

	outer_nofp(&c);
	regs = regs_of(&c, true);
	assert_int_equal(vg_cfi_step(f->cfi, c.ip - f->bias, &regs, c.stack,
				     sizeof c.stack, &ra, &csp, &err), 0);
	need = (size_t)(csp - c.sp);
	assert_int_equal(vg_cfi_step(f->cfi, c.ip - f->bias, &regs, c.stack,
				     need - 1, &ra, &csp, &err), -ERANGE);
	assert_int_equal(vg_cfi_step(f->cfi, c.ip - f->bias, &regs, c.stack,
				     need, &ra, &csp, NULL), 0);
	assert_int_equal(ra, c.want_ra);
	assert_int_equal(vg_cfi_step(f->cfi, c.ip - f->bias, &regs, c.stack, 0,
				     &ra, &csp, NULL), -ERANGE);
}

/* The row API the unwinder caches: compiled once, applied to a frame,
 * the same answer as vg_cfi_step, with rsp = CFA and rbp recovered (the
 * frame-pointer function saved it, the other left it unchanged). */
static void test_row_step(void **state)
{
	struct fixture *f = *state;
	static struct capture c[2];   /* not on the stack they copy */
	const bool fp[2] = { false, true };

	outer_nofp(&c[0]);
	outer_fp(&c[1]);
	for (int k = 0; k < 2; k++) {
		struct vg_regs regs = regs_of(&c[k], true);
		struct vg_cfi_row row = { 0 };
		struct vg_cfi_frame fr;
		enum vg_unwind_stop why = VG_UNWIND_MAX_FRAMES;
		uint64_t ra = 0, csp = 0, saved_bp;

		assert_int_equal(vg_cfi_step(f->cfi, c[k].ip - f->bias, &regs, c[k].stack,
					     sizeof c[k].stack, &ra, &csp, NULL), 0);
		vg_cfi_row_find(f->cfi, c[k].ip - f->bias, &row);
		assert_true(row.state == VG_ROW_OK || row.state == VG_ROW_CFA_EXPRESSION);
		vg_cfi_frame_of(&regs, &fr);
		assert_int_equal(fr.r[VG_DWARF_RA], c[k].ip);
		assert_int_equal(vg_cfi_row_step(&row, &fr, c[k].stack, sizeof c[k].stack,
						 c[k].sp, &why), 0);
		assert_int_equal(fr.r[VG_DWARF_RA], c[k].want_ra);
		assert_int_equal(fr.r[VG_DWARF_SP], csp);
		assert_true(fr.known & 1u << VG_DWARF_BP);
		if (fp[k] && HAVE_FP_CONTROL) {
			/* push rbp: saved at CFA - 16. */
			memcpy(&saved_bp, c[k].stack + (csp - 16 - c[k].sp), 8);
			assert_int_equal(fr.r[VG_DWARF_BP], saved_bp);
		} else if (!fp[k]) {
			assert_int_equal(fr.r[VG_DWARF_BP], c[k].bp);
		}
		vg_cfi_row_clear(&row);
		assert_int_equal(row.state, VG_ROW_EMPTY);
		assert_null(row.exprs);
	}
	/* No FDE: a row that says so, and a step that stops on it. */
	{
		struct vg_cfi_row row;
		struct vg_cfi_frame fr;
		struct vg_regs regs = regs_of(&c[0], true);
		enum vg_unwind_stop why = VG_UNWIND_OUTERMOST;

		vg_cfi_row_find(f->cfi, 0, &row);
		assert_int_equal(row.state, VG_ROW_NO_CFI);
		vg_cfi_frame_of(&regs, &fr);
		assert_int_equal(vg_cfi_row_step(&row, &fr, c[0].stack, sizeof c[0].stack,
						 c[0].sp, &why), -1);
		assert_int_equal(why, VG_UNWIND_NO_CFI);
		vg_cfi_row_find(NULL, c[0].ip - f->bias, &row);
		assert_int_equal(row.state, VG_ROW_NO_CFI);
	}
}

/* The DWARF <-> perf register map. */
static void test_register_map(void **state)
{
	(void)state;
	assert_int_equal(vg_perf_of_dwarf[VG_DWARF_SP], PERF_SP);
	assert_int_equal(vg_perf_of_dwarf[VG_DWARF_BP], PERF_BP);
	assert_int_equal(vg_perf_of_dwarf[VG_DWARF_RA], PERF_IP);
	assert_int_equal(vg_perf_of_dwarf[1], 3);     /* rdx */
	assert_int_equal(vg_perf_of_dwarf[3], 1);     /* rbx */
	assert_int_equal(vg_perf_of_dwarf[15], 23);   /* r15 */
	for (int d = 0; d < VG_DWARF_NREGS; d++)
		assert_int_equal(vg_dwarf_of_perf(vg_perf_of_dwarf[d]), d);
	assert_int_equal(vg_dwarf_of_perf(9), -1);    /* flags */
	assert_string_equal(vg_dwarf_reg_name(VG_DWARF_BP), "rbp");
	assert_string_equal(vg_dwarf_reg_name(VG_DWARF_RA), "rip");
	assert_string_equal(vg_dwarf_reg_name(99), "?");
}

/* A file with no CFI at all. */
static void test_open_without_cfi(void **state)
{
	struct vg_cfi *cfi = (struct vg_cfi *)1;
	struct vg_error err = { 0 };
	Elf *elf;

	(void)state;
	elf = elf_memory((char[]){ 0 }, 1);   /* not an ELF: no sections */
	assert_non_null(elf);
	assert_int_equal(vg_cfi_open(elf, &cfi, &err), -ENOENT);
	assert_null(cfi);
	elf_end(elf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_without_frame_pointer),
		cmocka_unit_test(test_step_with_frame_pointer),
		cmocka_unit_test(test_no_fde),
		cmocka_unit_test(test_short_stack),
		cmocka_unit_test(test_open_without_cfi),
		cmocka_unit_test(test_row_step),
		cmocka_unit_test(test_register_map),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
