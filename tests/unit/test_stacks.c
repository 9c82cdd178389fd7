/* test_stacks.c - the stack trie: one set of frames per address (the inline
 * chain outermost first), exact self/total counts per node and thread, the
 * function view merging call sites, per-function totals that count a
 * recursive function once per sample, and refusal of bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stacktrie/stacks.h"

static struct vg_stacks *s;
static uint32_t image;

static int setup(void **state)
{
	(void)state;
	s = vg_stacks_new();
	assert_non_null(s);
	assert_int_equal(vg_stacks_intern_image(s, "/usr/bin/target", "abcd", 0x400000,
						0x500000, 0, false, &image, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vg_stacks_free(s);
	s = NULL;
	return 0;
}

/* Intern addr with frames given innermost first (as the symbolizer does);
 * returns the first (outermost) id and checks the count. */
static uint32_t intern(uint64_t addr, const struct vg_stack_frame_in *fr, size_t n)
{
	struct vg_stack_site site = {addr, addr - 0x400000, image, false};
	uint32_t first, count;

	assert_int_equal(vg_stacks_intern_address(s, &site, fr, n, &first, &count, NULL), 0);
	assert_int_equal(count, n ? n : 1);
	return first;
}

static const struct vg_stack_frame_in f_main = {"main", "/src/main.c", 10};
static const struct vg_stack_frame_in f_work = {"work", "/src/work.c", 20};
static const struct vg_stack_frame_in f_cold = {"cold", "/src/cold.c", 30};
/* At the hot addresses, square() is inlined into hot(). */
static const struct vg_stack_frame_in f_hot_chain[] = {
	{"square", "/src/math.h", 3}, {"hot", "/src/hot.c", 40},
};

/* main -> work -> hot (square inlined) 60 + 10 at a second address of hot
 * in thread 100, main -> cold 30 from another call site in thread 101. */
static void build_70_30(void)
{
	uint32_t m1 = intern(0x401000, &f_main, 1), m2 = intern(0x401008, &f_main, 1);
	uint32_t w = intern(0x401100, &f_work, 1), c = intern(0x401300, &f_cold, 1);
	uint32_t h1 = intern(0x401200, f_hot_chain, 2), h2 = intern(0x401204, f_hot_chain, 2);
	uint32_t p1[] = {m1, w, h1, h1 + 1}, p2[] = {m1, w, h2, h2 + 1}, p3[] = {m2, c};

	assert_int_equal(vg_stacks_set_thread_name(s, 100, "worker", NULL), 0);
	assert_int_equal(vg_stacks_add(s, 100, p1, 4, 60, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 100, p2, 4, 10, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 101, p3, 2, 30, NULL), 0);
	assert_int_equal(vg_stacks_set_thread_name(s, 101, "helper", NULL), 0);
}

static void test_intern(void **state)
{
	uint32_t first, n, again, n_again;
	const struct vg_stack_frame *outer, *inner;
	struct vg_stack_site site = {0x401200, 0x1200, image, false};

	(void)state;
	assert_false(vg_stacks_find_address(s, 0x401200, false, &first, &n));
	first = intern(0x401200, f_hot_chain, 2);
	assert_true(vg_stacks_find_address(s, 0x401200, false, &again, &n));
	assert_int_equal(again, first);
	assert_int_equal(n, 2);
	/* The same address in the kernel is another frame. */
	assert_false(vg_stacks_find_address(s, 0x401200, true, &again, &n));
	/* Interning it again gives the same ids, no new frames. */
	assert_int_equal(vg_stacks_intern_address(s, &site, f_hot_chain, 2, &again,
						  &n_again, NULL), 0);
	assert_int_equal(again, first);
	assert_int_equal(n_again, 2);
	assert_int_equal(vg_stacks_n_frames(s), 2);

	outer = vg_stacks_frame(s, first);
	inner = vg_stacks_frame(s, first + 1);
	assert_string_equal(vg_stacks_string(s, outer->name), "hot");
	assert_string_equal(vg_stacks_string(s, outer->file), "/src/hot.c");
	assert_int_equal(outer->line, 40);
	assert_false(outer->inlined);
	assert_int_equal(outer->depth, 0);
	assert_int_equal(outer->group_size, 2);
	assert_string_equal(vg_stacks_string(s, inner->name), "square");
	assert_int_equal(inner->line, 3);
	assert_true(inner->inlined);
	assert_int_equal(inner->depth, 1);
	assert_int_equal(inner->group, first);
	assert_int_equal(inner->address, 0x401200);
	assert_int_equal(inner->static_address, 0x1200);
	assert_int_equal(inner->image, image);
}

static void test_unknown_names(void **state)
{
	struct vg_stack_site in_image = {0x401234, 0x1234, image, false};
	struct vg_stack_site nowhere = {0xdead0, 0, VG_STACKS_NONE, false};
	struct vg_stack_site bad = {0x1, 0, 7, false};
	struct vg_stack_frame_in no_name = {NULL, "/src/x.c", 5};
	uint32_t id, n;
	struct vg_error err = {0};

	(void)state;
	assert_int_equal(vg_stacks_intern_address(s, &in_image, NULL, 0, &id, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, id)->name), "target+0x1234");
	assert_false(vg_stacks_frame(s, id)->has_function);
	assert_int_equal(vg_stacks_intern_address(s, &nowhere, &no_name, 1, &id, &n, NULL), 0);
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, id)->name), "0xdead0");
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, id)->file), "/src/x.c");
	assert_int_equal(vg_stacks_intern_address(s, &bad, NULL, 0, &id, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "image 7"));
}

static void test_counts(void **state)
{
	const struct vg_stack_thread *t0, *t1;
	const struct vg_stack_node *root;
	uint32_t *kids;
	size_t n;

	(void)state;
	build_70_30();
	assert_int_equal(vg_stacks_total(s), 100);
	assert_int_equal(vg_stacks_n_threads(s), 2);
	t0 = vg_stacks_thread(s, 0);
	t1 = vg_stacks_thread(s, 1);
	assert_int_equal(t0->tid, 100);
	assert_string_equal(vg_stacks_string(s, t0->name), "worker");
	assert_int_equal(t1->tid, 101);
	assert_string_equal(vg_stacks_string(s, t1->name), "helper");
	root = vg_stacks_node(s, t0->root);
	assert_int_equal(root->total, 70);
	assert_int_equal(root->self, 0);
	assert_int_equal(vg_stacks_node(s, t1->root)->total, 30);
	/* 2 roots; thread 100: main, work, 2 x (hot, square); 101: main, cold */
	assert_int_equal(vg_stacks_n_nodes(s), 2 + 6 + 2);

	/* main -> work has both hot addresses as children, 60 and 10. */
	assert_int_equal(vg_stacks_children(s, t0->root, &kids, &n), 0);
	assert_int_equal(n, 1);
	uint32_t main_node = kids[0];
	free(kids);
	assert_int_equal(vg_stacks_node(s, main_node)->total, 70);
	assert_int_equal(vg_stacks_children(s, main_node, &kids, &n), 0);
	assert_int_equal(n, 1);
	uint32_t work_node = kids[0];
	free(kids);
	assert_int_equal(vg_stacks_children(s, work_node, &kids, &n), 0);
	assert_int_equal(n, 2);
	uint64_t a = vg_stacks_node(s, kids[0])->total, b = vg_stacks_node(s, kids[1])->total;
	assert_int_equal(a + b, 70);
	assert_true((a == 60 && b == 10) || (a == 10 && b == 60));
	assert_int_equal(vg_stacks_node(s, kids[0])->self, 0);
	assert_int_equal(vg_stacks_node(s, kids[0])->depth, 3);
	free(kids);
}

static void test_by_function(void **state)
{
	struct vg_stacks *v, *all;
	const struct vg_stack_thread *t0;
	uint32_t *kids;
	size_t n;

	(void)state;
	build_70_30();
	assert_int_equal(vg_stacks_by_function(s, false, &v, NULL), 0);
	/* Two hot addresses merge: per thread, main-work-hot-square and
	 * main-cold. */
	assert_int_equal(vg_stacks_n_threads(v), 2);
	assert_int_equal(vg_stacks_n_nodes(v), 2 + 4 + 2);
	assert_int_equal(vg_stacks_n_frames(v), 5);
	assert_int_equal(vg_stacks_total(v), 100);
	t0 = vg_stacks_thread(v, 0);
	assert_int_equal(t0->tid, 100);
	assert_string_equal(vg_stacks_string(v, t0->name), "worker");
	/* The leaf: square, inlined, 70 samples, in exactly one node. */
	{
		size_t found = 0;

		for (size_t i = 0; i < vg_stacks_n_nodes(v); i++) {
			const struct vg_stack_node *node = vg_stacks_node(v, (uint32_t)i);

			if (node->frame != VG_STACKS_NONE &&
			    strcmp(vg_stacks_string(v, vg_stacks_frame(v, node->frame)->name), "square") == 0) {
				assert_int_equal(node->self, 70);
				assert_true(vg_stacks_frame(v, node->frame)->inlined);
				found++;
			}
		}
		assert_int_equal(found, 1);
	}
	vg_stacks_free(v);

	/* Threads merged: one root, main has work and cold below it, sorted. */
	assert_int_equal(vg_stacks_by_function(s, true, &all, NULL), 0);
	assert_int_equal(vg_stacks_n_threads(all), 1);
	assert_int_equal(vg_stacks_thread(all, 0)->tid, -1);
	assert_int_equal(vg_stacks_n_nodes(all), 1 + 5);
	assert_int_equal(vg_stacks_children(all, vg_stacks_thread(all, 0)->root, &kids, &n), 0);
	assert_int_equal(n, 1);
	uint32_t main_node = kids[0];
	free(kids);
	assert_int_equal(vg_stacks_node(all, main_node)->total, 100);
	assert_int_equal(vg_stacks_children(all, main_node, &kids, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(vg_stacks_string(all, vg_stacks_frame(all,
			    vg_stacks_node(all, kids[0])->frame)->name), "cold");
	assert_string_equal(vg_stacks_string(all, vg_stacks_frame(all,
			    vg_stacks_node(all, kids[1])->frame)->name), "work");
	free(kids);
	vg_stacks_free(all);
}

static const struct vg_stack_function *find_fn(const struct vg_stack_function *fns,
					       size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(vg_stacks_string(s, fns[i].name), name) == 0)
			return &fns[i];
	fail_msg("no function %s", name);
	return NULL;
}

static void test_functions(void **state)
{
	struct vg_stack_function *fns;
	size_t n;

	(void)state;
	build_70_30();
	assert_int_equal(vg_stacks_functions(s, &fns, &n, NULL), 0);
	assert_int_equal(n, 5);
	/* Sorted by self, then total: square 70, cold 30, main, hot, work. */
	assert_string_equal(vg_stacks_string(s, fns[0].name), "square");
	assert_int_equal(fns[0].self, 70);
	assert_int_equal(fns[0].total, 70);
	assert_true(fns[0].inlined);
	assert_string_equal(vg_stacks_string(s, fns[1].name), "cold");
	assert_int_equal(fns[1].self, 30);
	assert_string_equal(vg_stacks_string(s, fns[2].name), "main");
	assert_int_equal(fns[2].self, 0);
	assert_int_equal(fns[2].total, 100);
	assert_int_equal(find_fn(fns, n, "hot")->total, 70);
	assert_false(find_fn(fns, n, "hot")->inlined);
	assert_int_equal(find_fn(fns, n, "work")->total, 70);
	assert_string_equal(vg_stacks_string(s, find_fn(fns, n, "work")->file), "/src/work.c");
	free(fns);
}

static void test_recursion(void **state)
{
	struct vg_stack_frame_in rec = {"rec", NULL, 0};
	uint32_t m = intern(0x401000, &f_main, 1), r = intern(0x401500, &rec, 1);
	uint32_t path[] = {m, r, r, r};
	struct vg_stack_function *fns;
	size_t n;

	(void)state;
	assert_int_equal(vg_stacks_add(s, 7, path, 4, 5, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 7, path, 2, 3, NULL), 0);
	assert_int_equal(vg_stacks_functions(s, &fns, &n, NULL), 0);
	assert_int_equal(n, 2);
	/* 8 samples have rec on the stack, however deep it recursed. */
	assert_string_equal(vg_stacks_string(s, fns[0].name), "rec");
	assert_int_equal(fns[0].self, 8);
	assert_int_equal(fns[0].total, 8);
	assert_int_equal(fns[1].total, 8);
	free(fns);
}

static void test_bad_input(void **state)
{
	uint32_t id = intern(0x401000, &f_main, 1), bad[] = {id, 99};
	struct vg_error err = {0};

	(void)state;
	assert_int_equal(vg_stacks_add(s, 1, bad, 0, 1, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "empty stack"));
	vg_error_clear(&err);
	assert_int_equal(vg_stacks_add(s, 1, bad, 2, 1, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "frame 99"));
	/* Nothing was counted or created by the refused samples. */
	assert_int_equal(vg_stacks_total(s), 0);
	assert_int_equal(vg_stacks_n_nodes(s), 0);
	vg_stacks_free(NULL);
}

/* Consecutive samples of one thread reuse the shared prefix of the
 * previous path: a longer, shorter, diverging and repeated path each land
 * on the right nodes, and totals are the sums of self counts below. */
static void test_shared_prefix(void **state)
{
	struct vg_stack_frame_in fr[] = {{"a", NULL, 0}, {"b", NULL, 0}, {"c", NULL, 0},
					 {"d", NULL, 0}};
	uint32_t a = intern(0x1000, &fr[0], 1), b = intern(0x1100, &fr[1], 1);
	uint32_t c = intern(0x1200, &fr[2], 1), d = intern(0x1300, &fr[3], 1);
	uint32_t abc[] = {a, b, c}, abd[] = {a, b, d}, ab[] = {a, b}, adc[] = {a, d, c};
	uint32_t *kids;
	size_t n;

	(void)state;
	assert_int_equal(vg_stacks_add(s, 1, abc, 3, 1, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, abd, 3, 2, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, ab, 2, 4, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, abc, 3, 8, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, adc, 3, 16, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, abc, 3, 32, NULL), 0);
	/* root, a, b, c under b, d under b, d under a, c under d */
	assert_int_equal(vg_stacks_n_nodes(s), 7);
	assert_int_equal(vg_stacks_total(s), 63);
	uint32_t root = vg_stacks_thread(s, 0)->root;
	assert_int_equal(vg_stacks_node(s, root)->total, 63);
	assert_int_equal(vg_stacks_children(s, root, &kids, &n), 0);
	uint32_t na = kids[0];
	free(kids);
	assert_int_equal(vg_stacks_node(s, na)->total, 63);
	assert_int_equal(vg_stacks_children(s, na, &kids, &n), 0);
	assert_int_equal(n, 2); /* b, d */
	const struct vg_stack_node *nb = vg_stacks_node(s, kids[0]);
	const struct vg_stack_node *nd = vg_stacks_node(s, kids[1]);
	assert_int_equal(nb->self, 4);
	assert_int_equal(nb->total, 1 + 2 + 4 + 8 + 32);
	assert_int_equal(nd->self, 0);
	assert_int_equal(nd->total, 16);
	uint32_t under_b = kids[0];
	free(kids);
	assert_int_equal(vg_stacks_children(s, under_b, &kids, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vg_stacks_node(s, kids[0])->self, 1 + 8 + 32); /* c */
	assert_int_equal(vg_stacks_node(s, kids[1])->self, 2);          /* d */
	free(kids);
	/* adding after a read sums again */
	assert_int_equal(vg_stacks_add(s, 1, ab, 2, 64, NULL), 0);
	assert_int_equal(vg_stacks_node(s, root)->total, 127);
	(void)c;
}

/* An address first interned without its image (a dlopen'ed library whose
 * MMAP2 record came after its first samples) is symbolized again: in place
 * when the chain has the same length, by re-adding every path otherwise;
 * counts stay where they were, including a recursion through it. */
static void test_reintern(void **state)
{
	struct vg_stack_site lib = {0x7000, 0, VG_STACKS_NONE, false};
	struct vg_stack_frame_in one = {"lib_fn", "/src/lib.c", 7};
	struct vg_stack_frame_in two[] = {{"inl", "/src/lib.h", 2}, {"lib_fn", "/src/lib.c", 8}};
	struct vg_stack_frame_in fw = {"work", NULL, 0};
	struct vg_stack_function *fns;
	uint32_t m = intern(0x401000, &f_main, 1), w = intern(0x401100, &fw, 1), x, nx;
	uint64_t *addrs;
	size_t n, n_nodes;
	struct vg_error err = {0};

	(void)state;
	assert_int_equal(vg_stacks_intern_address(s, &lib, NULL, 0, &x, &nx, NULL), 0);
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, x)->name), "0x7000");
	uint32_t p1[] = {m, x}, p2[] = {m, x, x}, p3[] = {m, x, w};
	assert_int_equal(vg_stacks_add(s, 1, p1, 2, 5, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, p2, 3, 2, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 2, p3, 3, 3, NULL), 0);
	n_nodes = vg_stacks_n_nodes(s);
	assert_int_equal(n_nodes, 2 + 3 + 3);

	assert_int_equal(vg_stacks_unresolved(s, &addrs, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(addrs[0], 0x7000);
	free(addrs);

	/* Same length: rewritten in place, same ids, same nodes. */
	lib.image = image;
	lib.static_address = 0x2000;
	assert_int_equal(vg_stacks_reintern_address(s, &lib, &one, 1, NULL), 0);
	assert_int_equal(vg_stacks_n_nodes(s), n_nodes);
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, x)->name), "lib_fn");
	assert_int_equal(vg_stacks_frame(s, x)->image, image);
	assert_int_equal(vg_stacks_frame(s, x)->group, x);
	assert_int_equal(vg_stacks_frame(s, x)->group_size, 1);
	assert_int_equal(vg_stacks_unresolved(s, &addrs, &n), 0);
	assert_int_equal(n, 0);
	assert_null(addrs);

	/* Longer chain: every path re-added with lib_fn -> inl. */
	assert_int_equal(vg_stacks_reintern_address(s, &lib, two, 2, NULL), 0);
	assert_true(vg_stacks_frame(s, x)->retired);
	assert_true(vg_stacks_find_address(s, 0x7000, false, &x, &nx));
	assert_int_equal(nx, 2);
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, x)->name), "lib_fn");
	assert_string_equal(vg_stacks_string(s, vg_stacks_frame(s, x + 1)->name), "inl");
	/* 2 roots; t1: main, lib_fn, inl, lib_fn, inl; t2: main, lib_fn, inl, work */
	assert_int_equal(vg_stacks_n_nodes(s), 2 + 5 + 4);
	assert_int_equal(vg_stacks_total(s), 10);
	assert_int_equal(vg_stacks_node(s, vg_stacks_thread(s, 0)->root)->total, 7);
	assert_int_equal(vg_stacks_node(s, vg_stacks_thread(s, 1)->root)->total, 3);
	assert_int_equal(vg_stacks_functions(s, &fns, &n, NULL), 0);
	assert_int_equal(n, 4); /* main, work, lib_fn, inl: the retired name is gone */
	assert_string_equal(vg_stacks_string(s, fns[0].name), "inl");
	assert_int_equal(fns[0].self, 7);
	assert_int_equal(fns[0].total, 10);
	assert_string_equal(vg_stacks_string(s, fns[1].name), "work");
	assert_int_equal(fns[1].self, 3);
	assert_int_equal(fns[2].total, 10); /* lib_fn and main */
	assert_int_equal(fns[3].total, 10);
	free(fns);

	lib.address = 0x9999;
	assert_int_equal(vg_stacks_reintern_address(s, &lib, &one, 1, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "0x9999"));
}

/* Many distinct addresses and paths: the hash tables grow and every
 * lookup still finds its own entry. */
static void test_growth(void **state)
{
	enum { N = 5000 };
	struct vg_stack_frame_in fr = {"f", NULL, 0};
	uint32_t ids[N], first, n;

	(void)state;
	for (uint32_t i = 0; i < N; i++)
		ids[i] = intern(0x410000 + 4 * i, &fr, 1);
	for (uint32_t i = 0; i < N; i++) {
		assert_true(vg_stacks_find_address(s, 0x410000 + 4 * i, false, &first, &n));
		assert_int_equal(first, ids[i]);
	}
	for (uint32_t i = 0; i + 1 < N; i++)
		assert_int_equal(vg_stacks_add(s, (int32_t)(i % 3), &ids[i], 2, 1, NULL), 0);
	assert_int_equal(vg_stacks_total(s), N - 1);
	assert_int_equal(vg_stacks_n_threads(s), 3);
	assert_int_equal(vg_stacks_n_nodes(s), 3 + 2 * (N - 1));
	assert_int_equal(vg_stacks_n_strings(s), 4); /* "", path, build-id, "f" */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_intern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reintern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
