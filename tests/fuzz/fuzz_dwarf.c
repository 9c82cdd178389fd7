/* fuzz_dwarf.c - libFuzzer harness for the debug-info loading path.
 *
 * The input is an ELF file in memory.  It goes through vg_debuginfo_find
 * (no debuginfod; a debug_dir that does not exist, so only the image
 * itself can serve: embedded DWARF, MiniDebugInfo), then through what the
 * symbolizer reads of the DWARF: every CU, its ranges and line table, and a
 * recursive walk of its DIEs reading names, pc ranges, call sites and
 * abstract origins; then the symbolizer's index (vg_dwindex) answers
 * lookups at addresses the walk met.  Nothing may crash, hang or leak; a
 * result must keep the headers' promises (a source has a Dwarf, an owned
 * image is not the input, an inline chain fits its array).
 * Built by tests/fuzz/run.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elf/debuginfo.h"
#include "elf/image.h"
#include "sym/dwindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A DIE tree nested deeper than this is not a program; recursion must not
 * overflow the stack on one. */
#define MAX_DEPTH 256
#define MAX_DIES 200000
#define MAX_RANGES 4096

static volatile uint64_t sink;

/* Addresses the walk met (low pcs, range starts, line rows), for the
 * index lookups. */
#define MAX_SEEN 64
static uint64_t seen[MAX_SEEN];
static size_t n_seen;

static void saw(uint64_t a)
{
	sink += a;
	if (n_seen < MAX_SEEN)
		seen[n_seen++] = a;
}

static void read_ranges(Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int n = 0;

	while (n++ < MAX_RANGES &&
	       (off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		saw(start);
		saw(end - 1);
	}
}

static void read_call_site(Dwarf_Die *die, Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Files *files;
	size_t n_files;

	if (dwarf_attr(die, DW_AT_call_file, &a) &&
	    dwarf_formudata(&a, &w) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &n_files) == 0 && w < n_files) {
		const char *f = dwarf_filesrc(files, w, NULL, NULL);

		sink += f ? strlen(f) : 0;
	}
	if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
		sink += w;
	if (dwarf_attr(die, DW_AT_call_column, &a) &&
	    dwarf_formudata(&a, &w) == 0)
		sink += w;
}

static void read_names(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;
	const char *s;

	s = dwarf_diename(die);
	sink += s ? strlen(s) : 0;
	/* The names an inlined subroutine or an out-of-line instance takes
	 * from its abstract origin (and its specification). */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) &&
	    (s = dwarf_formstring(&a)))
		sink += strlen(s);
	if (dwarf_attr_integrate(die, DW_AT_name, &a) &&
	    (s = dwarf_formstring(&a)))
		sink += strlen(s);
	if (dwarf_attr(die, DW_AT_abstract_origin, &a) &&
	    dwarf_formref_die(&a, &origin) && (s = dwarf_diename(&origin)))
		sink += strlen(s);
}

static void walk_die(Dwarf_Die *die, Dwarf_Die *cu, int depth, size_t *budget)
{
	Dwarf_Die child;
	Dwarf_Addr lo, hi;
	int r;

	if (depth > MAX_DEPTH)
		return;
	do {
		if ((*budget)-- == 0)
			return;
		read_names(die);
		if (dwarf_lowpc(die, &lo) == 0)
			saw(lo);
		if (dwarf_highpc(die, &hi) == 0)
			sink += hi;
		read_ranges(die);
		if (dwarf_tag(die) == DW_TAG_inlined_subroutine)
			read_call_site(die, cu);
		if (dwarf_child(die, &child) == 0)
			walk_die(&child, cu, depth + 1, budget);
		r = dwarf_siblingof(die, die);
	} while (r == 0);
}

static void walk_lines(Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line, col;
		const char *src;

		if (!l)
			continue;
		if (dwarf_lineaddr(l, &a) == 0)
			saw(a);
		if (dwarf_lineno(l, &line) == 0)
			sink += (uint64_t)line;
		if (dwarf_linecol(l, &col) == 0)
			sink += (uint64_t)col;
		src = dwarf_linesrc(l, NULL, NULL);
		sink += src ? strlen(src) : 0;
	}
}

static void walk_dwarf(Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, budget = MAX_DIES;

	while (budget && dwarf_next_unit(dw, off, &next, &hsize, NULL, NULL,
					 NULL, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			read_ranges(&cu);
			walk_lines(&cu);
			walk_die(&cu, &cu, 0, &budget);
		}
		if (next <= off)
			break;
		off = next;
	}
}

static void probe_index(Dwarf *dw)
{
	struct vg_dwindex *ix = NULL;
	struct vg_dw_result *res = malloc(sizeof(*res));
	struct vg_error err = { 0 };

	if (!res)
		return;
	if (vg_dwindex_new(dw, &ix, &err) != 0) {
		free(res);
		return;
	}
	for (size_t i = 0; i < n_seen; i++) {
		for (uint64_t k = 0; k < 3; k++) {
			int r = vg_dwindex_lookup(ix, seen[i] + k, res);

			/* A corrupt CU may fail to index (r < 0): it
			 * must then answer nothing. */
			if (res->n_frames > VG_DW_MAX_FRAMES ||
			    (r < 0 && res->n_frames))
				abort();
			for (size_t f = 0; f < res->n_frames; f++)
				sink += res->frames[f].line +
					(res->frames[f].name ? strlen(res->frames[f].name) : 0) +
					(res->frames[f].file ? strlen(res->frames[f].file) : 0);
		}
	}
	vg_dwindex_free(ix);
	free(res);
}

static void probe_symbols(const struct vg_image *img)
{
	struct vg_symbol s;

	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];

		for (uint64_t k = 0; k < 16; k++)
			if (vg_image_symbol_at(img, l->vaddr + k * 64, &s) == 0)
				sink += s.vaddr;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_debuginfo_opts opts = {
		.debug_dir = "/nonexistent/vigil-fuzz-debug-dir",
		.no_debuginfod = true,
	};
	struct vg_image *img = NULL;
	struct vg_debuginfo *d = NULL;
	struct vg_error err = { 0 };

	if (vg_image_open_memory(data, size, "fuzz", &img, &err) != 0)
		return 0;
	if (vg_debuginfo_find(img, &opts, &d, &err) != 0) {
		if (err.code != -ENOMEM || d)
			abort();
		vg_image_free(img);
		return 0;
	}
	if (!d || !d->tried || !d->symbol_image ||
	    (d->source != VG_DEBUG_NONE) != (d->dwarf != NULL) ||
	    (d->source == VG_DEBUG_EMBEDDED && d->dwarf_image != img) ||
	    (d->owns_symbol_image && d->symbol_image == img))
		abort();
	n_seen = 0;
	if (d->dwarf) {
		walk_dwarf(d->dwarf);
		probe_index(d->dwarf);
	} else {
		/* libdw may take what vigil's check for .debug_info does not. */
		Dwarf *dw = dwarf_begin_elf(vg_image_elf(img), DWARF_C_READ, NULL);

		if (dw) {
			walk_dwarf(dw);
			probe_index(dw);
			dwarf_end(dw);
		}
	}
	if (d->symbol_image != img)
		probe_symbols(d->symbol_image);
	vg_debuginfo_free(d);
	vg_image_free(img);
	return 0;
}
