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
 * Segments come from "painting" the scope ranges outer to inner: sorted by
 * start, a stack of open ranges says which scope resumes when an inner one
 * ends.  This is what dwarf_getscopes computes per call, done once. */
#include "sym/dwindex.h"
#include "util/vec.h"

#include <dwarf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NO_SCOPE UINT32_MAX

/* A CU is indexed once, by whichever thread claims it first: the lookup
 * that needs it, or the prefetch thread (vg_dwindex_prefetch). */
enum { CU_IDLE, CU_BUILDING, CU_DONE };
#define ROW_BLOCK 16
/* Deeper DIE nesting than this is not real code (hostile or corrupt). */
#define MAX_DIE_DEPTH 256

struct scope {
	const char *name;
	uint64_t entry;
	uint32_t parent;
	uint32_t call_file;     /* index into the CU's file table */
	uint32_t call_line;
	uint32_t call_column;
	bool linkage;
	bool inlined;
};

struct seg {
	uint64_t lo;
	uint32_t scope;         /* NO_SCOPE: a gap inside the CU */
};

/* The addresses of the rows are a separate array: the binary search then
 * touches 8 bytes per step, not 24 (it was half of the lookup's time on
 * libc, all of it cache misses). */
struct row {
	const char *file;
	uint32_t line;
	uint32_t column : 31;
	uint32_t end_sequence : 1;
};

struct cu {
	Dwarf_Die die;
	/* Split DWARF (-gsplit-dwarf): die is the split unit of the .dwo or
	 * .dwp libdw found; skel the skeleton unit in the main file, which
	 * holds the ranges, DW_AT_comp_dir and the line table. */
	Dwarf_Die skel;
	bool split;
	int state;              /* CU_IDLE, CU_BUILDING, CU_DONE (atomic) */
	/* Indexing ran out of memory: the tables are empty and every lookup
	 * in the CU fails with -ENOMEM rather than answer short. */
	bool failed;
	struct scope *scopes;
	size_t n_scopes;
	struct seg *segs;
	size_t n_segs;
	uint64_t *row_addr;
	/* row_addr of every ROW_BLOCK-th row: a search array 16 times
	 * smaller, which stays in cache, narrows the range first. */
	uint64_t *row_block;
	size_t n_blocks;
	struct row *rows;
	size_t n_rows;
	/* Absolute file names, by file-table index (composed lazily). */
	const char **files;
	size_t n_files;
	Dwarf_Files *dw_files;
	const char *comp_dir;
	/* Composed names this CU allocated (freed with the index). */
	char **owned;
	size_t n_owned, cap_owned;
};

struct cu_range {
	uint64_t lo, hi;
	uint32_t cu;
};

/* A name cache by DIE: inlined copies of one function share the abstract
 * origin, so its names are looked up once.  The key is the DIE's address
 * in its mapped section, not its offset: with dwz, an origin may sit in
 * the alternate file, whose offsets overlap the main file's. */
struct origin_name {
	uintptr_t off;          /* the DIE's address; 0: empty slot */
	const char *linkage, *name;
};

struct names {
	struct origin_name *slots;
	size_t n, cap;
};

/* What one indexing thread owns: its libdw handle (libdw is not
 * thread-safe per handle), its name cache, what it found corrupt. */
struct builder_ctx {
	Dwarf *dwarf;
	struct names names;
	bool corrupt;
};

struct vg_dwindex {
	struct builder_ctx main;   /* lookups: the Dwarf the index was made from */
	struct builder_ctx pf;     /* the prefetch thread's */
	pthread_t pf_thread;
	bool pf_running;
	Dwarf *(*pf_open)(void *arg);  /* called by the thread for its handle */
	size_t main_built;         /* CUs indexed by lookups */
	void *pf_open_arg;
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
	for (size_t i = 0; i < ix->n_ranges; i++) {
		uint64_t prev = i ? ix->max_hi[i - 1] : 0;

		ix->max_hi[i] = ix->ranges[i].hi > prev ? ix->ranges[i].hi : prev;
	}
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
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
}

struct vg_dwindex *vg_dwindex_free(struct vg_dwindex *ix)
{
	if (!ix)
		return NULL;
	if (ix->pf_running) {
		__atomic_store_n(&ix->pf_stop, 1, __ATOMIC_RELAXED);
		pthread_join(ix->pf_thread, NULL);
	}
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

/* File names as llvm-symbolizer and eu-addr2line print them: absolute,
 * i.e. a relative name joined to DW_AT_comp_dir.  libdw already joins the
 * include directory. */
static const char *absolute_name(struct cu *c, const char *name)
{
	size_t ld, ln;
	char *s;

	if (!name || name[0] == '/' || !c->comp_dir || !c->comp_dir[0])
		return name;
	ld = strlen(c->comp_dir);
	ln = strlen(name);
	if (VG_GROW(c->owned, c->cap_owned, c->n_owned + 1))
		return name;
	s = malloc(ld + ln + 2);
	if (!s)
		return name;
	memcpy(s, c->comp_dir, ld);
	s[ld] = '/';
	memcpy(s + ld + 1, name, ln + 1);
	c->owned[c->n_owned++] = s;
	return s;
}

static const char *file_name(struct cu *c, uint32_t idx)
{
	const char *name;

	if (idx >= c->n_files)
		return NULL;
	if (c->files[idx])
		return c->files[idx];
	name = dwarf_filesrc(c->dw_files, idx, NULL, NULL);
	c->files[idx] = absolute_name(c, name);
	return c->files[idx];
}

/* ------------------------------------------------------------------ */
/* scopes -> segments                                                   */

struct range {
	uint64_t lo, hi;
	uint32_t scope;
};

struct builder {
	struct cu *cu;
	struct names *names;
	size_t cap_scopes;
	struct range *ranges;
	size_t n_ranges, cap_ranges;
};

static bool is_scope_tag(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* A class, struct or union defined inside a function: gcc puts the
 * concrete definitions of its member functions (a lambda's operator())
 * inside it.  At namespace level a type holds only declarations, whose
 * definitions sit at namespace level, so those types are skipped. */
static bool is_local_type(int tag, uint32_t enclosing_scope)
{
	return enclosing_scope != NO_SCOPE &&
	       (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		tag == DW_TAG_union_type);
}

/* Tags whose children may hold code scopes. */
static bool may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_entry_point:
		return true;
	default:
		return false;
	}
}

/* The attributes the index reads, gathered in one pass over the DIE:
 * one dwarf_getattrs instead of a dwarf_attr search per attribute (the
 * walk was mostly attribute scans; this halves the index build). */
enum {
	A_LOW = 1u << 0, A_HIGH = 1u << 1, A_RANGES = 1u << 2, A_ENTRY = 1u << 3,
	A_CALL_FILE = 1u << 4, A_CALL_LINE = 1u << 5, A_CALL_COLUMN = 1u << 6,
	A_NAME = 1u << 7, A_LINKAGE = 1u << 8, A_ORIGIN = 1u << 9,
};

struct die_attrs {
	unsigned have;
	Dwarf_Attribute low, high, entry, call_file, call_line, call_column;
	Dwarf_Attribute name, linkage, origin;
};

static int collect_attr(Dwarf_Attribute *a, void *arg)
{
	struct die_attrs *d = arg;

	switch (dwarf_whatattr(a)) {
	case DW_AT_low_pc: d->low = *a; d->have |= A_LOW; break;
	case DW_AT_high_pc: d->high = *a; d->have |= A_HIGH; break;
	case DW_AT_ranges: d->have |= A_RANGES; break;
	case DW_AT_entry_pc: d->entry = *a; d->have |= A_ENTRY; break;
	case DW_AT_call_file: d->call_file = *a; d->have |= A_CALL_FILE; break;
	case DW_AT_call_line: d->call_line = *a; d->have |= A_CALL_LINE; break;
	case DW_AT_call_column: d->call_column = *a; d->have |= A_CALL_COLUMN; break;
	case DW_AT_name: d->name = *a; d->have |= A_NAME; break;
	case DW_AT_linkage_name:
	case DW_AT_MIPS_linkage_name:
		d->linkage = *a;
		d->have |= A_LINKAGE;
		break;
	case DW_AT_abstract_origin:
	case DW_AT_specification:
		/* An abstract origin wins over a specification: it is the
		 * more specific DIE (itself possibly a specification). */
		if (!(d->have & A_ORIGIN) || dwarf_whatattr(a) == DW_AT_abstract_origin)
			d->origin = *a;
		d->have |= A_ORIGIN;
		break;
	default:
		break;
	}
	return DWARF_CB_OK;
}

static uint32_t attr_u32(Dwarf_Attribute *a)
{
	Dwarf_Word w;

	if (dwarf_formudata(a, &w) != 0)
		return 0;
	return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

static struct origin_name *names_slot(struct names *t, uintptr_t off)
{
	size_t h;

	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct origin_name *ns = calloc(cap, sizeof(*ns));

		if (!ns)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slots[i].off)
				continue;
			for (h = (t->slots[i].off * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
			     ns[h].off; h = (h + 1) & (cap - 1))
				;
			ns[h] = t->slots[i];
		}
		free(t->slots);
		t->slots = ns;
		t->cap = cap;
	}
	for (h = (off * 0x9e3779b97f4a7c15ull) >> 20 & (t->cap - 1);
	     t->slots[h].off && t->slots[h].off != off; h = (h + 1) & (t->cap - 1))
		;
	return &t->slots[h];
}

/* Linkage name and name of die: its own, else its origin's (followed up
 * to a few levels: origin -> specification -> declaration). */
static void resolve_names(struct names *t, struct die_attrs *d, unsigned depth,
			  const char **linkage, const char **name)
{
	Dwarf_Die odie;
	struct origin_name *slot;
	struct die_attrs od = { 0 };
	const char *ol = NULL, *on = NULL;

	*linkage = d->have & A_LINKAGE ? dwarf_formstring(&d->linkage) : NULL;
	*name = d->have & A_NAME ? dwarf_formstring(&d->name) : NULL;
	if ((*linkage && *name) || !(d->have & A_ORIGIN) || depth > 4 ||
	    !dwarf_formref_die(&d->origin, &odie))
		return;
	slot = names_slot(t, (uintptr_t)odie.addr);
	if (slot && slot->off) {
		ol = slot->linkage;
		on = slot->name;
	} else {
		dwarf_getattrs(&odie, collect_attr, &od, 0);
		resolve_names(t, &od, depth + 1, &ol, &on);
		if (slot) {
			/* Looked up again: the recursion may have grown it. */
			slot = names_slot(t, (uintptr_t)odie.addr);
			if (slot && !slot->off) {
				*slot = (struct origin_name){ (uintptr_t)odie.addr, ol, on };
				t->n++;
			}
		}
	}
	if (!*linkage)
		*linkage = ol;
	if (!*name)
		*name = on;
}

static bool form_is_address(Dwarf_Attribute *a)
{
	unsigned f = dwarf_whatform(a);

	return f == DW_FORM_addr || f == DW_FORM_addrx || f == DW_FORM_GNU_addr_index ||
	       f == DW_FORM_addrx1 || f == DW_FORM_addrx2 || f == DW_FORM_addrx3 ||
	       f == DW_FORM_addrx4;
}

static int add_range(struct builder *b, uint64_t lo, uint64_t hi, uint32_t idx)
{
	if (hi <= lo)
		return 0;
	if (VG_GROW(b->ranges, b->cap_ranges, b->n_ranges + 1))
		return -ENOMEM;
	b->ranges[b->n_ranges++] = (struct range){ lo, hi, idx };
	return 0;
}

/* Records the scope and its ranges; *out = NO_SCOPE when it has none (an
 * abstract instance or a declaration, whose subtree holds no code either). */
static int add_scope(struct builder *b, Dwarf_Die *die, int tag,
		     uint32_t parent, uint32_t *out)
{
	struct cu *c = b->cu;
	struct die_attrs d = { 0 };
	uint32_t idx = (uint32_t)c->n_scopes;
	struct scope *s;
	size_t first = b->n_ranges;
	const char *linkage, *name;
	Dwarf_Addr lo = 0, hi = 0;
	Dwarf_Word len;
	int rc = 0;

	dwarf_getattrs(die, collect_attr, &d, 0);
	if (d.have & A_RANGES) {
		Dwarf_Addr base;
		ptrdiff_t off = 0;

		while (!rc && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
			rc = add_range(b, lo, hi, idx);
	} else if ((d.have & (A_LOW | A_HIGH)) == (A_LOW | A_HIGH) &&
		   dwarf_formaddr(&d.low, &lo) == 0) {
		if (form_is_address(&d.high))
			rc = dwarf_formaddr(&d.high, &hi) == 0 ? add_range(b, lo, hi, idx) : 0;
		else if (dwarf_formudata(&d.high, &len) == 0 && len <= UINT64_MAX - lo)
			rc = add_range(b, lo, lo + len, idx);
	}
	if (rc)
		return rc;
	if (b->n_ranges == first) {
		*out = NO_SCOPE;
		return 0;
	}
	if (VG_GROW(c->scopes, b->cap_scopes, c->n_scopes + 1))
		return -ENOMEM;
	s = &c->scopes[c->n_scopes++];
	memset(s, 0, sizeof(*s));
	resolve_names(b->names, &d, 0, &linkage, &name);
	s->linkage = linkage != NULL;
	s->name = linkage ? linkage : name;
	s->parent = parent;
	s->inlined = tag == DW_TAG_inlined_subroutine;
	s->entry = b->ranges[first].lo;
	if (d.have & A_ENTRY) {
		Dwarf_Addr e;
		Dwarf_Word off;

		/* DWARF 5 allows an offset from low_pc. */
		if (form_is_address(&d.entry) ? dwarf_formaddr(&d.entry, &e) == 0
		    : (dwarf_formudata(&d.entry, &off) == 0 && (e = lo + off, true)))
			s->entry = e;
	}
	if (s->inlined) {
		s->call_file = d.have & A_CALL_FILE ? attr_u32(&d.call_file) : 0;
		s->call_line = d.have & A_CALL_LINE ? attr_u32(&d.call_line) : 0;
		s->call_column = d.have & A_CALL_COLUMN ? attr_u32(&d.call_column) : 0;
	}
	*out = idx;
	return 0;
}

/* Depth-first walk with an explicit stack: hostile DWARF cannot overflow
 * the C stack. */
static int walk_scopes(struct builder *b, Dwarf_Die *cudie, bool *corrupt)
{
	struct frame {
		Dwarf_Die die;
		uint32_t scope;  /* innermost enclosing scope */
	} stack[MAX_DIE_DEPTH];
	size_t depth = 0;
	Dwarf_Die child;

	int r = dwarf_child(cudie, &child);

	if (r != 0) {
		*corrupt |= r < 0;
		return 0;
	}
	stack[0] = (struct frame){ child, NO_SCOPE };
	depth = 1;
	while (depth) {
		struct frame *f = &stack[depth - 1];
		Dwarf_Die *die = &f->die;
		int tag = dwarf_tag(die);
		uint32_t inner = f->scope;
		bool descend = may_hold_code(tag) || is_local_type(tag, f->scope);
		Dwarf_Die kid;

		if (is_scope_tag(tag)) {
			uint32_t idx;
			int rc = add_scope(b, die, tag, f->scope, &idx);

			if (rc)
				return rc;
			if (idx == NO_SCOPE)
				descend = false;
			else
				inner = idx;
		}
		if (descend && depth == MAX_DIE_DEPTH)
			*corrupt = true;
		if (descend && depth < MAX_DIE_DEPTH && dwarf_haschildren(die) &&
		    (r = dwarf_child(die, &kid)) == 0) {
			/* Visit the children, then come back for the
			 * siblings of this DIE: keep it, push the child. */
			stack[depth] = (struct frame){ kid, inner };
			depth++;
			continue;
		}
		/* Next sibling, unwinding finished levels. */
		while (depth) {
			f = &stack[depth - 1];
			r = dwarf_siblingof(&f->die, &f->die);
			if (r == 0)
				break;
			*corrupt |= r < 0;
			depth--;
		}
	}
	return 0;
}

/* Ranges by start address, stably: the walk recorded every scope before
 * the scopes inside it, so at one start address the outer scope stays
 * first, which is the order painting needs.  An LSD radix sort, 11 bits a
 * pass, skipping the passes whose digit never varies (the high bits of
 * code addresses): linear, where qsort was a fifth of the index build. */
#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
static int sort_ranges(struct builder *b)
{
	size_t n = b->n_ranges;
	struct range *tmp, *src = b->ranges, *dst;
	uint64_t all_or = 0, all_and = UINT64_MAX;

	if (n < 2)
		return 0;
	for (size_t i = 1; i < n && src[i - 1].lo <= src[i].lo; i++)
		if (i == n - 1)
			return 0;  /* already sorted: the common case */
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (size_t i = 0; i < n; i++) {
		all_or |= src[i].lo;
		all_and &= src[i].lo;
	}
	for (unsigned shift = 0; shift < 64; shift += RADIX_BITS) {
		size_t count[RADIX_SIZE + 1];
		const uint64_t mask = RADIX_SIZE - 1;
		struct range *t;

		if ((((all_or ^ all_and) >> shift) & mask) == 0)
			continue;  /* this digit is the same everywhere */
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[((src[i].lo >> shift) & mask) + 1]++;
		for (size_t d = 1; d < RADIX_SIZE; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & mask]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != b->ranges)
		memcpy(b->ranges, src, n * sizeof(*src));
	free(tmp);
	return 0;
}

struct painter {
	struct seg *segs;
	size_t n, cap;
};

static int emit(struct painter *p, uint64_t lo, uint32_t scope)
{
	if (p->n && p->segs[p->n - 1].lo == lo) {
		p->segs[p->n - 1].scope = scope;
		/* Re-merge with the segment before, now that this one
		 * names the same scope. */
		if (p->n > 1 && p->segs[p->n - 2].scope == scope)
			p->n--;
		return 0;
	}
	if (p->n && p->segs[p->n - 1].scope == scope)
		return 0;
	if (VG_GROW(p->segs, p->cap, p->n + 1))
		return -ENOMEM;
	p->segs[p->n++] = (struct seg){ lo, scope };
	return 0;
}

static int paint(struct builder *b)
{
	struct painter p = { 0 };
	struct { uint64_t hi; uint32_t scope; } *open = NULL;
	size_t n_open = 0, cap_open = 0;
	int rc = 0;

	rc = sort_ranges(b);
	for (size_t i = 0; i <= b->n_ranges && !rc; i++) {
		uint64_t at = i < b->n_ranges ? b->ranges[i].lo : UINT64_MAX;

		/* Close what ends at or before the next start; the scope
		 * below resumes where each one ends. */
		while (n_open && open[n_open - 1].hi <= at && !rc) {
			uint64_t end = open[--n_open].hi;

			while (n_open && open[n_open - 1].hi <= end)
				n_open--;
			rc = emit(&p, end, n_open ? open[n_open - 1].scope : NO_SCOPE);
		}
		if (i == b->n_ranges || rc)
			break;
		rc = emit(&p, b->ranges[i].lo, b->ranges[i].scope);
		if (!rc && VG_GROW(open, cap_open, n_open + 1))
			rc = -ENOMEM;
		if (!rc) {
			open[n_open].hi = b->ranges[i].hi;
			open[n_open].scope = b->ranges[i].scope;
			n_open++;
		}
	}
	free(open);
	if (rc) {
		free(p.segs);
		return rc;
	}
	b->cu->segs = p.segs;
	b->cu->n_segs = p.n;
	return 0;
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
		return file_name(c, (uint32_t)(idx < UINT32_MAX ? idx : UINT32_MAX));
	return absolute_name(c, dwarf_linesrc(l, NULL, NULL));
}

/* Rows into rows[]/row_addr[] in the order cmp_row defines.  libdw hands
 * them sorted by address already, so they are written in place and only
 * re-sorted (through a temporary with the original order) when a tie at
 * one address is ordered differently. */
static int load_rows(struct cu *c, Dwarf_Die *cudie)
{
	Dwarf_Lines *lines;
	size_t n;
	bool sorted = true;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0 || n == 0)
		return 0;       /* no line table (or a corrupt one): scopes answer */
	c->rows = malloc(n * sizeof(*c->rows));
	c->row_addr = malloc(n * sizeof(*c->row_addr));
	c->n_blocks = (n + ROW_BLOCK - 1) / ROW_BLOCK;
	c->row_block = malloc(c->n_blocks * sizeof(*c->row_block));
	if (!c->rows || !c->row_addr || !c->row_block)
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
		if (i && (c->row_addr[i - 1] > addr ||
			  (c->row_addr[i - 1] == addr && end && !c->rows[i - 1].end_sequence)))
			sorted = false;
	}
	c->n_rows = n;
	if (!sorted) {
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
	}
	for (size_t i = 0; i < n; i += ROW_BLOCK)
		c->row_block[i / ROW_BLOCK] = c->row_addr[i];
	return 0;
}

/* ------------------------------------------------------------------ */
/* per-CU indexing                                                      */

/* Index c from cudie, its DIE in ctx's own Dwarf handle.  Strings and
 * file tables then live in that handle, which outlives the index. */
static int index_cu(struct cu *c, Dwarf_Die *cudie, struct builder_ctx *ctx)
{
	struct builder b = { .cu = c, .names = &ctx->names };
	Dwarf_Attribute a;
	size_t nfiles = 0;
	bool corrupt = false;
	int rc;

	if (dwarf_attr(cudie, DW_AT_comp_dir, &a) ||
	    (c->split && dwarf_attr(&c->skel, DW_AT_comp_dir, &a)))
		c->comp_dir = dwarf_formstring(&a);
	if (dwarf_getsrcfiles(cudie, &c->dw_files, &nfiles) == 0 && nfiles) {
		c->files = calloc(nfiles, sizeof(*c->files));
		if (!c->files)
			return -ENOMEM;
		c->n_files = nfiles;
	}
	rc = walk_scopes(&b, cudie, &corrupt);
	if (corrupt)  /* read by lookups while the prefetch thread runs */
		__atomic_store_n(&ctx->corrupt, true, __ATOMIC_RELAXED);
	if (!rc)
		rc = paint(&b);
	free(b.ranges);
	if (!rc) {
		rc = load_rows(c, cudie);
		if (rc == 0 && !c->n_rows && c->split)
			rc = load_rows(c, &c->skel);
	}
	if (rc < 0) {
		/* Half-built tables would be read as whole ones. */
		cu_free(c);
		memset(&c->scopes, 0, sizeof(*c) - offsetof(struct cu, scopes));
		c->failed = true;
		return rc;
	}
	return 0;
}

/* The CU indexed, by this thread if nobody has claimed it, else after the
 * prefetch thread finishes it (a few milliseconds at most). */
static int ensure_indexed(struct vg_dwindex *ix, struct cu *c)
{
	for (;;) {
		int st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		int idle = CU_IDLE;

		if (st == CU_DONE)
			return 0;
		if (st == CU_IDLE &&
		    __atomic_compare_exchange_n(&c->state, &idle, CU_BUILDING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			int rc = index_cu(c, &c->die, &ix->main);

			ix->main_built++;
			/* Even a partial index is final: it is not redone. */
			__atomic_store_n(&c->state, CU_DONE, __ATOMIC_RELEASE);
			return rc;
		}
		sched_yield();
	}
}

static void *prefetch_main(void *arg)
{
	struct vg_dwindex *ix = arg;

	/* Opening the handle (decompressing sections) happens here, not in
	 * the caller: the first answer does not wait for it. */
	ix->pf.dwarf = ix->pf_open(ix->pf_open_arg);
	if (!ix->pf.dwarf)
		return NULL;
	for (size_t i = 0; i < ix->n_cus; i++) {
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
	}
	return NULL;
}

int vg_dwindex_prefetch(struct vg_dwindex *ix, Dwarf *(*open)(void *arg), void *arg)
{
	if (ix->pf_running || !open)
		return -EINVAL;
	ix->pf_open = open;
	ix->pf_open_arg = arg;
	if (pthread_create(&ix->pf_thread, NULL, prefetch_main, ix) != 0)
		return -EAGAIN;
	ix->pf_running = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* lookup                                                               */

static struct cu *find_cu(struct vg_dwindex *ix, uint64_t addr)
{
	size_t lo = 0, hi = ix->n_ranges;

	/* Last range starting at or below addr... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ...or an earlier one that still covers it (overlapping CUs). */
	for (size_t i = lo; i-- > 0 && ix->max_hi[i] > addr;)
		if (addr < ix->ranges[i].hi)
			return &ix->cus[ix->ranges[i].cu];
	return NULL;
}

static const struct row *find_row(const struct cu *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n_blocks;

	/* The block whose first row is the last at or below addr... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->row_block[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* ...then the last row at or below addr inside it (rows at the
	 * same address may straddle blocks: the search stays exact since
	 * it looks for the last such row up to the next block start). */
	hi = lo * ROW_BLOCK < c->n_rows ? lo * ROW_BLOCK : c->n_rows;
	lo = (lo - 1) * ROW_BLOCK;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->row_addr[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || c->rows[lo - 1].end_sequence)
		return NULL;
	return &c->rows[lo - 1];
}

static uint32_t find_scope(const struct cu *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n_segs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->segs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c->segs[lo - 1].scope : NO_SCOPE;
}

int vg_dwindex_lookup(struct vg_dwindex *ix, uint64_t addr,
		      struct vg_dw_result *res)
{
	struct cu *c = find_cu(ix, addr);
	const struct row *row;
	uint32_t s;

	res->n_frames = 0;
	res->truncated = false;
	res->file = NULL;
	res->line = res->column = 0;
	res->has_line = false;
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
		struct vg_dw_frame *f;

		if (res->n_frames == VG_DW_MAX_FRAMES) {
			res->truncated = true;
			break;
		}
		f = &res->frames[res->n_frames];
		f->name = sc->name;
		f->name_is_linkage = sc->linkage;
		f->inlined = sc->inlined;
		f->entry = sc->entry;
		if (res->n_frames == 0) {
			f->file = res->file;
			f->line = res->line;
			f->column = res->column;
		}
		res->n_frames++;
		if (!sc->inlined)
			break;
		if (res->n_frames < VG_DW_MAX_FRAMES) {
			struct vg_dw_frame *up = &res->frames[res->n_frames];

			up->file = file_name(c, sc->call_file);
			up->line = sc->call_line;
			up->column = sc->call_column;
		}
		s = sc->parent;
	}
	return 0;
}

size_t vg_dwindex_cus(const struct vg_dwindex *ix, size_t *built_by_lookups)
{
	if (built_by_lookups)
		*built_by_lookups = ix->main_built;
	return ix->n_cus;
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
