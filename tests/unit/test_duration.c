/* test_duration.c - durations as the command line takes them: units,
 * fractions that make whole milliseconds, bare numbers still meaning
 * milliseconds, and everything else refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/duration.h"

static void test_accepted(void **state)
{
	static const struct { const char *s; uint64_t ms; } cases[] = {
		{ "2000", 2000 },        /* bare: milliseconds, as before units */
		{ "0x10", 16 },          /* bare hex: the old form still works */
		{ "0", 0 },              /* range is the caller's */
		{ "500ms", 500 }, { "2s", 2000 }, { "1.5s", 1500 }, { "1m", 60000 },
		{ "1h", 3600000 }, { "0.25s", 250 }, { "0.001s", 1 }, { "1.5m", 90000 },
		{ "2.000s", 2000 }, { "0.5h", 1800000 }, { "10ms", 10 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ms = 12345;
		int r = vg_parse_duration_ms(cases[i].s, &ms);

		if (r != 0 || ms != cases[i].ms)
			fail_msg("'%s': r=%d ms=%llu, want %llu", cases[i].s, r,
				 (unsigned long long)ms, (unsigned long long)cases[i].ms);
	}
}

static void test_refused(void **state)
{
	static const struct { const char *s; int r; } cases[] = {
		{ "", -EINVAL }, { "s", -EINVAL }, { "ms", -EINVAL }, { "2x", -EINVAL },
		{ "2 s", -EINVAL }, { "-1s", -EINVAL }, { "1.s", -EINVAL }, { ".5s", -EINVAL },
		{ "1.5ms", -EINVAL },         /* not a whole millisecond */
		{ "0.0001s", -EINVAL }, { "1.0000000001s", -EINVAL },
		{ "2S", -EINVAL }, { "2sec", -EINVAL }, { "2s2", -EINVAL }, { "1e3", -EINVAL },
		{ "0x10s", -EINVAL }, { "1d", -EINVAL },
		{ "18446744073709551616", -ERANGE },
		{ "18446744073709551615s", -ERANGE },
		{ "5124095576030432h", -ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ms = 777;
		int r = vg_parse_duration_ms(cases[i].s, &ms);

		if (r != cases[i].r || ms != 777)
			fail_msg("'%s': r=%d ms=%llu, want r=%d and ms untouched", cases[i].s, r,
				 (unsigned long long)ms, cases[i].r);
	}
	assert_int_equal(vg_parse_duration_ms(NULL, &(uint64_t){ 0 }), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
