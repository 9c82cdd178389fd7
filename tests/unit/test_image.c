/* test_image.c - ELF images: what is rejected and with which sentence,
 * symbols and build-ids against the fixtures' own truth (addresses the
 * fixture computes as &symbol - dlpi_addr, the build-id readelf prints),
 * and --bin matching against running fixtures, by build-id and by bytes. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include <elf.h>

#include "elf/image.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"

#define FX(name) FIXTURES_BUILD "/" name

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	FILE *f = fopen(path, "rbe");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_tmp(char *path, const void *buf, size_t len)
{
	int fd;

	strcpy(path, "/tmp/vg_test_image.XXXXXX");
	fd = mkostemp(path, O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Both entry points must refuse the bytes with -ENOEXEC and a sentence
 * containing want. */
static void expect_rejected(const void *buf, size_t len, const char *want)
{
	char path[64];
	struct vg_image *img = (void *)1;
	struct vg_error err = { 0 };

	write_tmp(path, buf, len);
	assert_int_equal(vg_image_open_path(path, &img, &err), -ENOEXEC);
	assert_null(img);
	if (!strstr(err.msg, want) || !strstr(err.msg, path))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
	unlink(path);

	vg_error_clear(&err);
	assert_int_equal(vg_image_open_memory(buf, len, "buf", &img, &err), -ENOEXEC);
	assert_null(img);
	if (!strstr(err.msg, want) || !strstr(err.msg, "'buf'"))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void test_reject_missing(void **state)
{
	struct vg_image *img;
	struct vg_error err = { 0 };

	(void)state;
	assert_int_equal(vg_image_open_path("/nonexistent/vg", &img, &err), -ENOENT);
	assert_string_equal(err.msg, "cannot open '/nonexistent/vg': No such file or directory; check the path");
	assert_null(vg_image_free(NULL));
	assert_null(vg_images_free(NULL));
}

static void test_reject_not_elf(void **state)
{
	static const char text[] = "int main(void) { return 0; }\n";

	(void)state;
	expect_rejected(text, sizeof(text) - 1, "is not an ELF file");
	expect_rejected("", 0, "is not an ELF file");
	expect_rejected("\177EL", 3, "is not an ELF file");
}

static void test_reject_elf32(void **state)
{
	/* An i386 executable header, as gcc -m32 would write it. */
	Elf32_Ehdr eh = { 0 };

	(void)state;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	expect_rejected(&eh, sizeof(eh), "is not an ELF64 x86-64 file (ELFCLASS32)");
}

static void test_reject_other_machine(void **state)
{
	size_t len;
	char *buf = slurp(FX("fx_pie"), &len);
	Elf64_Ehdr eh;

	(void)state;
	memcpy(&eh, buf, sizeof(eh));
	eh.e_machine = EM_AARCH64;
	memcpy(buf, &eh, sizeof(eh));
	expect_rejected(buf, len, "is not an ELF64 x86-64 file (e_machine 183)");
	free(buf);
}

static void test_reject_truncated(void **state)
{
	size_t len;
	char *buf = slurp(FX("fx_pie"), &len);
	Elf64_Ehdr eh;

	(void)state;
	memcpy(&eh, buf, sizeof(eh));
	/* 100 bytes: the ELF header, but the program headers run past. */
	expect_rejected(buf, 100, "is truncated or corrupt: its program headers end at byte");
	/* Cut inside the section header table (at the end of the file). */
	assert_true(eh.e_shoff + 3 * sizeof(Elf64_Shdr) < len);
	expect_rejected(buf, eh.e_shoff + 3 * sizeof(Elf64_Shdr) + 10,
			"is truncated or corrupt: its section headers end at byte");
	/* Cut inside the loadable segments. */
	expect_rejected(buf, 0x1800, "is truncated or corrupt: its loadable segments end at byte");
	free(buf);
}

/* ------------------------------------------------------------------ */

struct truth {
	char name[64];
	uint64_t vaddr;
};

struct running {
	pid_t pid;
	struct truth sym[8];
	size_t n_sym;
	struct vg_target *t;
	struct vg_maps *maps;
	struct vg_mem *mem;
	struct vg_images *imgs;
};

static void run(struct running *r, const char *path)
{
	struct vg_error err = { 0 };
	char line[512];
	FILE *in;

	memset(r, 0, sizeof(*r));
	in = tu_spawn(path, &r->pid);
	alarm(30);
	while (fgets(line, sizeof(line), in) && strncmp(line, "ready", 5)) {
		struct truth *s = &r->sym[r->n_sym];
		unsigned long long a;

		if (r->n_sym < 8 && sscanf(line, "sym %63s 0x%llx", s->name, &a) == 2) {
			s->vaddr = a;
			r->n_sym++;
		}
	}
	alarm(0);
	fclose(in);
	assert_int_equal(vg_target_open(r->pid, &r->t, &err), 0);
	assert_int_equal(vg_maps_read(r->pid, &r->maps, &err), 0);
	assert_int_equal(vg_mem_open(r->t, r->maps, &r->mem, &err), 0);
	assert_int_equal(vg_images_load(r->t, r->maps, r->mem, &r->imgs, &err), 0);
}

static void stop(struct running *r)
{
	vg_images_free(r->imgs);
	vg_mem_free(r->mem);
	vg_maps_free(r->maps);
	vg_target_free(r->t);
	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
}

static uint64_t truth_of(const struct running *r, const char *name)
{
	for (size_t i = 0; i < r->n_sym; i++)
		if (strcmp(r->sym[i].name, name) == 0)
			return r->sym[i].vaddr;
	fail_msg("fixture did not print %s", name);
	return 0;
}

static void check_symbols(const struct vg_image *img, const struct running *r)
{
	static const struct { const char *name; uint64_t size; } want[] = {
		{ "vg_fx_counter", 4 }, { "vg_fx_table", 64 },
		{ "vg_fx_func", 0 }, { "main", 0 },
	};
	struct vg_symbol s;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t v = truth_of(r, want[i].name);

		assert_int_equal(vg_image_symbol_by_name(img, want[i].name, &s), 0);
		assert_int_equal(s.vaddr, v);
		assert_string_equal(s.name, want[i].name);
		assert_false(s.from_dynsym);
		if (want[i].size)
			assert_int_equal(s.size, want[i].size);
		assert_true(s.size > 0);
		/* first, last and past-the-end byte */
		assert_int_equal(vg_image_symbol_at(img, v, &s), 0);
		assert_string_equal(s.name, want[i].name);
		assert_int_equal(vg_image_symbol_at(img, v + s.size - 1, &s), 0);
		assert_string_equal(s.name, want[i].name);
		if (vg_image_symbol_at(img, v + s.size, &s) == 0)
			assert_string_not_equal(s.name, want[i].name);
	}
	assert_int_equal(vg_image_symbol_by_name(img, "no_such_symbol", &s), -ENOENT);
	assert_int_equal(vg_image_symbol_by_name(img, "", &s), -ENOENT);
	assert_int_equal(vg_image_symbol_at(img, 0, &s), -ENOENT);
}

static void test_symbols(void **state)
{
	struct running r;
	struct vg_image *img, *mimg;
	struct vg_error err = { 0 };
	size_t len;
	char *buf;

	(void)state;
	run(&r, FX("fx_pie"));
	assert_int_equal(vg_image_open_path(FX("fx_pie"), &img, &err), 0);
	assert_int_equal(img->via, VG_VIA_PATH);
	assert_int_equal(img->bias, 0);
	assert_int_equal(img->e_type, ET_DYN);
	assert_int_equal(img->n_loads, 4);
	check_symbols(img, &r);
	check_symbols(vg_images_main(r.imgs), &r);

	buf = slurp(FX("fx_pie"), &len);
	assert_int_equal(vg_image_open_memory(buf, len, "mem", &mimg, &err), 0);
	free(buf);  /* the image keeps its own copy */
	check_symbols(mimg, &r);
	vg_image_free(mimg);
	vg_image_free(img);
	stop(&r);
}

static void test_dynsym_of_library(void **state)
{
	struct vg_image *img;
	struct vg_error err = { 0 };
	struct vg_symbol s, d;

	(void)state;
	assert_int_equal(vg_image_open_path(FX("libfx.so"), &img, &err), 0);
	assert_int_equal(vg_image_symbol_by_name(img, "fx_lib_value", &s), 0);
	assert_int_equal(s.size, 4);
	assert_false(s.from_dynsym);   /* .symtab wins */
	assert_int_equal(vg_image_symbol_at(img, s.vaddr + 2, &d), 0);
	assert_string_equal(d.name, "fx_lib_value");
	vg_image_free(img);
}

/* Set the d_tag of the first dynamic entry tagged from to to. */
static void retag_dynamic(char *buf, size_t len, int64_t from, int64_t to)
{
	Elf64_Ehdr eh;

	memcpy(&eh, buf, sizeof(eh));
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= ph.p_filesz; o += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;

			assert_true(ph.p_offset + o + sizeof(d) <= len);
			memcpy(&d, buf + ph.p_offset + o, sizeof(d));
			if (d.d_tag == from) {
				d.d_tag = to;
				memcpy(buf + ph.p_offset + o, &d, sizeof(d));
				return;
			}
		}
	}
	fail_msg("no dynamic entry %lld", (long long)from);
}

/* An image without section headers (rebuilt from target memory) still
 * has the .dynsym the dynamic linker uses: found through PT_DYNAMIC, its
 * size from DT_GNU_HASH, or from where .dynstr starts when there is no
 * hash table at all. */
static void test_dynsym_through_dynamic(void **state)
{
	struct vg_image *file, *img;
	struct vg_error err = { 0 };
	struct vg_symbol want, s;
	Elf64_Ehdr eh;
	size_t len;
	char *buf = slurp(FX("libfx.so"), &len);

	(void)state;
	assert_int_equal(vg_image_open_path(FX("libfx.so"), &file, &err), 0);
	assert_false(file->dynsym_from_dynamic);
	assert_int_equal(vg_image_symbol_by_name(file, "fx_lib_value", &want), 0);

	memcpy(&eh, buf, sizeof(eh));
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	memcpy(buf, &eh, sizeof(eh));
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)  /* no hash table: DT_GNU_HASH becomes DT_DEBUG */
			retag_dynamic(buf, len, DT_GNU_HASH, DT_DEBUG);
		assert_int_equal(vg_image_open_memory(buf, len, "nosh", &img, &err), 0);
		assert_true(img->dynsym_from_dynamic);
		assert_int_equal(vg_image_symbol_by_name(img, "fx_lib_value", &s), 0);
		assert_true(s.from_dynsym);
		assert_int_equal(s.vaddr, want.vaddr);
		assert_int_equal(s.size, want.size);
		assert_int_equal(vg_image_symbol_at(img, want.vaddr + 1, &s), 0);
		assert_string_equal(s.name, "fx_lib_value");
		assert_int_equal(img->build_id_len, file->build_id_len);
		assert_memory_equal(img->build_id, file->build_id, file->build_id_len);
		vg_image_free(img);
	}
	/* No DT_SYMTAB: nothing to offer, and no crash. */
	retag_dynamic(buf, len, DT_SYMTAB, DT_DEBUG);
	assert_int_equal(vg_image_open_memory(buf, len, "nosym", &img, &err), 0);
	assert_false(img->dynsym_from_dynamic);
	assert_int_equal(vg_image_symbol_by_name(img, "fx_lib_value", &s), -ENOENT);
	vg_image_free(img);
	vg_image_free(file);
	free(buf);
}

static void readelf_build_id(const char *path, char *out, size_t size)
{
	char cmd[600], line[256];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && sscanf(b + 10, "%127s", out) == 1)
			break;
	}
	pclose(p);
	(void)size;
}

static void test_build_id(void **state)
{
	struct vg_image *img;
	struct vg_error err = { 0 };
	char want[128], got[160];

	(void)state;
	readelf_build_id(FX("fx_pie"), want, sizeof(want));
	assert_int_equal(strlen(want), 40);
	assert_int_equal(vg_image_open_path(FX("fx_pie"), &img, &err), 0);
	assert_int_equal(img->build_id_len, 20);
	assert_string_equal(vg_image_build_id_hex(img, got, sizeof(got)), want);
	vg_image_free(img);

	assert_int_equal(vg_image_open_path(FX("fx_nobid"), &img, &err), 0);
	assert_int_equal(img->build_id_len, 0);
	assert_string_equal(vg_image_build_id_hex(img, got, sizeof(got)), "");
	vg_image_free(img);
}

static void compare(const char *running, const char *bin,
		    enum vg_bin_match want, const char *want_how)
{
	struct running r;
	struct vg_image *img;
	struct vg_error err = { 0 };
	const char *how = NULL;

	run(&r, running);
	assert_int_equal(vg_image_open_path(bin, &img, &err), 0);
	assert_int_equal(vg_image_compare(img, vg_images_main(r.imgs), r.mem, &how),
			 want);
	assert_string_equal(how, want_how);
	vg_image_free(img);
	stop(&r);
}

static void test_compare(void **state)
{
	(void)state;
	compare(FX("fx_pie"), FX("fx_pie"), VG_BIN_MATCH, "build_id");
	compare(FX("fx_pie"), FX("fx_variant2"), VG_BIN_MISMATCH, "build_id");
	compare(FX("fx_nobid"), FX("fx_nobid"), VG_BIN_MATCH, "content");
	compare(FX("fx_nobid"), FX("fx_nobid2"), VG_BIN_MISMATCH, "content");
	assert_string_equal(vg_bin_match_name(VG_BIN_MATCH), "match");
	assert_string_equal(vg_bin_match_name(VG_BIN_MISMATCH), "mismatch");
	assert_string_equal(vg_bin_match_name(VG_BIN_UNKNOWN), "unknown");
	assert_string_equal(vg_image_via_name(VG_VIA_MEMORY), "target_memory");
	assert_string_equal(vg_image_via_name(VG_VIA_ROOT), "proc_root");
}

static void test_images_skip_non_elf(void **state)
{
	/* Every image is an ELF with loads; the locale archive and other
	 * non-ELF files mapped by libc are skipped, not errors. */
	struct running r;

	(void)state;
	run(&r, FX("fx_uselib"));
	assert_true(r.imgs->n >= 4);  /* main, libfx, libc, ld.so */
	for (size_t i = 0; i < r.imgs->n; i++) {
		assert_true(r.imgs->images[i]->n_loads > 0);
		if (i)
			assert_true(r.imgs->images[i - 1]->hi <= r.imgs->images[i]->lo);
	}
	assert_non_null(vg_images_by_name(r.imgs, "libc.so.6", NULL));
	assert_null(vg_images_by_name(r.imgs, "bc.so.6", NULL));
	/* File routes carry their own note; the kernel's build-id (where
	 * PROCMAP_QUERY exists) agrees with it, so no warning.  The vDSO is
	 * the one image read from memory, and it has symbols. */
	const struct vg_image *vdso = vg_images_by_name(r.imgs, "[vdso]", NULL);
	struct vg_symbol sym;

	assert_non_null(vdso);
	assert_int_equal(vdso->via, VG_VIA_MEMORY);
	assert_int_equal(vdso->bias_method, VG_BIAS_EXACT);
	assert_int_equal(vg_image_symbol_by_name(vdso, "__vdso_clock_gettime", &sym), 0);
	for (size_t i = 0; i < r.imgs->n; i++) {
		if (r.imgs->images[i] == vdso)
			continue;
		assert_int_not_equal(r.imgs->images[i]->via, VG_VIA_MEMORY);
		assert_false(r.imgs->images[i]->build_id_from_kernel);
		assert_false(r.imgs->images[i]->dynsym_from_dynamic);
	}
	assert_int_equal(r.t->n_warnings, 0);
	stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reject_missing),
		cmocka_unit_test(test_reject_not_elf),
		cmocka_unit_test(test_reject_elf32),
		cmocka_unit_test(test_reject_other_machine),
		cmocka_unit_test(test_reject_truncated),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_dynsym_of_library),
		cmocka_unit_test(test_dynsym_through_dynamic),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_images_skip_non_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
