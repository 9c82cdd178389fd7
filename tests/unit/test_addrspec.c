/* test_addrspec.c - the ADDR forms every command accepts, resolved against
 * this test process's own images: the expected answers are the addresses the
 * C compiler and the dynamic linker gave (&global, dlsym in libc). */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/addrspec.h"
#include "elf/image.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"

/* Non-static so it is in .symtab; used so it is not dropped. */
volatile unsigned long long vg_addrspec_global[4] = { 1, 2, 3, 4 };
/* One copy per thread: no address to give. */
__thread volatile int vg_addrspec_tls = 5;

struct self {
	struct vg_target *t;
	struct vg_maps *maps;
	struct vg_mem *mem;
	struct vg_images *imgs;
};

static int load_self(struct self *s)
{
	struct vg_error err = { 0 };

	if (vg_target_open(getpid(), &s->t, &err) < 0 ||
	    vg_maps_read(getpid(), &s->maps, &err) < 0 ||
	    vg_mem_open(s->t, s->maps, &s->mem, &err) < 0 ||
	    vg_images_load(s->t, s->maps, s->mem, &s->imgs, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void unload_self(struct self *s)
{
	vg_images_free(s->imgs);
	vg_mem_free(s->mem);
	vg_maps_free(s->maps);
	vg_target_free(s->t);
}

static int setup(void **state)
{
	static struct self s;

	*state = &s;
	return load_self(&s);
}

static int teardown(void **state)
{
	unload_self(*state);
	return 0;
}

static void test_parse_u64(void **state)
{
	static const struct { const char *s; int suffix; int ret; uint64_t v; } cases[] = {
		{ "0", 0, 0, 0 },
		{ "42", 0, 0, 42 },
		{ "0x1F", 0, 0, 0x1f },
		{ "0X1f", 0, 0, 0x1f },
		{ "18446744073709551615", 0, 0, UINT64_MAX },
		{ "0xffffffffffffffff", 0, 0, UINT64_MAX },
		{ "1k", 1, 0, 1024 },
		{ "2M", 1, 0, 2u << 20 },
		{ "1G", 1, 0, 1u << 30 },
		{ "0x10k", 1, 0, 16 * 1024 },
		{ "1k", 0, -EINVAL, 0 },
		{ "", 0, -EINVAL, 0 },
		{ "0x", 0, -EINVAL, 0 },
		{ "12a", 0, -EINVAL, 0 },
		{ "-1", 0, -EINVAL, 0 },
		{ " 1", 0, -EINVAL, 0 },
		{ "1kk", 1, -EINVAL, 0 },
		{ "1T", 1, -EINVAL, 0 },
		{ "18446744073709551616", 0, -ERANGE, 0 },
		{ "0x10000000000000000", 0, -ERANGE, 0 },
		{ "17179869184G", 1, -ERANGE, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 0xdead;
		int r = vg_parse_u64(cases[i].s, cases[i].suffix, &v);

		if (r != cases[i].ret)
			fail_msg("'%s': got %d, want %d", cases[i].s, r, cases[i].ret);
		if (r == 0 && v != cases[i].v)
			fail_msg("'%s': got %llu", cases[i].s, (unsigned long long)v);
	}
}

static uint64_t resolve_ok(struct self *s, const char *spec)
{
	struct vg_error err = { 0 };
	struct vg_addr a;

	if (vg_addr_parse(spec, s->imgs, NULL, &a, &err) < 0)
		fail_msg("'%s': %s", spec, err.msg);
	return a.runtime;
}

static void test_forms_agree(void **state)
{
	struct self *s = *state;
	uint64_t want = (uint64_t)(uintptr_t)&vg_addrspec_global[0];
	const struct vg_image *main_img = vg_images_main(s->imgs);
	const char *exe = strrchr(main_img->path, '/') + 1;
	char spec[256];

	assert_non_null(main_img);
	assert_int_equal(resolve_ok(s, "vg_addrspec_global"), want);
	assert_int_equal(resolve_ok(s, "vg_addrspec_global+8"), want + 8);
	assert_int_equal(resolve_ok(s, "vg_addrspec_global+0x10"), want + 16);
	snprintf(spec, sizeof(spec), "%s:vg_addrspec_global+24", exe);
	assert_int_equal(resolve_ok(s, spec), want + 24);
	snprintf(spec, sizeof(spec), "@0x%llx", (unsigned long long)(want - main_img->bias));
	assert_int_equal(resolve_ok(s, spec), want);
	snprintf(spec, sizeof(spec), "0x%llx", (unsigned long long)want);
	assert_int_equal(resolve_ok(s, spec), want);
}

static void test_symbol_in_libc(void **state)
{
	struct self *s = *state;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *want;
	struct vg_addr a;
	struct vg_error err = { 0 };

	assert_non_null(libc);
	/* dlsym on libc's own handle: the definition in libc, not an
	 * interposer (ASan intercepts many libc functions). */
	want = dlsym(libc, "getppid");
	assert_non_null(want);
	assert_int_equal(vg_addr_parse("libc.so.6:getppid", s->imgs, NULL, &a, &err), 0);
	assert_int_equal(a.runtime, (uint64_t)(uintptr_t)want);
	assert_string_equal(a.symbol, "getppid");
	assert_non_null(strstr(a.image->path, "libc.so.6"));
	dlclose(libc);
}

static void expect_error(struct self *s, const char *spec, int code, const char *words)
{
	struct vg_error err = { 0 };
	struct vg_addr a;
	int r = vg_addr_parse(spec, s->imgs, NULL, &a, &err);

	if (r != code)
		fail_msg("'%s': got %d (%s), want %d", spec, r, err.msg, code);
	if (!strstr(err.msg, words))
		fail_msg("'%s': message '%s' lacks '%s'", spec, err.msg, words);
}

static void test_errors(void **state)
{
	struct self *s = *state;

	expect_error(s, "", -EINVAL, "empty address");
	expect_error(s, "12345", -EINVAL, "as 0xHEX");
	expect_error(s, "0xzz", -EINVAL, "malformed address '0xzz'");
	expect_error(s, "0x1ffffffffffffffff", -ERANGE, "malformed address");
	expect_error(s, "@0x", -EINVAL, "malformed static address");
	expect_error(s, "@123", -EINVAL, "expected @0xHEX");
	expect_error(s, "@0xfffffffffff0", -EFAULT, "not inside any PT_LOAD");
	expect_error(s, "no_such_symbol_anywhere", -ENOENT, "no symbol 'no_such_symbol_anywhere'");
	expect_error(s, "libnothere.so:foo", -ENOENT, "no image named 'libnothere.so'");
	expect_error(s, "libc.so.6:no_such_fn", -ENOENT, "no symbol 'no_such_fn' in");
	expect_error(s, ":foo", -EINVAL, "IMAGE:SYMBOL");
	expect_error(s, "libc.so.6:", -EINVAL, "IMAGE:SYMBOL");
	/* "::" belongs to a C++ name, it does not split off an image. */
	expect_error(s, "ns::no_such", -ENOENT, "no symbol 'ns::no_such'");
	expect_error(s, "vg_addrspec_global+0xffffffffffffffff", -ERANGE, "overflows");
	vg_addrspec_tls++;
	expect_error(s, "vg_addrspec_tls", -EINVAL, "'vg_addrspec_tls' is a thread-local variable of");
}

/* Two copies of one library in two directories: "libfx.so:SYM" names
 * neither, so it is refused with both paths; the full path works. */
static void test_ambiguous_image(void **state)
{
	char dirs[2][64], cmd[512], spec[256];
	void *h[2];
	struct self fresh = { 0 }, *sp = &fresh;
	struct vg_error err = { 0 };
	struct vg_addr a;
	int *value;

	(void)state;
	for (int i = 0; i < 2; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "/tmp/vg_addrspec.XXXXXX");
		assert_non_null(mkdtemp(dirs[i]));
		snprintf(cmd, sizeof(cmd), "cp '%s/libfx.so' '%s/'", FIXTURES_BUILD, dirs[i]);
		assert_int_equal(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "%s/libfx.so", dirs[i]);
		h[i] = dlopen(cmd, RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h[i]);
	}
	value = dlsym(h[1], "fx_lib_value");
	assert_non_null(value);
	assert_int_equal(load_self(&fresh), 0);
	assert_int_equal(vg_addr_parse("libfx.so:fx_lib_value", sp->imgs, NULL, &a, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "image name 'libfx.so' is ambiguous"));
	snprintf(spec, sizeof(spec), "%s/libfx.so", dirs[0]);
	assert_non_null(strstr(err.msg, spec));
	snprintf(spec, sizeof(spec), "%s/libfx.so", dirs[1]);
	assert_non_null(strstr(err.msg, spec));
	snprintf(spec, sizeof(spec), "%s/libfx.so:fx_lib_value", dirs[1]);
	vg_error_clear(&err);
	assert_int_equal(vg_addr_parse(spec, sp->imgs, NULL, &a, &err), 0);
	assert_int_equal(a.runtime, (uint64_t)(uintptr_t)value);
	/* A bare name defined twice resolves, and says how many define it. */
	assert_int_equal(vg_addr_parse("fx_lib_value", sp->imgs, NULL, &a, &err), 0);
	assert_int_equal(a.n_definitions, 2);
	unload_self(&fresh);
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dirs[i]);
		assert_int_equal(system(cmd), 0);
	}
}

/* An image whose file name contains ':' (like "memfd:payload"): IMAGE is
 * split off at the last single colon. */
static void test_colon_in_image_name(void **state)
{
	char dir[64], cmd[512], path[256];
	struct self fresh = { 0 };
	struct vg_error err = { 0 };
	struct vg_addr a;
	void *h;
	int *value;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vg_addrspec.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp '%s/libfx.so' '%s/lib:colon.so'", FIXTURES_BUILD, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/lib:colon.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	value = dlsym(h, "fx_lib_value");
	assert_non_null(value);
	assert_int_equal(load_self(&fresh), 0);
	if (vg_addr_parse("lib:colon.so:fx_lib_value", fresh.imgs, NULL, &a, &err) < 0)
		fail_msg("lib:colon.so:fx_lib_value: %s", err.msg);
	assert_int_equal(a.runtime, (uint64_t)(uintptr_t)value);
	assert_int_equal(a.n_definitions, 1);
	unload_self(&fresh);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_forms_agree),
		cmocka_unit_test(test_symbol_in_libc),
		cmocka_unit_test(test_errors),
		/* Last: they load more libraries into this process. */
		cmocka_unit_test(test_ambiguous_image),
		cmocka_unit_test(test_colon_in_image_name),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
