/* test_symbolizer.c - the symbolizer on a live child (a fork of this test,
 * so addresses here are addresses there), offline on this test's own file,
 * and under concurrent lookups and refreshes (ASan in `make test` sees a
 * retired image freed too early). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sym/symbolizer.h"
#include "target/target.h"
#include "testutil.h"

/* The line of the function's entry address: at -O2 gcc emits rows for the
 * declarator, the brace and the return statement all at that address, and
 * the last row at an address is the one that applies (llvm-symbolizer,
 * eu-addr2line and addr2line agree): the return statement's line. */
static const uint32_t marker_line = __LINE__ + 5;
__attribute__((noinline)) int vg_test_marker(int x);
__attribute__((noinline)) int vg_test_marker(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static pid_t child;

static void start_child(void)
{
	int fd;
	char c;

	child = tu_fork_pipe(&fd);
	assert_true(child >= 0);
	if (child == 0) {
		if (write(fd, "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	assert_int_equal(read(fd, &c, 1), 1);
	close(fd);
}

static void stop_child(void)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = s ? strlen(s) : 0, lx = strlen(suffix);

	return s && ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static void check_marker(const struct vg_sym_result *r, uint64_t addr)
{
	assert_true(r->has_symbol);
	assert_string_equal(r->symbol, "vg_test_marker");
	assert_int_equal(r->symbol_address, addr);
	assert_int_equal(r->offset, 0);
	assert_int_equal(r->n_frames, 1);
	assert_string_equal(r->frames[0].function, "vg_test_marker");
	assert_false(r->frames[0].inlined);
	assert_true(ends_with(r->frames[0].file, "/test_symbolizer.c"));
	assert_int_equal(r->frames[0].line, marker_line);
	assert_int_equal(r->source, VG_SYMSRC_DWARF);
}

static void test_live_child(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	struct vg_symbolizer *s = NULL;
	struct vg_sym_result *r = malloc(sizeof(*r));
	uint64_t addr = (uint64_t)(uintptr_t)&vg_test_marker;

	(void)state;
	start_child();
	assert_int_equal(vg_target_open(child, &t, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, 0, &s, &err), 0);

	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr);
	assert_ptr_equal(r->image, vg_images_main(vg_symbolizer_images(s)));

	/* A libc function: found in the mapped libc, symbol address exact. */
	addr = (uint64_t)(uintptr_t)&getpid;
	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	assert_true(r->has_symbol);
	assert_int_equal(r->symbol_address, addr);
	assert_true(ends_with(r->image_path, "/libc.so.6"));

	/* Page 0 is never mapped: no image, and the reason says so. */
	assert_int_equal(vg_sym_lookup(s, 0x1000, r, &err), 0);
	assert_null(r->image);
	assert_false(r->has_symbol);
	assert_int_equal(r->source, VG_SYMSRC_NONE);
	assert_non_null(strstr(r->why, "not mapped"));

	vg_symbolizer_free(s);
	vg_target_free(t);
	stop_child();
	free(r);
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;  /* the first entry is the main program */
}

static void test_offline_self(void **state)
{
	struct vg_error err = { 0 };
	struct vg_symbolizer *s = NULL;
	struct vg_sym_result *r = malloc(sizeof(*r));
	uint64_t bias = 0, addr;

	(void)state;
	dl_iterate_phdr(main_bias, &bias);
	addr = (uint64_t)(uintptr_t)&vg_test_marker - bias;
	assert_int_equal(vg_symbolizer_open_file("/proc/self/exe", 0, &s, &err), 0);
	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr);
	assert_int_equal(r->static_address, addr);

	/* Offline, a kernel-looking address is just outside the file. */
	assert_int_equal(vg_sym_lookup(s, 0xffffffff81000000ull, r, &err), 0);
	assert_false(r->has_symbol);
	assert_non_null(strstr(r->why, "outside every PT_LOAD"));
	vg_symbolizer_free(s);
	free(r);
}

struct hammer {
	struct vg_symbolizer *s;
	uint64_t marker, libc_fn;
	int wrong;
};

static void *hammer_lookups(void *arg)
{
	struct hammer *h = arg;
	struct vg_sym_result *r = malloc(sizeof(*r));
	struct vg_error err = { 0 };

	for (int i = 0; r && i < 20000; i++) {
		uint64_t addr = i % 2 ? h->marker : h->libc_fn;

		if (vg_sym_lookup(h->s, addr, r, &err) != 0 || !r->has_symbol ||
		    r->symbol_address != addr ||
		    (addr == h->marker && (r->n_frames != 1 || r->frames[0].line != marker_line ||
					   strcmp(r->frames[0].function, "vg_test_marker") != 0)))
			__atomic_add_fetch(&h->wrong, 1, __ATOMIC_RELAXED);
	}
	free(r);
	return NULL;
}

/* Two drain threads look up while the main thread refreshes: every answer
 * stays right, and a refresh never frees what a lookup is reading. */
static void test_concurrent_refresh(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	struct hammer h = {
		.marker = (uint64_t)(uintptr_t)&vg_test_marker,
		.libc_fn = (uint64_t)(uintptr_t)&getpid,
	};
	pthread_t th[2];

	(void)state;
	start_child();
	assert_int_equal(vg_target_open(child, &t, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, 0, &h.s, &err), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer_lookups, &h), 0);
	for (int i = 0; i < 30; i++)
		assert_int_equal(vg_symbolizer_refresh(h.s, &err), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(h.wrong, 0);
	vg_symbolizer_free(h.s);
	vg_target_free(t);
	stop_child();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_child),
		cmocka_unit_test(test_offline_self),
		cmocka_unit_test(test_concurrent_refresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
