/* dwvarsym.c - the CU that defines a variable, found through its ELF
 * symbol, so that a name lookup reads one CU's top level and not every
 * CU's (issue 18: the cost of `vigil print g_x` grew with the program).
 *
 * name -> the one symbol of that name (a linear scan of .symtab, no sort:
 * one lookup does not pay for an index) -> its address -> the CU:
 *   - a local symbol: the STT_FILE before it names its source file, the
 *     CUs of that base name;
 *   - a global: the linker lays out each output section's input pieces in
 *     input order, the order of the CUs in .debug_info, so the CU is found
 *     by a binary search over the first variable address each probed CU
 *     holds in that section (log2 of the CUs' top levels read, not all).
 * Not .debug_aranges (dwarf_addrdie): GCC lists only code there, clang
 * writes none unless asked, and libdw sorts the whole table first.
 * Every answer is a guess the caller verifies (the CU must define the name
 * at that address); a wrong guess costs time, never a different answer.
 *
 * The answer is only used when the symbol table proves there is no other
 * definition: exactly one object symbol carries the name (C), or
 * demangles to it (C++, anonymous namespaces transparent); none is a
 * renamed copy ("g_x.lto_priv.0", "g_x.0"); the symbol is not weak or
 * GNU-unique (a C++ inline variable is defined in every CU that uses it);
 * not thread-local (st_value is a TLS offset); the table kept its local
 * symbols (a static has no other trace) and the DWARF has no partial units
 * (dwz).  Otherwise 0: the caller walks every CU, as before. */
#include "sym/dwvarsym.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

/* Drops every "(anonymous namespace)::" from s, in place: lookups see
 * through anonymous namespaces (dwtypes.h). */
static void strip_anonymous(char *s)
{
	static const char anon[] = "(anonymous namespace)::";
	char *p;

	while ((p = strstr(s, anon)))
		memmove(p, p + sizeof(anon) - 1, strlen(p + sizeof(anon) - 1) + 1);
}

struct symbol_hit {
	uint64_t addr;
	size_t shndx;
	const char *file;             /* STT_FILE of a local symbol; NULL: global */
};

/* Does the mangled variable name sn end in last's source name ("8g_config",
 * then "E" when nested: _ZN3app8g_configE, _ZL8g_config), before any
 * clone suffix (".lto_priv.0")?  Each symbol is checked, so no strstr. */
static bool mangled_ends_in(const char *sn, const char *mlast, size_t mlen)
{
	size_t l = strlen(sn);
	const char *dot = memchr(sn, '.', l);

	if (dot)
		l = (size_t)(dot - sn);
	if (l > 0 && sn[l - 1] == 'E')
		l--;
	return l >= mlen && memcmp(sn + l - mlen, mlast, mlen) == 0;
}

/* The one object symbol for name; 1 found, 0 none or not provably one. */
static int unique_symbol(Elf *elf, const char *name, struct symbol_hit *hit)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *last = name, *c;
	char mangled_last[300];
	size_t nlen = strlen(name), mlen, n_found = 0;
	bool kept_locals = false;

	while ((c = strstr(last, "::")))
		last = c + 2;
	if (snprintf(mangled_last, sizeof(mangled_last), "%zu%s", strlen(last), last) >=
	    (int)sizeof(mangled_last))
		return 0;
	mlen = strlen(mangled_last);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	if (!scn || gelf_getclass(elf) != ELFCLASS64 || sh.sh_entsize != sizeof(Elf64_Sym))
		return 0;
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *str_scn = elf_getscn(elf, sh.sh_link);
	Elf_Data *strs = str_scn ? elf_getdata(str_scn, NULL) : NULL;

	if (!data || !strs || !data->d_buf || !strs->d_buf || strs->d_size == 0 ||
	    ((const char *)strs->d_buf)[strs->d_size - 1] != '\0')
		return 0;
	const Elf64_Sym *syms = data->d_buf;
	const char *strtab = strs->d_buf, *file = NULL;
	size_t n = data->d_size / sizeof(Elf64_Sym);

	for (size_t i = 1; i < n; i++) {
		const Elf64_Sym *s = &syms[i];
		int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
		const char *sn;
		bool match = false;

		if (s->st_name >= strs->d_size)
			continue;
		sn = strtab + s->st_name;
		if (type == STT_FILE) {
			file = sn;
			continue;
		}
		if (type != STT_OBJECT && type != STT_TLS && type != STT_COMMON)
			continue;
		if (bind == STB_LOCAL)
			kept_locals = true;
		if (sn[0] != name[0] && sn[0] != '_')
			continue;
		if (strncmp(sn, name, nlen) == 0 && (sn[nlen] == '\0' || sn[nlen] == '.')) {
			if (sn[nlen] == '.')
				return 0;     /* a renamed copy: another definition */
			match = true;
		} else if (sn[0] == '_' && sn[1] == 'Z' && mangled_ends_in(sn, mangled_last, mlen)) {
			char *d;

			if (strchr(sn, '.'))
				return 0;     /* a clone of a C++ name ending in last */
			d = vg_demangle(sn);
			if (!d)
				return 0;
			strip_anonymous(d);
			match = strcmp(d, name) == 0;
			free(d);
		}
		if (!match)
			continue;
		if (++n_found > 1 || type != STT_OBJECT || (bind != STB_LOCAL && bind != STB_GLOBAL) ||
		    s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
			return 0;
		*hit = (struct symbol_hit){ .addr = s->st_value, .shndx = s->st_shndx,
					    .file = bind == STB_LOCAL ? file : NULL };
	}
	return n_found == 1 && kept_locals;
}

/* The CU DIEs of the DWARF in order; false when a unit is anything but a
 * compile unit or a type unit. */
static bool list_cus(Dwarf *dw, uint64_t **out, size_t *n_out)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {

		if (unit_type == DW_UT_type)
			continue;
		/* Partial units (dwz) can hold a CU's variables; skeletons
		 * (split DWARF) hold them in another file, by DW_OP_addrx. */
		if (unit_type != DW_UT_compile)
			goto refuse;
		if (n == cap) {
			uint64_t *g = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!g)
				goto refuse;
			v = g;
		}
		v[n++] = dwarf_dieoffset(&cudie);
	}
	*out = v;
	*n_out = n;
	return true;
refuse:
	free(v);
	return false;
}

/* What one CU's top-level variables hold inside a section [lo, hi): the
 * lowest and highest static address, and whether one is at the address
 * looked for.  Namespaces are not entered: GCC defines a namespace's
 * variables at the top level (DW_AT_specification), and entering every
 * namespace of each probed CU cost 2.7 of the 4.3 ms this search took on
 * bench/print.sh's gen-60000 (0.45 ms without).  Clang defines them
 * inside the namespace: such a CU shows fewer anchors, a guess fails more
 * often, and the caller walks every CU. */
struct cu_span {
	uint64_t min, max;
	bool any, has_addr;
};

static void span_of(Dwarf_Die *cu, uint64_t lo, uint64_t hi, uint64_t addr, struct cu_span *sp)
{
	Dwarf_Die c;

	if (dwarf_child(cu, &c) != 0)
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t n;
		uint64_t v;

		if (dwarf_tag(&c) != DW_TAG_variable || !dwarf_attr(&c, DW_AT_location, &a) ||
		    dwarf_getlocation(&a, &ops, &n) != 0 || n != 1 || ops[0].atom != DW_OP_addr)
			continue;
		v = ops[0].number;
		if (v < lo || v >= hi)
			continue;
		sp->min = sp->any && sp->min < v ? sp->min : v;
		sp->max = sp->any && sp->max > v ? sp->max : v;
		sp->any = true;
		sp->has_addr |= v == addr;
	} while (dwarf_siblingof(&c, &c) == 0);
}

struct layout {
	Dwarf *dw;
	const uint64_t *cus;
	size_t n;
	uint64_t addr, lo, hi;
	struct cu_span *spans;
	bool *probed;
};

/* CU i's span, read once. */
static const struct cu_span *probe(struct layout *l, size_t i)
{
	Dwarf_Die d;

	if (!l->probed[i] && dwarf_offdie(l->dw, l->cus[i], &d))
		span_of(&d, l->lo, l->hi, l->addr, &l->spans[i]);
	l->probed[i] = true;
	return &l->spans[i];
}

/* The first CU at or after from (up to hi) with a variable in the
 * section; -1: none. */
static ptrdiff_t next_with_data(struct layout *l, ptrdiff_t from, ptrdiff_t hi)
{
	for (ptrdiff_t j = from; j <= hi; j++)
		if (probe(l, (size_t)j)->any)
			return j;
	return -1;
}

/* The last CU whose lowest address is <= addr.  Exact when each CU's
 * pieces of the section are one run in CU order, and when the section
 * is two such runs (.data.rel.ro: every file's .data.rel.ro.local, then
 * every file's .data.rel.ro) and addr is in the first. */
static ptrdiff_t search_by_min(struct layout *l)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)l->n - 1, best = -1;

	while (lo <= hi) {
		ptrdiff_t mid = lo + (hi - lo) / 2, j = next_with_data(l, mid, hi);

		if (j < 0 || l->spans[j].min > l->addr) {
			hi = mid - 1;
		} else {
			best = j;
			lo = j + 1;
		}
	}
	return best;
}

/* The first CU whose highest address is >= addr: the two-run case with
 * addr in the second run, when the CUs after its own have pieces there. */
static ptrdiff_t search_by_max(struct layout *l)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)l->n - 1, best = -1;

	while (lo <= hi) {
		ptrdiff_t mid = lo + (hi - lo) / 2, j = next_with_data(l, mid, hi);

		if (j < 0) {
			hi = mid - 1;
		} else if (l->spans[j].max >= l->addr) {
			best = j;
			hi = mid - 1;
		} else {
			lo = j + 1;
		}
	}
	return best;
}

/* The CU whose variables hold addr in the section [lo_sec, hi_sec),
 * found by binary search: the linker lays out a section's input pieces
 * in input order, the order of the CUs.  A guess checked against the
 * variables' addresses; 1 found, 0 not. */
static int by_layout(Dwarf *dw, const uint64_t *cus, size_t n, uint64_t addr,
		     uint64_t lo_sec, uint64_t hi_sec, uint64_t *cu_out)
{
	struct layout l = { .dw = dw, .cus = cus, .n = n, .addr = addr, .lo = lo_sec, .hi = hi_sec };
	ptrdiff_t c;
	int found = 0;

	l.spans = calloc(n ? n : 1, sizeof(*l.spans));
	l.probed = calloc(n ? n : 1, sizeof(*l.probed));
	if (l.spans && l.probed &&
	    (((c = search_by_min(&l)) >= 0 && l.spans[c].has_addr) ||
	     ((c = search_by_max(&l)) >= 0 && l.spans[c].has_addr))) {
		*cu_out = cus[c];
		found = 1;
	}
	free(l.spans);
	free(l.probed);
	return found;
}

static bool same_base(const char *cu_name, const char *file)
{
	const char *b = strrchr(cu_name, '/');

	return strcmp(b ? b + 1 : cu_name, file) == 0;
}

int vg_dwvar_symbol_cus(Dwarf *dw, Elf *symelf, const char *name, uint64_t *addr,
			uint64_t *cus_out, size_t max)
{
	struct symbol_hit hit = { 0 };
	uint64_t *cus = NULL;
	size_t n_cus = 0, n_out = 0;
	Dwarf_Die cudie;
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!dw || !symelf || !name[0] || max == 0 || unique_symbol(symelf, name, &hit) != 1)
		return 0;
	*addr = hit.addr;
	if (!list_cus(dw, &cus, &n_cus))
		return 0;
	for (size_t i = 0; hit.file && i < n_cus && n_out < max; i++) {
		const char *cn;

		if (dwarf_offdie(dw, cus[i], &cudie) && (cn = dwarf_diename(&cudie)) &&
		    same_base(cn, hit.file))
			cus_out[n_out++] = cus[i];
	}
	if (n_out == 0 && (scn = elf_getscn(symelf, hit.shndx)) && gelf_getshdr(scn, &sh) &&
		   (sh.sh_flags & SHF_ALLOC) && hit.addr >= sh.sh_addr &&
		   hit.addr < sh.sh_addr + sh.sh_size) {
		n_out = (size_t)by_layout(dw, cus, n_cus, hit.addr, sh.sh_addr,
					  sh.sh_addr + sh.sh_size, &cus_out[0]);
	}
	free(cus);
	return (int)n_out;
}
