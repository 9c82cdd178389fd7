/* dwscope.c - one CU's scope segments for the DWARF index (dwindex.c):
 * every subprogram and inlined subroutine with its ranges, names and call
 * site, then the ranges "painted" outer to inner into disjoint segments
 * that name the innermost scope.  Sorted by start, a stack of open ranges
 * says which scope resumes when an inner one ends: what dwarf_getscopes
 * computes per call, done once.  Never prints. */
#include "sym/dwindex_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

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

int dwindex_build_scopes(struct cu *c, struct names *names, Dwarf_Die *cudie,
			 bool *corrupt)
{
	struct builder b = { .cu = c, .names = names };
	bool bad = false;
	int rc;

	rc = walk_scopes(&b, cudie, &bad);
	if (bad)  /* read by lookups while the prefetch thread runs */
		__atomic_store_n(corrupt, true, __ATOMIC_RELAXED);
	if (!rc)
		rc = paint(&b);
	free(b.ranges);
	return rc;
}
