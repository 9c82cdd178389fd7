/* test_debuginfo.c - where the DWARF of an image comes from, on the
 * variants fixtures/debuginfo/make.sh builds of one program: the source
 * found, the file it came from, the candidates refused (wrong CRC, wrong
 * build-id), and that the Dwarf handed out really describes the image: the
 * address of di_work (taken from the unstripped build's .symtab) lies in
 * the DW_TAG_subprogram "di_work" and on the line of prog.c marked
 * DI_WORK_LINE. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elf/debuginfo.h"
#include "elf/image.h"

#define FX(name) FIXTURES_BUILD "/debuginfo/" name
#define NO_DEBUG_DIR FIXTURES_BUILD "/debuginfo/no-such-dir"

static struct vg_image *open_fx(const char *path)
{
	struct vg_error err = { 0 };
	struct vg_image *img = NULL;

	if (vg_image_open_path(path, &img, &err) != 0)
		fail_msg("cannot open fixture %s: %s", path, err.msg);
	return img;
}

static struct vg_debuginfo *find(struct vg_image *img, const char *debug_dir,
				 const char *target_root)
{
	struct vg_debuginfo_opts o = {
		.target_root = target_root, .debug_dir = debug_dir,
		.no_debuginfod = true,
	};
	struct vg_error err = { 0 };
	struct vg_debuginfo *d = NULL;

	assert_int_equal(vg_debuginfo_find(img, &o, &d, &err), 0);
	assert_non_null(d);
	assert_non_null(d->tried);
	return d;
}

/* di_work's static address and size, from the unstripped DWARF 5 build
 * (every variant but di_dwarf4 and di_gz is that build, stripped). */
static struct vg_symbol work_in(const char *path)
{
	struct vg_image *img = open_fx(path);
	struct vg_symbol s;

	assert_int_equal(vg_image_symbol_by_name(img, "di_work", &s), 0);
	assert_true(s.size > 4);
	vg_image_free(img);
	return s;
}

/* The line of prog.c marked DI_WORK_LINE. */
static int work_line(void)
{
	FILE *f = fopen(FIXTURES "/debuginfo/prog.c", "re");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "/* DI_WORK_LINE */")) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no DI_WORK_LINE marker in prog.c");
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The DWARF says addr is in di_work, on DI_WORK_LINE of prog.c; returns
 * the CU's DWARF version. */
static int expect_work_at(Dwarf *dw, uint64_t addr)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Half version = 0;
	Dwarf_Line *row;
	const char *src;
	int n, line = 0;
	bool found = false;

	assert_non_null(dw);
	assert_non_null(dwarf_addrdie(dw, addr, &cu));
	n = dwarf_getscopes(&cu, addr, &scopes);
	assert_true(n > 0);
	for (int i = 0; i < n && !found; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		assert_non_null(dwarf_diename(&scopes[i]));
		assert_string_equal(dwarf_diename(&scopes[i]), "di_work");
		found = true;
	}
	free(scopes);
	assert_true(found);

	row = dwarf_getsrc_die(&cu, addr);
	assert_non_null(row);
	assert_int_equal(dwarf_lineno(row, &line), 0);
	assert_int_equal(line, work_line());
	src = dwarf_linesrc(row, NULL, NULL);
	assert_non_null(src);
	assert_true(ends_with(src, "/prog.c"));

	assert_int_equal(dwarf_cu_info(cu.cu, &version, NULL, NULL, NULL, NULL,
				       NULL, NULL), 0);
	return version;
}

/* Every address of di_work, not just its entry. */
static int expect_work(Dwarf *dw, struct vg_symbol w)
{
	int v = expect_work_at(dw, w.vaddr);

	assert_int_equal(expect_work_at(dw, w.vaddr + w.size / 2), v);
	assert_int_equal(expect_work_at(dw, w.vaddr + w.size - 1), v);
	return v;
}

static void expect_embedded(const char *path, int want_version)
{
	struct vg_image *img = open_fx(path);
	struct vg_debuginfo *d = find(img, NO_DEBUG_DIR, NULL);

	assert_int_equal(d->source, VG_DEBUG_EMBEDDED);
	assert_string_equal(vg_debug_source_name(d->source), "dwarf");
	assert_ptr_equal(d->dwarf_image, img);
	assert_false(d->owns_dwarf_image);
	assert_ptr_equal(d->symbol_image, img);
	assert_int_equal(d->symbol_source, VG_DEBUG_NONE);
	assert_null(d->path);
	assert_string_equal(d->tried, "");
	assert_int_equal(expect_work(d->dwarf, work_in(path)), want_version);
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void test_embedded_dwarf5(void **state)
{
	expect_embedded(FX("di_dwarf5"), 5);
}

static void test_embedded_dwarf4(void **state)
{
	expect_embedded(FX("di_dwarf4"), 4);
}

static void test_embedded_compressed(void **state)
{
	struct vg_image *img = open_fx(FX("di_gz"));
	Elf *elf = vg_image_elf(img);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool compressed = false;

	/* The fixture must really have SHF_COMPRESSED sections. */
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".debug_info") == 0)
			compressed = sh.sh_flags & SHF_COMPRESSED;
	}
	vg_image_free(img);
	assert_true(compressed);
	expect_embedded(FX("di_gz"), 5);
}

static void test_debuglink(void **state)
{
	struct vg_image *img = open_fx(FX("di_linked"));
	struct vg_debuginfo *d = find(img, NO_DEBUG_DIR, NULL);
	struct vg_symbol w = work_in(FX("di_dwarf5")), s;

	assert_int_equal(d->source, VG_DEBUG_DEBUGLINK);
	assert_string_equal(vg_debug_source_name(d->source), "debuglink");
	assert_string_equal(d->path, FX("di_linked.debug"));
	assert_non_null(d->dwarf_image);
	assert_ptr_not_equal(d->dwarf_image, img);
	assert_true(d->owns_dwarf_image);
	/* The stripped image has no .symtab: the debug file's serves. */
	assert_ptr_equal(d->symbol_image, d->dwarf_image);
	assert_int_equal(d->symbol_source, VG_DEBUG_DEBUGLINK);
	assert_int_equal(vg_image_symbol_at(d->symbol_image, w.vaddr + 1, &s), 0);
	assert_string_equal(s.name, "di_work");
	/* The one refused candidate: the build-id dir, which does not exist. */
	assert_non_null(strstr(d->tried, NO_DEBUG_DIR "/.build-id/"));
	assert_non_null(strstr(d->tried, ".debug: no such file"));
	assert_null(strchr(d->tried, '\n'));
	expect_work(d->dwarf, w);
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void test_debuglink_bad_crc(void **state)
{
	struct vg_image *img = open_fx(FX("di_badcrc"));
	struct vg_debuginfo *d = find(img, NO_DEBUG_DIR, NULL);

	assert_int_equal(d->source, VG_DEBUG_NONE);
	assert_null(d->dwarf);
	assert_null(d->dwarf_image);
	assert_null(d->path);
	assert_ptr_equal(d->symbol_image, img);
	assert_int_equal(d->symbol_source, VG_DEBUG_NONE);
	assert_non_null(strstr(d->tried, FX("di_badcrc.debug") ": CRC mismatch"));
	/* The other debuglink places were looked at too. */
	assert_non_null(strstr(d->tried, FX(".debug/di_badcrc.debug") ": no such file"));
	assert_non_null(strstr(d->tried, NO_DEBUG_DIR FIXTURES_BUILD "/debuginfo/di_badcrc.debug: no such file"));
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void expect_build_id_dir(const char *debug_dir, const char *root,
				const char *want_path)
{
	struct vg_image *img = open_fx(FX("di_bid"));
	struct vg_debuginfo *d = find(img, debug_dir, root);
	char hex[160], tail[200];

	assert_int_equal(d->source, VG_DEBUG_BUILD_ID_DIR);
	assert_string_equal(vg_debug_source_name(d->source), "build-id-dir");
	vg_image_build_id_hex(img, hex, sizeof(hex));
	assert_true(strlen(hex) == 40);
	assert_non_null(d->path);
	assert_true(strncmp(d->path, want_path, strlen(want_path)) == 0);
	snprintf(tail, sizeof(tail), "/.build-id/%.2s/%s.debug", hex, hex + 2);
	assert_true(ends_with(d->path, tail));
	assert_int_equal(d->symbol_source, VG_DEBUG_BUILD_ID_DIR);
	assert_string_equal(d->tried, "");
	expect_work(d->dwarf, work_in(FX("di_dwarf5")));
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void test_build_id_dir(void **state)
{
	expect_build_id_dir(FX("troot/usr/lib/debug"), NULL,
			    FX("troot/usr/lib/debug/.build-id/"));
}

/* /usr/lib/debug as the target sees it, under its root. */
static void test_build_id_dir_under_target_root(void **state)
{
	expect_build_id_dir(NULL, FX("troot"),
			    FX("troot/usr/lib/debug/.build-id/"));
}

static void test_build_id_dir_wrong_file(void **state)
{
	struct vg_image *img = open_fx(FX("di_bid"));
	struct vg_debuginfo *d = find(img, FX("bidbad"), NULL);

	assert_int_equal(d->source, VG_DEBUG_NONE);
	assert_null(d->dwarf);
	assert_null(d->path);
	assert_ptr_equal(d->symbol_image, img);
	assert_non_null(strstr(d->tried, FX("bidbad/.build-id/")));
	assert_non_null(strstr(d->tried, ": build-id mismatch (file "));
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void test_minidebuginfo(void **state)
{
	struct vg_image *img = open_fx(FX("di_mini"));
	struct vg_debuginfo *d = find(img, NO_DEBUG_DIR, NULL);
	struct vg_symbol w = work_in(FX("di_dwarf5")), s;

	assert_int_equal(d->source, VG_DEBUG_NONE);
	assert_null(d->dwarf);
	assert_int_equal(d->symbol_source, VG_DEBUG_MINIDEBUGINFO);
	assert_string_equal(vg_debug_source_name(d->symbol_source), "minidebuginfo");
	assert_ptr_not_equal(d->symbol_image, img);
	assert_true(d->owns_symbol_image);
	/* A local function only the MiniDebugInfo names. */
	assert_int_equal(vg_image_symbol_at(d->symbol_image, w.vaddr + 2, &s), 0);
	assert_string_equal(s.name, "di_work");
	assert_int_equal(s.vaddr, w.vaddr);
	assert_int_not_equal(vg_image_symbol_by_name(img, "di_work", &s), 0);
	vg_debuginfo_free(d);
	vg_image_free(img);
}

/* An image without a path (rebuilt from memory) cannot follow its
 * debuglink, and says so. */
static void test_debuglink_without_path(void **state)
{
	struct vg_image *img = NULL;
	struct vg_error err = { 0 };
	struct vg_debuginfo *d;
	FILE *f = fopen(FX("di_linked"), "re");
	char *buf = malloc(1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	assert_int_equal(vg_image_open_memory(buf, n, "mem", &img, &err), 0);
	free(buf);
	d = find(img, NO_DEBUG_DIR, NULL);
	assert_int_equal(d->source, VG_DEBUG_NONE);
	assert_non_null(strstr(d->tried, "mem: .gnu_debuglink 'di_linked.debug' not looked up: the image's path is unknown"));
	vg_debuginfo_free(d);
	vg_image_free(img);
}

static void test_crc(void **state)
{
	char path[] = "/tmp/vg_test_debuginfo.XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);
	uint32_t crc = 0;

	assert_true(fd >= 0);
	unlink(path);
	/* The CRC-32 check value of the standard. */
	assert_int_equal(write(fd, "123456789", 9), 9);
	assert_int_equal(vg_debuglink_crc(fd, &crc), 0);
	assert_int_equal(crc, 0xcbf43926u);
	close(fd);
	assert_int_equal(vg_debuglink_crc(-1, &crc), -EBADF);
}

static void test_free_null(void **state)
{
	assert_null(vg_debuginfo_free(NULL));
	assert_string_equal(vg_debug_source_name(VG_DEBUG_NONE), "none");
	assert_string_equal(vg_debug_source_name(VG_DEBUG_DEBUGINFOD), "debuginfod");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_dwarf5),
		cmocka_unit_test(test_embedded_dwarf4),
		cmocka_unit_test(test_embedded_compressed),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_debuglink_bad_crc),
		cmocka_unit_test(test_build_id_dir),
		cmocka_unit_test(test_build_id_dir_under_target_root),
		cmocka_unit_test(test_build_id_dir_wrong_file),
		cmocka_unit_test(test_minidebuginfo),
		cmocka_unit_test(test_debuglink_without_path),
		cmocka_unit_test(test_crc),
		cmocka_unit_test(test_free_null),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
