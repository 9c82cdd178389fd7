/* test_inflate.c - elf/inflate.c: an ELF file whose debug sections
 * objcopy compressed comes back with every .debug_* section decompressed,
 * byte for byte as in the uncompressed file, and libdw reads it; a
 * section whose compressed bytes are corrupt stays compressed, and libdw
 * judges the file as it would have alone.  With one CPU (taskset) the
 * same holds: the sections are inflated on the calling thread.  The file is the vigil executable of this build
 * (its DWARF, 2.4 MB, compresses to more than the size where a second
 * thread is used). */
#include "elf/inflate.h"

#include <elfutils/libdw.h>
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
static char compressed[64] = "", corrupt[64] = "", self[4096] = "";

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
	(void)state;
	vg_elf_inflate_debug(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_section_inflated),
		cmocka_unit_test(test_corrupt_section_stays_compressed),
		cmocka_unit_test(test_not_elf_data),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
