/* test_dynlib.c - util/dynlib.c: a library found fills every slot; a
 * missing library, or a function it lacks, is named in the reason. */
#include "util/dynlib.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_loads_and_fills(void **state)
{
	static const char *const libc[] = { "libnot-there.so.9", "libc.so.6" };
	size_t (*my_strlen)(const char *) = NULL;
	void *my_memchr = NULL;
	const struct vg_dynlib_fn fns[] = {
		{ "strlen", (void **)&my_strlen },
		{ "memchr", &my_memchr },
	};
	char why[256] = "";

	(void)state;
	/* The first name that loads is used. */
	assert_true(vg_dynlib_load(libc, 2, fns, 2, why, sizeof(why)));
	assert_non_null(my_strlen);
	assert_non_null(my_memchr);
	assert_int_equal(my_strlen("vigil"), 5);
}

static void test_missing_library(void **state)
{
	static const char *const none[] = { "libnot-there.so.9" };
	void *slot = NULL;
	const struct vg_dynlib_fn fns[] = { { "f", &slot } };
	char why[256] = "";

	(void)state;
	assert_false(vg_dynlib_load(none, 1, fns, 1, why, sizeof(why)));
	assert_non_null(strstr(why, "cannot load libnot-there.so.9 ("));
	assert_null(slot);
}

static void test_missing_function(void **state)
{
	static const char *const libc[] = { "libc.so.6" };
	void *a = NULL, *b = NULL;
	const struct vg_dynlib_fn fns[] = {
		{ "strlen", &a },
		{ "vigil_no_such_function", &b },
	};
	char why[256] = "";

	(void)state;
	assert_false(vg_dynlib_load(libc, 1, fns, 2, why, sizeof(why)));
	assert_string_equal(why, "libc.so.6 lacks vigil_no_such_function, a function vigil calls");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_and_fills),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_missing_function),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
