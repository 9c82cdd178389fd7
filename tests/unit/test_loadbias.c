/* test_loadbias.c - vg_loadbias_compute on hand-built layouts (every number
 * below is what the kernel or ld.so produces for that layout), then on live
 * fixture programs that print the bias their loader chose (dl_iterate_phdr's
 * dlpi_addr): vigil's bias must equal it exactly, for the program and for
 * every library it loads. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "elf/image.h"
#include "elf/loadbias.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"

#define PG 0x1000ull
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect(const struct vg_load *l, size_t nl,
		   const struct vg_mapping *m, size_t nm, uint64_t bias,
		   enum vg_bias_method method)
{
	uint64_t b = 0xdead;
	enum vg_bias_method how = VG_BIAS_NONE;

	assert_int_equal(vg_loadbias_compute(l, nl, m, nm, PG, &b, &how), 0);
	assert_int_equal(how, method);
	assert_int_equal(b, bias);
}

/* gcc -pie on Debian 12 (binutils 2.40): headers, text, rodata, data. */
static const struct vg_load pie[] = {
	{ 0x0000, 0x0000, 0x618, 0x618, PG, 4 },
	{ 0x1000, 0x1000, 0x171, 0x171, PG, 5 },
	{ 0x2000, 0x2000, 0x0ec, 0x0ec, PG, 4 },
	{ 0x3dd0, 0x2dd0, 0x24c, 0x250, PG, 6 },
};
#define B 0x555555554000ull

static void test_pie_with_relro_split(void **state)
{
	/* RELRO mprotect splits the data VMA: its r-- piece has offset
	 * 0x2000, the same as the rodata mapping, so offset 0x2000 matches
	 * two loads; the rw- piece's offset 0x3000 is no load's. */
	const struct vg_mapping m[] = {
		{ B + 0x0000, B + 0x1000, 0x0000 },
		{ B + 0x1000, B + 0x2000, 0x1000 },
		{ B + 0x2000, B + 0x3000, 0x2000 },
		{ B + 0x3000, B + 0x4000, 0x2000 },
		{ B + 0x4000, B + 0x5000, 0x3000 },
	};
	(void)state;
	expect(pie, N(pie), m, N(m), B, VG_BIAS_EXACT);
	for (size_t i = 0; i < N(m); i++)
		assert_true(vg_loadbias_explains(pie, N(pie), &m[i], PG, B));
	assert_false(vg_loadbias_explains(pie, N(pie), &m[4], PG, B + PG));
}

static void test_only_later_pieces(void **state)
{
	/* Only the rw- piece of the data segment is left (the rest was
	 * unmapped): its offset matches no load's first page, but it still
	 * lies in the data load's file pages at a consistent bias. */
	const struct vg_mapping m[] = { { B + 0x4000, B + 0x5000, 0x3000 } };

	(void)state;
	expect(pie, N(pie), m, N(m), B, VG_BIAS_EXACT);
}

static void test_non_pie_is_zero(void **state)
{
	const struct vg_load l[] = {
		{ 0x400000, 0x0000, 0x4f0, 0x4f0, PG, 4 },
		{ 0x401000, 0x1000, 0x159, 0x159, PG, 5 },
		{ 0x402000, 0x2000, 0x0e4, 0x0e4, PG, 4 },
		{ 0x403df8, 0x2df8, 0x224, 0x228, PG, 6 },
	};
	const struct vg_mapping m[] = {
		{ 0x400000, 0x401000, 0x0000 },
		{ 0x401000, 0x402000, 0x1000 },
		{ 0x402000, 0x403000, 0x2000 },
		{ 0x403000, 0x404000, 0x2000 },
		{ 0x404000, 0x405000, 0x3000 },
	};
	(void)state;
	expect(l, N(l), m, N(m), 0, VG_BIAS_EXACT);
}

/* -z noseparate-code: both loads start in file page 0. */
static const struct vg_load nosep[] = {
	{ 0x0000, 0x000, 0x7fc, 0x7fc, PG, 5 },
	{ 0x1dd0, 0xdd0, 0x24c, 0x250, PG, 6 },
};

static void test_noseparate_code_shared_page(void **state)
{
	/* Offset 0 appears twice and fits both loads; only one bias
	 * explains all three mappings. */
	const struct vg_mapping m[] = {
		{ B + 0x0000, B + 0x1000, 0x0000 },
		{ B + 0x1000, B + 0x2000, 0x0000 },
		{ B + 0x2000, B + 0x3000, 0x1000 },
	};
	(void)state;
	expect(nosep, N(nosep), m, N(m), B, VG_BIAS_EXACT);
}

static void test_ambiguous_is_heuristic(void **state)
{
	/* One mapping at offset 0 fits load 0 (bias X) as well as load 1
	 * (bias X - 0x1000): nothing tells them apart, so it is a guess. */
	const struct vg_mapping m[] = { { B, B + 0x1000, 0 } };

	(void)state;
	expect(nosep, N(nosep), m, N(m), B, VG_BIAS_HEURISTIC);
}

static void test_nothing_matches_is_heuristic(void **state)
{
	/* Offsets outside every load's file pages (a mapping of some other
	 * part of the file): the lowest-vaddr guess, labelled as such. */
	const struct vg_mapping m[] = {
		{ B + 0x9000, B + 0xa000, 0x10000 },
		{ B + 0x7000, B + 0x8000, 0x20000 },
	};
	uint64_t h;

	(void)state;
	expect(pie, N(pie), m, N(m), B + 0x7000, VG_BIAS_HEURISTIC);
	assert_int_equal(vg_loadbias_heuristic(pie, N(pie), m, N(m), PG, &h), 0);
	assert_int_equal(h, B + 0x7000);
}

static void test_foreign_lower_mapping(void **state)
{
	/* The program mmap()ed its own file (offset 0) below the loader's
	 * mappings: the heuristic takes it, the kernel relation does not. */
	const struct vg_mapping m[] = {
		{ B - 0x10000, B - 0x10000 + 0x5000, 0x0000 },
		{ B + 0x0000, B + 0x1000, 0x0000 },
		{ B + 0x1000, B + 0x2000, 0x1000 },
		{ B + 0x2000, B + 0x3000, 0x2000 },
		{ B + 0x3000, B + 0x4000, 0x2000 },
		{ B + 0x4000, B + 0x5000, 0x3000 },
	};
	uint64_t h;

	(void)state;
	expect(pie, N(pie), m, N(m), B, VG_BIAS_EXACT);
	assert_int_equal(vg_loadbias_heuristic(pie, N(pie), m, N(m), PG, &h), 0);
	assert_int_equal(h, B - 0x10000);
	assert_false(vg_loadbias_explains(pie, N(pie), &m[0], PG, B));
}

static void test_big_pages_with_holes(void **state)
{
	/* -z max-page-size=0x200000 loaded by ld.so: one mapping of the
	 * whole span from offset 0, segments mapped over it, the gaps left
	 * PROT_NONE as file mappings whose offsets continue from 0. */
	const struct vg_load l[] = {
		{ 0x000000, 0x000000, 0x618, 0x618, 0x200000, 4 },
		{ 0x200000, 0x200000, 0x171, 0x171, 0x200000, 5 },
		{ 0x400000, 0x400000, 0x0ec, 0x0ec, 0x200000, 4 },
		{ 0x7ffdd0, 0x5ffdd0, 0x24c, 0x250, 0x200000, 6 },
	};
	const uint64_t b = 0x7f0000000000ull;
	const struct vg_mapping m[] = {
		{ b + 0x000000, b + 0x001000, 0x000000 },
		{ b + 0x001000, b + 0x200000, 0x001000 },  /* ---p */
		{ b + 0x200000, b + 0x201000, 0x200000 },
		{ b + 0x201000, b + 0x400000, 0x201000 },  /* ---p */
		{ b + 0x400000, b + 0x401000, 0x400000 },
		{ b + 0x401000, b + 0x7ff000, 0x401000 },  /* ---p */
		{ b + 0x7ff000, b + 0x800000, 0x5ff000 },  /* relro */
		{ b + 0x800000, b + 0x801000, 0x600000 },
	};
	(void)state;
	expect(l, N(l), m, N(m), b, VG_BIAS_EXACT);
	assert_false(vg_loadbias_explains(l, N(l), &m[1], PG, b));
	assert_true(vg_loadbias_explains(l, N(l), &m[7], PG, b));
}

static void test_empty_inputs(void **state)
{
	const struct vg_mapping m[] = { { B, B + PG, 0 } };
	uint64_t b;
	enum vg_bias_method how;

	(void)state;
	assert_int_equal(vg_loadbias_compute(pie, 0, m, 1, PG, &b, &how), -ENOENT);
	assert_int_equal(vg_loadbias_compute(pie, N(pie), m, 0, PG, &b, &how), -ENOENT);
	assert_int_equal(vg_loadbias_compute(pie, N(pie), m, 1, 3000, &b, &how), -ENOENT);
	assert_string_equal(vg_bias_method_name(VG_BIAS_EXACT), "exact");
	assert_string_equal(vg_bias_method_name(VG_BIAS_HEURISTIC), "heuristic");
	assert_string_equal(vg_bias_method_name(VG_BIAS_NONE), "none");
}

/* ------------------------------------------------------------------ */
/* live fixtures                                                        */

struct truth_obj {
	char name[256];     /* "main" or the path ld.so used */
	uint64_t addr;
};

struct fixture {
	pid_t pid;
	struct truth_obj obj[16];
	size_t n_obj;
	uint64_t selfmap;
	struct vg_target *t;
	struct vg_maps *maps;
	struct vg_mem *mem;
	struct vg_images *imgs;
};

static void fixture_start(struct fixture *f, const char *name)
{
	char path[512], line[512];
	FILE *in;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/%s", FIXTURES_BUILD, name);
	in = tu_spawn(path, &f->pid);
	alarm(30);
	while (fgets(line, sizeof(line), in)) {
		struct truth_obj *o = &f->obj[f->n_obj];
		unsigned long long a;

		if (strncmp(line, "ready", 5) == 0)
			break;
		if (f->n_obj < N(f->obj) &&
		    sscanf(line, "obj %255s 0x%llx", o->name, &a) == 2) {
			o->addr = a;
			f->n_obj++;
		} else if (sscanf(line, "selfmap 0x%llx", &a) == 1) {
			f->selfmap = a;
		}
	}
	alarm(0);
	fclose(in);
	assert_true(f->n_obj >= 2);

	struct vg_error err = { 0 };

	assert_int_equal(vg_target_open(f->pid, &f->t, &err), 0);
	assert_int_equal(vg_maps_read(f->pid, &f->maps, &err), 0);
	assert_int_equal(vg_mem_open(f->t, f->maps, &f->mem, &err), 0);
	if (vg_images_load(f->t, f->maps, f->mem, &f->imgs, &err) != 0)
		fail_msg("vg_images_load: %s", err.msg);
}

static void fixture_stop(struct fixture *f)
{
	vg_images_free(f->imgs);
	vg_mem_free(f->mem);
	vg_maps_free(f->maps);
	vg_target_free(f->t);
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static const struct vg_image *image_for(const struct fixture *f,
					const struct truth_obj *o)
{
	if (strcmp(o->name, "main") == 0)
		return vg_images_main(f->imgs);
	return vg_images_by_name(f->imgs, base(o->name), NULL);
}

/* Every object the loader reports has an image with exactly its bias. */
static void check_all_exact(const char *name)
{
	struct fixture f;

	fixture_start(&f, name);
	for (size_t i = 0; i < f.n_obj; i++) {
		const struct vg_image *img = image_for(&f, &f.obj[i]);

		if (!img)
			fail_msg("%s: no image for %s", name, f.obj[i].name);
		if (img->bias != f.obj[i].addr ||
		    img->bias_method != VG_BIAS_EXACT)
			fail_msg("%s: %s: bias 0x%llx (%s), loader says 0x%llx",
				 name, f.obj[i].name,
				 (unsigned long long)img->bias,
				 vg_bias_method_name(img->bias_method),
				 (unsigned long long)f.obj[i].addr);
		assert_int_equal(img->via, VG_VIA_MAP_FILES);  /* we run as root */
		assert_true(vg_images_find(f.imgs, img->lo) == img);
		assert_true(vg_images_find(f.imgs, img->hi - 1) == img);
	}
	assert_non_null(vg_images_main(f.imgs));
	assert_true(vg_images_main(f.imgs)->is_main);
	fixture_stop(&f);
}

static void test_live_pie(void **s) { (void)s; check_all_exact("fx_pie"); }
static void test_live_sepcode(void **s) { (void)s; check_all_exact("fx_sepcode"); }
static void test_live_nosepcode(void **s) { (void)s; check_all_exact("fx_nosepcode"); }
static void test_live_uselib(void **s) { (void)s; check_all_exact("fx_uselib"); }

static void test_live_nopie(void **state)
{
	struct fixture f;
	const struct vg_image *m;

	(void)state;
	check_all_exact("fx_nopie");
	fixture_start(&f, "fx_nopie");
	m = vg_images_main(f.imgs);
	assert_non_null(m);
	assert_int_equal(m->e_type, 2 /* ET_EXEC */);
	assert_int_equal(m->bias, 0);
	assert_int_equal(m->lo, 0x400000);
	fixture_stop(&f);
}

/* Mappings of one image, as vg_images_load saw them. */
static size_t mappings_of(const struct fixture *f, const struct vg_image *img,
			  struct vg_mapping *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < f->maps->n && n < cap; i++) {
		const struct vg_region *r = &f->maps->regions[i];

		if (r->inode == img->inode)
			out[n++] = (struct vg_mapping){ r->start, r->end, r->offset };
	}
	return n;
}

static void test_live_bigpage(void **state)
{
	/* 2 MiB max-page-size, program (kernel-loaded) and library (ld.so,
	 * which leaves PROT_NONE file mappings in the gaps).  Both exact.
	 * The lowest-vaddr heuristic is NOT wrong here, and the test says
	 * so: the first PT_LOAD (offset 0, vaddr 0) is mapped first and
	 * lowest by both loaders, whatever the alignment. */
	struct fixture f;
	const struct vg_image *lib;
	struct vg_mapping m[32];
	size_t n;
	uint64_t h;

	(void)state;
	check_all_exact("fx_bigpage");
	fixture_start(&f, "fx_bigpage");
	lib = vg_images_by_name(f.imgs, "libfxbig.so", NULL);
	assert_non_null(lib);
	n = mappings_of(&f, lib, m, N(m));
	assert_true(n > 4);  /* segments plus PROT_NONE gaps */
	assert_int_equal(vg_loadbias_heuristic(lib->loads, lib->n_loads, m, n,
					       PG, &h), 0);
	assert_int_equal(h, lib->bias);
	assert_int_equal(lib->bias % 0x200000, 0);
	fixture_stop(&f);
}

static void test_live_selfmap_defeats_heuristic(void **state)
{
	/* fx_selfmap mmap()s libfx.so (offset 0) after ld.so loaded it; the
	 * top-down mmap puts that copy below ld.so's mappings, so "lowest
	 * mapping - lowest p_vaddr" answers the copy's address.  The kernel
	 * relation keeps the loader's bias, and the image's range excludes
	 * the copy. */
	struct fixture f;
	const struct vg_image *lib;
	struct vg_mapping m[32];
	size_t n;
	uint64_t h, truth = 0;

	(void)state;
	check_all_exact("fx_selfmap");
	fixture_start(&f, "fx_selfmap");
	for (size_t i = 0; i < f.n_obj; i++)
		if (strcmp(base(f.obj[i].name), "libfx.so") == 0)
			truth = f.obj[i].addr;
	assert_true(truth != 0);
	assert_true(f.selfmap != 0 && f.selfmap < truth);
	lib = vg_images_by_name(f.imgs, "libfx.so", NULL);
	assert_non_null(lib);
	assert_int_equal(lib->bias, truth);
	assert_int_equal(lib->bias_method, VG_BIAS_EXACT);
	assert_int_equal(lib->lo, truth);
	n = mappings_of(&f, lib, m, N(m));
	assert_int_equal(vg_loadbias_heuristic(lib->loads, lib->n_loads, m, n,
					       PG, &h), 0);
	assert_int_equal(h, f.selfmap);
	assert_true(h != truth);
	fixture_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_with_relro_split),
		cmocka_unit_test(test_only_later_pieces),
		cmocka_unit_test(test_non_pie_is_zero),
		cmocka_unit_test(test_noseparate_code_shared_page),
		cmocka_unit_test(test_ambiguous_is_heuristic),
		cmocka_unit_test(test_nothing_matches_is_heuristic),
		cmocka_unit_test(test_foreign_lower_mapping),
		cmocka_unit_test(test_big_pages_with_holes),
		cmocka_unit_test(test_empty_inputs),
		cmocka_unit_test(test_live_pie),
		cmocka_unit_test(test_live_nopie),
		cmocka_unit_test(test_live_sepcode),
		cmocka_unit_test(test_live_nosepcode),
		cmocka_unit_test(test_live_uselib),
		cmocka_unit_test(test_live_bigpage),
		cmocka_unit_test(test_live_selfmap_defeats_heuristic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
