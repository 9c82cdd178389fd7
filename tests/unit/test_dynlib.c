/* test_dynlib.c - util/dynlib.c: a library found fills every slot, once;
 * a missing library, or a function it lacks, is named in the reason,
 * and asking again gives the same answer. */
#include "util/dynlib.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static size_t (*my_strlen)(const char *);
static void *my_memchr;
/* The first name that loads is used. */
static const char *const libc_second[] = { "libnot-there.so.9", "libc.so.6" };
static const struct vg_dynlib_fn fills_fns[] = {
	{ "strlen", (void **)&my_strlen },
	{ "memchr", &my_memchr },
};
static struct vg_dynlib fills = VG_DYNLIB(libc_second, fills_fns);

static void test_loads_and_fills(void **state)
{
	const char *why = "untouched";

	(void)state;
	assert_true(vg_dynlib_get(&fills, &why));
	assert_string_equal(why, "untouched");
	assert_non_null(my_strlen);
	assert_non_null(my_memchr);
	assert_int_equal(my_strlen("vigil"), 5);
	/* Loaded once: the slots stay, the answer too. */
	my_memchr = NULL;
	assert_true(vg_dynlib_get(&fills, NULL));
	assert_null(my_memchr);
}

static void *missing_slot;
static const char *const none[] = { "libnot-there.so.9" };
static const struct vg_dynlib_fn missing_fns[] = { { "f", &missing_slot } };
static struct vg_dynlib missing = VG_DYNLIB(none, missing_fns);

static void test_missing_library(void **state)
{
	const char *why = NULL;

	(void)state;
	assert_false(vg_dynlib_get(&missing, &why));
	assert_non_null(why);
	assert_non_null(strstr(why, "cannot load libnot-there.so.9 ("));
	assert_null(missing_slot);
	why = NULL;
	assert_false(vg_dynlib_get(&missing, &why));
	assert_non_null(strstr(why, "cannot load libnot-there.so.9 ("));
}

static void *lacks_a, *lacks_b;
static const char *const libc_only[] = { "libc.so.6" };
static const struct vg_dynlib_fn lacks_fns[] = {
	{ "strlen", &lacks_a },
	{ "vigil_no_such_function", &lacks_b },
};
static struct vg_dynlib lacks = VG_DYNLIB(libc_only, lacks_fns);

static void test_missing_function(void **state)
{
	const char *why = NULL;

	(void)state;
	assert_false(vg_dynlib_get(&lacks, &why));
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
