/* test_scan_value.c - value.h: types, VALUE parsing with exact errors,
 * patterns, number formatting, region selection and the narrowing truth
 * table.  Nothing here reads a process. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scan/value.h"

/* Parse, assert success, return the value (caller clears). */
static struct vg_scan_value ok(enum vg_scan_type t, const char *text)
{
	struct vg_scan_value v;
	struct vg_error err = { 0 };
	int rc = vg_scan_value_parse(t, text, 0.0, &v, &err);

	if (rc != 0)
		fail_msg("parse %s '%s': %d %s", vg_scan_type_name(t), text, rc, err.msg);
	assert_int_equal(v.type, t);
	return v;
}

/* Parse, assert the error code and the exact sentence (NULL: any). */
static void bad(enum vg_scan_type t, const char *text, int code, const char *msg)
{
	struct vg_scan_value v;
	struct vg_error err = { 0 };
	int rc = vg_scan_value_parse(t, text, 0.0, &v, &err);

	if (rc != code)
		fail_msg("parse %s '%s': want %d, got %d (%s)", vg_scan_type_name(t),
			 text, code, rc, err.msg);
	assert_int_equal(err.code, code);
	if (msg)
		assert_string_equal(err.msg, msg);
	vg_scan_value_clear(&v);
}

static void test_type_names(void **state)
{
	static const char *names[] = { "i8", "i16", "i32", "i64", "u8", "u16", "u32",
				       "u64", "f32", "f64", "str", "bytes" };
	static const size_t widths[] = { 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 0, 0 };
	struct vg_error err = { 0 };
	enum vg_scan_type t;

	for (size_t i = 0; i < 12; i++) {
		assert_int_equal(vg_scan_type_parse(names[i], &t, NULL), 0);
		assert_int_equal(t, (enum vg_scan_type)i);
		assert_string_equal(vg_scan_type_name(t), names[i]);
		assert_int_equal(vg_scan_type_width(t), widths[i]);
		assert_int_equal(vg_scan_type_is_float(t), i == 8 || i == 9);
		assert_int_equal(vg_scan_type_is_signed(t), i <= 3);
	}
	assert_int_equal(vg_scan_type_parse("int", &t, &err), -EINVAL);
	assert_string_equal(err.msg, "unknown type 'int': use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, str, bytes");
	assert_int_equal(vg_scan_type_parse("I32", &t, NULL), -EINVAL);
}

static void assert_raw(const struct vg_scan_value *v, const uint8_t *want, size_t n)
{
	assert_memory_equal(v->raw, want, n);
}

static void test_int_limits(void **state)
{
	struct vg_scan_value v;

	v = ok(VG_SCAN_U8, "255");
	assert_int_equal(v.u, 255);
	assert_raw(&v, (const uint8_t[]){ 0xff }, 1);
	bad(VG_SCAN_U8, "300", -ERANGE, "300 is out of range for u8 (0..255)");
	bad(VG_SCAN_U8, "256", -ERANGE, "256 is out of range for u8 (0..255)");
	bad(VG_SCAN_U8, "-1", -ERANGE, "-1 is out of range for u8 (0..255)");
	v = ok(VG_SCAN_U8, "-0");
	assert_int_equal(v.u, 0);

	v = ok(VG_SCAN_I8, "-128");
	assert_int_equal(v.i, -128);
	assert_raw(&v, (const uint8_t[]){ 0x80 }, 1);
	v = ok(VG_SCAN_I8, "127");
	assert_int_equal(v.i, 127);
	bad(VG_SCAN_I8, "128", -ERANGE, "128 is out of range for i8 (-128..127)");
	bad(VG_SCAN_I8, "-129", -ERANGE, "-129 is out of range for i8 (-128..127)");
	bad(VG_SCAN_I8, "0xff", -ERANGE, "0xff is out of range for i8 (-128..127); for the bit pattern use u8");
	v = ok(VG_SCAN_I8, "-0x80");
	assert_int_equal(v.i, -128);

	v = ok(VG_SCAN_I16, "-32768");
	assert_raw(&v, (const uint8_t[]){ 0x00, 0x80 }, 2);
	bad(VG_SCAN_I16, "32768", -ERANGE, "32768 is out of range for i16 (-32768..32767)");
	v = ok(VG_SCAN_U16, "65535");
	assert_int_equal(v.u, 65535);
	bad(VG_SCAN_U16, "65536", -ERANGE, "65536 is out of range for u16 (0..65535)");

	v = ok(VG_SCAN_I32, "-2147483648");
	assert_int_equal(v.i, INT32_MIN);
	assert_raw(&v, (const uint8_t[]){ 0, 0, 0, 0x80 }, 4);
	v = ok(VG_SCAN_I32, "-1");
	assert_raw(&v, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff }, 4);
	assert_int_equal(v.u, 0xffffffffu);
	bad(VG_SCAN_I32, "2147483648", -ERANGE, "2147483648 is out of range for i32 (-2147483648..2147483647)");
	bad(VG_SCAN_I32, "0xdeadbeef", -ERANGE, "0xdeadbeef is out of range for i32 (-2147483648..2147483647); for the bit pattern use u32");
	v = ok(VG_SCAN_U32, "0xDEADbeef");
	assert_int_equal(v.u, 0xdeadbeefu);
	assert_raw(&v, (const uint8_t[]){ 0xef, 0xbe, 0xad, 0xde }, 4);
	bad(VG_SCAN_U32, "4294967296", -ERANGE, "4294967296 is out of range for u32 (0..4294967295)");

	v = ok(VG_SCAN_I64, "-9223372036854775808");
	assert_true(v.i == INT64_MIN);
	v = ok(VG_SCAN_I64, "9223372036854775807");
	assert_true(v.i == INT64_MAX);
	bad(VG_SCAN_I64, "9223372036854775808", -ERANGE,
	    "9223372036854775808 is out of range for i64 (-9223372036854775808..9223372036854775807)");
	bad(VG_SCAN_I64, "-9223372036854775809", -ERANGE,
	    "-9223372036854775809 is out of range for i64 (-9223372036854775808..9223372036854775807)");
	v = ok(VG_SCAN_U64, "18446744073709551615");
	assert_true(v.u == UINT64_MAX);
	assert_raw(&v, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8);
	v = ok(VG_SCAN_U64, "0xffffffffffffffff");
	assert_true(v.u == UINT64_MAX);
	bad(VG_SCAN_U64, "18446744073709551616", -ERANGE,
	    "18446744073709551616 is out of range for u64 (0..18446744073709551615)");
	bad(VG_SCAN_U64, "0x10000000000000000", -ERANGE,
	    "0x10000000000000000 is out of range for u64 (0..18446744073709551615)");
	bad(VG_SCAN_U64, "99999999999999999999999", -ERANGE, NULL);
	v = ok(VG_SCAN_U64, "+42");
	assert_int_equal(v.u, 42);
}

static void test_int_malformed(void **state)
{
	bad(VG_SCAN_I32, "12x", -EINVAL,
	    "'12x' is not a valid i32: use a decimal number (a leading '-' for negative) or 0x followed by hex digits");
	bad(VG_SCAN_U8, "12x", -EINVAL,
	    "'12x' is not a valid u8: use a decimal number or 0x followed by hex digits");
	bad(VG_SCAN_I32, "", -EINVAL, NULL);
	bad(VG_SCAN_I32, "-", -EINVAL, NULL);
	bad(VG_SCAN_I32, "0x", -EINVAL, NULL);
	bad(VG_SCAN_I32, " 1", -EINVAL, NULL);
	bad(VG_SCAN_I32, "1 ", -EINVAL, NULL);
	bad(VG_SCAN_I32, "1.5", -EINVAL, NULL);
	bad(VG_SCAN_I32, "0xg", -EINVAL, NULL);
	bad(VG_SCAN_I32, "--1", -EINVAL, NULL);
	bad(VG_SCAN_U16, "abc", -EINVAL, NULL);
	/* Malformed wins over out of range. */
	bad(VG_SCAN_U8, "999z", -EINVAL, NULL);
}

static void test_floats(void **state)
{
	struct vg_scan_value v;
	struct vg_error err = { 0 };
	float f;
	double d;

	assert_int_equal(vg_scan_value_parse(VG_SCAN_F64, "3.25", 0.001, &v, NULL), 0);
	assert_true(v.f == 3.25);
	assert_true(v.epsilon == 0.001);
	d = 3.25;
	assert_memory_equal(v.raw, &d, 8);
	v = ok(VG_SCAN_F64, "-1e-3");
	assert_true(v.f == -1e-3);
	/* f32: the value as the target stores it. */
	v = ok(VG_SCAN_F32, "0.1");
	f = 0.1f;
	assert_memory_equal(v.raw, &f, 4);
	assert_true(v.f == (double)0.1f);
	v = ok(VG_SCAN_F32, "3.4028234e38");
	bad(VG_SCAN_F32, "3.5e38", -ERANGE,
	    "3.5e38 is out of range for f32 (-3.40282347e+38..3.40282347e+38)");
	bad(VG_SCAN_F64, "1e400", -ERANGE,
	    "1e400 is out of range for f64 (-1.79769313e+308..1.79769313e+308)");
	bad(VG_SCAN_F64, "inf", -EINVAL, "'inf' is not a valid f64: only finite numbers can be scanned for");
	bad(VG_SCAN_F64, "nan", -EINVAL, NULL);
	bad(VG_SCAN_F32, "-infinity", -EINVAL, NULL);
	bad(VG_SCAN_F64, "1.5x", -EINVAL, "'1.5x' is not a valid f64: use a decimal number such as 3.25 or -1e-3");
	bad(VG_SCAN_F64, "", -EINVAL, NULL);
	bad(VG_SCAN_F64, " 1", -EINVAL, NULL);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_F64, "1", -1.0, &v, &err), -EINVAL);
	assert_string_equal(err.msg, "the epsilon -1 is not valid: use a finite number >= 0");
	vg_scan_value_clear(&v);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_F64, "1", NAN, &v, NULL), -EINVAL);
	vg_scan_value_clear(&v);
	/* Integers ignore the epsilon. */
	assert_int_equal(vg_scan_value_parse(VG_SCAN_I32, "1", -1.0, &v, NULL), 0);
	assert_true(v.epsilon == 0);
}

static void test_str(void **state)
{
	struct vg_scan_value v = ok(VG_SCAN_STR, "h\xc3\xa9\xf0\x9f\x98\x80");  /* hé😀 */
	static const uint8_t u16[] = { 'h', 0, 0xe9, 0, 0x3d, 0xd8, 0x00, 0xde };

	assert_int_equal(v.npat, 2);
	assert_int_equal(v.pat[0].len, 7);
	assert_memory_equal(v.pat[0].bytes, "h\xc3\xa9\xf0\x9f\x98\x80", 7);
	assert_null(v.pat[0].mask);
	assert_string_equal(v.pat[0].encoding, "utf-8");
	assert_int_equal(v.pat[1].len, 8);
	assert_memory_equal(v.pat[1].bytes, u16, 8);
	assert_null(v.pat[1].mask);
	assert_string_equal(v.pat[1].encoding, "utf-16le");
	vg_scan_value_clear(&v);
	assert_null(v.pat[0].bytes);

	bad(VG_SCAN_STR, "", -EINVAL, "the str VALUE is empty: give at least one character");
	bad(VG_SCAN_STR, "a\xff", -EINVAL, "the str VALUE is not valid UTF-8");
	bad(VG_SCAN_STR, "\xc0\x80", -EINVAL, NULL);   /* overlong */
}

static void test_bytes(void **state)
{
	struct vg_scan_value v = ok(VG_SCAN_BYTES, "de ad ?? EF");

	assert_int_equal(v.npat, 1);
	assert_int_equal(v.pat[0].len, 4);
	assert_memory_equal(v.pat[0].bytes, ((const uint8_t[]){ 0xde, 0xad, 0, 0xef }), 4);
	assert_non_null(v.pat[0].mask);
	assert_memory_equal(v.pat[0].mask, ((const uint8_t[]){ 0xff, 0xff, 0, 0xff }), 4);
	assert_string_equal(v.pat[0].encoding, "hex");
	vg_scan_value_clear(&v);

	v = ok(VG_SCAN_BYTES, "dead??ef");
	assert_int_equal(v.pat[0].len, 4);
	assert_memory_equal(v.pat[0].mask, ((const uint8_t[]){ 0xff, 0xff, 0, 0xff }), 4);
	vg_scan_value_clear(&v);

	v = ok(VG_SCAN_BYTES, "0102");
	assert_int_equal(v.pat[0].len, 2);
	assert_null(v.pat[0].mask);
	vg_scan_value_clear(&v);

	v = ok(VG_SCAN_BYTES, "?? 7f");
	assert_int_equal(v.pat[0].len, 2);
	vg_scan_value_clear(&v);

	bad(VG_SCAN_BYTES, "?? ??", -EINVAL, "'?? ?\?' is not a valid bytes VALUE: it needs at least one byte that is not ??");
	bad(VG_SCAN_BYTES, "", -EINVAL, NULL);
	bad(VG_SCAN_BYTES, "abc", -EINVAL,
	    "'abc' is not a valid bytes VALUE at offset 2: use pairs of hex digits or ?? (\"de ad ?? ef\")");
	bad(VG_SCAN_BYTES, "a b", -EINVAL, NULL);
	bad(VG_SCAN_BYTES, "zz", -EINVAL, NULL);
	bad(VG_SCAN_BYTES, "de ?", -EINVAL, NULL);
	bad(VG_SCAN_BYTES, "0xde", -EINVAL, NULL);
}

static void test_format(void **state)
{
	char buf[64];
	struct vg_scan_value v;

	v = ok(VG_SCAN_I8, "-7");
	vg_scan_format_number(VG_SCAN_I8, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "-7");
	vg_scan_format_number(VG_SCAN_U8, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "249");
	v = ok(VG_SCAN_I64, "-9223372036854775808");
	vg_scan_format_number(VG_SCAN_I64, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "-9223372036854775808");
	v = ok(VG_SCAN_U64, "18446744073709551615");
	vg_scan_format_number(VG_SCAN_U64, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "18446744073709551615");
	v = ok(VG_SCAN_I16, "-300");
	vg_scan_format_number(VG_SCAN_I16, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "-300");
	v = ok(VG_SCAN_U32, "42");
	vg_scan_format_number(VG_SCAN_U32, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "42");
	v = ok(VG_SCAN_F32, "3.25");
	vg_scan_format_number(VG_SCAN_F32, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "3.25");
	v = ok(VG_SCAN_F32, "0.1");
	vg_scan_format_number(VG_SCAN_F32, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "0.100000001");
	v = ok(VG_SCAN_F64, "0.1");
	vg_scan_format_number(VG_SCAN_F64, v.raw, buf, sizeof(buf));
	assert_string_equal(buf, "0.10000000000000001");
	vg_scan_format_number(VG_SCAN_I32, v.raw, buf, 3);
	assert_int_equal(strlen(buf), 2);
}

/* ---- region selection ------------------------------------------------ */

static const char maps_text[] =
	"00400000-00401000 r-xp 00000000 08:01 100 /usr/bin/prog\n"
	"00600000-00601000 rw-p 00001000 08:01 100 /usr/bin/prog\n"
	"00601000-00602000 rw-p 00000000 00:00 0 \n"
	"01000000-01021000 rw-p 00000000 00:00 0 [heap]\n"
	"7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"
	"7f0000001000-7f0000002000 rw-s 00000000 00:01 5 /dev/zero (deleted)\n"
	"7f0000002000-7f0000003000 r--p 00000000 00:00 0 \n"
	"7f0000003000-7f0000004000 rw-s 00000000 00:00 0 \n"
	"7f0000004000-7f0000005000 rw-p 00000000 00:00 0 [anon:arena]\n"
	"7f1000000000-7f1000001000 r-xp 00000000 08:01 200 /lib/libc.so.6\n"
	"7f1000001000-7f1000002000 rw-p 00001000 08:01 200 /lib/libc.so.6\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n"
	"7ffc00100000-7ffc00104000 r--p 00000000 00:00 0 [vvar]\n"
	"7ffc00104000-7ffc00105000 r--p 00000000 00:00 0 [vvar_vclock]\n"
	"7ffc00105000-7ffc00107000 r-xp 00000000 00:00 0 [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";

/* Bit i set: region i selected. */
static unsigned selected(const struct vg_maps *m, const char *sel_text)
{
	struct vg_scan_select sel;
	unsigned bits = 0;

	vg_scan_select_parse(sel_text, &sel);
	for (size_t i = 0; i < m->n; i++)
		if (vg_scan_region_selected(&sel, &m->regions[i]))
			bits |= 1u << i;
	return bits;
}

#define B(i) (1u << (i))

static void test_region_selection(void **state)
{
	struct vg_maps *m = NULL;
	struct vg_scan_select sel;
	struct vg_region vvar_rw;

	assert_int_equal(vg_maps_parse(maps_text, sizeof(maps_text) - 1, &m, NULL), 0);
	assert_int_equal(m->n, 16);

	vg_scan_select_parse("writable", &sel);
	assert_int_equal(sel.set, VG_SCAN_REGIONS_WRITABLE);
	assert_null(sel.image);
	vg_scan_select_parse(NULL, &sel);
	assert_int_equal(sel.set, VG_SCAN_REGIONS_WRITABLE);
	vg_scan_select_parse("libc.so.6", &sel);
	assert_int_equal(sel.set, VG_SCAN_REGIONS_IMAGE);
	assert_string_equal(sel.image, "libc.so.6");

	assert_int_equal(selected(m, "writable"),
			 B(1) | B(2) | B(3) | B(5) | B(7) | B(8) | B(10) | B(11));
	assert_int_equal(selected(m, "all"),
			 B(0) | B(1) | B(2) | B(3) | B(5) | B(6) | B(7) | B(8) | B(9) |
			 B(10) | B(11) | B(14));
	/* [heap] and anonymous private rw ([anon:NAME] is anonymous). */
	assert_int_equal(selected(m, "heap"), B(2) | B(3) | B(8));
	assert_int_equal(selected(m, "stack"), B(11));
	/* Readable anonymous mappings, any protection or sharing. */
	assert_int_equal(selected(m, "anon"), B(2) | B(6) | B(7) | B(8));
	assert_int_equal(selected(m, "libc.so.6"), B(9) | B(10));
	assert_int_equal(selected(m, "/lib/libc.so.6"), B(9) | B(10));
	assert_int_equal(selected(m, "prog"), B(0) | B(1));
	assert_int_equal(selected(m, "/usr/bin/prog"), B(0) | B(1));
	assert_int_equal(selected(m, "libc"), 0);
	assert_int_equal(selected(m, "bin/prog"), 0);
	assert_int_equal(selected(m, "zero"), B(5));   /* /dev/zero (deleted) */

	/* Never [vvar]-like, never unreadable, whatever the permissions say. */
	vvar_rw = m->regions[12];
	strcpy(vvar_rw.perms, "rw-p");
	vvar_rw.writable = true;
	vg_scan_select_parse("writable", &sel);
	assert_false(vg_scan_region_selected(&sel, &vvar_rw));
	vg_scan_select_parse("all", &sel);
	assert_false(vg_scan_region_selected(&sel, &vvar_rw));
	vg_maps_free(m);
}

/* ---- narrowing ------------------------------------------------------- */

static struct vg_narrow mk(enum vg_scan_type t, enum vg_narrow_op op,
			   const char *a, const char *b, double eps)
{
	struct vg_narrow n;

	memset(&n, 0, sizeof(n));
	n.op = op;
	if (a)
		assert_int_equal(vg_scan_value_parse(t, a, eps, &n.a, NULL), 0);
	if (b)
		assert_int_equal(vg_scan_value_parse(t, b, eps, &n.b, NULL), 0);
	return n;
}

/* old and new as text of type t; the test's answer. */
static bool T(enum vg_scan_type t, const struct vg_narrow *n, const char *old,
	      const char *now)
{
	struct vg_scan_value o, x;

	assert_int_equal(vg_scan_value_parse(t, old, 0, &o, NULL), 0);
	assert_int_equal(vg_scan_value_parse(t, now, 0, &x, NULL), 0);
	return vg_narrow_test(t, n, o.raw, x.raw);
}

static void test_narrow_ints(void **state)
{
	struct vg_narrow n;

	n = mk(VG_SCAN_I32, VG_NARROW_EQ, "-5", NULL, 0);
	assert_true(T(VG_SCAN_I32, &n, "0", "-5"));
	assert_false(T(VG_SCAN_I32, &n, "-5", "5"));
	n = mk(VG_SCAN_U8, VG_NARROW_EQ, "200", NULL, 0);
	assert_true(T(VG_SCAN_U8, &n, "0", "200"));
	assert_false(T(VG_SCAN_U8, &n, "0", "201"));

	n = mk(VG_SCAN_I32, VG_NARROW_CHANGED, NULL, NULL, 0);
	assert_true(T(VG_SCAN_I32, &n, "1", "2"));
	assert_false(T(VG_SCAN_I32, &n, "7", "7"));
	n.op = VG_NARROW_UNCHANGED;
	assert_false(T(VG_SCAN_I32, &n, "1", "2"));
	assert_true(T(VG_SCAN_I32, &n, "7", "7"));

	/* Signed vs unsigned ordering: 0xff is -1 as i8, 255 as u8. */
	n.op = VG_NARROW_INCREASED;
	assert_true(T(VG_SCAN_I8, &n, "-1", "0"));
	assert_false(T(VG_SCAN_I8, &n, "0", "-1"));
	assert_true(T(VG_SCAN_U8, &n, "0", "255"));
	assert_false(T(VG_SCAN_U8, &n, "255", "0"));
	assert_false(T(VG_SCAN_U8, &n, "3", "3"));
	assert_true(T(VG_SCAN_I64, &n, "-9223372036854775808", "9223372036854775807"));
	assert_true(T(VG_SCAN_U64, &n, "9223372036854775807", "9223372036854775808"));
	assert_false(T(VG_SCAN_I64, &n, "9223372036854775807", "-9223372036854775808"));
	n.op = VG_NARROW_DECREASED;
	assert_true(T(VG_SCAN_I16, &n, "0", "-1"));
	assert_false(T(VG_SCAN_U16, &n, "0", "65535"));
	assert_true(T(VG_SCAN_U32, &n, "4294967295", "0"));
	assert_false(T(VG_SCAN_I32, &n, "-1", "-1"));

	/* *_BY wraps in the width. */
	n = mk(VG_SCAN_U8, VG_NARROW_INCREASED_BY, "10", NULL, 0);
	assert_true(T(VG_SCAN_U8, &n, "250", "4"));
	assert_true(T(VG_SCAN_U8, &n, "1", "11"));
	assert_false(T(VG_SCAN_U8, &n, "1", "12"));
	n = mk(VG_SCAN_I32, VG_NARROW_INCREASED_BY, "-3", NULL, 0);
	assert_true(T(VG_SCAN_I32, &n, "10", "7"));
	assert_true(T(VG_SCAN_I32, &n, "-2147483648", "2147483645"));
	n = mk(VG_SCAN_I32, VG_NARROW_DECREASED_BY, "5", NULL, 0);
	assert_true(T(VG_SCAN_I32, &n, "10", "5"));
	assert_true(T(VG_SCAN_I32, &n, "-2147483648", "2147483643"));
	assert_false(T(VG_SCAN_I32, &n, "10", "15"));
	n = mk(VG_SCAN_U64, VG_NARROW_DECREASED_BY, "1", NULL, 0);
	assert_true(T(VG_SCAN_U64, &n, "0", "18446744073709551615"));
	n = mk(VG_SCAN_I8, VG_NARROW_INCREASED_BY, "1", NULL, 0);
	assert_true(T(VG_SCAN_I8, &n, "127", "-128"));

	/* RANGE, signed and unsigned. */
	n = mk(VG_SCAN_I16, VG_NARROW_RANGE, "-10", "10", 0);
	assert_true(T(VG_SCAN_I16, &n, "0", "-10"));
	assert_true(T(VG_SCAN_I16, &n, "0", "10"));
	assert_true(T(VG_SCAN_I16, &n, "0", "0"));
	assert_false(T(VG_SCAN_I16, &n, "0", "11"));
	assert_false(T(VG_SCAN_I16, &n, "0", "-11"));
	n = mk(VG_SCAN_U16, VG_NARROW_RANGE, "10", "65535", 0);
	assert_true(T(VG_SCAN_U16, &n, "0", "65535"));
	assert_false(T(VG_SCAN_U16, &n, "0", "9"));
	n = mk(VG_SCAN_U64, VG_NARROW_RANGE, "0", "18446744073709551615", 0);
	assert_true(T(VG_SCAN_U64, &n, "0", "18446744073709551615"));
}

static bool TF(enum vg_scan_type t, const struct vg_narrow *n, double old, double now)
{
	uint8_t o[8], x[8];

	if (t == VG_SCAN_F32) {
		float fo = (float)old, fx = (float)now;

		memcpy(o, &fo, 4);
		memcpy(x, &fx, 4);
	} else {
		memcpy(o, &old, 8);
		memcpy(x, &now, 8);
	}
	return vg_narrow_test(t, n, o, x);
}

static void test_narrow_floats(void **state)
{
	struct vg_narrow n;

	n = mk(VG_SCAN_F64, VG_NARROW_EQ, "3.25", NULL, 0.01);
	assert_true(TF(VG_SCAN_F64, &n, 0, 3.25));
	assert_true(TF(VG_SCAN_F64, &n, 0, 3.259));
	assert_true(TF(VG_SCAN_F64, &n, 0, 3.241));
	assert_false(TF(VG_SCAN_F64, &n, 0, 3.261));
	assert_false(TF(VG_SCAN_F64, &n, 0, NAN));
	assert_false(TF(VG_SCAN_F64, &n, 0, INFINITY));
	n = mk(VG_SCAN_F32, VG_NARROW_EQ, "0.1", NULL, 0);
	assert_true(TF(VG_SCAN_F32, &n, 0, 0.1));
	assert_false(TF(VG_SCAN_F32, &n, 0, 0.1000001));

	n = mk(VG_SCAN_F64, VG_NARROW_CHANGED, NULL, NULL, 0);
	assert_true(TF(VG_SCAN_F64, &n, 0.0, -0.0));   /* bitwise */
	assert_false(TF(VG_SCAN_F64, &n, NAN, NAN));
	n.op = VG_NARROW_UNCHANGED;
	assert_true(TF(VG_SCAN_F64, &n, NAN, NAN));
	assert_false(TF(VG_SCAN_F64, &n, 0.0, -0.0));
	n.op = VG_NARROW_INCREASED;
	assert_true(TF(VG_SCAN_F32, &n, 1.0, 1.5));
	assert_false(TF(VG_SCAN_F32, &n, 1.5, 1.5));
	assert_false(TF(VG_SCAN_F64, &n, 1.0, NAN));
	assert_true(TF(VG_SCAN_F64, &n, -INFINITY, 0));
	n.op = VG_NARROW_DECREASED;
	assert_true(TF(VG_SCAN_F64, &n, 1.0, -1.0));
	assert_false(TF(VG_SCAN_F64, &n, NAN, 1.0));

	n = mk(VG_SCAN_F64, VG_NARROW_INCREASED_BY, "0.5", NULL, 0.001);
	assert_true(TF(VG_SCAN_F64, &n, 1.0, 1.5));
	assert_true(TF(VG_SCAN_F64, &n, 1.0, 1.5005));
	assert_false(TF(VG_SCAN_F64, &n, 1.0, 1.502));
	assert_false(TF(VG_SCAN_F64, &n, INFINITY, INFINITY));
	/* f32 with epsilon 0: the sum as float arithmetic gives it. */
	n = mk(VG_SCAN_F32, VG_NARROW_INCREASED_BY, "0.1", NULL, 0);
	assert_true(TF(VG_SCAN_F32, &n, 1.5, (double)(1.5f + 0.1f)));
	n = mk(VG_SCAN_F32, VG_NARROW_DECREASED_BY, "0.1", NULL, 0);
	assert_true(TF(VG_SCAN_F32, &n, 1.5, (double)(1.5f - 0.1f)));
	assert_false(TF(VG_SCAN_F32, &n, 1.5, 1.5));

	n = mk(VG_SCAN_F64, VG_NARROW_RANGE, "-1", "2.5", 0);
	assert_true(TF(VG_SCAN_F64, &n, 0, -1));
	assert_true(TF(VG_SCAN_F64, &n, 0, 2.5));
	assert_false(TF(VG_SCAN_F64, &n, 0, 2.5000001));
	assert_false(TF(VG_SCAN_F64, &n, 0, NAN));
}

static void test_narrow_check(void **state)
{
	struct vg_error err = { 0 };
	struct vg_narrow n;

	n = mk(VG_SCAN_I32, VG_NARROW_INCREASED, NULL, NULL, 0);
	assert_int_equal(vg_narrow_check(VG_SCAN_I32, &n, NULL), 0);
	assert_int_equal(vg_narrow_check(VG_SCAN_STR, &n, &err), -EINVAL);
	assert_string_equal(err.msg, "increased needs a numeric type, but the matches are str: narrow them with eq, changed or unchanged");
	n.op = VG_NARROW_CHANGED;
	assert_int_equal(vg_narrow_check(VG_SCAN_BYTES, &n, NULL), 0);
	n.op = VG_NARROW_EQ;
	assert_int_equal(vg_narrow_check(VG_SCAN_STR, &n, NULL), 0);
	n.op = VG_NARROW_RANGE;
	assert_int_equal(vg_narrow_check(VG_SCAN_BYTES, &n, NULL), -EINVAL);

	n = mk(VG_SCAN_I32, VG_NARROW_RANGE, "10", "-10", 0);
	vg_error_clear(&err);
	assert_int_equal(vg_narrow_check(VG_SCAN_I32, &n, &err), -EINVAL);
	assert_string_equal(err.msg, "the range 10..-10 is empty: give the lower bound first");
	n = mk(VG_SCAN_U32, VG_NARROW_RANGE, "1", "1", 0);
	assert_int_equal(vg_narrow_check(VG_SCAN_U32, &n, NULL), 0);
	n = mk(VG_SCAN_I32, VG_NARROW_EQ, "1", NULL, 0);
	vg_error_clear(&err);
	assert_int_equal(vg_narrow_check(VG_SCAN_I64, &n, &err), -EINVAL);
	assert_string_equal(err.msg, "the operand of eq is of type i32, but the matches are i64");

	for (int op = VG_NARROW_EQ; op <= VG_NARROW_RANGE; op++)
		assert_string_not_equal(vg_narrow_op_name((enum vg_narrow_op)op), "?");
	assert_string_equal(vg_narrow_op_name(VG_NARROW_INCREASED_BY), "increased-by");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_int_limits),
		cmocka_unit_test(test_int_malformed),
		cmocka_unit_test(test_floats),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_region_selection),
		cmocka_unit_test(test_narrow_ints),
		cmocka_unit_test(test_narrow_floats),
		cmocka_unit_test(test_narrow_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
