/* test_hugebuf.c - util/hugebuf.c: sizes round up to whole 2 MiB pages
 * (0 when that overflows), a buffer is aligned to 2 MiB, reads as zeros
 * and takes writes over all of it, its mapping is marked for huge pages
 * where the kernel has them on request, and a size that cannot be mapped
 * is refused with ENOMEM. */
#include "util/hugebuf.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(vg_hugebuf_size(0), VG_HUGEBUF_MIN);
	assert_int_equal(vg_hugebuf_size(1), VG_HUGEBUF_MIN);
	assert_int_equal(vg_hugebuf_size(VG_HUGEBUF_MIN), VG_HUGEBUF_MIN);
	assert_int_equal(vg_hugebuf_size(VG_HUGEBUF_MIN + 1), 2 * VG_HUGEBUF_MIN);
	assert_int_equal(vg_hugebuf_size(SIZE_MAX), 0);
	assert_int_equal(vg_hugebuf_size(SIZE_MAX - VG_HUGEBUF_MIN + 2), 0);
	assert_int_equal(vg_hugebuf_size(SIZE_MAX - VG_HUGEBUF_MIN + 1), SIZE_MAX - VG_HUGEBUF_MIN + 1);
}

/* Does the kernel give this process huge pages on request (THP "always"
 * or "madvise", and not turned off for it by PR_SET_THP_DISABLE)?
 * Unknown (no sysfs file) counts as no. */
static bool thp_on_request(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";
	bool on;

	if (!f || prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 0) {
		if (f)
			fclose(f);
		return false;
	}
	on = fgets(line, sizeof(line), f) &&
	     (strstr(line, "[always]") || strstr(line, "[madvise]"));
	fclose(f);
	return on;
}

/* The "THPeligible:" field of the mapping that starts at p in
 * /proc/self/smaps, or -1 when there is none. */
static int thp_eligible(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	int eligible = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo == (uintptr_t)p;
		else if (in && sscanf(line, "THPeligible: %d", &eligible) == 1)
			break;
	}
	fclose(f);
	return eligible;
}

static void test_alloc(void **state)
{
	size_t size = 3 * VG_HUGEBUF_MIN / 2, len = vg_hugebuf_size(size);
	unsigned char *p = vg_hugebuf_alloc(size);

	(void)state;
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % VG_HUGEBUF_MIN, 0);
	for (size_t i = 0; i < len; i += 4096)
		assert_int_equal(p[i], 0);
	memset(p, 0xa5, len);
	assert_int_equal(p[len - 1], 0xa5);
	if (thp_on_request())
		assert_int_equal(thp_eligible(p), 1);
	else
		printf("note: transparent huge pages are off here; the advice is not checked\n");
	vg_hugebuf_free(p, size);
	vg_hugebuf_free(NULL, size);
}

static void test_refused(void **state)
{
	(void)state;
	errno = 0;
	assert_null(vg_hugebuf_alloc(SIZE_MAX));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(vg_hugebuf_alloc(SIZE_MAX - 2 * VG_HUGEBUF_MIN));
	assert_int_equal(errno, ENOMEM);
}

/* A success leaves errno as it was (madvise may refuse the advice). */
static void test_errno_kept(void **state)
{
	void *p;

	(void)state;
	errno = EXDEV;
	p = vg_hugebuf_alloc(1);
	assert_non_null(p);
	assert_int_equal(errno, EXDEV);
	vg_hugebuf_free(p, 1);
	assert_int_equal(errno, EXDEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_errno_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
