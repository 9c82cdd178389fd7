/* test_probe_resolve.c - probe LOCATIONs resolved in a live -O2 -g child
 * (fixtures/probe/probe_fx.c), checked against what the child and the
 * kernel say independently: the child prints its functions' runtime
 * addresses, the file offsets are computed here from /proc/PID/maps, and
 * the bytes at each file offset must be the bytes the process runs
 * (/proc/PID/mem).  The inlined line's number is read from the fixture's
 * source (its FX_INLINE_LINE marker). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe/resolve.h"
#include "sym/params.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "testutil.h"

#define FX_SOURCE FIXTURES "/probe/probe_fx.c"
#define FX_BINARY FIXTURES_BUILD "/probe_fx"

struct fx {
	pid_t pid;
	uint64_t fx_args, caller_a, caller_b, big_ret;
	unsigned inline_line;
	struct vg_target *t;
	struct vg_symbolizer *sym;
};

static struct fx fx;

static unsigned marker_line(void)
{
	FILE *f = fopen(FX_SOURCE, "re");
	char line[512];
	unsigned n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		/* The marker itself, not the header comment naming it. */
		if (strstr(line, "/* FX_INLINE_LINE */")) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no FX_INLINE_LINE marker in %s", FX_SOURCE);
	return 0;
}

static int setup(void **state)
{
	struct vg_error err = { 0 };
	char line[256], name[64];
	unsigned long long a;
	FILE *in;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.inline_line = marker_line();
	in = tu_spawn(FX_BINARY, &fx.pid);
	alarm(30);
	while (fgets(line, sizeof(line), in) && strncmp(line, "ready", 5) != 0) {
		if (sscanf(line, "func %63s 0x%llx", name, &a) != 2)
			continue;
		if (strcmp(name, "fx_args") == 0)
			fx.fx_args = a;
		else if (strcmp(name, "fx_caller_a") == 0)
			fx.caller_a = a;
		else if (strcmp(name, "fx_caller_b") == 0)
			fx.caller_b = a;
		else if (strcmp(name, "fx_big_ret") == 0)
			fx.big_ret = a;
	}
	alarm(0);
	fclose(in);
	assert_true(fx.fx_args && fx.caller_a && fx.caller_b && fx.big_ret);
	assert_int_equal(vg_target_open(fx.pid, &fx.t, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(fx.t, VG_SYM_NO_DEBUGINFOD, &fx.sym, &err), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vg_symbolizer_free(fx.sym);
	vg_target_free(fx.t);
	if (fx.pid > 0) {
		kill(fx.pid, SIGKILL);
		waitpid(fx.pid, NULL, 0);
	}
	return 0;
}

/* ---- ground truth from /proc ---- */

struct mapping {
	uint64_t start, end, offset;
	char perms[5];
	char path[512];
};

/* The mapping of /proc/PID/maps holding addr (parsed here, not by vigil). */
static bool mapping_of(uint64_t addr, struct mapping *m)
{
	char path[64], line[1024];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)fx.pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int used = 0;

		memset(m, 0, sizeof(*m));
		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &s, &e, m->perms, &off, &used) < 4)
			continue;
		if (addr < s || addr >= e)
			continue;
		m->start = s;
		m->end = e;
		m->offset = off;
		sscanf(line + used, " %511[^\n]", m->path);
		found = true;
	}
	fclose(f);
	return found;
}

/* The start of the first mapping whose path is `name` (or whose kind is
 * a [bracketed] name), as the kernel lists them. */
static uint64_t first_mapping_named(const char *name, uint64_t *offset)
{
	char path[64], line[1024];
	FILE *f;
	uint64_t start = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)fx.pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (!start && fgets(line, sizeof(line), f)) {
		unsigned long long s, off;
		char p[512] = "";

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %511[^\n]", &s, &off, p) == 3 &&
		    strcmp(p, name) == 0) {
			start = s;
			if (offset)
				*offset = off;
		}
	}
	fclose(f);
	assert_true(start != 0);
	return start;
}

static void read_exact(int fd, uint64_t off, uint8_t *buf, size_t n)
{
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
}

/* The uprobe site's bytes in its file are the bytes the process runs. */
static void check_site_bytes(const struct vg_probe_site *s)
{
	char mem_path[64];
	uint8_t want[16], got[16];
	int fd;

	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", (int)fx.pid);
	fd = open(mem_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	read_exact(fd, s->runtime_addr, want, sizeof(want));
	close(fd);
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	read_exact(fd, s->file_offset, got, sizeof(got));
	close(fd);
	assert_memory_equal(got, want, sizeof(want));
}

static void check_site_offset(const struct vg_probe_site *s)
{
	struct mapping m;

	assert_true(mapping_of(s->runtime_addr, &m));
	assert_int_equal(m.perms[2], 'x');
	assert_int_equal(s->file_offset, m.offset + (s->runtime_addr - m.start));
	check_site_bytes(s);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int resolve(const char *spec, struct vg_probe_location *loc, struct vg_error *err)
{
	memset(err, 0, sizeof(*err));
	return vg_probe_resolve(spec, fx.sym, loc, err);
}

/* ---- ADDR forms ---- */

static void check_fx_args_site(const struct vg_probe_site *s, uint64_t off)
{
	assert_int_equal(s->runtime_addr, fx.fx_args + off);
	assert_string_equal(s->function, "fx_args");
	assert_int_equal(s->function_addr, fx.fx_args);
	assert_int_equal(s->function_offset, off);
	assert_non_null(s->image);
	assert_true(s->image->is_main);
	assert_int_equal(s->static_addr + s->image->bias, s->runtime_addr);
	assert_false(s->inlined);
	assert_null(s->inlined_into);
	assert_true(ends_with(s->file, "/probe_fx.c"));
	check_site_offset(s);
}

static void test_symbol(void **state)
{
	struct vg_probe_location loc;
	struct vg_error err;

	(void)state;
	assert_int_equal(resolve("fx_args", &loc, &err), 0);
	assert_string_equal(loc.input, "fx_args");
	assert_false(loc.is_file_line);
	assert_int_equal(loc.n_sites, 1);
	assert_int_equal(loc.n_definitions, 1);
	check_fx_args_site(&loc.sites[0], 0);
	vg_probe_location_clear(&loc);
	assert_null(loc.sites);

	assert_int_equal(resolve("fx_args+4", &loc, &err), 0);
	assert_int_equal(loc.n_sites, 1);
	check_fx_args_site(&loc.sites[0], 4);
	vg_probe_location_clear(&loc);

	assert_int_equal(resolve("probe_fx:fx_caller_b", &loc, &err), 0);
	assert_int_equal(loc.n_sites, 1);
	assert_int_equal(loc.sites[0].runtime_addr, fx.caller_b);
	assert_string_equal(loc.sites[0].function, "fx_caller_b");
	check_site_offset(&loc.sites[0]);
	vg_probe_location_clear(&loc);
}

static void test_addresses(void **state)
{
	struct vg_probe_location loc;
	struct vg_error err;
	char spec[64];
	uint64_t off0;
	/* PIE: the first PT_LOAD has vaddr 0 and file offset 0, so the
	 * mapping of file offset 0 starts at the load bias. */
	uint64_t bias = first_mapping_named(FX_BINARY, &off0);

	(void)state;
	assert_int_equal(off0, 0);
	snprintf(spec, sizeof(spec), "0x%" PRIx64, fx.fx_args);
	assert_int_equal(resolve(spec, &loc, &err), 0);
	assert_int_equal(loc.n_sites, 1);
	check_fx_args_site(&loc.sites[0], 0);
	vg_probe_location_clear(&loc);

	snprintf(spec, sizeof(spec), "@0x%" PRIx64, fx.fx_args + 4 - bias);
	assert_int_equal(resolve(spec, &loc, &err), 0);
	assert_int_equal(loc.n_sites, 1);
	assert_int_equal(loc.sites[0].static_addr, fx.fx_args + 4 - bias);
	check_fx_args_site(&loc.sites[0], 4);
	vg_probe_location_clear(&loc);
}

/* ---- FILE:LINE ---- */

static void check_inlined_sites(const struct vg_probe_location *loc)
{
	bool seen_a = false, seen_b = false;

	assert_true(loc->is_file_line);
	assert_int_equal(loc->n_sites, 2);
	for (size_t i = 0; i < loc->n_sites; i++) {
		const struct vg_probe_site *s = &loc->sites[i];
		bool is_a;
		uint64_t caller;

		assert_true(s->inlined);
		assert_non_null(s->inlined_into);
		is_a = strcmp(s->inlined_into, "fx_caller_a") == 0;
		assert_true(is_a || strcmp(s->inlined_into, "fx_caller_b") == 0);
		seen_a |= is_a;
		seen_b |= !is_a;
		caller = is_a ? fx.caller_a : fx.caller_b;
		/* In that caller's code: its symbol, a few bytes in. */
		assert_string_equal(s->function, s->inlined_into);
		assert_int_equal(s->function_addr, caller);
		assert_true(s->runtime_addr >= caller && s->runtime_addr < caller + 0x40);
		assert_int_equal(s->function_offset, s->runtime_addr - caller);
		assert_int_equal(s->line, fx.inline_line);
		assert_true(ends_with(s->file, "/probe_fx.c"));
		check_site_offset(s);
	}
	assert_true(seen_a && seen_b);
}

static void test_file_line(void **state)
{
	struct vg_probe_location loc;
	struct vg_error err;
	char spec[128];

	(void)state;
	snprintf(spec, sizeof(spec), "probe_fx.c:%u", fx.inline_line);
	assert_int_equal(resolve(spec, &loc, &err), 0);
	check_inlined_sites(&loc);
	vg_probe_location_clear(&loc);

	/* More of the path, still at a '/' boundary. */
	snprintf(spec, sizeof(spec), "probe/probe_fx.c:%u", fx.inline_line);
	assert_int_equal(resolve(spec, &loc, &err), 0);
	check_inlined_sites(&loc);
	vg_probe_location_clear(&loc);

	/* The whole path as the source tree has it: the line table's
	 * "BUILD/../tests/..." is compared normalized. */
	snprintf(spec, sizeof(spec), "%s:%u", FX_SOURCE, fx.inline_line);
	assert_int_equal(resolve(spec, &loc, &err), 0);
	check_inlined_sites(&loc);
	vg_probe_location_clear(&loc);

	/* "e_fx.c" ends the path, but not at a '/': no such file. */
	snprintf(spec, sizeof(spec), "e_fx.c:%u", fx.inline_line);
	assert_int_equal(resolve(spec, &loc, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no source file ending in 'e_fx.c'"));
	assert_int_equal(loc.n_sites, 0);
	assert_null(loc.input);

	/* Line 1 is the header comment: the nearest line with code follows. */
	assert_int_equal(resolve("probe_fx.c:1", &loc, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "nearest"));
	assert_non_null(strstr(err.msg, "no code for probe_fx.c:1"));
}

/* ---- errors ---- */

static void test_errors(void **state)
{
	struct vg_probe_location loc;
	struct vg_error err;
	char spec[64];

	(void)state;
	assert_int_equal(resolve("no_such_fn", &loc, &err), -ENOENT);
	assert_int_equal(loc.n_sites, 0);

	snprintf(spec, sizeof(spec), "0x%" PRIx64, first_mapping_named("[stack]", NULL));
	assert_int_equal(resolve(spec, &loc, &err), -ENOEXEC);
	assert_non_null(strstr(err.msg, "[stack] rw-p"));

	assert_int_equal(resolve("0x10", &loc, &err), -EFAULT);
	assert_int_equal(resolve("probe_fx.c:", &loc, &err), -EINVAL);
	assert_int_equal(resolve("probe_fx.c:0", &loc, &err), -EINVAL);
	assert_int_equal(resolve("+5", &loc, &err), -EINVAL);
	assert_int_equal(resolve("", &loc, &err), -EINVAL);
}

/* ---- parameters ---- */

static void check_param(const struct vg_sym_param *p, const char *name, const char *type,
			enum vg_param_kind kind, unsigned size, unsigned reg)
{
	assert_string_equal(p->name, name);
	assert_string_equal(p->type, type);
	assert_int_equal(p->kind, kind);
	assert_int_equal(p->size, size);
	assert_int_equal(p->reg, reg);
}

static void test_params(void **state)
{
	struct vg_sym_param p[6];
	struct vg_error err = { 0 };
	size_t n = 99;

	(void)state;
	/* ratio (a double) takes xmm0: tail is the fifth integer argument. */
	assert_int_equal(vg_sym_params(fx.sym, fx.fx_args, p, 6, &n, &err), 0);
	assert_int_equal(n, 5);
	check_param(&p[0], "size", "size_t", VG_PARAM_UNSIGNED, 8, 0);
	check_param(&p[1], "delta", "int", VG_PARAM_SIGNED, 4, 1);
	check_param(&p[2], "name", "const char *", VG_PARAM_POINTER, 8, 2);
	check_param(&p[3], "flag", "unsigned char", VG_PARAM_UNSIGNED, 1, 3);
	check_param(&p[4], "tail", "long int", VG_PARAM_SIGNED, 8, 4);

	assert_int_equal(vg_sym_params(fx.sym, fx.fx_args, p, 2, &n, &err), 0);
	assert_int_equal(n, 2);
	check_param(&p[1], "delta", "int", VG_PARAM_SIGNED, 4, 1);

	assert_int_equal(vg_sym_params(fx.sym, fx.caller_a, p, 6, &n, &err), 0);
	assert_int_equal(n, 1);
	check_param(&p[0], "v", "long int", VG_PARAM_SIGNED, 8, 0);

	/* A struct returned in memory: rdi is the caller's buffer, the
	 * parameters follow in rsi and rdx. */
	assert_int_equal(vg_sym_params(fx.sym, fx.big_ret, p, 6, &n, &err), 0);
	assert_int_equal(n, 3);
	check_param(&p[0], "", "", VG_PARAM_POINTER, 8, 0);
	check_param(&p[1], "x", "long int", VG_PARAM_SIGNED, 8, 1);
	check_param(&p[2], "y", "long int", VG_PARAM_SIGNED, 8, 2);

	assert_string_equal(vg_sym_param_reg_name(0), "rdi");
	assert_string_equal(vg_sym_param_reg_name(4), "r8");
	assert_string_equal(vg_sym_param_reg_name(5), "r9");
	assert_string_equal(vg_sym_param_reg_name(6), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbol),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_file_line),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_params),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
