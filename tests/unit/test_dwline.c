/* test_dwline.c - the line rows dwline.c decodes are libdw's rows: every
 * CU of real binaries indexed twice, once with the rows from dwline.c and
 * once from dwarf_getsrclines (dwindex_lines_via_libdw), and the two
 * compared row by row (address, file name, line, column, end of
 * sequence), with the file names of every file-table entry.  The
 * binaries: this test itself (the build's DWARF), libc's debug file from
 * libc6-dbg (the test set installs it: missing, the test fails), and the
 * generated benchmark program when bench/sym.sh has built it into
 * bench/out (a clean clone has none: the case is then not run, and says
 * so, rather than reported as a skip that TAP readers count as failed). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "sym/dwindex_priv.h"

struct snapshot {
	size_t n_cus;
	size_t *n_rows;
	uint64_t **addr;
	struct row **rows;
	char ***names;          /* per CU, per row: the file name or NULL */
	char ***files;          /* per CU, per file-table entry */
	size_t *n_files;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Every CU of path indexed, its rows copied out. */
static int take(const char *path, bool via_libdw, struct snapshot *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Dwarf *dw;
	struct vg_dwindex *ix = NULL;
	struct vg_error err = { 0 };

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!dw) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	dwindex_lines_via_libdw = via_libdw;
	assert_int_equal(vg_dwindex_new(dw, &ix, &err), 0);
	assert_int_equal(dwindex_build_all(ix), 0);
	memset(out, 0, sizeof(*out));
	out->n_cus = vg_dwindex_cus(ix, NULL);
	out->n_rows = calloc(out->n_cus, sizeof(size_t));
	out->n_files = calloc(out->n_cus, sizeof(size_t));
	out->addr = calloc(out->n_cus, sizeof(*out->addr));
	out->rows = calloc(out->n_cus, sizeof(*out->rows));
	out->names = calloc(out->n_cus, sizeof(*out->names));
	out->files = calloc(out->n_cus, sizeof(*out->files));
	for (size_t i = 0; i < out->n_cus; i++) {
		struct cu *c = dwindex_cu(ix, i);

		out->n_rows[i] = c->n_rows;
		out->addr[i] = malloc((c->n_rows + 1) * sizeof(uint64_t));
		out->rows[i] = malloc((c->n_rows + 1) * sizeof(struct row));
		out->names[i] = calloc(c->n_rows + 1, sizeof(char *));
		memcpy(out->addr[i], c->row_addr, c->n_rows * sizeof(uint64_t));
		memcpy(out->rows[i], c->rows, c->n_rows * sizeof(struct row));
		for (size_t r = 0; r < c->n_rows; r++)
			out->names[i][r] = dup_or_null(c->rows[r].file);
		out->n_files[i] = c->n_files;
		out->files[i] = calloc(c->n_files + 1, sizeof(char *));
		for (size_t f = 0; f < c->n_files; f++)
			out->files[i][f] = dup_or_null(dwindex_file_name(c, (uint32_t)f));
	}
	vg_dwindex_free(ix);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
	dwindex_lines_via_libdw = false;
	return 0;
}

static void drop(struct snapshot *s)
{
	for (size_t i = 0; i < s->n_cus; i++) {
		for (size_t r = 0; r < s->n_rows[i]; r++)
			free(s->names[i][r]);
		for (size_t f = 0; f < s->n_files[i]; f++)
			free(s->files[i][f]);
		free(s->names[i]);
		free(s->files[i]);
		free(s->addr[i]);
		free(s->rows[i]);
	}
	free(s->names);
	free(s->files);
	free(s->addr);
	free(s->rows);
	free(s->n_rows);
	free(s->n_files);
}

static void assert_same_string(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* The two indexes of path agree; false when path cannot be read. */
static bool compare_file(const char *path)
{
	struct snapshot direct, libdw;
	size_t before = dwindex_lines_direct, rows = 0;

	if (take(path, false, &direct) < 0)
		return false;
	assert_int_equal(take(path, true, &libdw), 0);
	assert_int_equal(direct.n_cus, libdw.n_cus);
	/* The decoder ran: a test of libdw against itself proves nothing. */
	assert_true(dwindex_lines_direct > before);
	for (size_t i = 0; i < direct.n_cus; i++) {
		assert_int_equal(direct.n_rows[i], libdw.n_rows[i]);
		assert_int_equal(direct.n_files[i], libdw.n_files[i]);
		for (size_t f = 0; f < direct.n_files[i]; f++)
			assert_same_string(direct.files[i][f], libdw.files[i][f]);
		for (size_t r = 0; r < direct.n_rows[i]; r++) {
			assert_int_equal(direct.addr[i][r], libdw.addr[i][r]);
			assert_int_equal(direct.rows[i][r].line, libdw.rows[i][r].line);
			assert_int_equal(direct.rows[i][r].column, libdw.rows[i][r].column);
			assert_int_equal(direct.rows[i][r].end_sequence, libdw.rows[i][r].end_sequence);
			assert_same_string(direct.names[i][r], libdw.names[i][r]);
		}
		rows += direct.n_rows[i];
	}
	print_message("# %s: %zu CUs, %zu rows, %zu CUs decoded here\n", path, direct.n_cus,
		      rows, dwindex_lines_direct - before);
	drop(&direct);
	drop(&libdw);
	return true;
}

static void test_self(void **state)
{
	(void)state;
	assert_true(compare_file("/proc/self/exe"));
}

#define GENERATED SOURCE_ROOT "/bench/out/gen_funcs/gen_funcs"

static void test_generated(void **state)
{
	(void)state;
	assert_true(compare_file(GENERATED));
}

static void test_libc_debug(void **state)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	int fd = open(libc, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	const void *id = NULL;
	ssize_t n = -1;
	char path[256];
	int len;

	(void)state;
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (elf)
		n = dwelf_elf_gnu_build_id(elf, &id);
	if (n < 2)
		fail_msg("%s: no build-id to find its debug file by", libc);
	len = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", ((const uint8_t *)id)[0]);
	for (ssize_t i = 1; i < n; i++)
		len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", ((const uint8_t *)id)[i]);
	snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
	elf_end(elf);
	close(fd);
	if (!compare_file(path))
		fail_msg("%s: not readable (libc6-dbg, scripts/install-deps.sh test)", path);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_libc_debug),
		cmocka_unit_test(test_generated),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);

	if (access(GENERATED, R_OK) != 0) {
		print_message("# test_generated not run: %s is built by bench/sym.sh\n", GENERATED);
		n--;
	}
	return _cmocka_run_group_tests("test_dwline", tests, n, NULL, NULL);
}
