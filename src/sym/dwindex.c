/* dwindex.c - address -> inline chain and line, by binary search over
 * tables built once per compilation unit.
 *
 * Three levels, all sorted arrays:
 *   cu_ranges  every address range of every CU (from the CU DIE's
 *              DW_AT_low_pc/high_pc/ranges), -> CU index;
 *   segs       per CU, disjoint segments [lo, next lo) naming the innermost
 *              scope (subprogram or inlined subroutine) that covers them;
 *              scopes know their parent, so the chain is a walk up;
 *   rows       per CU, the line table, ordered so that the last row at or
 *              below an address is its row (an end_sequence row there means
 *              "between sequences").
 * Segments come from "painting" the scope ranges outer to inner
 * (dwscope.c; dwindex_priv.h: the per-CU tables both build). */
#include "sym/dwindex.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sym/dwindex_priv.h"
#include "util/ranges.h"
#include "util/vec.h"

/* What one indexing thread owns: its libdw handle (libdw is not
 * thread-safe per handle), its name cache, what it found corrupt. */
struct builder_ctx {
	Dwarf *dwarf;
	struct names names;
	bool corrupt;
	/* The line sections of dwarf, for dwline.c (found once). */
	struct dwline_sections line_secs;
	bool line_secs_found;
};

struct vg_dwindex {
	struct builder_ctx main;   /* lookups: the Dwarf the index was made from */
	struct builder_ctx pf;     /* the prefetch thread's */
	pthread_t pf_thread;
	bool pf_running;
	size_t main_built;         /* CUs indexed by lookups */
	size_t n_done;             /* CUs indexed by anyone (atomic) */
	int pf_stop;               /* atomic */
	/* libdw refused part of the DWARF: answers may lack frames. */
	bool corrupt;
	/* Skeleton units whose .dwo/.dwp libdw did not find. */
	size_t missing_dwo;
	struct cu *cus;
	size_t n_cus;
	struct cu_range *ranges;
	uint64_t *max_hi;       /* max hi of ranges[0..i]: overlapping CUs */
	size_t n_ranges;
};

VG_RANGE_HEAD_CHECK(struct cu_range, lo, hi);

/* ------------------------------------------------------------------ */
/* CU ranges                                                            */

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int add_cu(struct vg_dwindex *ix, Dwarf_Die *cudie, size_t *cap_cus,
		  size_t *cap_ranges)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t idx = (uint32_t)ix->n_cus;
	bool any = false;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (VG_GROW(ix->ranges, *cap_ranges, ix->n_ranges + 1))
			return -ENOMEM;
		ix->ranges[ix->n_ranges++] = (struct cu_range){ lo, hi, idx };
		any = true;
	}
	if (!any)
		return 0;       /* no code (types only, or a partial unit) */
	if (VG_GROW(ix->cus, *cap_cus, ix->n_cus + 1))
		return -ENOMEM;
	memset(&ix->cus[ix->n_cus], 0, sizeof(ix->cus[0]));
	ix->cus[ix->n_cus].die = *cudie;
	ix->n_cus++;
	return 0;
}

int vg_dwindex_new(Dwarf *dwarf, struct vg_dwindex **out,
		   struct vg_error *err)
{
	struct vg_dwindex *ix = calloc(1, sizeof(*ix));
	size_t cap_cus = 0, cap_ranges = 0;
	Dwarf_CU *cu = NULL;
	int rc = 0;

	*out = NULL;
	if (!ix)
		goto oom;
	ix->main.dwarf = dwarf;
	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie;
		int r = dwarf_get_units(dwarf, cu, &cu, &version, &unit_type,
					&cudie, &subdie);

		if (r < 0)
			ix->corrupt = true;  /* keep what parsed before */
		if (r != 0)
			break;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit &&
		    dwarf_tag(&cudie) != DW_TAG_skeleton_unit)
			continue;
		{
			size_t before = ix->n_cus;

			rc = add_cu(ix, &cudie, &cap_cus, &cap_ranges);
			if (rc)
				goto oom;
			/* The skeleton gave the ranges; the scopes are in the
			 * split unit, which libdw looks for by DW_AT_dwo_name
			 * under DW_AT_comp_dir, and in FILE.dwp. */
			if (unit_type == DW_UT_skeleton && ix->n_cus > before) {
				struct cu *c = &ix->cus[ix->n_cus - 1];

				c->skel = cudie;
				if (dwarf_tag(&subdie) == DW_TAG_compile_unit) {
					c->die = subdie;
					c->split = true;
				} else {
					ix->missing_dwo++;
				}
			}
		}
	}
	if (ix->n_ranges)  /* qsort(NULL, 0) is undefined */
		qsort(ix->ranges, ix->n_ranges, sizeof(ix->ranges[0]), cmp_range);
	ix->max_hi = malloc((ix->n_ranges ? ix->n_ranges : 1) * sizeof(uint64_t));
	if (!ix->max_hi)
		goto oom;
	vg_ranges_max_hi(ix->max_hi, ix->ranges, sizeof(*ix->ranges), ix->n_ranges);
	*out = ix;
	return 0;
oom:
	vg_dwindex_free(ix);
	return vg_error_set(err, -ENOMEM, "out of memory indexing DWARF");
}

static void cu_free(struct cu *c)
{
	free(c->scopes);
	free(c->segs);
	free(c->rows);
	free(c->row_addr);
	free(c->row_block);
	free(c->files);
	free(c->line_files);
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
	vg_bucket_free(&c->rows_fast);
	vg_bucket_free(&c->segs_fast);
}

void vg_dwindex_stop_prefetch(struct vg_dwindex *ix)
{
	if (!ix || !ix->pf_running)
		return;
	__atomic_store_n(&ix->pf_stop, 1, __ATOMIC_RELAXED);
	pthread_join(ix->pf_thread, NULL);
	ix->pf_running = false;
}

struct vg_dwindex *vg_dwindex_free(struct vg_dwindex *ix)
{
	if (!ix)
		return NULL;
	vg_dwindex_stop_prefetch(ix);
	for (size_t i = 0; i < ix->n_cus; i++)
		cu_free(&ix->cus[i]);
	free(ix->cus);
	free(ix->ranges);
	free(ix->max_hi);
	free(ix->main.names.slots);
	free(ix->pf.names.slots);
	free(ix);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* file names                                                           */

/* "dir/name" in a string the CU owns; NULL when out of memory. */
static const char *join_owned(struct cu *c, const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name);
	char *s;

	if (VG_GROW(c->owned, c->cap_owned, c->n_owned + 1))
		return NULL;
	s = malloc(ld + ln + 2);
	if (!s)
		return NULL;
	memcpy(s, dir, ld);
	s[ld] = '/';
	memcpy(s + ld + 1, name, ln + 1);
	c->owned[c->n_owned++] = s;
	return s;
}

/* File names as llvm-symbolizer and eu-addr2line print them: absolute,
 * i.e. a relative name joined to DW_AT_comp_dir.  libdw already joins the
 * include directory. */
static const char *absolute_name(struct cu *c, const char *name)
{
	const char *s;

	if (!name || name[0] == '/' || !c->comp_dir || !c->comp_dir[0])
		return name;
	s = join_owned(c, c->comp_dir, name);
	return s ? s : name;
}

/* A dwline.c file-table entry named as libdw names it: the directory
 * joined when the name is relative. */
static const char *line_file_name(struct cu *c, const struct dwline_file *f)
{
	return f->dir ? join_owned(c, f->dir, f->name) : f->name;
}

const char *dwindex_file_name(struct cu *c, uint32_t idx)
{
	const char *name;

	if (idx >= c->n_files)
		return NULL;
	if (c->files[idx])
		return c->files[idx];
	if (c->line_files)
		name = line_file_name(c, &c->line_files[idx]);
	else
		name = dwarf_filesrc(c->dw_files, idx, NULL, NULL);
	c->files[idx] = absolute_name(c, name);
	return c->files[idx];
}

/* ------------------------------------------------------------------ */
/* line rows                                                            */

struct sortable_row {
	uint64_t addr;
	struct row r;
	size_t order;
};

/* By address; at one address an end_sequence row sorts first (it closes
 * the previous sequence, the other rows open the next), then table order,
 * so the last row at an address is the one that applies, as llvm's
 * lookup takes it. */
static int cmp_row(const void *a, const void *b)
{
	const struct sortable_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->r.end_sequence != y->r.end_sequence)
		return x->r.end_sequence ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The composed name of a row's file, shared with the call-site lookups
 * through the file-table index. */
static const char *row_file(struct cu *c, Dwarf_Line *l)
{
	Dwarf_Files *files;
	size_t idx;

	if (dwarf_line_file(l, &files, &idx) == 0 && files == c->dw_files)
		return dwindex_file_name(c, (uint32_t)(idx < UINT32_MAX ? idx : UINT32_MAX));
	return absolute_name(c, dwarf_linesrc(l, NULL, NULL));
}

/* Sorts rows[0..n) by cmp_row (stable: table order breaks ties). */
static int sort_rows(struct cu *c, size_t n)
{
	struct sortable_row *tmp = malloc(n * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tmp[i] = (struct sortable_row){ c->row_addr[i], c->rows[i], i };
	qsort(tmp, n, sizeof(*tmp), cmp_row);
	for (size_t i = 0; i < n; i++) {
		c->rows[i] = tmp[i].r;
		c->row_addr[i] = tmp[i].addr;
	}
	free(tmp);
	return 0;
}

/* Whether row i (> 0) sorts after row i - 1 as cmp_row wants. */
static inline bool row_in_order(const struct cu *c, size_t i)
{
	return !(c->row_addr[i - 1] > c->row_addr[i] ||
		 (c->row_addr[i - 1] == c->row_addr[i] && c->rows[i].end_sequence &&
		  !c->rows[i - 1].end_sequence));
}

/* The n rows in rows[]/row_addr[], in the order libdw hands them, made
 * the lookup's: re-sorted when a tie at one address is ordered
 * differently, one row per address, and the block array. */
static int finish_rows(struct cu *c, size_t n, bool sorted)
{
	if (!sorted && sort_rows(c, n) < 0)
		return -ENOMEM;
	/* A lookup takes the last row at or below its address: of several
	 * rows at one address (statement and view rows: half of a -O2
	 * program's, a third of libc's) only the last is ever an answer.
	 * The others go, which halves the rows the searches and the
	 * persistent index carry. */
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && c->row_addr[i + 1] == c->row_addr[i])
			continue;
		c->row_addr[w] = c->row_addr[i];
		c->rows[w++] = c->rows[i];
	}
	c->n_rows = n = w;
	c->n_blocks = (n + ROW_BLOCK - 1) / ROW_BLOCK;
	c->row_block = malloc((c->n_blocks ? c->n_blocks : 1) * sizeof(*c->row_block));
	if (!c->row_block)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += ROW_BLOCK)
		c->row_block[i / ROW_BLOCK] = c->row_addr[i];
	return 0;
}

/* Rows from libdw, which hands them sorted by address already, so they
 * are written in place (finish_rows re-sorts only a differently ordered
 * tie). */
static int load_rows(struct cu *c, Dwarf_Die *cudie)
{
	Dwarf_Lines *lines;
	size_t n;
	bool sorted = true;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0 || n == 0)
		return 0;       /* no line table (or a corrupt one): scopes answer */
	c->rows = malloc(n * sizeof(*c->rows));
	c->row_addr = malloc(n * sizeof(*c->row_addr));
	if (!c->rows || !c->row_addr)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr = 0;
		int line = 0, col = 0;
		bool end = false;

		dwarf_lineaddr(l, &addr);
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		dwarf_lineendsequence(l, &end);
		c->row_addr[i] = addr;
		c->rows[i].file = row_file(c, l);
		c->rows[i].line = line > 0 ? (uint32_t)line : 0;
		c->rows[i].column = col > 0 && col < (1 << 30) ? (uint32_t)col : 0;
		c->rows[i].end_sequence = end;
		if (i && !row_in_order(c, i))
			sorted = false;
	}
	return finish_rows(c, n, sorted);
}

/* ------------------------------------------------------------------ */
/* line rows without libdw (dwline.c)                                   */

/* The line sections of dwarf's ELF as libdw left them (decompressed in
 * place when they were compressed; a section still compressed is not
 * used, and dwline.c then finds no line program). */
static void find_line_sections(Dwarf *dwarf, struct dwline_sections *out)
{
	Elf *elf = dwarf_getelf(dwarf);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(out, 0, sizeof(*out));
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(name, ".debug_line") && strcmp(name, ".debug_line_str") &&
		    strcmp(name, ".debug_str"))
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		if (!strcmp(name, ".debug_line")) {
			out->line = d->d_buf;
			out->line_size = d->d_size;
		} else if (!strcmp(name, ".debug_line_str")) {
			out->line_str = d->d_buf;
			out->line_str_size = d->d_size;
		} else {
			out->str = d->d_buf;
			out->str_size = d->d_size;
		}
	}
}

bool dwindex_lines_via_libdw;
size_t dwindex_lines_direct;

struct row_sink {
	struct cu *c;
	size_t n, cap;
	bool sorted;
	/* Drop a row that the next one, at the same address, outranks. */
	bool thin;
	bool thinned;            /* some row was dropped... */
	uint64_t max_thinned;    /* ...the highest address one was at */
	uint64_t max_addr;
	/* The last row's file, named. */
	const char *file;
	uint32_t file_idx;
	bool file_known;
};

/* Half of a -O2 program's rows share their address with the next row
 * and only the last one at an address is kept (finish_rows): dropping
 * such a row as it comes, when the next row sorts after it (same
 * address, not an end_sequence after a row that is not), leaves the same
 * rows to keep whatever the sorts do later, and halves the memory the
 * rows touch (their page faults were half of a cold batch's).  The one
 * exception is libdw's end_sequence mark on the last row, which can
 * re-sort the rows at the highest address: load_lines_direct decodes
 * again without thinning when a row was dropped there. */
static int sink_row(void *arg, uint64_t addr, uint32_t file, uint32_t line,
		    uint32_t column, bool end_sequence)
{
	struct row_sink *k = arg;
	struct cu *c = k->c;
	size_t i = k->n;

	if (k->thin && i && c->row_addr[i - 1] == addr &&
	    !(end_sequence && !c->rows[i - 1].end_sequence)) {
		i--;
		k->n--;
		if (!k->thinned || addr > k->max_thinned)
			k->max_thinned = addr;
		k->thinned = true;
	}
	if (i == k->cap)
		return DWLINE_USE_LIBDW;  /* cannot be: a row takes a byte */
	/* A file past the table has no name, as libdw's dwarf_linesrc;
	 * rows in a row mostly name one file. */
	if (file != k->file_idx || !k->file_known) {
		k->file = dwindex_file_name(c, file);
		k->file_idx = file;
		k->file_known = true;
	}
	c->row_addr[i] = addr;
	c->rows[i] = (struct row){ k->file, line, column, end_sequence };
	if (i && !row_in_order(c, i))
		k->sorted = false;
	if (addr > k->max_addr)
		k->max_addr = addr;
	k->n++;
	return 0;
}

/* c's file table and rows through dwline.c: DWLINE_OK, DWLINE_USE_LIBDW
 * (c untouched: libdw is asked as before), or -ENOMEM. */
static int load_lines_direct(struct cu *c, Dwarf_Die *cudie, struct builder_ctx *ctx)
{
	struct dwline_header h;
	struct row_sink k = { .c = c, .sorted = true, .thin = true };
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint8_t addr_size, offset_size;
	int rc;

	if (dwindex_lines_via_libdw || c->split || dwarf_cu_getdwarf(cudie->cu) != ctx->dwarf ||
	    !dwarf_attr(cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) != 0 ||
	    !dwarf_diecu(cudie, &(Dwarf_Die){ 0 }, &addr_size, &offset_size) || offset_size != 4)
		return DWLINE_USE_LIBDW;
	if (!ctx->line_secs_found) {
		find_line_sections(ctx->dwarf, &ctx->line_secs);
		ctx->line_secs_found = true;
	}
	rc = dwline_header_read(&ctx->line_secs, off, addr_size, c->comp_dir, &h);
	if (rc != DWLINE_OK)
		return rc;
	c->files = calloc(h.n_files, sizeof(*c->files));
	k.cap = dwline_max_rows(&h);
	c->rows = malloc((k.cap ? k.cap : 1) * sizeof(*c->rows));
	c->row_addr = malloc((k.cap ? k.cap : 1) * sizeof(*c->row_addr));
	if (!c->files || !c->rows || !c->row_addr) {
		rc = -ENOMEM;
		goto undo;
	}
	c->line_files = h.files;
	c->n_files = h.n_files;
	h.files = NULL;
	rc = dwline_run(&h, sink_row, &k);
	if (rc == DWLINE_OK && k.thinned && k.max_thinned == k.max_addr) {
		k = (struct row_sink){ .c = c, .cap = k.cap, .sorted = true };
		rc = dwline_run(&h, sink_row, &k);
	}
	if (rc != DWLINE_OK)
		goto undo;
	__atomic_fetch_add(&dwindex_lines_direct, 1, __ATOMIC_RELAXED);
	if (k.n == 0) {
		/* libdw answers "no rows" here: no line table, files kept */
		free(c->rows);
		free(c->row_addr);
		c->rows = NULL;
		c->row_addr = NULL;
		return DWLINE_OK;
	}
	/* What libdw does to its rows before handing them out: sorted by
	 * address (end_sequence first at one address, then table order),
	 * and the last one marked end_sequence. */
	if (!k.sorted && sort_rows(c, k.n) < 0) {
		rc = -ENOMEM;
		goto undo;
	}
	c->rows[k.n - 1].end_sequence = true;
	k.sorted = true;
	for (size_t i = 1; i < k.n && k.sorted; i++)
		k.sorted = row_in_order(c, i);
	return finish_rows(c, k.n, k.sorted);
undo:
	dwline_header_free(&h);
	free(c->files);
	free(c->line_files);
	free(c->rows);
	free(c->row_addr);
	c->files = NULL;
	c->line_files = NULL;
	c->n_files = 0;
	c->rows = NULL;
	c->row_addr = NULL;
	return rc;
}

/* ------------------------------------------------------------------ */
/* per-CU indexing                                                      */

/* A CU this large gets bucket tables for its searches (struct cu's
 * rows_fast, segs_fast): the generated binary's CUs (58,000 rows, 32,000
 * segments) took a cold batch 201 -> 188 ms; libc's 1,937 CUs, 95 rows
 * on average, bisect a line or two, and building theirs cost more. */
#define FAST_MIN_ROWS 2048
#define FAST_MIN_SEGS 1024

/* Index c from cudie, its DIE in ctx's own Dwarf handle.  Strings and
 * file tables then live in that handle, which outlives the index. */
static int index_cu(struct cu *c, Dwarf_Die *cudie, struct builder_ctx *ctx)
{
	Dwarf_Attribute a;
	size_t nfiles = 0;
	int rc, direct;

	if (dwarf_attr(cudie, DW_AT_comp_dir, &a) ||
	    (c->split && dwarf_attr(&c->skel, DW_AT_comp_dir, &a)))
		c->comp_dir = dwarf_formstring(&a);
	/* The line program decoded here, else (anything dwline.c does not
	 * model) through libdw, whose file table comes with its rows. */
	direct = load_lines_direct(c, cudie, ctx);
	if (direct < 0) {
		rc = direct;
		goto fail;
	}
	if (direct != DWLINE_OK &&
	    dwarf_getsrcfiles(cudie, &c->dw_files, &nfiles) == 0 && nfiles) {
		c->files = calloc(nfiles, sizeof(*c->files));
		if (!c->files) {
			/* Through fail: the CU is marked failed, not left
			 * half-built and published as indexed. */
			rc = -ENOMEM;
			goto fail;
		}
		c->n_files = nfiles;
	}
	rc = dwindex_build_scopes(c, &ctx->names, cudie, &ctx->corrupt);
	if (!rc && direct != DWLINE_OK) {
		rc = load_rows(c, cudie);
		if (rc == 0 && !c->n_rows && c->split)
			rc = load_rows(c, &c->skel);
	}
	/* The call sites' file names now, by the thread that owns this
	 * CU's handle, rather than at the lookups: once every CU is
	 * indexed, lookups run on two threads and must write nothing
	 * (vg_dwindex_complete). */
	if (!rc) {
		for (size_t i = 0; i < c->n_scopes; i++)
			if (c->scopes[i].inlined)
				(void)dwindex_file_name(c, c->scopes[i].call_file);
		c->calls_named = true;
		if (c->n_rows >= FAST_MIN_ROWS)
			(void)vg_bucket_build(&c->rows_fast, c->row_addr, sizeof(uint64_t),
					      c->n_rows, 16);
		if (c->n_segs >= FAST_MIN_SEGS)
			(void)vg_bucket_build(&c->segs_fast, c->segs, sizeof(*c->segs), c->n_segs, 8);
	}
fail:
	if (rc < 0) {
		/* Half-built tables would be read as whole ones. */
		cu_free(c);
		memset(&c->scopes, 0, sizeof(*c) - offsetof(struct cu, scopes));
		c->failed = true;
		return rc;
	}
	return 0;
}

/* Claims c if idle and indexes it with the lookups' handle: 1 when this
 * thread built it (rc in *rc), 0 when another thread has it. */
static int claim_and_index(struct vg_dwindex *ix, struct cu *c, int *rc)
{
	int idle = CU_IDLE;

	if (!__atomic_compare_exchange_n(&c->state, &idle, CU_BUILDING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	*rc = index_cu(c, &c->die, &ix->main);
	ix->main_built++;
	/* Even a partial index is final: it is not redone. */
	__atomic_store_n(&c->state, CU_DONE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&ix->n_done, 1, __ATOMIC_RELEASE);
	return 1;
}

/* The CU indexed, by this thread if nobody has claimed it, else after the
 * prefetch thread finishes it.  Meanwhile this thread indexes the CU the
 * prefetch thread would take next (the highest idle one below c: both
 * walk down, lookups in a batch go from the highest address), rather
 * than wait: a batch's answering thread then follows right behind the
 * prefetch thread and the two finish together.  Walking towards each
 * other, the prefetch thread ran out of CUs while the answering thread
 * still had the answers of half of them to give alone (a cold batch of
 * the generated binary: 1,086 samples on the answering thread, 531 on
 * the other). */
static int ensure_indexed(struct vg_dwindex *ix, struct cu *c)
{
	for (;;) {
		int st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		int rc = 0;
		size_t i = (size_t)(c - ix->cus);

		if (st == CU_DONE)
			return 0;
		if (st == CU_IDLE && claim_and_index(ix, c, &rc))
			return rc;
		if (st != CU_BUILDING)
			continue;
		/* Help: a CU built here keeps its own failure for its own
		 * lookups (c->failed). */
		while (i-- > 0 && __atomic_load_n(&ix->cus[i].state, __ATOMIC_ACQUIRE) != CU_IDLE)
			;
		if (i < ix->n_cus && claim_and_index(ix, &ix->cus[i], &rc))
			continue;
		sched_yield();
	}
}

static void *prefetch_main(void *arg)
{
	struct vg_dwindex *ix = arg;

	/* From the last CU down, as a batch's lookups go (highest address
	 * first): ensure_indexed. */
	for (size_t i = ix->n_cus; i-- > 0;) {
		struct cu *c = &ix->cus[i];
		int idle = CU_IDLE;
		Dwarf_Die die;

		if (__atomic_load_n(&ix->pf_stop, __ATOMIC_RELAXED))
			break;
		if (!__atomic_compare_exchange_n(&c->state, &idle, CU_BUILDING, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		/* The same unit in this thread's handle; if it is not there
		 * (it should be: same file), leave the CU to the lookups.  A
		 * split unit's offset is in its .dwo: always the lookups'. */
		if (c->split || !dwarf_offdie(ix->pf.dwarf, dwarf_dieoffset(&c->die), &die) ||
		    dwarf_tag(&die) != DW_TAG_compile_unit) {
			__atomic_store_n(&c->state, CU_IDLE, __ATOMIC_RELEASE);
			continue;
		}
		index_cu(c, &die, &ix->pf);
		__atomic_store_n(&c->state, CU_DONE, __ATOMIC_RELEASE);
		__atomic_fetch_add(&ix->n_done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int vg_dwindex_prefetch(struct vg_dwindex *ix, Dwarf *dwarf)
{
	if (ix->pf_running || !dwarf)
		return -EINVAL;
	ix->pf.dwarf = dwarf;
	/* libelf calls on the shared ELF handle stay in this thread: the
	 * thread's own dwline sections are found here. */
	find_line_sections(dwarf, &ix->pf.line_secs);
	ix->pf.line_secs_found = true;
	if (pthread_create(&ix->pf_thread, NULL, prefetch_main, ix) != 0)
		return -EAGAIN;
	ix->pf_running = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* lookup                                                               */

/* The CU whose range covers addr (CUs may overlap: the innermost). */
static struct cu *find_cu(struct vg_dwindex *ix, uint64_t addr)
{
	size_t i = vg_ranges_find(ix->ranges, sizeof(*ix->ranges), ix->n_ranges, ix->max_hi, addr);

	return i == SIZE_MAX ? NULL : &ix->cus[ix->ranges[i].cu];
}

/* How many rows start at or below addr, searched from the 1-in-16
 * block index (a CU too small for bucket tables). */
static size_t rows_le_by_block(const struct cu *c, uint64_t addr)
{
	/* The block whose first row is the last at or below addr... */
	size_t lo = vg_sorted_count_le(c->row_block, sizeof(uint64_t), c->n_blocks, addr), hi;

	if (lo == 0)
		return 0;
	/* ...then the last row at or below addr inside it (rows at the
	 * same address may straddle blocks: the search stays exact since
	 * it looks for the last such row up to the next block start). */
	hi = lo * ROW_BLOCK < c->n_rows ? lo * ROW_BLOCK : c->n_rows;
	return vg_sorted_count_le_in(c->row_addr, sizeof(uint64_t), (lo - 1) * ROW_BLOCK, hi, addr);
}

static const struct row *find_row(const struct cu *c, uint64_t addr)
{
	size_t lo = c->rows_fast.first
		? vg_bucket_count_le(&c->rows_fast, c->row_addr, sizeof(uint64_t), c->n_rows, addr)
		: rows_le_by_block(c, addr);

	if (lo == 0 || c->rows[lo - 1].end_sequence)
		return NULL;
	return &c->rows[lo - 1];
}

static uint32_t find_scope(const struct cu *c, uint64_t addr)
{
	/* lo is the first field (segs may be NULL when empty). */
	size_t lo = vg_bucket_count_le(&c->segs_fast, c->segs, sizeof(*c->segs), c->n_segs, addr);

	_Static_assert(offsetof(struct seg, lo) == 0, "lo first");
	return lo ? c->segs[lo - 1].scope : NO_SCOPE;
}

void vg_dwindex_prefetch_lookup(struct vg_dwindex *ix, uint64_t addr)
{
	struct cu *c = find_cu(ix, addr);
	size_t lo, hi;

	/* Only a CU indexed (its tables and buckets published). */
	if (!c || __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CU_DONE || c->failed)
		return;
	vg_bucket_span(&c->rows_fast, c->n_rows, addr, &lo, &hi);
	if (lo < hi && c->rows_fast.first) {
		vg_prefetch_span(c->row_addr + lo, (hi - lo) * sizeof(uint64_t));
		vg_prefetch_span(c->rows + lo, (hi - lo) * sizeof(struct row));
	}
	vg_bucket_span(&c->segs_fast, c->n_segs, addr, &lo, &hi);
	if (lo < hi && c->segs_fast.first)
		vg_prefetch_span(c->segs + lo, (hi - lo) * sizeof(struct seg));
}

int vg_dwindex_lookup(struct vg_dwindex *ix, uint64_t addr,
		      struct vg_dw_result *res)
{
	struct cu *c = find_cu(ix, addr);
	const struct row *row;
	uint32_t s;

	dw_result_clear(res);
	if (!c)
		return -ENOENT;
	if (ensure_indexed(ix, c) < 0 || c->failed)
		return -ENOMEM;
	row = find_row(c, addr);
	if (row) {
		res->file = row->file;
		res->line = row->line;
		res->column = row->column;
		res->has_line = true;
	}
	s = find_scope(c, addr);
	/* Innermost first; each inlined scope's call site is the location
	 * of the frame that encloses it.  The chain ends at the first
	 * concrete subprogram, as llvm-symbolizer's does. */
	for (uint32_t hops = 0; s != NO_SCOPE && hops < c->n_scopes; hops++) {
		const struct scope *sc = &c->scopes[s];
		struct vg_dw_frame *up;

		if (!dw_result_push(res, sc->name, sc->linkage, sc->inlined, sc->entry))
			break;
		if (!sc->inlined)
			break;
		up = dw_result_next(res);
		if (up) {
			/* Composed at indexing (calls_named): read only. */
			up->file = !c->calls_named ? dwindex_file_name(c, sc->call_file)
				 : sc->call_file < c->n_files ? c->files[sc->call_file] : NULL;
			up->line = sc->call_line;
			up->column = sc->call_column;
		}
		s = sc->parent;
	}
	return 0;
}

int dwindex_build_all(struct vg_dwindex *ix)
{
	int rc = 0;

	/* From the start: a prefetch thread goes from the end, so the two
	 * meet in the middle rather than wait for each other. */
	for (size_t i = 0; i < ix->n_cus; i++) {
		struct cu *c = &ix->cus[i];

		if (ensure_indexed(ix, c) < 0 || c->failed)
			rc = -ENOMEM;
	}
	return rc;
}

struct cu *dwindex_cu(struct vg_dwindex *ix, size_t i)
{
	return i < ix->n_cus ? &ix->cus[i] : NULL;
}

const struct cu_range *dwindex_ranges(const struct vg_dwindex *ix, size_t *n)
{
	*n = ix->n_ranges;
	return ix->ranges;
}

size_t vg_dwindex_cus(const struct vg_dwindex *ix, size_t *built_by_lookups)
{
	if (built_by_lookups)
		*built_by_lookups = ix->main_built;
	return ix->n_cus;
}

bool vg_dwindex_complete(const struct vg_dwindex *ix)
{
	return __atomic_load_n(&ix->n_done, __ATOMIC_ACQUIRE) == ix->n_cus;
}

bool vg_dwindex_corrupt(const struct vg_dwindex *ix)
{
	return ix->corrupt || __atomic_load_n(&ix->main.corrupt, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&ix->pf.corrupt, __ATOMIC_RELAXED);
}

size_t vg_dwindex_missing_dwo(const struct vg_dwindex *ix)
{
	return ix ? ix->missing_dwo : 0;
}
