/* test_pointers.c - pointer scan and match location on a live child (a
 * fork of this test, so the addresses of globals here are addresses
 * there).  The child builds g_root -> A, A+24 -> B, B+24 -> A (a cycle),
 * and g_direct -> C, then reports the heap addresses over a pipe; the
 * chains vigil must find are exactly those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/image.h"
#include "scan/locate.h"
#include "scan/pointers.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "testutil.h"

struct node {
	uint64_t a, b, c;
	struct node *link;      /* +24 */
	uint64_t d;
	uint64_t value;         /* +40: the address searched for */
	uint64_t pad[2];
};
_Static_assert(offsetof(struct node, link) == 24, "link at +24");
_Static_assert(offsetof(struct node, value) == 40, "value at +40");

struct node *g_root;            /* .bss */
struct node *g_direct;          /* .bss: straight to C */
uint64_t g_x[4];                /* .bss */
uint64_t g_data[4] = { 1, 2, 3, 4 };  /* .data */
/* Large enough that most of it lies in the anonymous mapping after the
 * file-backed data pages, where vg_images_find() does not look. */
char g_big[1 << 20];

struct heap_addrs {
	uint64_t a, b, c;
};

static pid_t child;
static struct heap_addrs heap;
static struct vg_target *tgt;
static struct vg_maps *maps;
static struct vg_mem *mem;
static struct vg_images *imgs;

static int start_child(void **state)
{
	struct vg_error err = { 0 };
	int fd;

	(void)state;
	child = tu_fork_pipe(&fd);
	if (child < 0)
		return -1;
	if (child == 0) {
		struct node *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		struct node *c = calloc(1, sizeof(*c));
		struct heap_addrs h = { (uintptr_t)a, (uintptr_t)b, (uintptr_t)c };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		a->link = b;
		b->link = a;
		b->value = 42;
		g_root = a;
		g_direct = c;
		g_big[0] = 1;
		if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
			_exit(1);
		for (;;)
			pause();
	}
	if (read(fd, &heap, sizeof(heap)) != (ssize_t)sizeof(heap))
		return -1;
	close(fd);
	if (vg_target_open(child, &tgt, &err) < 0 ||
	    vg_maps_read(child, &maps, &err) < 0 ||
	    vg_mem_open(tgt, maps, &mem, &err) < 0 ||
	    vg_images_load(tgt, maps, mem, &imgs, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int stop_child(void **state)
{
	(void)state;
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	vg_target_free(tgt);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

static int main_base(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;  /* the first entry is the executable */
}

static uint64_t load_base(void)
{
	uint64_t base = 0;

	dl_iterate_phdr(main_base, &base);
	return base;
}

static uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int scan(uint64_t target, unsigned depth, uint64_t max_offset,
		size_t max_chains, struct vg_ptr_chain **chains, size_t *n,
		struct vg_ptr_stats *st)
{
	struct vg_ptr_opts o = { target, depth, max_offset, max_chains, NULL, NULL };
	struct vg_error err = { 0 };
	int r = vg_ptr_scan(child, maps, imgs, &o, chains, n, st, &err);

	if (r < 0)
		print_error("vg_ptr_scan: %s\n", err.msg);
	return r;
}

/* How many chains have this base symbol. */
static size_t count_base(const struct vg_ptr_chain *c, size_t n, const char *sym)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i].base_symbol && strcmp(c[i].base_symbol, sym) == 0)
			k++;
	return k;
}

static const struct vg_ptr_chain *find_base(const struct vg_ptr_chain *c,
					    size_t n, const char *sym)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].base_symbol && strcmp(c[i].base_symbol, sym) == 0)
			return &c[i];
	return NULL;
}

static int base_class(const struct vg_ptr_chain *c)
{
	return (c->image->is_main ? 0 : 2) + (c->base_symbol ? 0 : 1);
}

static void test_chain_depth2(void **state)
{
	struct vg_ptr_chain *c;
	struct vg_ptr_stats st;
	const struct vg_ptr_chain *g;
	char buf[256];
	size_t n;

	(void)state;
	assert_int_equal(scan(heap.b + 40, 2, 64, 1000, &c, &n, &st), 0);
	g = find_base(c, n, "g_root");
	assert_non_null(g);
	assert_int_equal(count_base(c, n, "g_root"), 1);
	assert_int_equal(g->depth, 2);
	assert_int_equal(g->base_address, addr_of(&g_root));
	assert_int_equal(g->base_static, addr_of(&g_root) - load_base());
	assert_non_null(g->image);
	assert_true(g->image->is_main);
	assert_int_equal(g->base_symbol_offset, 0);
	assert_int_equal(g->offsets[0], 24);
	assert_int_equal(g->offsets[1], 40);
	assert_string_equal(vg_ptr_chain_expression(g, buf, sizeof(buf)),
			    "*(*(g_root)+24)+40");
	snprintf(buf, sizeof(buf), "test_pointers+0x%" PRIx64, g->base_static);
	{
		char base[128];

		assert_string_equal(vg_ptr_chain_base(g, base, sizeof(base)), buf);
	}
	assert_true(st.bytes_scanned > 0);
	assert_true(st.pointers >= 3);
	assert_int_equal(st.chains_found, n);
	assert_false(st.truncated);
	assert_false(st.frontier_capped);
	assert_false(st.interrupted);
	/* Ranked: named globals of the executable first. */
	for (size_t i = 1; i < n; i++)
		assert_true(base_class(&c[i - 1]) <= base_class(&c[i]));
	free(c);
}

/* The chain needs two dereferences and an offset of 40. */
static void test_chain_limits(void **state)
{
	struct vg_ptr_chain *c;
	struct vg_ptr_stats st;
	size_t n;

	(void)state;
	assert_int_equal(scan(heap.b + 40, 1, 64, 1000, &c, &n, &st), 0);
	assert_int_equal(count_base(c, n, "g_root"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c[i].depth, 1);
	free(c);
	assert_int_equal(scan(heap.b + 40, 2, 32, 1000, &c, &n, &st), 0);
	assert_int_equal(count_base(c, n, "g_root"), 0);
	free(c);
	/* Deeper: the cycle A <-> B adds no second g_root chain. */
	assert_int_equal(scan(heap.b + 40, 4, 64, 1000, &c, &n, &st), 0);
	assert_int_equal(count_base(c, n, "g_root"), 1);
	free(c);
}

static void test_chain_depth1(void **state)
{
	struct vg_ptr_chain *c;
	struct vg_ptr_stats st;
	char buf[256];
	size_t n;

	(void)state;
	assert_int_equal(scan(heap.c + 16, 3, 64, 1000, &c, &n, &st), 0);
	assert_true(n >= 1);
	/* The smallest offsets from a named global rank first. */
	assert_string_equal(c[0].base_symbol, "g_direct");
	assert_int_equal(c[0].depth, 1);
	assert_int_equal(c[0].base_address, addr_of(&g_direct));
	assert_int_equal(c[0].offsets[0], 16);
	assert_string_equal(vg_ptr_chain_expression(&c[0], buf, sizeof(buf)),
			    "*(g_direct)+16");
	free(c);
	/* max_chains 1: the best one, and the count says there may be more. */
	assert_int_equal(scan(heap.c, 2, 0, 1, &c, &n, &st), 0);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].base_symbol, "g_direct");
	assert_string_equal(vg_ptr_chain_expression(&c[0], buf, sizeof(buf)),
			    "*(g_direct)");
	assert_true(st.truncated);
	free(c);
}

static void test_scan_errors(void **state)
{
	struct vg_ptr_chain *c = (void *)1;
	struct vg_ptr_stats st;
	struct vg_error err = { 0 };
	struct vg_ptr_opts o = { heap.b + 40, 0, 64, 10, NULL, NULL };
	volatile sig_atomic_t stop = 1;
	size_t n = 7;

	(void)state;
	assert_int_equal(vg_ptr_scan(child, maps, imgs, &o, &c, &n, &st, &err), -EINVAL);
	assert_string_equal(err.msg, "pointer scan depth 0 is out of range; give 1 to 8");
	assert_null(c);
	assert_int_equal(n, 0);
	o.depth = VG_PTR_MAX_DEPTH + 1;
	assert_int_equal(vg_ptr_scan(child, maps, imgs, &o, &c, &n, &st, NULL), -EINVAL);
	o.depth = 2;
	o.max_chains = 0;
	assert_int_equal(vg_ptr_scan(child, maps, imgs, &o, &c, &n, &st, NULL), -EINVAL);
	o.max_chains = 10;
	o.target = 0x10;
	vg_error_clear(&err);
	assert_int_equal(vg_ptr_scan(child, maps, imgs, &o, &c, &n, &st, &err), -EFAULT);
	{
		char want[160];

		snprintf(want, sizeof(want),
			 "0x10 is not mapped in pid %d; give an address of a match of 'vigil scan'",
			 (int)child);
		assert_string_equal(err.msg, want);
	}
	/* Stopped before it starts: nothing found, and it says so. */
	o.target = heap.b + 40;
	o.stop = &stop;
	assert_int_equal(vg_ptr_scan(child, maps, imgs, &o, &c, &n, &st, NULL), 0);
	assert_int_equal(n, 0);
	assert_true(st.interrupted);
	free(c);
}

static void test_expression_without_symbol(void **state)
{
	struct vg_ptr_chain c = {
		.base_address = 0x555555558010, .image = vg_images_main(imgs),
		.base_static = 0x4010, .offsets = { 0, 24, 40 }, .depth = 3,
	};
	struct vg_ptr_chain bare = { .base_address = 0x1000, .depth = 1, .offsets = { 8 } };
	char buf[256], small[8];

	(void)state;
	assert_string_equal(vg_ptr_chain_expression(&c, buf, sizeof(buf)),
			    "*(*(*(test_pointers+0x4010))+24)+40");
	c.base_symbol = "g_tab";
	c.base_symbol_offset = 16;
	assert_string_equal(vg_ptr_chain_expression(&c, buf, sizeof(buf)),
			    "*(*(*(g_tab+16))+24)+40");
	assert_string_equal(vg_ptr_chain_expression(&c, small, sizeof(small)), "*(*(*(g");
	assert_string_equal(vg_ptr_chain_base(&bare, buf, sizeof(buf)), "0x1000");
	assert_string_equal(vg_ptr_chain_expression(&bare, buf, sizeof(buf)), "*(0x1000)+8");
}

static void test_locate_bss_data(void **state)
{
	struct vg_location l;
	uint64_t base = load_base();

	(void)state;
	vg_locate(maps, imgs, addr_of(&g_x[1]), &l);
	assert_non_null(l.region);
	assert_true(l.region->writable);
	assert_non_null(l.image);
	assert_true(l.image->is_main);
	assert_int_equal(l.static_offset, addr_of(&g_x[1]) - base);
	assert_string_equal(l.symbol, "g_x");
	assert_int_equal(l.symbol_offset, 8);
	assert_string_equal(l.watch_spec, "g_x+8");

	vg_locate(maps, imgs, addr_of(&g_data[0]), &l);
	assert_true(l.image && l.image->is_main);
	assert_int_equal(l.static_offset, addr_of(&g_data[0]) - base);
	assert_string_equal(l.symbol, "g_data");
	assert_int_equal(l.symbol_offset, 0);
	assert_string_equal(l.watch_spec, "g_data");
}

/* The tail of .bss in the anonymous mapping after the file's pages. */
static void test_locate_bss_anonymous(void **state)
{
	uint64_t a = addr_of(&g_big[sizeof(g_big) - 8]);
	struct vg_location l;

	(void)state;
	/* The image's mem_hi covers it (the mapping is anonymous). */
	assert_true(vg_images_find(imgs, a) == vg_images_main(imgs));
	assert_int_equal(vg_maps_find(maps, a)->kind, VG_REGION_ANON);
	vg_locate(maps, imgs, a, &l);
	assert_true(l.image && l.image->is_main);
	assert_int_equal(l.static_offset, a - load_base());
	assert_string_equal(l.symbol, "g_big");
	assert_int_equal(l.symbol_offset, sizeof(g_big) - 8);
	assert_string_equal(l.watch_spec, "g_big+1048568");
}

static void test_locate_heap(void **state)
{
	struct vg_location l;
	char want[32];

	(void)state;
	vg_locate(maps, imgs, heap.b + 40, &l);
	assert_non_null(l.region);
	assert_null(l.image);
	assert_null(l.symbol);
	assert_int_equal(l.static_offset, 0);
	snprintf(want, sizeof(want), "0x%" PRIx64, heap.b + 40);
	assert_string_equal(l.watch_spec, want);
	vg_locate(maps, imgs, 0x10, &l);
	assert_null(l.region);
	assert_null(l.image);
	assert_string_equal(l.watch_spec, "0x10");
}

/* A libc variable nothing here refers to (so no copy relocation puts it
 * in the executable): IMAGE:SYMBOL+OFF. */
static void test_locate_library(void **state)
{
	void *p = dlsym(RTLD_DEFAULT, "obstack_alloc_failed_handler");
	struct vg_location l;
	Dl_info info;

	(void)state;
	assert_non_null(p);
	assert_true(dladdr(p, &info));
	assert_non_null(strstr(info.dli_fname, "libc.so.6"));
	vg_locate(maps, imgs, addr_of(p) + 4, &l);
	assert_non_null(l.image);
	assert_false(l.image->is_main);
	assert_string_equal(vg_locate_image_name(l.image), "libc.so.6");
	assert_int_equal(l.static_offset, addr_of(p) + 4 - addr_of(info.dli_fbase));
	assert_string_equal(l.symbol, "obstack_alloc_failed_handler");
	assert_int_equal(l.symbol_offset, 4);
	assert_string_equal(l.watch_spec, "libc.so.6:obstack_alloc_failed_handler+4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_depth2),
		cmocka_unit_test(test_chain_limits),
		cmocka_unit_test(test_chain_depth1),
		cmocka_unit_test(test_scan_errors),
		cmocka_unit_test(test_expression_without_symbol),
		cmocka_unit_test(test_locate_bss_data),
		cmocka_unit_test(test_locate_bss_anonymous),
		cmocka_unit_test(test_locate_heap),
		cmocka_unit_test(test_locate_library),
	};
	return cmocka_run_group_tests(tests, start_child, stop_child);
}
