/* test_kallsyms.c - the /proc/kallsyms parser on recorded fixtures (one
 * symbol per address, sizes up to the next symbol and capped at module
 * boundaries, zeroed and malformed files, unreadable paths) and on the real
 * file: the address of `schedule` + 1 must come back as schedule+0x1. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sym/kallsyms.h"

#define KS_DIR FIXTURES "/kallsyms/"

static struct vg_kallsyms *load_ok(const char *path)
{
	struct vg_kallsyms *k = NULL;
	struct vg_error err = { 0 };
	int r = vg_kallsyms_load(path, &k, &err);

	if (r != 0)
		fail_msg("load '%s': %d %s", path, r, err.msg);
	assert_non_null(k);
	return k;
}

/* addr resolves to name+off in module (NULL: vmlinux) with this size. */
static void expect_sym(const struct vg_kallsyms *k, uint64_t addr,
		       const char *name, uint64_t off, const char *module,
		       char type, uint64_t size)
{
	struct vg_ksym s;
	int r = vg_kallsyms_lookup(k, addr, &s);

	if (r != 0)
		fail_msg("0x%llx: got %d, want %s", (unsigned long long)addr, r, name);
	assert_string_equal(s.name, name);
	assert_int_equal(addr - s.addr, off);
	if (module)
		assert_string_equal(s.module, module);
	else
		assert_null(s.module);
	assert_int_equal(s.type, type);
	assert_int_equal(s.size, size);
}

static void expect_none(const struct vg_kallsyms *k, uint64_t addr)
{
	struct vg_ksym s;
	int r = vg_kallsyms_lookup(k, addr, &s);

	if (r != -ENOENT)
		fail_msg("0x%llx: got %d (%s), want -ENOENT",
			 (unsigned long long)addr, r, r == 0 ? s.name : "");
}

static void test_small(void **state)
{
	struct vg_kallsyms *k = load_ok(KS_DIR "small.txt");

	(void)state;
	assert_null(vg_kallsyms_why(k));
	assert_int_equal(vg_kallsyms_malformed(k), 0);
	/* 20 lines, 2 below the kernel half, 6 duplicate addresses */
	assert_int_equal(vg_kallsyms_count(k), 12);

	/* first T of equals wins over a later T and a t */
	expect_sym(k, 0xffffffff81000000, "_text", 0, NULL, 'T', 0x100);
	expect_sym(k, 0xffffffff810000ff, "_text", 0xff, NULL, 'T', 0x100);
	expect_sym(k, 0xffffffff81000100, "__pfx_do_one", 0, NULL, 't', 0x10);
	/* a later global T beats the local t at the same address */
	expect_sym(k, 0xffffffff81000115, "__x64_do_one", 5, NULL, 'T', 0xf0);
	/* W beats an earlier w and an r */
	expect_sym(k, 0xffffffff810002ff, "weak_upper", 0xff, NULL, 'W', 0x100);
	expect_sym(k, 0xffffffff8100033f, "last_text", 0x3f, NULL, 'T', 0x40);
	/* inside vmlinux the size reaches the next symbol, however far */
	expect_sym(k, 0xffffffff81ffffff, "_etext", 0xffffffff81ffffff - 0xffffffff81000340,
		   NULL, 'T', 0xffffffff82000000 - 0xffffffff81000340);
	expect_sym(k, 0xffffffff82000000, "some_data", 0, NULL, 'D', 0x40);
	/* vmlinux's last symbol, then a module: capped */
	expect_sym(k, 0xffffffff82000040 + 0xfff, "last_vmlinux", 0xfff, NULL,
		   'R', VG_KSYM_BOUNDARY_CAP);
	expect_none(k, 0xffffffff82000040 + 0x1000);
	/* modules, listed out of order in the file */
	expect_sym(k, 0xffffffffc0001010, "ext4_fill_super", 0x10, "ext4", 'T', 0x1000);
	expect_sym(k, 0xffffffffc0002fff, "ext4_helper", 0xfff, "ext4", 't',
		   VG_KSYM_BOUNDARY_CAP);
	expect_none(k, 0xffffffffc0003000);
	expect_none(k, 0xffffffffc000ffff);
	expect_sym(k, 0xffffffffc0010000, "xfs_first", 0, "xfs", 't', 0xf0000);
	/* the last symbol of all */
	expect_sym(k, 0xffffffffc0100fff, "xfs_last", 0xfff, "xfs", 't',
		   VG_KSYM_BOUNDARY_CAP);
	expect_none(k, 0xffffffffc0101000);
	expect_none(k, UINT64_MAX);
	/* below the first symbol, and the dropped per-CPU offsets */
	expect_none(k, 0xffffffff80ffffff);
	expect_none(k, 0);
	expect_none(k, 0x1000);
	vg_kallsyms_free(k);
}

static void test_zeroed(void **state)
{
	struct vg_kallsyms *k = load_ok(KS_DIR "zeroed.txt");
	const char *why = vg_kallsyms_why(k);

	(void)state;
	assert_int_equal(vg_kallsyms_count(k), 0);
	assert_int_equal(vg_kallsyms_malformed(k), 0);
	assert_non_null(why);
	assert_string_equal(why, "'" KS_DIR "zeroed.txt' shows every address as "
			    "0: it was read under kernel.kptr_restrict or "
			    "without CAP_SYSLOG");
	expect_none(k, 0);
	expect_none(k, 0xffffffff81000000);
	vg_kallsyms_free(k);
}

static void test_malformed_lines(void **state)
{
	struct vg_kallsyms *k = load_ok(KS_DIR "malformed.txt");

	(void)state;
	assert_null(vg_kallsyms_why(k));
	assert_int_equal(vg_kallsyms_count(k), 4);
	assert_int_equal(vg_kallsyms_malformed(k), 9);
	expect_sym(k, 0xffffffff81000001, "good_one", 1, NULL, 'T', 0x300);
	expect_sym(k, 0xffffffff81000300, "good_two", 0, NULL, 't', 0x400);
	/* a module's last symbol before vmlinux's next: a boundary, but
	 * closer than the cap */
	expect_sym(k, 0xffffffff81000700, "good_mod", 0, "mod", 't', 0x300);
	expect_sym(k, 0xffffffff81000a00, "good_last", 0, NULL, 'T',
		   VG_KSYM_BOUNDARY_CAP);
	vg_kallsyms_free(k);
}

static void test_not_kallsyms(void **state)
{
	struct vg_kallsyms *k = (void *)1;
	struct vg_error err = { 0 };

	(void)state;
	assert_int_equal(vg_kallsyms_load(KS_DIR "garbage.txt", &k, &err), -EINVAL);
	assert_null(k);
	assert_int_equal(err.code, -EINVAL);
	assert_string_equal(err.msg, "'" KS_DIR "garbage.txt' is not a kallsyms "
			    "file: line 1 ('hello') is not 'ADDRESS TYPE NAME "
			    "[MODULE]'");
}

static void test_empty_and_unreadable(void **state)
{
	struct vg_kallsyms *k;

	(void)state;
	k = load_ok(KS_DIR "empty.txt");
	assert_int_equal(vg_kallsyms_count(k), 0);
	assert_string_equal(vg_kallsyms_why(k), "'" KS_DIR "empty.txt' is empty");
	expect_none(k, 0xffffffff81000000);
	vg_kallsyms_free(k);

	k = load_ok(KS_DIR "no-such-file");
	assert_string_equal(vg_kallsyms_why(k), "cannot read '" KS_DIR
			    "no-such-file': No such file or directory");
	vg_kallsyms_free(k);

	/* open succeeds, read fails */
	k = load_ok(KS_DIR);
	assert_string_equal(vg_kallsyms_why(k), "cannot read '" KS_DIR
			    "': Is a directory");
	assert_int_equal(vg_kallsyms_count(k), 0);
	vg_kallsyms_free(k);
	assert_null(vg_kallsyms_free(NULL));
	assert_int_equal(vg_kallsyms_lookup(NULL, 1, NULL), -ENOENT);
}

static void test_parse_memory(void **state)
{
	/* no final newline, no NUL terminator: the parser copies len bytes */
	static const char text[] =
		"ffffffff81000010 T b\n"
		"ffffffff81000000 T a\n"
		"ffffffff81000020 t c\tXX";
	struct vg_kallsyms *k;
	struct vg_error err = { 0 };
	struct vg_ksym s;

	(void)state;
	assert_int_equal(vg_kallsyms_parse(text, strlen(text) - strlen("\tXX"),
					   "mem", &k, &err), 0);
	assert_int_equal(vg_kallsyms_count(k), 3);
	expect_sym(k, 0xffffffff81000008, "a", 8, NULL, 'T', 0x10);
	expect_sym(k, 0xffffffff81000020, "c", 0, NULL, 't', VG_KSYM_BOUNDARY_CAP);
	assert_int_equal(vg_kallsyms_lookup(k, 0xffffffff81000011, &s), 0);
	assert_string_equal(s.name, "b");
	vg_kallsyms_free(k);
	/* the same with the tab: "\tX" is not "\t[module]" */
	assert_int_equal(vg_kallsyms_parse(text, strlen(text), "mem", &k, &err), 0);
	assert_int_equal(vg_kallsyms_count(k), 2);
	assert_int_equal(vg_kallsyms_malformed(k), 1);
	vg_kallsyms_free(k);
	assert_int_equal(vg_kallsyms_parse("", 0, "mem", &k, &err), 0);
	assert_string_equal(vg_kallsyms_why(k), "'mem' is empty");
	vg_kallsyms_free(k);
}

static void test_is_kernel(void **state)
{
	(void)state;
	assert_true(vg_addr_is_kernel(0xffffffff81000000));
	assert_true(vg_addr_is_kernel(0xffff800000000000));
	assert_true(vg_addr_is_kernel(UINT64_MAX));
	assert_false(vg_addr_is_kernel(0xffff7fffffffffff));
	assert_false(vg_addr_is_kernel(0x00007fffffffe000));
	assert_false(vg_addr_is_kernel(0));
}

/* The address of vmlinux text symbol `name` in the real file (0: none) and
 * the lowest address above it (*next, UINT64_MAX: none). */
static uint64_t real_address_of(const char *name, uint64_t *next)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[600], sym[512], type;
	unsigned long long addr;
	uint64_t found = 0;

	*next = UINT64_MAX;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 &&
		    (type == 'T' || type == 't') && strcmp(sym, name) == 0 &&
		    !strchr(line, '[')) {
			found = addr;
			break;
		}
	}
	rewind(f);
	while (found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx", &addr) == 1 && addr > found && addr < *next)
			*next = addr;
	fclose(f);
	return found;
}

static void test_real_kallsyms(void **state)
{
	struct timespec t0, t1;
	struct vg_kallsyms *k;
	uint64_t addr, next;
	double ms;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	k = load_ok(NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (vg_kallsyms_count(k) == 0) {
		const char *why = vg_kallsyms_why(k);

		assert_non_null(why);
		/* only a kernel that hides addresses is a reason to skip */
		if (!strstr(why, "shows every address as 0"))
			fail_msg("real /proc/kallsyms gave an empty table: %s", why);
		print_message("skip: %s\n", why);
		vg_kallsyms_free(k);
		skip();
	}
	print_message("# /proc/kallsyms: %zu symbols loaded in %.1f ms\n",
		      vg_kallsyms_count(k), ms);
	assert_int_equal(vg_kallsyms_malformed(k), 0);
	assert_true(vg_kallsyms_count(k) > 1000);
	addr = real_address_of("schedule", &next);
	assert_true(vg_addr_is_kernel(addr));
	assert_true(next != UINT64_MAX);
	expect_sym(k, addr + 1, "schedule", 1, NULL, 'T', next - addr);
	expect_sym(k, next - 1, "schedule", next - 1 - addr, NULL, 'T', next - addr);
	vg_kallsyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_zeroed),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_not_kallsyms),
		cmocka_unit_test(test_empty_and_unreadable),
		cmocka_unit_test(test_parse_memory),
		cmocka_unit_test(test_is_kernel),
		cmocka_unit_test(test_real_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
