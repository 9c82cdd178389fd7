/* test_utf8.c - UTF-8 validity of target-controlled strings and the JSON
 * text they become: valid text unchanged, invalid bytes escaped with the
 * exact bytes beside them, and the document always parses back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/json.h"
#include "util/utf8.h"

static void test_sequences(void **state)
{
	static const struct { const char *s; size_t n; } cases[] = {
		{ "a", 1 }, { "\xc3\xa9", 2 }, { "\xe2\x82\xac", 3 }, { "\xf0\x9f\x98\x80", 4 },
		{ "\xc0\x80", 0 },           /* overlong NUL */
		{ "\xe0\x80\xaf", 0 },       /* overlong '/' */
		{ "\xed\xa0\x80", 0 },       /* surrogate */
		{ "\xf4\x90\x80\x80", 0 },   /* past U+10FFFF */
		{ "\xe2\x82", 0 },           /* truncated */
		{ "\xff", 0 }, { "\x80", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = vg_utf8_seq((const unsigned char *)cases[i].s);

		if (n != cases[i].n)
			fail_msg("case %zu: got %zu, want %zu", i, n, cases[i].n);
	}
	assert_true(vg_utf8_valid("/usr/lib/caf\xc3\xa9.so"));
	assert_false(vg_utf8_valid("/tmp/bad\xff\xfename"));
	assert_true(vg_utf8_valid(""));
}

static void test_json_text(void **state)
{
	cJSON *o = cJSON_CreateObject(), *back;
	char *text;

	(void)state;
	vg_json_add_text(o, "ok", "caf\xc3\xa9 \n tab\t");
	vg_json_add_text(o, "path", "/tmp/bad\xff\xfename");
	assert_string_equal(cJSON_GetObjectItem(o, "ok")->valuestring, "caf\xc3\xa9 \n tab\t");
	assert_null(cJSON_GetObjectItem(o, "ok_hex"));
	assert_string_equal(cJSON_GetObjectItem(o, "path")->valuestring, "/tmp/bad\\xff\\xfename");
	assert_string_equal(cJSON_GetObjectItem(o, "path_hex")->valuestring,
			    "2f746d702f626164fffe6e616d65");
	text = cJSON_PrintUnformatted(o);
	assert_true(vg_utf8_valid(text));
	back = cJSON_Parse(text);
	assert_non_null(back);
	assert_string_equal(cJSON_GetObjectItem(back, "ok")->valuestring, "caf\xc3\xa9 \n tab\t");
	cJSON_Delete(back);
	free(text);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_json_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
