/* test_dwvarsym.c - the CU of a variable found through its ELF symbol,
 * on this test's own executable (built with -g): a global of this file,
 * a static of this file (STT_FILE), a global of a library file (the
 * binary search over the CUs' layout), and the names the symbol table
 * cannot vouch for (thread-local, weak, a renamed copy, absent), which
 * must be left to the walk over every CU. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdw.h>
#include <libelf.h>

#include "report/stack_format.h"
#include "sym/dwvarsym.h"

int g_unit_global = 7;
/* volatile: kept in memory, with a symbol (a constant would be folded). */
static volatile int g_unit_static = 3;
__thread int g_unit_tls = 1;
__attribute__((weak)) int g_unit_weak = 2;
/* gcc names this one "g_unit_count.0" in .symtab: a second definition
 * the DWARF calls g_unit_count (function scope here, but a symbol table
 * cannot tell an LTO-renamed file-scope static from it). */
static int bump(void)
{
	static int g_unit_count;  /* before the global: no shadowing */

	return ++g_unit_count;
}

int g_unit_count = 4;

struct self {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static int setup(void **state)
{
	static struct self s;

	elf_version(EV_CURRENT);
	s.fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(s.fd >= 0);
	s.elf = elf_begin(s.fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(s.elf);
	s.dw = dwarf_begin_elf(s.elf, DWARF_C_READ, NULL);
	assert_non_null(s.dw);
	*state = &s;
	return 0;
}

static int teardown(void **state)
{
	struct self *s = *state;

	dwarf_end(s->dw);
	elf_end(s->elf);
	close(s->fd);
	return 0;
}

/* The one CU answered for name, whose DW_AT_name ends in file. */
static void expect_cu(struct self *s, const char *name, const char *file)
{
	uint64_t cus[4], addr = 0;
	Dwarf_Die d;
	const char *cn;
	int n = vg_dwvar_symbol_cus(s->dw, s->elf, name, &addr, cus, 4);

	if (n != 1)
		fail_msg("%s: %d CUs, expected one", name, n);
	assert_non_null(dwarf_offdie(s->dw, cus[0], &d));
	cn = dwarf_diename(&d);
	assert_non_null(cn);
	if (strlen(cn) < strlen(file) || strcmp(cn + strlen(cn) - strlen(file), file) != 0)
		fail_msg("%s: CU %s, expected %s", name, cn, file);
	assert_true(addr != 0);
}

static void expect_none(struct self *s, const char *name)
{
	uint64_t cus[4], addr = 0;

	assert_int_equal(vg_dwvar_symbol_cus(s->dw, s->elf, name, &addr, cus, 4), 0);
}

static void test_global_of_this_file(void **state)
{
	expect_cu(*state, "g_unit_global", "test_dwvarsym.c");
}

static void test_static_by_stt_file(void **state)
{
	expect_cu(*state, "g_unit_static", "test_dwvarsym.c");
}

static void test_global_of_another_cu(void **state)
{
	/* In .data.rel.ro of a library file, far from this file's CU, after
	 * every file's .data.rel.ro.local: the second of two runs. */
	assert_non_null(vg_stack_formats);
	expect_cu(*state, "vg_stack_formats", "stack_format.c");
}

static void test_unprovable_names(void **state)
{
	struct self *s = *state;

	expect_none(s, "g_unit_tls");      /* st_value is a TLS offset */
	expect_none(s, "g_unit_weak");     /* may be defined in several CUs */
	expect_none(s, "g_unit_count");    /* g_unit_count.0 is another */
	expect_none(s, "g_unit_absent");
	expect_none(s, "");
	assert_int_equal(g_unit_global + g_unit_static + g_unit_tls + g_unit_weak + g_unit_count + bump(), 18);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_global_of_this_file),
		cmocka_unit_test(test_static_by_stt_file),
		cmocka_unit_test(test_global_of_another_cu),
		cmocka_unit_test(test_unprovable_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
