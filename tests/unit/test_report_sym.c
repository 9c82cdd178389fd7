/* test_report_sym.c - report/sym.c's llvm-style answers, composed for a
 * batch: every line and column width (two digits a step, up to
 * 4294967295), 3,000 names over three rounds (more than the per-string
 * cache holds without sharing slots), escapes and unknown frames, and
 * text that grows past its first allocation, all against the text
 * snprintf writes. */
#include "report/sym.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_cache),
		cmocka_unit_test(test_escapes_and_unknowns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
