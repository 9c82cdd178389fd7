/* test_inflate.c - elf/inflate.c, both ways.
 *
 * In place: an ELF file whose debug sections objcopy compressed comes back
 * with every .debug_* section decompressed, byte for byte as in the
 * uncompressed file, and libdw reads it; a section whose compressed bytes
 * are corrupt stays compressed, and libdw judges the file as it would
 * have alone.
 *
 * The in-memory copy: every section of the copy is the uncompressed
 * file's, byte for byte, or the compressed file's own (what objcopy left
 * alone), or, loaded at run time (.text), a header without bytes; libdw reads as many CUs from it as from the uncompressed file;
 * vg_dwarf_begin hands libdw the copy and leaves the file's sections
 * compressed.  A corrupt section fails the copy, and vg_dwarf_begin then
 * gives libdw's verdict on the file itself.  Files libdw may need to look
 * next to (a relative .gnu_debugaltlink, a .debug_addr) are refused, an
 * absolute link is not.
 *
 * With one CPU (taskset) the same holds: the sections are inflated on
 * the calling thread.  The file is the vigil executable of this build
 * (its DWARF, 2.4 MB, compresses to more than the size where a second
 * thread is used). */
#include "elf/inflate.h"

#include <elfutils/libdw.h>
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

/* Unlinked by teardown, which cmocka runs after a failed assert too. */
static char compressed[64] = "", corrupt[64] = "", self[4096] = "", extra[64] = "",
	    extra_file[64] = "";

static int setup(void **state)
{
	char cmd[8300];
	int fd;

	(void)state;
	if (!realpath(FIXTURES_BUILD "/../../../vigil", self))
		return -1;
	snprintf(compressed, sizeof(compressed), "/tmp/vigil-test-inflate-XXXXXX");
	fd = mkstemp(compressed);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'", self,
		 compressed);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (compressed[0])
		unlink(compressed);
	if (corrupt[0])
		unlink(corrupt);
	if (extra[0])
		unlink(extra);
	if (extra_file[0])
		unlink(extra_file);
	return 0;
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	*fd = open(path, O_RDONLY);
	assert_true(*fd >= 0);
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	return e;
}

static Elf_Scn *section(Elf *e, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		assert_non_null(gelf_getshdr(scn, sh));
		name = elf_strptr(e, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

static const char *const debug_sections[] = { ".debug_info", ".debug_abbrev", ".debug_line",
					      ".debug_str" };

static void test_every_section_inflated(void **state)
{
	int fd_c, fd_u;
	Elf *c, *u;
	Dwarf *dw;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int n_compressed = 0;

	(void)state;
	elf_version(EV_CURRENT);
	c = open_elf(compressed, &fd_c);
	u = open_elf(self, &fd_u);
	for (size_t i = 0; i < sizeof(debug_sections) / sizeof(*debug_sections); i++) {
		GElf_Shdr sh;

		if (section(c, debug_sections[i], &sh) && (sh.sh_flags & SHF_COMPRESSED))
			n_compressed++;
	}
	/* objcopy did compress them: else this test proves nothing. */
	assert_true(n_compressed >= 3);

	vg_elf_inflate_debug(c);

	for (size_t i = 0; i < sizeof(debug_sections) / sizeof(*debug_sections); i++) {
		GElf_Shdr shc, shu;
		Elf_Scn *sc = section(c, debug_sections[i], &shc);
		Elf_Scn *su = section(u, debug_sections[i], &shu);
		Elf_Data *dc, *du;

		if (!su)
			continue;
		assert_non_null(sc);
		assert_false(shc.sh_flags & SHF_COMPRESSED);
		assert_int_equal(shc.sh_size, shu.sh_size);
		dc = elf_getdata(sc, NULL);
		du = elf_getdata(su, NULL);
		assert_non_null(dc);
		assert_non_null(du);
		assert_int_equal(dc->d_size, du->d_size);
		assert_memory_equal(dc->d_buf, du->d_buf, du->d_size);
	}
	dw = dwarf_begin_elf(c, DWARF_C_READ, NULL);
	assert_non_null(dw);
	assert_int_equal(dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL), 0);
	dwarf_end(dw);
	elf_end(c);
	elf_end(u);
	close(fd_c);
	close(fd_u);
}

static void test_corrupt_section_stays_compressed(void **state)
{
	int fd, fd_c;
	Elf *c;
	GElf_Shdr sh;
	Elf_Scn *scn;
	FILE *f;
	unsigned char junk[4096];
	char cmd[8300];

	(void)state;
	snprintf(corrupt, sizeof(corrupt), "/tmp/vigil-test-inflate-bad-XXXXXX");
	fd = mkstemp(corrupt);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", compressed, corrupt);
	assert_int_equal(system(cmd), 0);
	/* Overwrite the middle of .debug_info's zlib stream. */
	elf_version(EV_CURRENT);
	c = open_elf(corrupt, &fd_c);
	scn = section(c, ".debug_info", &sh);
	assert_non_null(scn);
	assert_true(sh.sh_flags & SHF_COMPRESSED);
	assert_true(sh.sh_size > 3 * sizeof(junk));
	elf_end(c);
	close(fd_c);
	memset(junk, 0xa5, sizeof(junk));
	f = fopen(corrupt, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(sh.sh_offset + sh.sh_size / 2), SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	assert_int_equal(fclose(f), 0);

	c = open_elf(corrupt, &fd_c);
	vg_elf_inflate_debug(c);
	scn = section(c, ".debug_info", &sh);
	assert_non_null(scn);
	assert_true(sh.sh_flags & SHF_COMPRESSED);
	/* The others were inflated all the same. */
	assert_non_null(section(c, ".debug_line", &sh));
	assert_false(sh.sh_flags & SHF_COMPRESSED);
	/* libdw sees what it would have seen alone: the same verdict on
	 * the file, and no CU it can read. */
	{
		int fd_alone;
		Elf *alone = open_elf(corrupt, &fd_alone);
		Dwarf *dw = dwarf_begin_elf(c, DWARF_C_READ, NULL);
		Dwarf *dw_alone = dwarf_begin_elf(alone, DWARF_C_READ, NULL);
		Dwarf_Off next;
		size_t hsize;

		assert_int_equal(dw != NULL, dw_alone != NULL);
		if (dw) {
			assert_int_equal(dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL),
					 dwarf_nextcu(dw_alone, 0, &next, &hsize, NULL, NULL, NULL));
			assert_int_not_equal(dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL), 0);
		}
		dwarf_end(dw);
		dwarf_end(dw_alone);
		elf_end(alone);
		close(fd_alone);
	}
	elf_end(c);
	close(fd_c);
}

static void test_not_elf_data(void **state)
{
	struct vg_inflated *x = (void *)1;

	(void)state;
	vg_elf_inflate_debug(NULL);
	assert_int_equal(vg_inflate_copy(NULL, 0, &x), -ENOTSUP);
	assert_null(x);
}

/* The CUs libdw reads from dw. */
static size_t count_cus(Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, n = 0;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		n++;
		off = next;
	}
	return n;
}

static void test_copy_every_section(void **state)
{
	int fd_c, fd_u;
	Elf *c, *u, *m;
	struct vg_inflated *x;
	size_t shnum_c, shnum_m, n_debug = 0, n_kept = 0, n_alloc = 0;
	Dwarf *dw, *dw_u;

	(void)state;
	elf_version(EV_CURRENT);
	c = open_elf(compressed, &fd_c);
	u = open_elf(self, &fd_u);
	assert_int_equal(vg_inflate_copy(c, 0, &x), 0);
	m = vg_inflated_elf(x);
	assert_non_null(m);
	assert_int_equal(elf_getshdrnum(c, &shnum_c), 0);
	assert_int_equal(elf_getshdrnum(m, &shnum_m), 0);
	assert_int_equal(shnum_c, shnum_m);
	for (size_t i = 1; i < shnum_c; i++) {
		Elf_Scn *sc = elf_getscn(c, i), *sm = elf_getscn(m, i);
		GElf_Shdr shc, shm;
		size_t shstrndx;
		const char *name;

		assert_non_null(gelf_getshdr(sc, &shc));
		assert_non_null(gelf_getshdr(sm, &shm));
		assert_false(shm.sh_flags & SHF_COMPRESSED);
		if (shc.sh_flags & SHF_ALLOC) {
			/* the program's bytes are not copied */
			assert_int_equal(shm.sh_type, SHT_NOBITS);
			assert_int_equal(shm.sh_size, shc.sh_size);
			n_alloc++;
			continue;
		}
		assert_int_equal(shc.sh_type, shm.sh_type);
		if (shm.sh_type == SHT_NOBITS)
			continue;
		assert_int_equal(elf_getshdrstrndx(c, &shstrndx), 0);
		name = elf_strptr(c, shstrndx, shc.sh_name);
		assert_non_null(name);
		if (shc.sh_flags & SHF_COMPRESSED) {
			/* decompressed: the uncompressed file's bytes */
			GElf_Shdr shu;
			Elf_Scn *su = section(u, name, &shu);
			Elf_Data *du, *dm;

			assert_non_null(su);
			du = elf_rawdata(su, NULL);
			dm = elf_rawdata(sm, NULL);
			assert_non_null(du);
			assert_non_null(dm);
			assert_int_equal(dm->d_size, du->d_size);
			assert_memory_equal(dm->d_buf, du->d_buf, du->d_size);
			n_debug++;
		} else {
			/* left alone: the compressed file's own bytes */
			Elf_Data *dc = elf_rawdata(sc, NULL), *dm = elf_rawdata(sm, NULL);

			assert_non_null(dc);
			assert_non_null(dm);
			assert_int_equal(dm->d_size, dc->d_size);
			if (dc->d_size)
				assert_memory_equal(dm->d_buf, dc->d_buf, dc->d_size);
			n_kept++;
		}
	}
	assert_true(n_debug >= 3);
	assert_true(n_kept >= 2);   /* .symtab, .strtab at least */
	assert_true(n_alloc >= 3);  /* .text, .rodata, .data at least */
	dw = dwarf_begin_elf(m, DWARF_C_READ, NULL);
	dw_u = dwarf_begin_elf(u, DWARF_C_READ, NULL);
	assert_non_null(dw);
	assert_non_null(dw_u);
	assert_true(count_cus(dw) > 10);
	assert_int_equal(count_cus(dw), count_cus(dw_u));
	dwarf_end(dw);
	dwarf_end(dw_u);
	vg_inflated_free(x);
	elf_end(c);
	elf_end(u);
	close(fd_c);
	close(fd_u);
}

static void test_dwarf_begin_reads_the_copy(void **state)
{
	int fd;
	Elf *c;
	struct vg_inflated *keep;
	Dwarf *dw;
	GElf_Shdr sh;

	(void)state;
	elf_version(EV_CURRENT);
	c = open_elf(compressed, &fd);
	dw = vg_dwarf_begin(c, &keep);
	assert_non_null(dw);
	assert_non_null(keep);
	assert_ptr_equal(dwarf_getelf(dw), vg_inflated_elf(keep));
	assert_true(count_cus(dw) > 10);
	/* the file itself was not inflated */
	assert_non_null(section(c, ".debug_info", &sh));
	assert_true(sh.sh_flags & SHF_COMPRESSED);
	dwarf_end(dw);
	vg_inflated_free(keep);
	elf_end(c);
	close(fd);
}

static void test_copy_of_corrupt_fails(void **state)
{
	int fd, fd_alone;
	Elf *c, *alone;
	struct vg_inflated *x = (void *)1, *keep = (void *)1;
	Dwarf *dw, *dw_alone;
	Dwarf_Off next;
	size_t hsize;

	(void)state;
	/* test_corrupt_section_stays_compressed made it */
	assert_true(corrupt[0] != '\0');
	elf_version(EV_CURRENT);
	c = open_elf(corrupt, &fd);
	assert_int_equal(vg_inflate_copy(c, 0, &x), -EINVAL);
	assert_null(x);
	dw = vg_dwarf_begin(c, &keep);
	assert_null(keep);
	alone = open_elf(corrupt, &fd_alone);
	dw_alone = dwarf_begin_elf(alone, DWARF_C_READ, NULL);
	assert_int_equal(dw != NULL, dw_alone != NULL);
	if (dw)
		assert_int_equal(dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL),
				 dwarf_nextcu(dw_alone, 0, &next, &hsize, NULL, NULL, NULL));
	dwarf_end(dw);
	dwarf_end(dw_alone);
	elf_end(alone);
	elf_end(c);
	close(fd);
	close(fd_alone);
}

/* The compressed file with one more section, name=contents (len bytes);
 * returns vg_inflate_copy's verdict on it. */
static int copy_with_section(const char *name, const void *contents, size_t len)
{
	char cmd[8400];
	struct vg_inflated *x;
	int fd, rc;
	Elf *e;
	FILE *f;

	if (extra[0])
		unlink(extra);
	if (extra_file[0])
		unlink(extra_file);
	snprintf(extra_file, sizeof(extra_file), "/tmp/vigil-test-inflate-sec-XXXXXX");
	fd = mkstemp(extra_file);
	assert_true(fd >= 0);
	close(fd);
	f = fopen(extra_file, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(contents, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	snprintf(extra, sizeof(extra), "/tmp/vigil-test-inflate-add-XXXXXX");
	fd = mkstemp(extra);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --add-section '%s=%s' '%s' '%s'", name, extra_file,
		 compressed, extra);
	assert_int_equal(system(cmd), 0);
	e = open_elf(extra, &fd);
	rc = vg_inflate_copy(e, 0, &x);
	vg_inflated_free(x);
	elf_end(e);
	close(fd);
	return rc;
}

static void test_copy_declines_what_needs_the_file(void **state)
{
	static const char rel[] = "../../.dwz/x.debug\0aaaaaaaaaaaaaaaaaaaa";
	static const char abs[] = "/usr/lib/debug/.dwz/x.debug\0aaaaaaaaaaaaaaaaaaaa";
	static const char addr[16] = { 0 };
	int fd;
	Elf *c;
	struct vg_inflated *x;

	(void)state;
	elf_version(EV_CURRENT);
	c = open_elf(compressed, &fd);
	/* not worth it below the size asked */
	assert_int_equal(vg_inflate_copy(c, (size_t)1 << 40, &x), -ENOTSUP);
	assert_null(x);
	elf_end(c);
	close(fd);
	assert_int_equal(copy_with_section(".gnu_debugaltlink", rel, sizeof(rel)), -ENOTSUP);
	assert_int_equal(copy_with_section(".debug_addr", addr, sizeof(addr)), -ENOTSUP);
	/* an absolute link needs no directory */
	assert_int_equal(copy_with_section(".gnu_debugaltlink", abs, sizeof(abs)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_section_inflated),
		cmocka_unit_test(test_corrupt_section_stays_compressed),
		cmocka_unit_test(test_not_elf_data),
		cmocka_unit_test(test_copy_every_section),
		cmocka_unit_test(test_dwarf_begin_reads_the_copy),
		cmocka_unit_test(test_copy_of_corrupt_fails),
		cmocka_unit_test(test_copy_declines_what_needs_the_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
