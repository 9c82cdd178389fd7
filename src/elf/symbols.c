/* symbols.c - an ELF image's symbol table: .symtab, then .dynsym, the
 * synthetic NAME@plt names of its PLT stubs, TLS and GOT-slot questions,
 * and the lookups by name and by address.
 *
 * Symbols are loaded on first lookup into two sorted arrays: by address
 * (with a running maximum of symbol ends, so "which symbol contains X" is a
 * binary search plus a short backward walk) and by name.
 * Lookups are not thread-safe: the first one fills the cache.
 * Never prints, never reads the environment. */
#include "elf/image_priv.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/symtab.h"
#include "util/radix.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ */
/* symbols                                                              */

static bool wanted_type(unsigned t)
{
	return t == STT_FUNC || t == STT_OBJECT || t == STT_GNU_IFUNC ||
	       t == STT_NOTYPE;
}

/* Which of several names for one address a person expects: a global
 * over a local alias (malloc, not __GI___libc_malloc), the default or no
 * symbol version over a compat one (clock_nanosleep@@GLIBC_2.17, not
 * @GLIBC_2.2.5), a public name over an underscored one. */
static uint8_t alias_rank(const GElf_Sym *s, const char *name)
{
	unsigned bind = GELF_ST_BIND(s->st_info);
	const char *at = strchr(name, '@');
	uint8_t r = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;

	r = (uint8_t)(r * 8);
	if (!at || at[1] == '@')
		r += 4;
	if (name[0] != '_')
		r += 2;
	return r;
}

static int grow_syms(struct vg_image_priv *p, size_t *cap)
{
	size_t nc = *cap ? *cap * 2 : 256, bytes;
	struct sym *ns;

	if (__builtin_mul_overflow(nc, sizeof(*ns), &bytes))
		return -ENOMEM;
	ns = realloc(p->syms, bytes);
	if (!ns)
		return -ENOMEM;
	p->syms = ns;
	*cap = nc;
	return 0;
}

/* The address range of each section, by index: a symbol's limit is
 * its section's end, and looking the section up per symbol (libelf's
 * elf_getscn and gelf_getshdr) was most of reading 20,000 symbols. */
struct scn_range {
	uint64_t addr, size;
	int state;              /* 0 not read, 1 read, -1 none */
};

static void section_limit(struct vg_image_priv *p, struct scn_range *ranges, size_t n_ranges,
			  size_t shndx, struct sym *e)
{
	struct scn_range one = { 0 }, *r = shndx < n_ranges ? &ranges[shndx] : &one;

	if (!r->state) {
		Elf_Scn *target = elf_getscn(p->elf, shndx);
		GElf_Shdr tsh;

		r->state = -1;
		if (target && gelf_getshdr(target, &tsh)) {
			r->addr = tsh.sh_addr;
			r->size = tsh.sh_size;
			r->state = 1;
		}
	}
	if (r->state == 1 && r->addr <= e->vaddr && r->size <= UINT64_MAX - r->addr &&
	    r->addr + r->size > e->vaddr)
		e->limit = r->addr + r->size;
}

static int add_table(struct vg_image_priv *p, Elf_Scn *scn,
		     const GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	struct scn_range *ranges;
	size_t n, n_ranges = 0;

	if (!d || sh->sh_entsize != sizeof(Elf64_Sym))
		return 0;
	if (elf_getshdrnum(p->elf, &n_ranges) < 0)
		n_ranges = 0;
	ranges = calloc(n_ranges ? n_ranges : 1, sizeof(*ranges));
	if (!ranges)
		return -ENOMEM;
	n = d->d_size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		struct sym *e;

		if (!gelf_getsym(d, (int)i, &s) ||
		    !wanted_type(GELF_ST_TYPE(s.st_info)) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(p->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (p->n_syms == *cap && grow_syms(p, cap) < 0) {
			free(ranges);
			return -ENOMEM;
		}
		e = &p->syms[p->n_syms++];
		e->vaddr = s.st_value;
		e->size = s.st_size;
		if (e->size > UINT64_MAX - e->vaddr)
			e->size = UINT64_MAX - e->vaddr;
		e->name = name;
		e->dyn = sh->sh_type == SHT_DYNSYM;
		e->ifunc = GELF_ST_TYPE(s.st_info) == STT_GNU_IFUNC;
		e->rank = alias_rank(&s, name);
		e->limit = e->vaddr + 1;
		section_limit(p, ranges, n_ranges, s.st_shndx, e);
	}
	free(ranges);
	return 0;
}

/* Equal starts: bigger first, .dynsym before .symtab, so the backward walk
 * in symbol_at meets the innermost, .symtab copy first. */
static int cmp_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	int c;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	/* Lookups take the last of equal (vaddr, size): the best alias. */
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	/* The .symtab copy of a name last: the dedup below keeps it. */
	return x->dyn != y->dyn ? (x->dyn ? -1 : 1) : 0;
}

/* syms in cmp_addr's order: by address with a radix sort (qsort's
 * compares were a quarter of a one-address answer with the persistent
 * index, on 20,000 symbols), then each run of equal addresses by
 * cmp_addr (aliases: a few at most). */
static int sort_by_addr(struct vg_image_priv *p)
{
	size_t n = p->n_syms;
	struct vg_radix_item *v = malloc(2 * n * sizeof(*v));
	struct sym *sorted = malloc(n * sizeof(*sorted));

	if (!v || !sorted) {
		free(v);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct vg_radix_item){ p->syms[i].vaddr, i };
	vg_radix_sort(v, v + n, n);
	for (size_t i = 0; i < n; i++)
		sorted[i] = p->syms[v[i].index];
	free(v);
	for (size_t i = 1; i < n; i++) {
		struct sym x = sorted[i];
		size_t j = i;

		for (; j > 0 && sorted[j - 1].vaddr == x.vaddr && cmp_addr(&sorted[j - 1], &x) > 0; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = x;
	}
	free(p->syms);
	p->syms = sorted;
	return 0;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct sym *syms = ctx;
	const struct sym *x = &syms[*(const size_t *)a];
	const struct sym *y = &syms[*(const size_t *)b];
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->dyn != y->dyn)
		return x->dyn ? 1 : -1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* A section's name, or "". */
static const char *scn_name(Elf *elf, const GElf_Shdr *sh)
{
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return "";
	n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n ? n : "";
}

struct got_slot {
	uint64_t addr;
	const char *name;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* GOT slots that a dynamic relocation binds to a named symbol:
 * R_X86_64_JUMP_SLOT (.rela.plt, lazy or not) and R_X86_64_GLOB_DAT
 * (.rela.dyn, what .plt.got entries jump through). */
static int got_slots(struct vg_image_priv *p, struct got_slot **out, size_t *n_out)
{
	struct got_slot *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *symd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || !(d = elf_getdata(scn, NULL)) ||
		    !(symscn = elf_getscn(p->elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
		    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB) ||
		    !(symd = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Rela); i++) {
			GElf_Rela rel;
			GElf_Sym sym;
			unsigned type;
			const char *name;

			if (!gelf_getrela(d, (int)i, &rel))
				continue;
			type = (unsigned)GELF_R_TYPE(rel.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !GELF_R_SYM(rel.r_info) ||
			    !gelf_getsym(symd, (int)GELF_R_SYM(rel.r_info), &sym) ||
			    !(name = elf_strptr(p->elf, symsh.sh_link, sym.st_name)) || !*name)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct got_slot *nv;

				if (nc > SIZE_MAX / sizeof(*nv) || !(nv = realloc(v, nc * sizeof(*nv)))) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (struct got_slot){ rel.r_offset, name };
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_slot);
	*out = v;
	*n_out = n;
	return 0;
}

static const char *slot_name(const struct got_slot *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == addr ? v[lo].name : NULL;
}

/* PLT stubs have no symbol: name each "NAME@plt" as binutils and gdb do.
 * Whatever the layout (.plt with lazy binding, .plt.sec with IBT, .plt.got
 * for -z now), the stub a call lands on holds `jmp *disp(%rip)` (ff 25,
 * maybe after endbr64 or a bnd prefix) through the GOT slot its symbol's
 * relocation names. */
static int add_plt_symbols(struct vg_image_priv *p, size_t *cap)
{
	struct got_slot *slots = NULL;
	size_t n_slots = 0;
	Elf_Scn *scn = NULL;
	int r;

	r = got_slots(p, &slots, &n_slots);
	if (r < 0 || !n_slots)
		return r;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *sn;
		uint64_t ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		sn = scn_name(p->elf, &sh);
		if (strcmp(sn, ".plt") != 0 && strcmp(sn, ".plt.sec") != 0 &&
		    strcmp(sn, ".plt.got") != 0)
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf || d->d_size < 8)
			continue;
		ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize
		      : strcmp(sn, ".plt.got") == 0 ? 8 : 16;
		for (uint64_t at = 0; at + ent <= d->d_size; at += ent) {
			const uint8_t *e = (const uint8_t *)d->d_buf + at;
			const char *name = NULL;
			struct sym *s;
			char *full;

			for (uint64_t k = 0; !name && k + 6 <= ent; k++) {
				int32_t disp;

				if (e[k] != 0xff || e[k + 1] != 0x25)
					continue;
				memcpy(&disp, e + k + 2, 4);
				name = slot_name(slots, n_slots,
						 sh.sh_addr + at + k + 6 + (uint64_t)(int64_t)disp);
			}
			if (!name)
				continue;
			if (asprintf(&full, "%s@plt", name) < 0)
				goto oom;
			if (VG_GROW(p->plt_names, p->cap_plt_names, p->n_plt_names + 1) ||
			    (p->n_syms == *cap && grow_syms(p, cap) < 0)) {
				free(full);
				goto oom;
			}
			p->plt_names[p->n_plt_names++] = full;
			s = &p->syms[p->n_syms++];
			*s = (struct sym){ .vaddr = sh.sh_addr + at, .size = ent,
					   .limit = sh.sh_addr + at + ent, .name = full,
					   .rank = 0 };
		}
	}
	free(slots);
	return 0;
oom:
	free(slots);
	return -ENOMEM;
}

int image_load_symbols(struct vg_image_priv *p)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, w = 0, bytes;
	int r = 0;

	if (p->syms_loaded)
		return p->n_syms ? 0 : -ENOENT;
	p->syms_loaded = true;
	if (!p->elf)
		return -ENOENT;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		r = add_table(p, scn, &sh, &cap);
		if (r < 0)
			goto fail;
	}
	r = add_plt_symbols(p, &cap);
	if (r < 0)
		goto fail;
	if (!p->n_syms)
		return -ENOENT;

	r = sort_by_addr(p);
	if (r < 0)
		goto fail;
	/* .dynsym repeats most of .symtab: keep one of each. */
	for (size_t i = 0; i < p->n_syms; i++) {
		if (w && p->syms[w - 1].vaddr == p->syms[i].vaddr &&
		    p->syms[w - 1].size == p->syms[i].size &&
		    strcmp(p->syms[w - 1].name, p->syms[i].name) == 0) {
			p->syms[w - 1] = p->syms[i]; /* the .symtab one */
			continue;
		}
		p->syms[w++] = p->syms[i];
	}
	p->n_syms = w;

	r = -ENOMEM;
	if (__builtin_mul_overflow(p->n_syms, sizeof(*p->max_end), &bytes) ||
	    !(p->max_end = malloc(bytes)))
		goto fail;
	for (size_t i = 0; i < p->n_syms; i++) {
		uint64_t e = p->syms[i].size ? p->syms[i].vaddr + p->syms[i].size : 0;

		p->max_end[i] = i && p->max_end[i - 1] > e ? p->max_end[i - 1] : e;
	}
	/* Out of memory leaves the searches bisecting. */
	(void)vg_bucket_build(&p->syms_by_addr, &p->syms[0].vaddr, sizeof(*p->syms), p->n_syms, 4);
	/* by_name is sorted at the first lookup by name (load_by_name). */
	return 0;
fail:
	free(p->syms);
	free(p->max_end);
	free(p->by_name);
	p->syms = NULL;
	p->max_end = NULL;
	p->by_name = NULL;
	p->n_syms = 0;
	return r;
}

static void fill_sym(const struct sym *s, struct vg_symbol *out)
{
	out->vaddr = s->vaddr;
	out->size = s->size;
	out->name = s->name;
	out->from_dynsym = s->dyn;
	out->ifunc = s->ifunc;
}

/* The name order of the symbols, sorted at the first lookup by name: an
 * answer by address (every symbolizer lookup) never needs it, and sorting
 * libc6-dbg's 10,000 names was a fifth of a warm one-address answer. */
static int load_by_name(struct vg_image_priv *p)
{
	if (p->by_name)
		return 0;
	p->by_name = malloc((p->n_syms ? p->n_syms : 1) * sizeof(*p->by_name));
	if (!p->by_name)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_syms; i++)
		p->by_name[i] = i;
	qsort_r(p->by_name, p->n_syms, sizeof(*p->by_name), cmp_name, p->syms);
	return 0;
}

/* Index into by_name of the first name >= name. */
static size_t name_lower_bound(const struct vg_image_priv *p, const char *name)
{
	size_t lo = 0, hi = p->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(p->syms[p->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* name exactly, or (clones) a GCC clone of it, "name.part.0",
 * "name.isra.0", "name.constprop.0", whose DWARF name vigil prints as
 * name: the first such symbol in name order. */
static int find_by_name(const struct vg_image *img, const char *name, bool clone,
			struct vg_symbol *sym)
{
	struct vg_image_priv *p = img->priv;
	size_t lo, n = strlen(name);

	if (image_load_symbols(p) < 0 || load_by_name(p) < 0)
		return -ENOENT;
	lo = name_lower_bound(p, name);
	for (; lo < p->n_syms; lo++) {
		const char *c = p->syms[p->by_name[lo]].name;

		if (strncmp(c, name, n) != 0)
			break;
		if (c[n] == '\0' && !clone) {
			fill_sym(&p->syms[p->by_name[lo]], sym);
			return 0;
		}
		if (clone && c[n] == '.') {
			fill_sym(&p->syms[p->by_name[lo]], sym);
			return 0;
		}
		if (!clone)
			break;
	}
	return -ENOENT;
}

int vg_image_symbol_by_name(const struct vg_image *img, const char *name,
			    struct vg_symbol *sym)
{
	if (!img || !img->priv || !name || !*name)
		return -ENOENT;
	if (find_by_name(img, name, false, sym) == 0 ||
	    find_by_name(img, name, true, sym) == 0)
		return 0;
	return -ENOENT;
}

const struct vg_image *vg_image_debug_symbols(const struct vg_image *img, bool *looked)
{
	*looked = img && img->priv && img->priv->debug_syms_looked;
	return *looked ? img->priv->debug_syms : NULL;
}

void vg_image_adopt_debug_symbols(const struct vg_image *img, struct vg_image *dbg)
{
	if (!img || !img->priv || img->priv->debug_syms_looked) {
		vg_image_free(dbg);
		return;
	}
	img->priv->debug_syms_looked = true;
	img->priv->debug_syms = dbg;
}

static bool slot_reloc(const struct vg_image_priv *p, const GElf_Rela *r,
		       Elf_Data *syms, size_t strndx, const char *name,
		       uint64_t resolver_vaddr)
{
	unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
	GElf_Sym s;
	const char *n;

	if (type == R_X86_64_IRELATIVE)
		return resolver_vaddr != UINT64_MAX &&
		       (uint64_t)r->r_addend == resolver_vaddr;
	if (!name || !syms || GELF_R_SYM(r->r_info) == 0 ||
	    (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
	     type != R_X86_64_64) ||
	    !gelf_getsym(syms, (int)GELF_R_SYM(r->r_info), &s))
		return false;
	n = elf_strptr(p->elf, strndx, s.st_name);
	return n && strcmp(n, name) == 0;
}

int vg_image_function_slots(const struct vg_image *img, const char *name,
			    uint64_t resolver_vaddr, uint64_t **slots, size_t *n)
{
	struct vg_image_priv *p = img ? img->priv : NULL;
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*slots = NULL;
	*n = 0;
	if (!p || !p->elf)
		return 0;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Scn *link;
		Elf_Data *d, *syms = NULL;
		size_t strndx = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || !(d = elf_getdata(scn, NULL)))
			continue;
		link = elf_getscn(p->elf, sh.sh_link);
		if (link && gelf_getshdr(link, &lsh) && lsh.sh_type == SHT_DYNSYM &&
		    lsh.sh_entsize == sizeof(Elf64_Sym)) {
			syms = elf_getdata(link, NULL);
			strndx = lsh.sh_link;
		}
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Rela); i++) {
			GElf_Rela r;

			if (!gelf_getrela(d, (int)i, &r) ||
			    !slot_reloc(p, &r, syms, strndx, name, resolver_vaddr))
				continue;
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 8;
				uint64_t *ns = reallocarray(*slots, nc, sizeof(**slots));

				if (!ns) {
					free(*slots);
					*slots = NULL;
					*n = 0;
					return -ENOMEM;
				}
				*slots = ns;
				cap = nc;
			}
			(*slots)[(*n)++] = r.r_offset;
		}
	}
	return 0;
}

bool vg_image_has_tls_symbol(const struct vg_image *img, const char *name)
{
	Elf_Scn *scn = NULL;

	if (!img || !img->priv || !img->priv->elf || !name)
		return false;
	/* A linear scan: only the error path of a failed name lookup asks. */
	while ((scn = elf_nextscn(img->priv->elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize != sizeof(Elf64_Sym) || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < d->d_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym sy;
			const char *n;

			if (gelf_getsym(d, (int)i, &sy) && GELF_ST_TYPE(sy.st_info) == STT_TLS &&
			    (n = elf_strptr(img->priv->elf, sh.sh_link, sy.st_name)) &&
			    strcmp(n, name) == 0)
				return true;
		}
	}
	return false;
}

_Static_assert(offsetof(struct sym, vaddr) == offsetof(struct vg_symtab_head, vaddr) &&
	       offsetof(struct sym, size) == offsetof(struct vg_symtab_head, size) &&
	       offsetof(struct sym, limit) == offsetof(struct vg_symtab_head, limit),
	       "struct sym starts as struct vg_symtab_head");

static const struct vg_symtab_head *head_at(const struct vg_symtab *t, size_t i)
{
	return (const struct vg_symtab_head *)((const unsigned char *)t->recs + i * t->stride);
}

static bool vouched(const struct vg_symtab *t, size_t first, size_t end)
{
	return !t->vouch || first >= end || t->vouch(t->vouch_ctx, first, end);
}

/* How many symbols start at or before vaddr; *from: the first record
 * vouched for (the bucket's), SIZE_MAX when what the search had to read
 * was refused. */
static size_t starting_by(const struct vg_symtab *t, uint64_t vaddr, size_t *from)
{
	size_t lo, hi;

	*from = 0;
	if (!t->n)
		return 0;
	vg_bucket_span(t->by_addr, t->n, vaddr, &lo, &hi);
	if (!vouched(t, lo, hi)) {
		*from = SIZE_MAX;
		return 0;
	}
	*from = lo;
	return vg_sorted_count_le_in(t->recs, t->stride, lo, hi, vaddr);
}

/* Record i may be read: vouched already (i >= *from), or now. */
static bool reach(const struct vg_symtab *t, size_t i, size_t *from)
{
	if (i >= *from)
		return true;
	if (!vouched(t, i, *from))
		return false;
	*from = i;
	return true;
}

size_t vg_symtab_at(const struct vg_symtab *t, uint64_t vaddr)
{
	size_t from, lo = starting_by(t, vaddr, &from);

	if (from == SIZE_MAX)
		return VG_SYMTAB_BAD;
	/* Sized symbols first: the nearest start that still covers vaddr
	 * (record k - 1 vouched before it is read). */
	for (size_t k = lo; k > 0; k--) {
		const struct vg_symtab_head *s;

		if (!reach(t, k - 1, &from))
			return VG_SYMTAB_BAD;
		if (t->max_end[k - 1] <= vaddr)
			break;
		s = head_at(t, k - 1);
		if (s->size && vaddr < s->vaddr + s->size)
			return k - 1;
	}
	/* Else an unsized label right before vaddr, in the same section and
	 * with no sized symbol in between. */
	if (lo > 0) {
		const struct vg_symtab_head *s = head_at(t, lo - 1);

		if (!s->size && vaddr < s->limit)
			return lo - 1;
	}
	return SIZE_MAX;
}

size_t vg_symtab_before(const struct vg_symtab *t, uint64_t vaddr)
{
	size_t from, lo = starting_by(t, vaddr, &from);

	if (from == SIZE_MAX || (lo && !reach(t, lo - 1, &from)))
		return VG_SYMTAB_BAD;
	return lo ? lo - 1 : SIZE_MAX;
}

static void image_symtab(const struct vg_image_priv *p, struct vg_symtab *t)
{
	*t = (struct vg_symtab){ .recs = p->syms, .stride = sizeof(*p->syms), .n = p->n_syms,
				 .max_end = p->max_end, .by_addr = &p->syms_by_addr };
}

int vg_image_symtab(const struct vg_image *img, struct vg_symtab *t)
{
	if (!img || !img->priv || image_load_symbols(img->priv) < 0)
		return -ENOENT;
	image_symtab(img->priv, t);
	return 0;
}

void vg_image_symbol_nth(const struct vg_image *img, size_t i, struct vg_symbol *sym)
{
	fill_sym(&img->priv->syms[i], sym);
}

bool vg_image_symbols_read(const struct vg_image *img)
{
	return !img || !img->priv || img->priv->syms_loaded;
}

bool vg_image_functions_read(const struct vg_image *img)
{
	return !img || !img->priv || img->priv->fdes_loaded;
}

int vg_image_symbol_at(const struct vg_image *img, uint64_t vaddr,
		       struct vg_symbol *sym)
{
	struct vg_symtab t;
	size_t i;

	if (vg_image_symtab(img, &t) < 0 || (i = vg_symtab_at(&t, vaddr)) == SIZE_MAX)
		return -ENOENT;
	fill_sym(&img->priv->syms[i], sym);
	return 0;
}

/* The function ranges of .eh_frame, read on first use.  An image without
 * section headers (rebuilt from memory) has none: every lookup misses. */
static void load_fdes(struct vg_image_priv *p)
{
	Elf_Scn *scn = NULL;

	if (p->fdes_loaded)
		return;
	p->fdes_loaded = true;
	while (p->elf && (scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    strcmp(scn_name(p->elf, &sh), ".eh_frame") != 0)
			continue;
		if ((d = elf_getdata(scn, NULL)) && d->d_buf)
			vg_fde_table_build(d->d_buf, d->d_size, sh.sh_addr, &p->fdes);
		return;
	}
}

int vg_image_function_at(const struct vg_image *img, uint64_t vaddr,
			 uint64_t *start, uint64_t *end)
{
	struct vg_fde_range r;

	if (!img || !img->priv)
		return -ENOENT;
	load_fdes(img->priv);
	if (!vg_fde_table_find(&img->priv->fdes, vaddr, &r))
		return -ENOENT;
	*start = r.start;
	*end = r.end;
	return 0;
}

int vg_image_symbol_before(const struct vg_image *img, uint64_t vaddr,
			   struct vg_symbol *sym)
{
	struct vg_symtab t;
	size_t i;

	if (vg_image_symtab(img, &t) < 0 || (i = vg_symtab_before(&t, vaddr)) == SIZE_MAX)
		return -ENOENT;
	fill_sym(&img->priv->syms[i], sym);
	return 0;
}
