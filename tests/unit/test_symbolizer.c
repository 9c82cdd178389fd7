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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/image.h"
#include "sym/symbolizer.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "testutil.h"

/* The address checked is inside the call instruction of vg_test_marker:
 * its row is the call's line at any optimization level (the entry row is
 * not: -O2 and -O2 with ASan start on different lines). */
static uint64_t marker_ret;
static uint32_t marker_line;

__attribute__((noinline)) static void capture_return(void)
{
	marker_ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int vg_test_marker(int x);
__attribute__((noinline)) int vg_test_marker(int x)
{
	capture_return(); marker_line = __LINE__;
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
		/* A failed assertion in the parent skips stop_child(). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
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

/* addr: the call instruction's last byte, as a runtime or static address;
 * fn: vg_test_marker's address in the same space. */
static void check_marker(const struct vg_sym_result *r, uint64_t addr, uint64_t fn)
{
	assert_true(r->has_symbol);
	assert_string_equal(r->symbol, "vg_test_marker");
	assert_int_equal(r->symbol_address, fn);
	assert_int_equal(r->offset, addr - fn);
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
	uint64_t fn = (uint64_t)(uintptr_t)&vg_test_marker;
	uint64_t addr = marker_ret - 1;

	(void)state;
	start_child();
	assert_int_equal(vg_target_open(child, &t, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, 0, &s, &err), 0);

	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr, fn);
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

/* vg_symbolizer_open_loaded: the caller's images are the symbolizer's
 * (the very objects, not a second load), the caller's maps stay the
 * caller's through a refresh, and every answer is the same.  Ownership
 * errors (a double free, a use after the refresh) show under ASan. */
static void test_open_loaded(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	const struct vg_image *main_img;
	struct vg_symbolizer *s = NULL;
	struct vg_sym_result *r = malloc(sizeof(*r));
	uint64_t fn = (uint64_t)(uintptr_t)&vg_test_marker;
	uint64_t addr = marker_ret - 1;

	(void)state;
	start_child();
	assert_int_equal(vg_target_open(child, &t, &err), 0);
	assert_int_equal(vg_maps_load(child, 0, &maps, NULL, &err), 0);
	assert_int_equal(vg_mem_open(t, maps, &mem, &err), 0);
	assert_int_equal(vg_images_load(t, maps, mem, &imgs, &err), 0);
	main_img = vg_images_main(imgs);
	assert_non_null(main_img);
	assert_int_equal(vg_symbolizer_open_loaded(t, 0, maps, imgs, &s, &err), 0);
	assert_ptr_equal(vg_symbolizer_images(s), imgs);

	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr, fn);
	assert_ptr_equal(r->image, main_img);
	/* A refresh reads a table of its own; the caller's stays valid. */
	assert_int_equal(vg_symbolizer_refresh(s, &err), 0);
	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr, fn);
	assert_non_null(vg_maps_find(maps, addr));

	vg_symbolizer_free(s);
	vg_mem_free(mem);
	vg_maps_free(maps);
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
	uint64_t bias = 0, addr, fn;

	(void)state;
	dl_iterate_phdr(main_bias, &bias);
	addr = marker_ret - 1 - bias;
	fn = (uint64_t)(uintptr_t)&vg_test_marker - bias;
	assert_int_equal(vg_symbolizer_open_file("/proc/self/exe", 0, &s, &err), 0);
	assert_int_equal(vg_sym_lookup(s, addr, r, &err), 0);
	check_marker(r, addr, fn);
	assert_int_equal(r->static_address, addr);

	/* Offline, a kernel-looking address is just outside the file. */
	assert_int_equal(vg_sym_lookup(s, 0xffffffff81000000ull, r, &err), 0);
	assert_false(r->has_symbol);
	assert_non_null(strstr(r->why, "outside every PT_LOAD"));
	vg_symbolizer_free(s);
	free(r);
}

static bool same_answer(const struct vg_sym_result *a, const struct vg_sym_result *b)
{
	if (a->has_symbol != b->has_symbol || a->n_frames != b->n_frames ||
	    a->line != b->line || (a->file == NULL) != (b->file == NULL) ||
	    (a->file && strcmp(a->file, b->file) != 0) ||
	    (a->has_symbol && strcmp(a->symbol, b->symbol) != 0))
		return false;
	for (size_t i = 0; i < a->n_frames; i++) {
		const struct vg_sym_frame *x = &a->frames[i], *y = &b->frames[i];

		if (x->line != y->line || x->column != y->column || x->inlined != y->inlined ||
		    (x->function == NULL) != (y->function == NULL) ||
		    (x->function && strcmp(x->function, y->function) != 0) ||
		    (x->file == NULL) != (y->file == NULL) ||
		    (x->file && strcmp(x->file, y->file) != 0))
			return false;
	}
	return true;
}

/* The prefetch thread indexes CUs through its own libdw handle while
 * lookups go on: every answer must equal the one-thread answer.  This
 * test program links all of libvigil, dozens of CUs, and the addresses
 * walk through its code so that both threads claim CUs. */
static void test_prefetch_same_answers(void **state)
{
	struct vg_error err = { 0 };
	struct vg_symbolizer *one = NULL, *two = NULL;
	struct vg_sym_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint64_t bias = 0, lo, hi, differ = 0, with_frames = 0;

	(void)state;
	dl_iterate_phdr(main_bias, &bias);
	lo = (uint64_t)(uintptr_t)&vg_symbolizer_open_file - bias;
	hi = (uint64_t)(uintptr_t)&vg_test_marker - bias;
	if (lo > hi) {
		uint64_t t = lo;

		lo = hi;
		hi = t;
	}
	lo = lo > 0x40000 ? lo - 0x40000 : 0;
	hi += 0x40000;
	assert_int_equal(vg_symbolizer_open_file("/proc/self/exe", 0, &one, &err), 0);
	assert_int_equal(vg_symbolizer_open_file("/proc/self/exe", VG_SYM_PREFETCH, &two, &err), 0);
	for (uint64_t addr = lo; addr < hi; addr += 61) {
		assert_int_equal(vg_sym_lookup(two, addr, b, &err), 0);
		assert_int_equal(vg_sym_lookup(one, addr, a, &err), 0);
		differ += !same_answer(a, b);
		with_frames += a->n_frames > 0;
	}
	assert_int_equal(differ, 0);
	assert_true(with_frames > 1000);  /* the walk really went through code */
	vg_symbolizer_free(two);
	vg_symbolizer_free(one);
	free(a);
	free(b);
}

struct hammer {
	struct vg_symbolizer *s;
	uint64_t marker, marker_fn, libc_fn;
	int wrong;
};

static void *hammer_lookups(void *arg)
{
	struct hammer *h = arg;
	struct vg_sym_result *r = malloc(sizeof(*r));
	struct vg_error err = { 0 };

	for (int i = 0; r && i < 3000; i++) {
		uint64_t addr = i % 2 ? h->marker : h->libc_fn;
		uint64_t fn = i % 2 ? h->marker_fn : h->libc_fn;

		if (vg_sym_lookup(h->s, addr, r, &err) != 0 || !r->has_symbol ||
		    r->symbol_address != fn ||
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
		.marker = marker_ret - 1,
		.marker_fn = (uint64_t)(uintptr_t)&vg_test_marker,
		.libc_fn = (uint64_t)(uintptr_t)&getpid,
	};
	pthread_t th[2];

	(void)state;
	start_child();
	assert_int_equal(vg_target_open(child, &t, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, 0, &h.s, &err), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer_lookups, &h), 0);
	for (int i = 0; i < 8; i++)
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
	/* Before any fork: the children inherit marker_ret and marker_line. */
	if (vg_test_marker(1) != 4 || !marker_ret)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_child),
		cmocka_unit_test(test_open_loaded),
		cmocka_unit_test(test_offline_self),
		cmocka_unit_test(test_concurrent_refresh),
		cmocka_unit_test(test_prefetch_same_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
