/* srclines.c - the rows of FILE:LINE in an image's DWARF line tables,
 * one hit per innermost function or inlined copy (srclines.h).  Never
 * prints. */
#include "sym/srclines.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "util/vec.h"

struct vg_line_row {
	Dwarf_Die cu;
	uint64_t addr;          /* static */
	bool is_stmt;
	const char *file;       /* borrowed from the Dwarf, as the row names it */
	const char *comp_dir;   /* borrowed: its CU's DW_AT_comp_dir, or NULL */
	Dwarf_Off scope;        /* innermost function/inlined instance; 0: none */
};

/* The file name as the symbolizer gives it (dwindex.c): a relative name
 * joined to the CU's compilation directory. */
static void absolute_name(const char *src, const char *comp_dir, char *buf, size_t size)
{
	if (src[0] == '/' || !comp_dir || !comp_dir[0])
		snprintf(buf, size, "%s", src);
	else
		snprintf(buf, size, "%s/%s", comp_dir, src);
}

/* "/a/b/../c/./d.c" -> "/a/c/d.c", by the text alone (no symlinks are
 * followed: the build machine's tree need not exist here). */
static void normalize_path(const char *in, char *out, size_t size)
{
	size_t n = 0, root = in[0] == '/';
	const char *p = in;

	if (size < 2) {
		if (size)
			out[0] = '\0';
		return;
	}
	if (root)
		out[n++] = '/';
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);
		size_t last = n;

		while (last > root && out[last - 1] != '/')
			last--;
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* "//" and "/./": nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.' && n > root &&
			   strncmp(out + last, "..", n - last) != 0) {
			n = last > root ? last - 1 : root;  /* drop the last component */
		} else if (!(len == 2 && p[0] == '.' && p[1] == '.' && root && n == 1)) {
			if (n > root && n < size - 1)
				out[n++] = '/';
			if (len > size - 1 - n)
				len = size - 1 - n;
			memcpy(out + n, p, len);
			n += len;
		}
		p = *e ? e + 1 : e;
	}
	out[n] = '\0';
}

/* path ends with want at a '/' boundary, or equals it. */
static bool path_matches(const char *path, const char *want)
{
	size_t pl = strlen(path), wl = strlen(want);

	if (pl < wl || strcmp(path + pl - wl, want) != 0)
		return false;
	return pl == wl || path[pl - wl - 1] == '/' || want[0] == '/';
}

/* The name as the line table has it, or joined to the compilation
 * directory and normalized ("tests/x.c" matches "/src/b/../tests/x.c"). */
static bool file_matches(const char *src, const char *comp_dir, const char *want)
{
	char abs[4096], norm[4096];

	if (path_matches(src, want))
		return true;
	absolute_name(src, comp_dir, abs, sizeof(abs));
	normalize_path(abs, norm, sizeof(norm));
	return path_matches(norm, want);
}

static bool row_file_matches(struct vg_line_search *ls, const char *src)
{
	if (src != ls->last_src) {
		ls->last_src = src;
		ls->last_match = src && file_matches(src, ls->comp_dir, ls->file);
	}
	return ls->last_match;
}

static void note_nearest(struct vg_line_search *ls, uint32_t lineno)
{
	if (lineno == 0)
		return;
	if (lineno < ls->line && lineno > ls->below)
		ls->below = lineno;
	if (lineno > ls->line && (ls->above == 0 || lineno < ls->above))
		ls->above = lineno;
}

static int scan_cu(struct vg_line_search *ls, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t n;

	Dwarf_Attribute a;

	ls->last_src = NULL;
	ls->comp_dir = dwarf_attr(cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;
	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return 0;  /* a CU without a line table has no rows to give */
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false, stmt = false;
		int lineno;

		if (!l || dwarf_lineendsequence(l, &end) != 0 || end ||
		    !row_file_matches(ls, dwarf_linesrc(l, NULL, NULL)) ||
		    dwarf_lineno(l, &lineno) != 0 || dwarf_lineaddr(l, &addr) != 0)
			continue;
		ls->file_seen = true;
		if ((uint32_t)lineno != ls->line) {
			note_nearest(ls, (uint32_t)lineno);
			continue;
		}
		if (VG_GROW(ls->rows, ls->cap_rows, ls->n_rows + 1) < 0)
			return -ENOMEM;
		dwarf_linebeginstatement(l, &stmt);
		ls->rows[ls->n_rows++] = (struct vg_line_row){
			.cu = *cu, .addr = addr, .is_stmt = stmt, .file = ls->last_src,
			.comp_dir = ls->comp_dir,
		};
	}
	return 0;
}

static bool is_function_scope(Dwarf_Die *d)
{
	int tag = dwarf_tag(d);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The innermost function or inlined copy under parent containing addr.
 * Not dwarf_getscopes: it leaks its array when an inlined copy's abstract
 * origin cannot be read (libdw 0.188), and walks the origin's CU again
 * for scopes this search does not need. */
static Dwarf_Off innermost_scope(Dwarf_Die *parent, uint64_t addr, int depth)
{
	Dwarf_Die c;

	if (depth > 64 || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		Dwarf_Off inner;

		/* As dwarf_getscopes: a DIE not containing addr (or with no
		 * pc attributes at all) is pruned with its children. */
		if (dwarf_haspc(&c, addr) != 1)
			continue;
		inner = innermost_scope(&c, addr, depth + 1);
		if (inner)
			return inner;
		if (is_function_scope(&c))
			return dwarf_dieoffset(&c);
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static void find_scope(struct vg_line_row *row)
{
	row->scope = innermost_scope(&row->cu, row->addr, 0);
}

/* Rows by scope, then is_stmt first, then address: the first row of each
 * scope is its site. */
static int cmp_row(const void *a, const void *b)
{
	const struct vg_line_row *x = a, *y = b;

	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if (x->is_stmt != y->is_stmt)
		return x->is_stmt ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

int vg_line_search_image(struct vg_line_search *ls, struct vg_symbolizer *sym,
			 struct vg_image *img, struct vg_line_hit **hits, size_t *n,
			 struct vg_error *err)
{
	Dwarf *dwarf = vg_symbolizer_dwarf(sym, img, err);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	struct vg_line_hit *out = NULL;
	size_t k = 0;
	int rc = 0;

	*hits = NULL;
	*n = 0;
	if (!dwarf)
		return err && err->code == -ENOMEM ? -ENOMEM : 0;
	ls->n_dwarf_images++;
	ls->n_rows = 0;
	while (dwarf_get_units(dwarf, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		rc = scan_cu(ls, &cudie);
		if (rc < 0)
			break;
	}
	if (rc == 0 && ls->n_rows) {
		for (size_t i = 0; i < ls->n_rows; i++)
			find_scope(&ls->rows[i]);
		qsort(ls->rows, ls->n_rows, sizeof(*ls->rows), cmp_row);
		out = calloc(ls->n_rows, sizeof(*out));
		if (!out)
			rc = -ENOMEM;
	}
	/* The first row of each scope is its hit. */
	for (size_t i = 0; rc == 0 && i < ls->n_rows; i++) {
		char file[4096], norm[4096];

		if (i > 0 && ls->rows[i].scope == ls->rows[i - 1].scope)
			continue;
		/* The file whose name matched: the innermost row at addr may
		 * be another line at the same address. */
		absolute_name(ls->rows[i].file, ls->rows[i].comp_dir, file, sizeof(file));
		normalize_path(file, norm, sizeof(norm));
		out[k].addr = ls->rows[i].addr;
		out[k].path = strdup(norm);
		if (!out[k++].path)
			rc = -ENOMEM;
	}
	ls->n_rows = 0;
	if (rc < 0) {
		vg_line_hits_free(out, k);
		return vg_error_set(err, rc, "out of memory reading the line tables of %s",
				    img->path && img->path[0] ? img->path : "(unnamed image)");
	}
	*hits = out;
	*n = k;
	return 0;
}

void vg_line_hits_free(struct vg_line_hit *hits, size_t n)
{
	for (size_t i = 0; hits && i < n; i++)
		free(hits[i].path);
	free(hits);
}

void vg_line_search_clear(struct vg_line_search *ls)
{
	free(ls->rows);
	ls->rows = NULL;
	ls->n_rows = ls->cap_rows = 0;
}
