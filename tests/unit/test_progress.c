/* test_progress.c - the progress counter: silent in its first interval (a
 * quick run shows nothing), then at most one report per interval with the
 * running total, from several threads at once; NULL is accepted. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/progress.h"

struct seen {
	int reports;
	uint64_t last_done, total;
	const char *what;
};

static void record(void *arg, const char *what, uint64_t done, uint64_t total, double seconds)
{
	struct seen *s = arg;

	(void)seconds;
	__atomic_add_fetch(&s->reports, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->last_done, done, __ATOMIC_RELAXED);
	__atomic_store_n(&s->total, total, __ATOMIC_RELAXED);
	__atomic_store_n(&s->what, what, __ATOMIC_RELAXED);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_quiet_then_rate_limited(void **state)
{
	struct seen s = { 0 };
	struct vg_progress p = { .report = record, .arg = &s, .what = "snapshot",
				 .interval_ns = 200000000u };

	(void)state;
	vg_progress_start(&p, 1000);
	for (int i = 0; i < 100; i++)
		vg_progress_add(&p, 1);
	assert_int_equal(s.reports, 0);   /* all within the first 200 ms */
	assert_false(p.reported);
	sleep_ms(220);
	vg_progress_add(&p, 1);
	assert_int_equal(s.reports, 1);
	assert_int_equal(s.last_done, 101);
	assert_int_equal(s.total, 1000);
	assert_string_equal(s.what, "snapshot");
	assert_true(p.reported);
	for (int i = 0; i < 100; i++)
		vg_progress_add(&p, 1);   /* within the next interval */
	assert_int_equal(s.reports, 1);
	sleep_ms(220);
	vg_progress_add(&p, 0);
	assert_int_equal(s.reports, 2);
	assert_int_equal(s.last_done, 201);
}

static void *adder(void *arg)
{
	for (int i = 0; i < 20000; i++)
		vg_progress_add(arg, 3);
	return NULL;
}

static void test_threads_count_all(void **state)
{
	struct seen s = { 0 };
	struct vg_progress p = { .report = record, .arg = &s, .what = "x", .interval_ns = 1 };
	pthread_t t[4];

	(void)state;
	vg_progress_start(&p, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, adder, &p), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(p.done, 4 * 20000 * 3);
	assert_true(s.reports > 0);
	assert_true(s.last_done <= 4 * 20000 * 3);
}

static void test_null(void **state)
{
	struct vg_progress silent = { 0 };   /* no report function */

	(void)state;
	vg_progress_start(NULL, 5);
	vg_progress_add(NULL, 5);
	vg_progress_start(&silent, 5);
	vg_progress_add(&silent, 5);
	assert_false(silent.reported);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet_then_rate_limited),
		cmocka_unit_test(test_threads_count_all),
		cmocka_unit_test(test_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
