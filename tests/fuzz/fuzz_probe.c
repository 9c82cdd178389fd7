/* fuzz_probe.c - libFuzzer harness for probe LOCATION resolution and
 * --args classification (probe/resolve.h, sym/srclines.h, sym/params.h),
 * the parts of `vigil probe` that read what the target's files say.
 *
 * The input is an ELF file.  The symbolizer opens files by path, so the
 * input is written to one file in a private temporary directory (made
 * once per process: nothing else in it for a .gnu_debuglink to find) and
 * opened offline without debuginfod or kallsyms: resolve then has no maps
 * and places sites by the image's PT_LOADs.  The harness walks the line
 * tables the symbolizer's own DWARF holds for a few file names, lines and
 * addresses, and asks for FILE:LINE (by base name, as written, and a line
 * with no code), SYMBOL, SYMBOL+1, 0xADDR and @0xADDR, and for the
 * parameters at function starts and inside functions.  Nothing may crash,
 * hang or leak; every answer must keep the header's promises: an error
 * leaves the location empty with a sentence and a documented errno, a
 * site has its path and its address, a FILE:LINE site the line asked for;
 * parameters fit max (the slot past it untouched), take registers 0..5 in
 * increasing order, with NUL-terminated names and types and a size of 1,
 * 2, 4 or 8.  Built by tests/fuzz/run.sh. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>

#include "elf/image.h"
#include "sym/params.h"
#include "probe/resolve.h"
#include "sym/symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the walk keeps: enough to build a handful of specs, few enough
 * that a FILE:LINE (which rereads every line table) stays cheap. */
#define MAX_FILES 3
#define MAX_ADDRS 8
#define MAX_ROWS 20000
#define MAX_UNITS 512
#define NAME_MAX_LEN 256

struct seen_file {
	char name[NAME_MAX_LEN];   /* as dwarf_linesrc gives it */
	uint32_t line;             /* first nonzero line seen in it */
};

struct seen {
	struct seen_file files[MAX_FILES];
	size_t n_files;
	uint64_t addrs[MAX_ADDRS];
	size_t n_addrs;
};

static char dir_path[64];
static char file_path[96];

static void remove_input(void)
{
	unlink(file_path);
	rmdir(dir_path);
}

static void write_input(const uint8_t *data, size_t size)
{
	FILE *f;
	bool ok;

	if (!dir_path[0]) {
		snprintf(dir_path, sizeof(dir_path), "/tmp/vigil-fuzz-probe.XXXXXX");
		if (!mkdtemp(dir_path))
			abort();
		snprintf(file_path, sizeof(file_path), "%s/input.elf", dir_path);
		atexit(remove_input);
	}
	f = fopen(file_path, "we");
	if (!f)
		abort();
	ok = fwrite(data, 1, size, f) == size;
	if (fclose(f) != 0 || !ok)
		abort();
}

static void saw_addr(struct seen *s, uint64_t a)
{
	for (size_t i = 0; i < s->n_addrs; i++)
		if (s->addrs[i] == a)
			return;
	if (s->n_addrs < MAX_ADDRS)
		s->addrs[s->n_addrs++] = a;
}

static void saw_line(struct seen *s, const char *src, int line)
{
	size_t i;

	if (!src || !src[0] || line <= 0)
		return;
	for (i = 0; i < s->n_files; i++)
		if (strncmp(s->files[i].name, src, NAME_MAX_LEN - 1) == 0)
			return;
	if (i == MAX_FILES)
		return;
	snprintf(s->files[i].name, NAME_MAX_LEN, "%s", src);
	s->files[i].line = (uint32_t)line;
	s->n_files++;
}

static void walk_lines(Dwarf_Die *cu, struct seen *s, size_t *budget)
{
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return;
	for (size_t i = 0; i < n && *budget; i++, (*budget)--) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line;

		if (!l)
			continue;
		if (dwarf_lineaddr(l, &a) == 0)
			saw_addr(s, a);
		if (dwarf_lineno(l, &line) == 0)
			saw_line(s, dwarf_linesrc(l, NULL, NULL), line);
	}
}

static void walk_dwarf(Dwarf *dw, struct seen *s)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	size_t budget = MAX_ROWS, units = 0;

	while (units++ < MAX_UNITS && budget &&
	       dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0)
		if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
			walk_lines(&cudie, s, &budget);
}

static bool documented_error(int rc)
{
	switch (-rc) {
	case EINVAL:
	case ENOENT:
	case ERANGE:
	case EFAULT:
	case ENOEXEC:
	case ENODATA:
	case ESTALE:
	case ESRCH:
	case ENOMEM:
		return true;
	default:
		return false;
	}
}

static void check_site(const struct vg_probe_site *st, const struct vg_probe_location *loc,
		       uint32_t want_line)
{
	if (!st->image || !st->path || !st->path[0] ||
	    st->static_addr != st->runtime_addr - st->image->bias ||
	    (st->function && st->function_offset != st->runtime_addr - st->function_addr) ||
	    (st->inlined_into && !st->inlined))
		abort();
	if (loc->is_file_line && (!st->file || st->line != want_line))
		abort();
}

/* want_line: the LINE of a FILE:LINE spec (0 for the other forms). */
static void resolve(struct vg_symbolizer *sym, const char *spec, uint32_t want_line)
{
	struct vg_probe_location loc;
	struct vg_error err = { 0 };
	int rc = vg_probe_resolve(spec, sym, &loc, &err);

	if (rc < 0) {
		if (!documented_error(rc) || err.code != rc || !err.msg[0] || loc.input ||
		    loc.sites || loc.n_sites)
			abort();
		return;
	}
	if (rc != 0 || !loc.input || strcmp(loc.input, spec) != 0 || loc.n_sites == 0 ||
	    (!loc.is_file_line && loc.n_sites != 1))
		abort();
	for (size_t i = 0; i < loc.n_sites; i++) {
		check_site(&loc.sites[i], &loc, want_line);
		if (i > 0 && loc.sites[i].runtime_addr < loc.sites[i - 1].runtime_addr)
			abort();
	}
	vg_probe_location_clear(&loc);
	if (loc.input || loc.sites || loc.n_sites)
		abort();
}

static void resolve_file_lines(struct vg_symbolizer *sym, const struct seen *s)
{
	char spec[NAME_MAX_LEN + 32];

	for (size_t i = 0; i < s->n_files; i++) {
		const struct seen_file *f = &s->files[i];
		const char *base = strrchr(f->name, '/');

		base = base ? base + 1 : f->name;
		snprintf(spec, sizeof(spec), "%s:%" PRIu32, base, f->line);
		resolve(sym, spec, f->line);
		snprintf(spec, sizeof(spec), "%s:%" PRIu32, f->name, f->line);
		resolve(sym, spec, f->line);
		/* No code there: the "nearest lines" answer. */
		snprintf(spec, sizeof(spec), "%s:%" PRIu32, base, f->line + 100000);
		resolve(sym, spec, f->line + 100000);
	}
}

#define N_PARAMS 6
#define CANARY 0xa5

static void check_params(const struct vg_sym_param *p, size_t max, size_t n, int rc,
			 const struct vg_error *err)
{
	const unsigned char *past = (const unsigned char *)&p[max];

	for (size_t b = 0; b < sizeof(*p); b++)
		if (past[b] != CANARY)
			abort();
	if (rc < 0) {
		if (n != 0 || !err->msg[0])
			abort();
		return;
	}
	if (rc != 0 || n > max)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (p[i].reg >= N_PARAMS || (i > 0 && p[i].reg <= p[i - 1].reg) ||
		    !memchr(p[i].name, '\0', sizeof(p[i].name)) ||
		    !memchr(p[i].type, '\0', sizeof(p[i].type)) ||
		    (p[i].size != 1 && p[i].size != 2 && p[i].size != 4 && p[i].size != 8) ||
		    p[i].kind > VG_PARAM_POINTER ||
		    strcmp(vg_sym_param_reg_name(p[i].reg), "?") == 0)
			abort();
	}
}

static void params_at(struct vg_symbolizer *sym, uint64_t addr)
{
	static const size_t maxes[] = { N_PARAMS, 2 };
	struct vg_sym_param p[N_PARAMS + 1];

	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		struct vg_error err = { 0 };
		size_t n = 99;
		int rc;

		memset(p, CANARY, sizeof(p));
		rc = vg_sym_params(sym, addr, p, maxes[m], &n, &err);
		check_params(p, maxes[m], n, rc, &err);
	}
}

/* Function symbols: those covering the line rows' addresses (and the
 * start of each executable PT_LOAD): by name, name+1, their parameters. */
static void resolve_symbols(struct vg_symbolizer *sym, const struct vg_image *img,
			    const struct seen *s)
{
	uint64_t tried[MAX_ADDRS + 4];
	size_t n_tried = 0;
	char spec[NAME_MAX_LEN + 32];
	uint64_t cand[MAX_ADDRS + 4];
	size_t n_cand = 0;

	for (size_t i = 0; i < s->n_addrs; i++)
		cand[n_cand++] = s->addrs[i];
	for (size_t i = 0; i < img->n_loads && n_cand < MAX_ADDRS + 4; i++)
		if (img->loads[i].flags & PF_X)
			cand[n_cand++] = img->loads[i].vaddr;
	for (size_t i = 0; i < n_cand; i++) {
		struct vg_symbol sy;
		bool dup = false;

		if (vg_image_symbol_at(img, cand[i], &sy) != 0 || !sy.name || !sy.name[0])
			continue;
		for (size_t j = 0; j < n_tried && !dup; j++)
			dup = tried[j] == sy.vaddr;
		if (dup || n_tried >= 4)
			continue;
		tried[n_tried++] = sy.vaddr;
		snprintf(spec, sizeof(spec), "%.*s", NAME_MAX_LEN, sy.name);
		resolve(sym, spec, 0);
		snprintf(spec, sizeof(spec), "%.*s+1", NAME_MAX_LEN, sy.name);
		resolve(sym, spec, 0);
		params_at(sym, sy.vaddr);
		params_at(sym, sy.vaddr + 1);
	}
}

static void resolve_addrs(struct vg_symbolizer *sym, const struct seen *s)
{
	char spec[40];

	for (size_t i = 0; i < s->n_addrs && i < 3; i++) {
		snprintf(spec, sizeof(spec), "0x%" PRIx64, s->addrs[i]);
		resolve(sym, spec, 0);
		snprintf(spec, sizeof(spec), "@0x%" PRIx64, s->addrs[i]);
		resolve(sym, spec, 0);
		params_at(sym, s->addrs[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_symbolizer *sym = NULL;
	struct vg_error err = { 0 };
	const struct vg_images *imgs;
	struct seen s = { 0 };
	Dwarf *dw;

	write_input(data, size);
	if (vg_symbolizer_open_file(file_path, VG_SYM_NO_DEBUGINFOD | VG_SYM_NO_KERNEL, &sym,
				    &err) != 0) {
		if (sym || !err.msg[0])
			abort();
		return 0;
	}
	imgs = vg_symbolizer_images(sym);
	if (!imgs || imgs->n != 1 || vg_symbolizer_target(sym))
		abort();
	dw = vg_symbolizer_dwarf(sym, imgs->images[0], &err);
	if (dw)
		walk_dwarf(dw, &s);
	resolve_file_lines(sym, &s);
	resolve_symbols(sym, imgs->images[0], &s);
	resolve_addrs(sym, &s);
	/* Malformed specs must be refused, not read past. */
	resolve(sym, "x.c:", 0);
	resolve(sym, "+5", 0);
	resolve(sym, "main", 0);
	vg_symbolizer_free(sym);
	return 0;
}
