/* test_crc32c.c - util/crc32c.c: the check value, the hardware path
 * against the table, incremental sums and the combination of two. */
#include "util/crc32c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

/* CRC-32C: the check value, the hardware path against the table at every
 * alignment and across the 3 x 8 KiB and 3 x 256 byte blocks, and the
 * combination of two CRCs that the snapshot writer relies on. */
static void test_crc32c(void **state)
{
	size_t n = 3 * 8192 * 2 + 3 * 256 + 77;
	uint8_t *b = malloc(n + 8);
	uint32_t x = 12345;

	(void)state;
	assert_non_null(b);
	assert_int_equal(vg_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(vg_crc32c_sw(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(vg_crc32c(0, "", 0), 0);
	for (size_t i = 0; i < n + 8; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 8; off++) {
		static const size_t lens[] = { 0, 1, 7, 8, 255, 768, 769,
					       24575, 24576, 24577, 49990 };

		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
			assert_int_equal(vg_crc32c(0, b + off, lens[k]),
					 vg_crc32c_sw(0, b + off, lens[k]));
		assert_int_equal(vg_crc32c(0, b + off, n), vg_crc32c_sw(0, b + off, n));
	}
	/* Incremental equals one call; combine equals incremental. */
	for (size_t cut = 0; cut <= n; cut += n / 7 + 1) {
		uint32_t whole = vg_crc32c(0, b, n);
		uint32_t a = vg_crc32c(0, b, cut), c = vg_crc32c(0, b + cut, n - cut);

		assert_int_equal(vg_crc32c(a, b + cut, n - cut), whole);
		assert_int_equal(vg_crc32c_combine(a, c, n - cut), whole);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
