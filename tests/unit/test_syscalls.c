/* test_syscalls.c - the generated x86-64 system call table (numbers fixed
 * by the x86-64 ABI, so they are ground truth here) and the mapping from
 * kernel entry-point symbols to system call names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/syscalls.h"

static void test_numbers(void **state)
{
	(void)state;
	assert_int_equal(vg_syscall_number("read"), 0);
	assert_int_equal(vg_syscall_number("write"), 1);
	assert_int_equal(vg_syscall_number("openat"), 257);
	assert_int_equal(vg_syscall_number("exit_group"), 231);
	assert_int_equal(vg_syscall_number("nosuchcall"), -1);
	assert_int_equal(vg_syscall_number(""), -1);
	assert_int_equal(vg_syscall_number(NULL), -1);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(vg_syscall_name(0), "read");
	assert_string_equal(vg_syscall_name(1), "write");
	assert_string_equal(vg_syscall_name(257), "openat");
	assert_string_equal(vg_syscall_name(231), "exit_group");
	assert_null(vg_syscall_name(-1));
	assert_null(vg_syscall_name(100000));
	/* x86-64 leaves 335..423 unused (the numbers that were synced with
	 * the other architectures start at 424). */
	assert_null(vg_syscall_name(400));
}

/* Calls newer than the build's headers (Debian 12's stop at 450): the
 * running kernel (6.18) has up to 470. */
static void test_newer(void **state)
{
	char buf[32], name[64];

	(void)state;
	assert_string_equal(vg_syscall_name(451), "cachestat");
	assert_string_equal(vg_syscall_name(462), "mseal");
	assert_string_equal(vg_syscall_name(470), "listns");
	assert_int_equal(vg_syscall_number("futex_wait"), 455);
	assert_int_equal(vg_syscall_number("file_setattr"), 469);
	assert_true(vg_syscall_from_kernel_symbol("__x64_sys_mseal", name, sizeof(name)));
	assert_string_equal(name, "mseal");
	assert_true(vg_syscall_from_kernel_symbol("__do_sys_listmount", name, sizeof(name)));
	assert_string_equal(name, "listmount");
	assert_string_equal(vg_syscall_label(0, buf, sizeof(buf)), "read");
	assert_string_equal(vg_syscall_label(470, buf, sizeof(buf)), "listns");
	assert_string_equal(vg_syscall_label(999, buf, sizeof(buf)), "syscall_999");
	assert_string_equal(vg_syscall_label(400, buf, sizeof(buf)), "syscall_400");
	assert_string_equal(vg_syscall_label(-1, buf, sizeof(buf)), "syscall_unknown");
}

/* Every name maps to a number that maps back: both arrays come from the
 * same definitions and the name array is sorted for the binary search. */
static void test_round_trip(void **state)
{
	int n = 0;

	(void)state;
	for (int nr = 0; nr < 1024; nr++) {
		const char *name = vg_syscall_name(nr);

		if (!name)
			continue;
		n++;
		assert_int_equal(vg_syscall_number(name), nr);
	}
	assert_true(n > 300);
}

static void expect_symbol(const char *symbol, const char *want)
{
	char name[64];

	memset(name, 'x', sizeof name);
	if (!want) {
		if (vg_syscall_from_kernel_symbol(symbol, name, sizeof name))
			fail_msg("'%s' gave '%s', want false", symbol, name);
		return;
	}
	if (!vg_syscall_from_kernel_symbol(symbol, name, sizeof name))
		fail_msg("'%s' gave false, want '%s'", symbol, want);
	assert_string_equal(name, want);
}

static void test_kernel_symbols(void **state)
{
	char small[4];

	(void)state;
	expect_symbol("__x64_sys_read", "read");
	expect_symbol("__do_sys_openat", "openat");
	expect_symbol("__se_sys_write", "write");
	expect_symbol("__ia32_sys_read", "read");
	expect_symbol("ksys_write", "write");
	expect_symbol("__do_sys_openat.isra.0", "openat");
	expect_symbol("do_sys_open", NULL);      /* not an entry point */
	expect_symbol("__x64_sys_nosuchcall", NULL);
	expect_symbol("ksys_sync_helper", NULL); /* a helper, not a call */
	expect_symbol("__x64_sys_", NULL);
	expect_symbol("read", NULL);
	expect_symbol("vfs_write", NULL);
	/* "read" needs 5 bytes with its NUL. */
	assert_false(vg_syscall_from_kernel_symbol("__x64_sys_read", small, sizeof small));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_newer),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_kernel_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
