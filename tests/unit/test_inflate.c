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
 * next to (a relative .gnu_debugaltlink, split DWARF's skeleton units)
 * are refused; an absolute link, and clang's DWARF 5 (a .debug_addr, no
 * skeleton), are not.
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
#include <stdbool.h>
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

/* x and y hold the same bytes. */
static void assert_same_data(const Elf_Data *x, const Elf_Data *y)
{
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(x->d_size, y->d_size);
	if (y->d_size)
		assert_memory_equal(x->d_buf, y->d_buf, y->d_size);
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
		assert_same_data(dc, du);
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
	size_t shnum_c, shnum_m, n_debug = 0, n_kept = 0, n_alloc = 0, n_dropped = 0;
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
		assert_int_equal(elf_getshdrstrndx(c, &shstrndx), 0);
		name = elf_strptr(c, shstrndx, shc.sh_name);
		assert_non_null(name);
		if (shc.sh_type != SHT_NOBITS && i != shstrndx && strncmp(name, ".debug_", 7) != 0) {
			/* not libdw's (the program's bytes, its symbol table):
			 * a header without bytes */
			assert_int_equal(shm.sh_type, SHT_NOBITS);
			assert_int_equal(shm.sh_size, shc.sh_size);
			n_alloc += (shc.sh_flags & SHF_ALLOC) != 0;
			n_dropped++;
			continue;
		}
		assert_int_equal(shc.sh_type, shm.sh_type);
		if (shm.sh_type == SHT_NOBITS)
			continue;
		if (shc.sh_flags & SHF_COMPRESSED) {
			/* decompressed: the uncompressed file's bytes */
			GElf_Shdr shu;
			Elf_Scn *su = section(u, name, &shu);

			assert_non_null(su);
			assert_same_data(elf_rawdata(sm, NULL), elf_rawdata(su, NULL));
			n_debug++;
		} else {
			/* the section names (objcopy leaves some .debug_*
			 * uncompressed too): the compressed file's bytes */
			assert_same_data(elf_rawdata(sm, NULL), elf_rawdata(sc, NULL));
			n_kept++;
		}
	}
	assert_true(n_debug >= 3);
	assert_true(n_kept >= 1);   /* .shstrtab at least */
	assert_true(n_alloc >= 3);  /* .text, .rodata, .data at least */
	assert_true(n_dropped >= n_alloc + 2);  /* and .symtab, .strtab */
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

/* The compressed file with more headers for its .debug_str's bytes (as
 * many as it takes to name more bytes than the file has), as a crafted
 * file may: each byte is copied once at most, so the copy is refused
 * (it was as many copies of the section). */
#define MAX_DUPS 60000

static void test_copy_refuses_shared_bytes(void **state)
{
	FILE *f = fopen(compressed, "rb");
	Elf64_Ehdr eh;
	Elf64_Shdr *sh, str = { 0 };
	unsigned char *img;
	long size;
	size_t n, grown, dups;
	Elf *e;
	struct vg_inflated *x = (void *)1;
	char *names;
	bool found = false;

	(void)state;
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	n = (size_t)size;
	grown = n + (MAX_DUPS + 1024) * sizeof(Elf64_Shdr) + 8;
	img = calloc(1, grown);
	assert_non_null(img);
	assert_int_equal(fread(img, 1, n, f), n);
	fclose(f);
	memcpy(&eh, img, sizeof(eh));
	assert_true(eh.e_shnum > 0 && eh.e_shnum < 1024 && eh.e_shnum + MAX_DUPS < 65280);
	sh = (Elf64_Shdr *)(img + ((n + 7) & ~(size_t)7));
	memcpy(sh, img + eh.e_shoff, eh.e_shnum * sizeof(*sh));
	names = (char *)img + sh[eh.e_shstrndx].sh_offset;
	for (size_t i = 1; i < eh.e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, ".debug_str") == 0) {
			str = sh[i];
			found = true;
		}
	assert_true(found);
	assert_true(str.sh_size > 0);
	dups = grown / str.sh_size + 2;  /* more than the whole image */
	assert_true(dups <= MAX_DUPS);
	for (size_t i = 0; i < dups; i++)
		sh[eh.e_shnum + i] = str;
	eh.e_shoff = (uint64_t)((unsigned char *)sh - img);
	eh.e_shnum += dups;
	memcpy(img, &eh, sizeof(eh));
	elf_version(EV_CURRENT);
	e = elf_memory((char *)img, grown);
	assert_non_null(e);
	/* the headers themselves are fine: only the sharing is refused */
	assert_int_equal(vg_inflate_copy(e, 0, &x), -ENOTSUP);
	assert_null(x);
	elf_end(e);
	free(img);
}

/* cc ARGS on a program of 400 functions, its debug sections then
 * compressed (objcopy leaves a section that would not shrink); 1 when
 * that could not be made, else vg_inflate_copy's verdict on it. */
static int copy_of_built(const char *cc_args)
{
	char dir[] = "/tmp/vigil-test-inflate-cc-XXXXXX", cmd[1024];
	struct vg_inflated *x;
	int fd, rc;
	Elf *e;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && for i in $(seq 400); do echo \"int function_number_$i(int x){return x*$i;}\"; done >p.c && "
		 "echo 'int main(void){return function_number_1(2);}' >>p.c && "
		 "%s p.c -o p 2>/dev/null && objcopy --compress-debug-sections=zlib p pz && "
		 "readelf -SW pz | grep '[.]debug_' | grep -q ' C '",
		 dir, cc_args);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)system(cmd);
		return 1;  /* not made: the caller's assertion fails */
	}
	snprintf(cmd, sizeof(cmd), "%s/pz", dir);
	e = open_elf(cmd, &fd);
	rc = vg_inflate_copy(e, 0, &x);
	vg_inflated_free(x);
	elf_end(e);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return rc;
}

static void test_copy_declines_split_dwarf(void **state)
{
	(void)state;
	elf_version(EV_CURRENT);
	/* the skeleton's .dwo lies next to the program, where the copy
	 * cannot send libdw */
	assert_int_equal(copy_of_built("gcc -g -gsplit-dwarf"), -ENOTSUP);
	assert_int_equal(copy_of_built("gcc -g -gdwarf-4 -gsplit-dwarf"), -ENOTSUP);
	assert_int_equal(copy_of_built("gcc -g"), 0);
}

/* An ELF image of one compressed .debug_info of n bytes claiming to
 * decompress to claim bytes, in a calloc'ed buffer (*img). */
static Elf *one_compressed(size_t n, uint64_t claim, unsigned char **img)
{
	static const char names[] = "\0.shstrtab\0.debug_info";
	size_t data = 4096, shoff = data + n, size = shoff + 3 * sizeof(Elf64_Shdr);
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				       EV_CURRENT },
			  .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shoff = shoff, .e_shnum = 3, .e_shstrndx = 1 };
	Elf64_Shdr sh[3] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = 64, .sh_size = sizeof(names),
		  .sh_addralign = 1 },
		{ .sh_name = 11, .sh_type = SHT_PROGBITS, .sh_flags = SHF_COMPRESSED,
		  .sh_offset = data, .sh_size = n, .sh_addralign = 1 },
	};
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = claim, .ch_addralign = 1 };

	*img = calloc(1, size);
	assert_non_null(*img);
	memcpy(*img, &eh, sizeof(eh));
	memcpy(*img + 64, names, sizeof(names));
	memcpy(*img + data, &ch, sizeof(ch));
	memcpy(*img + shoff, sh, sizeof(sh));
	return elf_memory((char *)*img, size);
}

static void test_copy_size_bounded(void **state)
{
	unsigned char *img;
	struct vg_inflated *x = (void *)1;
	size_t n = (size_t)9 << 20;   /* 9 MiB: 1032x is over 8 GiB */
	Elf *e;

	(void)state;
	elf_version(EV_CURRENT);
	/* within the deflate ratio, past the largest copy made: refused
	 * before anything is allocated for it */
	e = one_compressed(n, (uint64_t)1000 * n, &img);
	assert_non_null(e);
	assert_int_equal(vg_inflate_copy(e, 0, &x), -ENOTSUP);
	assert_null(x);
	elf_end(e);
	free(img);
	/* past the deflate ratio: a lie */
	e = one_compressed(4096, (uint64_t)2000 * 4096, &img);
	assert_non_null(e);
	assert_int_equal(vg_inflate_copy(e, 0, &x), -ENOTSUP);
	elf_end(e);
	free(img);
	/* a fitting claim over bytes that are no zlib stream */
	e = one_compressed(4096, 8192, &img);
	assert_non_null(e);
	assert_int_equal(vg_inflate_copy(e, 0, &x), -EINVAL);
	assert_null(x);
	elf_end(e);
	free(img);
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
	/* a .debug_addr alone is no split DWARF (clang's DWARF 5 has one) */
	assert_int_equal(copy_with_section(".debug_addr", addr, sizeof(addr)), 0);
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
		cmocka_unit_test(test_copy_refuses_shared_bytes),
		cmocka_unit_test(test_copy_size_bounded),
		cmocka_unit_test(test_copy_declines_split_dwarf),
		cmocka_unit_test(test_copy_declines_what_needs_the_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
