/* test_error.c - the error value: first sentence wins, errno decides the
 * exit class, NULL is accepted everywhere, long sentences are cut safely. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"

static void test_first_wins(void **state)
{
	struct vg_error err = { 0 };

	(void)state;
	assert_int_equal(vg_error_set(&err, -ENOENT, "inner %d", 1), -ENOENT);
	assert_int_equal(vg_error_set(&err, -EIO, "outer"), -EIO);
	assert_string_equal(err.msg, "inner 1");
	assert_int_equal(err.code, -ENOENT);
	assert_int_equal(vg_error_reset(&err, -ESRCH, "gone"), -ESRCH);
	assert_string_equal(err.msg, "gone");
	assert_int_equal(err.exit, VG_EXIT_GONE);
	vg_error_clear(&err);
	assert_int_equal(err.code, 0);
	assert_string_equal(err.msg, "");
}

static void test_exit_classes(void **state)
{
	static const struct { int code; enum vg_exit exit; } table[] = {
		{ 0, VG_EXIT_OK }, { -EPERM, VG_EXIT_PERM }, { -EACCES, VG_EXIT_PERM },
		{ -ESRCH, VG_EXIT_GONE }, { -EINVAL, VG_EXIT_USAGE },
		{ -EFAULT, VG_EXIT_USAGE }, { -ENOEXEC, VG_EXIT_USAGE },
		{ -ERANGE, VG_EXIT_USAGE }, { -ENXIO, VG_EXIT_USAGE },
		{ -ENOENT, VG_EXIT_USAGE }, { -EIO, VG_EXIT_RUNTIME },
		{ -ENOMEM, VG_EXIT_RUNTIME },
	};
	struct vg_error err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		assert_int_equal(vg_error_exit_for_code(table[i].code), table[i].exit);
	vg_error_set(&err, -EIO, "x");
	vg_error_set_exit(&err, VG_EXIT_USAGE);
	assert_int_equal(err.exit, VG_EXIT_USAGE);
}

static void test_null_and_long(void **state)
{
	struct vg_error err = { 0 };
	char big[2000];

	(void)state;
	assert_int_equal(vg_error_set(NULL, -EIO, "ignored"), -EIO);
	assert_int_equal(vg_error_reset(NULL, -EIO, "ignored"), -EIO);
	vg_error_set_exit(NULL, VG_EXIT_USAGE);
	vg_error_clear(NULL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	vg_error_set(&err, -EIO, "%s", big);
	assert_int_equal(strlen(err.msg), sizeof(err.msg) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_wins),
		cmocka_unit_test(test_exit_classes),
		cmocka_unit_test(test_null_and_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
