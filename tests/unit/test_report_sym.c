/* test_report_sym.c - report/sym.c's llvm-style answers, composed for a
 * batch: every line and column width (two digits a step, up to
 * 4294967295), 3,000 names over three rounds (more than the per-string
 * cache holds without sharing slots), escapes and unknown frames, and
 * text that grows past its first allocation, all against the text
 * snprintf writes; and text reserved ahead, which moves into huge pages
 * and grows on from there with what it holds. */
#include "report/sym.h"
#include "util/hugebuf.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What llvm-symbolizer prints for one frame, escapes already applied. */
static size_t expect_frame(char *out, size_t cap, const char *fn, const char *file,
			   uint32_t line, uint32_t col)
{
	return (size_t)snprintf(out, cap, "%s\n%s:%" PRIu32 ":%" PRIu32 "\n", fn, file, line, col);
}

static void test_lines_and_cache(void **state)
{
	static const uint32_t nums[] = { 0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999,
					 100000, 123456, 999999, 1000000, 9999999, 10000000,
					 99999999, 100000000, 999999999, 1000000000, 4294967295u };
	const size_t n_nums = sizeof(nums) / sizeof(nums[0]);
	/* Distinct strings at distinct addresses: more than the cache has
	 * slots, so some of them share one. */
	enum { N_NAMES = 3000 };
	char (*names)[24] = calloc(N_NAMES, sizeof(*names));
	struct vg_report_sym_table tb = { .style = VG_REPORT_SYM_LLVM };
	struct vg_sym_result *res = calloc(1, sizeof(*res));
	size_t cap = 1 << 24, len = 0;
	char *want = malloc(cap);
	int image;   /* any address: the strings are "an image's" */

	(void)state;
	assert_non_null(names);
	assert_non_null(res);
	assert_non_null(want);
	for (size_t i = 0; i < N_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
	res->image = (const struct vg_image *)&image;
	for (size_t round = 0; round < 3; round++) {
		for (size_t i = 0; i < N_NAMES; i++) {
			uint32_t line = nums[(i + round) % n_nums], col = nums[(i * 7 + round) % n_nums];

			res->n_frames = 2;
			res->frames[0] = (struct vg_sym_frame){ .function = names[i], .file = "/src/a.c",
								 .line = line, .column = col };
			res->frames[1] = (struct vg_sym_frame){ .function = names[(i * 13) % N_NAMES],
								 .file = "/src/b.h", .line = col, .column = line };
			vg_report_sym_compose(&tb, NULL, res);
			len += expect_frame(want + len, cap - len, names[i], "/src/a.c", line, col);
			len += expect_frame(want + len, cap - len, names[(i * 13) % N_NAMES], "/src/b.h",
					    col, line);
			want[len++] = '\n';
		}
	}
	assert_false(tb.oom);
	assert_int_equal(tb.len, len);
	assert_memory_equal(tb.text, want, len);
	vg_report_sym_table_free(&tb);
	free(want);
	free(res);
	free(names);
}

/* A name with a byte to escape is escaped the first time and the
 * second (when the cache has seen it); a frame without a file, and an
 * answer without frames, are as before. */
static void test_escapes_and_unknowns(void **state)
{
	struct vg_report_sym_table tb = { .style = VG_REPORT_SYM_LLVM };
	struct vg_sym_result *res = calloc(1, sizeof(*res));
	static const char fn[] = "odd\tname";
	const char *want =
		"odd\\011name\n/x.c:5:6\n\n"
		"odd\\011name\n/x.c:5:6\n\n"
		"odd\\011name\n??:0:0\n\n"
		"??\n??:0:0\n\n";
	int image;

	(void)state;
	assert_non_null(res);
	res->image = (const struct vg_image *)&image;
	res->n_frames = 1;
	res->frames[0] = (struct vg_sym_frame){ .function = fn, .file = "/x.c", .line = 5, .column = 6 };
	vg_report_sym_compose(&tb, NULL, res);
	vg_report_sym_compose(&tb, NULL, res);
	res->frames[0].file = NULL;
	vg_report_sym_compose(&tb, NULL, res);
	res->n_frames = 0;
	vg_report_sym_compose(&tb, NULL, res);
	assert_int_equal(tb.len, strlen(want));
	assert_memory_equal(tb.text, want, tb.len);
	vg_report_sym_table_free(&tb);
	free(res);
}

/* 400,000 answers (4.4 MB) into a table that reserved room after its first
 * ten, and into one that did not: the same text.  The reserved one is in
 * huge pages (aligned, whole 2 MiB) from the reserve on, through its
 * growth past them. */
static void test_reserve(void **state)
{
	struct vg_report_sym_table plain = { .style = VG_REPORT_SYM_LLVM };
	struct vg_report_sym_table big = { .style = VG_REPORT_SYM_LLVM };
	char input[32];

	(void)state;
	for (int i = 0; i < 400000; i++) {
		snprintf(input, sizeof(input), "0x%x", i);
		vg_report_sym_compose_bad(&plain, input, "not an address of any image here");
		vg_report_sym_compose_bad(&big, input, "not an address of any image here");
		if (i == 9) {
			size_t len = big.len;

			assert_true(vg_report_sym_reserve(&big, 100));   /* has it */
			assert_int_equal(big.len, len);
			assert_true(vg_report_sym_reserve(&big, VG_HUGEBUF_MIN));
			assert_int_equal(big.cap, VG_HUGEBUF_MIN);
			assert_int_equal((uintptr_t)big.text % VG_HUGEBUF_MIN, 0);
			assert_int_equal(big.len, len);
			assert_memory_equal(big.text, plain.text, len);
		}
	}
	assert_false(plain.oom || big.oom);
	assert_true(big.len > 2 * VG_HUGEBUF_MIN);
	assert_int_equal(big.cap % VG_HUGEBUF_MIN, 0);
	assert_int_equal((uintptr_t)big.text % VG_HUGEBUF_MIN, 0);
	assert_int_equal(big.len, plain.len);
	assert_memory_equal(big.text, plain.text, plain.len);
	vg_report_sym_table_free(&plain);
	vg_report_sym_table_free(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_cache),
		cmocka_unit_test(test_escapes_and_unknowns),
		cmocka_unit_test(test_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
