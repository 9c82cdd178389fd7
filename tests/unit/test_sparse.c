/* test_sparse.c - util/sparse.c: a table reads as zeros, costs no page
 * until it is written (the reason it exists: calloc clears a 100 KiB
 * heap block page by page), a small one is an ordinary heap block, and
 * a size that overflows is refused. */
#include "util/sparse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

/* Pages of [p, p + len) resident now. */
static size_t resident_pages(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	size_t span = (uintptr_t)p + len - lo, pages = (span + page - 1) / page;
	unsigned char *vec = malloc(pages);

	assert_non_null(vec);
	assert_int_equal(mincore((void *)lo, span, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

static void test_large_untouched(void **state)
{
	/* 1,937 entries of 56 bytes: libc's CU table, under calloc's mmap
	 * threshold. */
	size_t n = 1937, size = 56, len = n * size;
	unsigned char *t = vg_sparse_calloc(n, size);

	(void)state;
	assert_non_null(t);
	assert_int_equal(resident_pages(t, len), 0);
	t[len / 2] = 7;
	assert_int_equal(resident_pages(t, len), 1);
	for (size_t i = 0; i < len; i += 4096 / 2)
		assert_int_equal(t[i], i == len / 2 ? 7 : 0);
	assert_int_equal(t[len - 1], 0);
	vg_sparse_free(t, n, size);
}

static void test_small_zeroed(void **state)
{
	uint64_t *t = vg_sparse_calloc(100, sizeof(*t));

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(t[i], 0);
	t[99] = 1;
	vg_sparse_free(t, 100, sizeof(*t));
	/* No entries is still a table to free. */
	t = vg_sparse_calloc(0, sizeof(*t));
	assert_non_null(t);
	vg_sparse_free(t, 0, sizeof(*t));
	vg_sparse_free(NULL, 5, 5);
}

static void test_overflow_refused(void **state)
{
	(void)state;
	assert_null(vg_sparse_calloc(SIZE_MAX / 2, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_untouched),
		cmocka_unit_test(test_small_zeroed),
		cmocka_unit_test(test_overflow_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
