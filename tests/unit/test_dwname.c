/* test_dwname.c - the walk from a byte offset inside a variable to the C
 * expression naming it, over hand-built types (no DWARF): members,
 * elements, padding, bytes inside a scalar, ranges that span members, a
 * union's first member, anonymous members, bit-fields, C++ bases, arrays of unknown
 * or zero-sized elements, the depth bound and a buffer too small. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sym/dwname.h"

static const struct vg_type t_int = { .kind = VG_TYPE_INT, .name = "int", .size = 4, .is_signed = true };
static const struct vg_type t_short = { .kind = VG_TYPE_INT, .name = "short", .size = 2, .is_signed = true };
static const struct vg_type t_long = { .kind = VG_TYPE_INT, .name = "long", .size = 8, .is_signed = true };
static const struct vg_type t_char = { .kind = VG_TYPE_INT, .name = "char", .size = 1, .is_char = true };
static const struct vg_type t_ptr = { .kind = VG_TYPE_POINTER, .size = 8, .target = &t_int };
static const struct vg_type t_name = { .kind = VG_TYPE_ARRAY, .target = &t_char, .count = 16,
				       .count_known = true, .size = 16 };

/* struct limits { int max; int min; } */
static struct vg_type_member limits_m[] = {
	{ .name = "max", .type = &t_int, .offset = 0 },
	{ .name = "min", .type = &t_int, .offset = 4 },
};
static const struct vg_type t_limits = { .kind = VG_TYPE_STRUCT, .name = "limits", .size = 8,
					 .members = limits_m, .n_members = 2 };
static const struct vg_type t_limits_td = { .kind = VG_TYPE_TYPEDEF, .name = "limits_t",
					    .target = &t_limits };

/* struct config { int port; char name[16]; limits_t limits; (4 pad) long
 * big; unsigned a:3, b:5, c:1; (pad) int *p; union { int i; char b[4]; }
 * (anonymous) } */
static const struct vg_type_member un_m[] = {
	{ .name = "i", .type = &t_int, .offset = 0 },
	{ .name = "b", .type = &t_name, .offset = 0 },  /* larger: covers what i does not */
};
static const struct vg_type t_un = { .kind = VG_TYPE_UNION, .size = 16,
				     .members = (struct vg_type_member *)un_m, .n_members = 2 };
static struct vg_type_member config_m[] = {
	{ .name = "port", .type = &t_int, .offset = 0 },
	{ .name = "name", .type = &t_name, .offset = 4 },
	{ .name = "limits", .type = &t_limits_td, .offset = 20 },
	{ .name = "big", .type = &t_long, .offset = 32 },
	{ .name = "a", .type = &t_int, .offset = 40, .bit_offset = 0, .bit_size = 3 },
	{ .name = "b", .type = &t_int, .offset = 40, .bit_offset = 3, .bit_size = 5 },
	{ .name = "c", .type = &t_int, .offset = 41, .bit_offset = 0, .bit_size = 1 },
	{ .name = "p", .type = &t_ptr, .offset = 48 },
	{ .name = NULL, .type = &t_un, .offset = 56 },
};
static const struct vg_type t_config = { .kind = VG_TYPE_STRUCT, .name = "config", .size = 72,
					 .members = config_m, .n_members = 9 };

/* struct entry { short key; long value; } table[3] */
static struct vg_type_member entry_m[] = {
	{ .name = "key", .type = &t_short, .offset = 0 },
	{ .name = "value", .type = &t_long, .offset = 8 },
};
static const struct vg_type t_entry = { .kind = VG_TYPE_STRUCT, .name = "entry", .size = 16,
					.members = entry_m, .n_members = 2 };
static const struct vg_type t_table = { .kind = VG_TYPE_ARRAY, .target = &t_entry, .count = 3,
					.count_known = true, .size = 48 };
static const struct vg_type t_flex = { .kind = VG_TYPE_ARRAY, .target = &t_entry };
static const struct vg_type t_void_arr = { .kind = VG_TYPE_ARRAY, .target = NULL, .count = 4,
					   .count_known = true };

/* C++: class D : Base, Mid { double r; }, Mid in Base's tail padding. */
static struct vg_type_member base_m[] = {
	{ .name = "_vptr.Base", .type = &t_ptr, .offset = 0 },
	{ .name = "id", .type = &t_int, .offset = 8 },
};
static const struct vg_type t_base = { .kind = VG_TYPE_CLASS, .name = "Base", .size = 16,
				       .members = base_m, .n_members = 2 };
static struct vg_type_member mid_m[] = { { .name = "tag", .type = &t_short, .offset = 0 } };
static const struct vg_type t_mid = { .kind = VG_TYPE_STRUCT, .name = "Mid", .size = 2,
				      .members = mid_m, .n_members = 1 };
static struct vg_type_member derived_m[] = {
	{ .name = "Base", .type = &t_base, .offset = 0, .is_base = true },
	{ .name = "Mid", .type = &t_mid, .offset = 12, .is_base = true },
	{ .name = "r", .type = &t_long, .offset = 16 },
};
static const struct vg_type t_derived = { .kind = VG_TYPE_CLASS, .name = "D", .size = 24,
					  .members = derived_m, .n_members = 3 };

static void expect(const char *var, const struct vg_type *t, uint64_t off, uint64_t len,
		   const char *want)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s", var);
	assert_true(vg_dwname_path(NULL, t, off, len, buf, sizeof(buf)));
	assert_string_equal(want, buf);
}

static void test_members(void **state)
{
	(void)state;
	expect("g", &t_config, 0, 1, "g.port");
	expect("g", &t_config, 2, 1, "g.port+2");
	expect("g", &t_config, 7, 1, "g.name[3]");
	expect("g", &t_config, 24, 4, "g.limits.min");
	expect("g", &t_config, 28, 1, "g+28 (padding)");
	expect("g", &t_config, 31, 1, "g+31 (padding)");
	expect("g", &t_config, 39, 1, "g.big+7");
	expect("g", &t_config, 40, 1, "g.a");      /* a bit-field: the first holding the byte */
	expect("g", &t_config, 41, 1, "g.c");
	expect("g", &t_config, 42, 1, "g+42 (padding)");
	expect("g", &t_config, 52, 1, "g.p+4");    /* the pointer's bytes, not its pointee */
	expect("g", &t_config, 56, 1, "g.i");      /* anonymous union: no name of its own */
	expect("g", &t_config, 61, 1, "g.b[5]");   /* past i: the member that holds it */
}

static void test_cxx_bases(void **state)
{
	(void)state;
	expect("d", &t_derived, 8, 4, "d.id");
	expect("d", &t_derived, 12, 2, "d.tag");   /* Mid, in Base's tail padding */
	expect("d", &t_derived, 14, 1, "d+14 (padding)");
	expect("d", &t_derived, 3, 1, "d._vptr.Base+3");
}

static void test_ranges(void **state)
{
	(void)state;
	expect("g", &t_config, 0, 72, "g");
	expect("g", &t_config, 0, 200, "g");
	expect("g", &t_config, 0, 4, "g.port");
	expect("g", &t_config, 0, 8, "g");         /* port and name: the struct */
	expect("g", &t_config, 4, 4, "g.name");
	expect("g", &t_config, 6, 3, "g.name+2");
	expect("g", &t_config, 20, 8, "g.limits");
	expect("g", &t_config, 0, 0, "g.port");    /* 0 counts as 1 */
	expect("t", &t_table, 16, 16, "t[1]");
	expect("t", &t_table, 24, 8, "t[1].value");
	expect("t", &t_table, 24, 16, "t+24");
}

static void test_arrays(void **state)
{
	(void)state;
	expect("t", &t_table, 40, 1, "t[2].value");
	expect("t", &t_table, 2, 1, "t[0]+2 (padding)");
	expect("t", &t_table, 47, 1, "t[2].value+7");
	expect("t", &t_table, 48, 1, "t+48");        /* past the last element */
	expect("f", &t_flex, 1000 * 16 + 8, 8, "f[1000].value");  /* count unknown */
	expect("v", &t_void_arr, 3, 1, "v+3");       /* no element size */
}

static void test_depth_and_space(void **state)
{
	/* char a[2][2]...[2], deeper than the bound: the rest is +N. */
	static struct vg_type nest[VG_DWNAME_MAX_DEPTH + 8];
	char buf[512];
	uint64_t size = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(nest) / sizeof(nest[0]); i++) {
		size *= 2;
		nest[i] = (struct vg_type){ .kind = VG_TYPE_ARRAY, .count = 2, .count_known = true,
					    .target = i ? &nest[i - 1] : &t_char, .size = size };
	}
	snprintf(buf, sizeof(buf), "n");
	assert_true(vg_dwname_path(NULL, &nest[sizeof(nest) / sizeof(nest[0]) - 1], 255, 1, buf,
				   sizeof(buf)));
	assert_int_equal(1 + 3 * VG_DWNAME_MAX_DEPTH + strlen("+255"), strlen(buf));
	assert_string_equal("+255", buf + strlen(buf) - 4);

	/* Too small: false, and what is there stays terminated. */
	snprintf(buf, 8, "g");
	assert_false(vg_dwname_path(NULL, &t_config, 24, 4, buf, 8));
	assert_true(strlen(buf) < 8);
	snprintf(buf, 8, "g");
	assert_false(vg_dwname_path(NULL, &t_config, 28, 1, buf, 8));
	assert_true(strlen(buf) < 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_cxx_bases),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_depth_and_space),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
