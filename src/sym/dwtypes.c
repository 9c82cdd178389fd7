/* dwtypes.c - DWARF DIEs to the type model of dwtypes.h, one DIE at a
 * time, cached by DIE offset (a struct that points to itself finds itself
 * in the cache before its members are read). */
#include "sym/dwtypes.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "sym/dwvarsym.h"
#include "util/vec.h"

struct vg_dwtypes {
	struct vg_debuginfo *dbg;
	Dwarf *dw;
	/* DIE offset -> type: open addressing, power-of-two capacity. */
	struct slot { uint64_t off; struct vg_type *t; } *map;
	size_t map_cap, map_n;
	/* Every allocation of the table, freed together. */
	void **owned;
	size_t n_owned, owned_cap;
	int error;                    /* first ENOMEM while building */
	unsigned depth;               /* type_of_die recursion */
};

/* Type chains deeper than this (pointer to pointer to ...) come from a
 * corrupt or hostile file: they end in an unknown type instead of
 * overflowing the stack.  Walks over a type (strip, size, name) are
 * bounded the same way, since a corrupt file can make a typedef name
 * itself. */
#define MAX_TYPE_DEPTH 64

static void *own(struct vg_dwtypes *dt, size_t size)
{
	void *p;

	if (dt->error || VG_GROW(dt->owned, dt->owned_cap, dt->n_owned + 1) < 0 ||
	    !(p = calloc(1, size ? size : 1))) {
		dt->error = -ENOMEM;
		return NULL;
	}
	dt->owned[dt->n_owned++] = p;
	return p;
}

static size_t slot_of(uint64_t off, size_t cap)
{
	off ^= off >> 31;
	off *= 0x9e3779b97f4a7c15ull;
	return (size_t)(off >> 20) & (cap - 1);
}

static struct vg_type *map_get(struct vg_dwtypes *dt, uint64_t off)
{
	if (!dt->map_cap)
		return NULL;
	for (size_t i = slot_of(off, dt->map_cap);; i = (i + 1) & (dt->map_cap - 1)) {
		if (!dt->map[i].t)
			return NULL;
		if (dt->map[i].off == off)
			return dt->map[i].t;
	}
}

static int map_put(struct vg_dwtypes *dt, uint64_t off, struct vg_type *t)
{
	if ((dt->map_n + 1) * 2 > dt->map_cap) {
		size_t cap = dt->map_cap ? dt->map_cap * 2 : 256;
		struct slot *m = calloc(cap, sizeof(*m));

		if (!m)
			return dt->error = -ENOMEM;
		for (size_t i = 0; i < dt->map_cap; i++) {
			if (!dt->map[i].t)
				continue;
			size_t j = slot_of(dt->map[i].off, cap);

			while (m[j].t)
				j = (j + 1) & (cap - 1);
			m[j] = dt->map[i];
		}
		free(dt->map);
		dt->map = m;
		dt->map_cap = cap;
	}
	size_t i = slot_of(off, dt->map_cap);

	while (dt->map[i].t)
		i = (i + 1) & (dt->map_cap - 1);
	dt->map[i] = (struct slot){ off, t };
	dt->map_n++;
	return 0;
}

int vg_dwtypes_open(struct vg_image *img, const char *target_root,
		    struct vg_dwtypes **out, struct vg_error *err)
{
	struct vg_debuginfo_opts opts = { .target_root = target_root, .no_debuginfod = true };
	struct vg_dwtypes *dt;
	int r;

	*out = NULL;
	dt = calloc(1, sizeof(*dt));
	if (!dt)
		return vg_error_set(err, -ENOMEM, "out of memory for a type table");
	r = vg_debuginfo_find(img, &opts, &dt->dbg, err);
	if (r < 0 || !dt->dbg->dwarf) {
		vg_dwtypes_free(dt);
		return r < 0 ? r : 0;
	}
	dt->dw = dt->dbg->dwarf;
	*out = dt;
	return 0;
}

struct vg_dwtypes *vg_dwtypes_free(struct vg_dwtypes *dt)
{
	if (!dt)
		return NULL;
	for (size_t i = 0; i < dt->n_owned; i++)
		free(dt->owned[i]);
	free(dt->owned);
	free(dt->map);
	vg_debuginfo_free(dt->dbg);
	free(dt);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* building types                                                       */

static const struct vg_type *type_of_die(struct vg_dwtypes *dt, Dwarf_Die *die);
static const struct vg_type *build_die(struct vg_dwtypes *dt, Dwarf_Die *die, uint64_t off, int tag);

static uint64_t attr_udata(Dwarf_Die *die, unsigned name, uint64_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, name, &a) || dwarf_formudata(&a, &w) != 0)
		return dflt;
	return w;
}

static bool attr_flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	bool f = false;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formflag(&a, &f) == 0 && f;
}

/* The type DW_AT_type of die refers to; NULL: none (void). */
static const struct vg_type *type_attr(struct vg_dwtypes *dt, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return NULL;
	return type_of_die(dt, &t);
}

/* Byte offset of a member: a constant, or the DWARF 2 expression
 * DW_OP_plus_uconst N. */
static uint64_t member_location(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(die, DW_AT_data_member_location, &a))
		return 0;
	if (dwarf_formudata(&a, &w) == 0)
		return w;
	if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst)
		return ops[0].number;
	return 0;
}

/* A static data member: DW_TAG_member with DW_AT_declaration (DWARF 4),
 * or a DW_TAG_variable inside the class (DWARF 5). */
static int add_static(struct vg_dwtypes *dt, Dwarf_Die *c, struct vg_type *t, size_t *cap)
{
	struct vg_type_static st = { .name = dwarf_diename(c), .before = t->n_members,
				     .decl = dwarf_dieoffset(c) };

	if (!st.name)
		return 0;
	st.type = type_attr(dt, c);
	if (VG_GROW(t->statics, *cap, t->n_statics + 1) < 0)
		return dt->error = -ENOMEM;
	t->statics[t->n_statics++] = st;
	return 0;
}

static int build_members(struct vg_dwtypes *dt, Dwarf_Die *die, struct vg_type *t)
{
	Dwarf_Die c;
	size_t cap = 0, cap_statics = 0;

	if (dwarf_child(die, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		struct vg_type_member m = { 0 };
		uint64_t bitpos;

		/* C++ static data members are declarations, not layout. */
		if ((tag == DW_TAG_member && attr_flag(&c, DW_AT_declaration)) ||
		    tag == DW_TAG_variable) {
			if (add_static(dt, &c, t, &cap_statics) < 0)
				return -ENOMEM;
			continue;
		}
		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		m.type = type_attr(dt, &c);
		m.is_base = tag == DW_TAG_inheritance;
		m.name = m.is_base ? (m.type ? m.type->name : NULL) : dwarf_diename(&c);
		bitpos = member_location(&c) * 8;
		m.bit_size = (uint32_t)attr_udata(&c, DW_AT_bit_size, 0);
		if (m.bit_size) {
			Dwarf_Attribute a;

			if (dwarf_attr(&c, DW_AT_data_bit_offset, &a)) {
				bitpos += attr_udata(&c, DW_AT_data_bit_offset, 0);
			} else if (dwarf_attr(&c, DW_AT_bit_offset, &a)) {
				/* DWARF 2/3: counted from the most significant bit
				 * of a storage unit of DW_AT_byte_size bytes. */
				uint64_t unit = attr_udata(&c, DW_AT_byte_size, vg_type_size(m.type));

				bitpos += unit * 8 - attr_udata(&c, DW_AT_bit_offset, 0) - m.bit_size;
			}
		}
		m.offset = bitpos / 8;
		m.bit_offset = (uint32_t)(bitpos % 8);
		if (VG_GROW(t->members, cap, t->n_members + 1) < 0)
			return dt->error = -ENOMEM;
		t->members[t->n_members++] = m;
	} while (dwarf_siblingof(&c, &c) == 0);
	/* The members array is the table's to free. */
	if (t->members) {
		void *keep = own(dt, t->n_members * sizeof(*t->members));

		if (!keep) {
			free(t->members);
			t->members = NULL;
			return -ENOMEM;
		}
		memcpy(keep, t->members, t->n_members * sizeof(*t->members));
		free(t->members);
		t->members = keep;
	}
	if (t->statics) {
		void *keep = own(dt, t->n_statics * sizeof(*t->statics));

		if (!keep) {
			free(t->statics);
			t->statics = NULL;
			t->n_statics = 0;
			return -ENOMEM;
		}
		memcpy(keep, t->statics, t->n_statics * sizeof(*t->statics));
		free(t->statics);
		t->statics = keep;
	}
	return 0;
}

/* The C++ scope a DIE is declared in ("app::Mode" for an enumerator of
 * enum class app::Mode, "app" for one of a plain enum in namespace app),
 * as gdb qualifies enumerators: with self, the DIE's own name is part of
 * the prefix; skip_anonymous leaves anonymous namespaces out (lookups:
 * they are transparent), else they are "(anonymous namespace)" as gdb
 * writes them.  "" for C, or when the scopes cannot be found (the lookup
 * walks the DIE's CU, which only C++ pays for). */
static void cxx_scope(Dwarf_Die *die, bool with_self, bool skip_anonymous, char *buf, size_t size)
{
	Dwarf_Die cu, *scopes = NULL;
	int n, lang;
	size_t len = 0;

	buf[0] = '\0';
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return;
	lang = dwarf_srclang(&cu);
	if (lang != DW_LANG_C_plus_plus && lang != DW_LANG_C_plus_plus_03 &&
	    lang != DW_LANG_C_plus_plus_11 && lang != DW_LANG_C_plus_plus_14)
		return;
	n = dwarf_getscopes_die(die, &scopes);
	/* scopes[0] is die itself, scopes[n - 1] the CU. */
	for (int i = n - 2; i >= (with_self ? 0 : 1) && len < size; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name = dwarf_diename(&scopes[i]);

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
		    tag != DW_TAG_enumeration_type)
			continue;
		if (!name && tag == DW_TAG_namespace && skip_anonymous)
			continue;
		if (!name && tag == DW_TAG_namespace)
			name = "(anonymous namespace)";
		if (!name)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "::" : "", name);
	}
	free(scopes);
	if (len >= size)
		buf[0] = '\0';
}

static int build_enumerators(struct vg_dwtypes *dt, Dwarf_Die *die, struct vg_type *t)
{
	Dwarf_Die c;
	size_t n = 0;
	uint64_t seen = 0;
	char scope[256];

	if (dwarf_child(die, &c) != 0)
		return 0;
	do
		n += dwarf_tag(&c) == DW_TAG_enumerator;
	while (dwarf_siblingof(&c, &c) == 0);
	t->enumerators = own(dt, n * sizeof(*t->enumerators));
	if (!t->enumerators)
		return -ENOMEM;
	t->flag_enum = n > 0;
	cxx_scope(die, attr_flag(die, DW_AT_enum_class), false, scope, sizeof(scope));
	dwarf_child(die, &c);
	do {
		struct vg_type_enumerator *e;
		uint64_t v;

		if (dwarf_tag(&c) != DW_TAG_enumerator)
			continue;
		e = &t->enumerators[t->n_enumerators++];
		e->name = dwarf_diename(&c);
		if (scope[0] && e->name) {
			size_t len = strlen(scope) + 2 + strlen(e->name) + 1;
			char *q = own(dt, len);

			if (!q)
				return -ENOMEM;
			snprintf(q, len, "%s::%s", scope, e->name);
			e->name = q;
		}
		v = attr_udata(&c, DW_AT_const_value, 0);
		if (t->is_signed && t->size && t->size < 8 && (v >> (t->size * 8 - 1) & 1))
			v |= ~0ull << (t->size * 8);
		e->value = (int64_t)v;
		/* gdb's rule: disjoint non-negative bit sets make a flag enum. */
		if (e->value < 0 || (seen & v))
			t->flag_enum = false;
		seen |= v;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int build_array(struct vg_dwtypes *dt, Dwarf_Die *die, struct vg_type *t)
{
	const struct vg_type *elem = type_attr(dt, die);
	uint64_t counts[8];
	bool known[8];
	size_t nd = 0;
	Dwarf_Die c;

	if (dwarf_child(die, &c) == 0) {
		do {
			Dwarf_Attribute a;

			if (dwarf_tag(&c) != DW_TAG_subrange_type || nd == 8)
				continue;
			known[nd] = true;
			if (dwarf_attr(&c, DW_AT_count, &a)) {
				counts[nd] = attr_udata(&c, DW_AT_count, 0);
			} else if (dwarf_attr(&c, DW_AT_upper_bound, &a)) {
				uint64_t hi = attr_udata(&c, DW_AT_upper_bound, 0);
				uint64_t lo = attr_udata(&c, DW_AT_lower_bound, 0);

				/* [0] is written upper bound -1. */
				counts[nd] = hi == UINT64_MAX || hi + 1 < lo ? 0 : hi + 1 - lo;
			} else {
				counts[nd] = 0;
				known[nd] = false;  /* T x[] */
			}
			nd++;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (nd == 0) {
		counts[0] = 0;
		known[0] = false;
		nd = 1;
	}
	/* int a[2][3] is an array of 2 arrays of 3: t is the outer one. */
	for (size_t i = nd; i-- > 1;) {
		struct vg_type *inner = own(dt, sizeof(*inner));

		if (!inner)
			return -ENOMEM;
		*inner = (struct vg_type){ .kind = VG_TYPE_ARRAY, .target = elem,
					   .count = counts[i], .count_known = known[i] };
		inner->size = known[i] ? counts[i] * vg_type_size(elem) : 0;
		elem = inner;
	}
	t->target = elem;
	t->count = counts[0];
	t->count_known = known[0];
	t->size = known[0] ? counts[0] * vg_type_size(elem) : 0;
	return 0;
}

static int build_function(struct vg_dwtypes *dt, Dwarf_Die *die, struct vg_type *t)
{
	Dwarf_Die c;
	size_t n = 0;

	t->target = type_attr(dt, die);
	if (dwarf_child(die, &c) != 0)
		return 0;
	do
		n += dwarf_tag(&c) == DW_TAG_formal_parameter;
	while (dwarf_siblingof(&c, &c) == 0);
	t->params = own(dt, n * sizeof(*t->params));
	if (!t->params)
		return -ENOMEM;
	dwarf_child(die, &c);
	do {
		if (dwarf_tag(&c) == DW_TAG_formal_parameter)
			t->params[t->n_params++] = type_attr(dt, &c);
		else if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
			t->varargs = true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static const struct vg_type *type_of_die(struct vg_dwtypes *dt, Dwarf_Die *die)
{
	uint64_t off = dwarf_dieoffset(die);
	struct vg_type *t = map_get(dt, off);
	int tag = dwarf_tag(die);

	if (t)
		return t;
	if (dt->depth >= MAX_TYPE_DEPTH * 4) {
		static const struct vg_type too_deep = { .kind = VG_TYPE_UNKNOWN, .name = "<too deep>" };

		return &too_deep;
	}
	dt->depth++;
	t = (struct vg_type *)build_die(dt, die, off, tag);
	dt->depth--;
	return t;
}

static const struct vg_type *build_die(struct vg_dwtypes *dt, Dwarf_Die *die, uint64_t off, int tag)
{
	struct vg_type *t;

	/* restrict and _Atomic change nothing that is printed. */
	if (tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type)
		return type_attr(dt, die);
	t = own(dt, sizeof(*t));
	if (!t || map_put(dt, off, t) < 0)
		return NULL;
	t->die = off;
	t->name = dwarf_diename(die);
	/* gdb's C++ names: "struct app::inner::Point", "<app::Base> = ". */
	if (t->name && (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
			tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type ||
			tag == DW_TAG_typedef)) {
		char scope[384];

		cxx_scope(die, false, false, scope, sizeof(scope));
		if (scope[0]) {
			size_t len = strlen(scope) + 2 + strlen(t->name) + 1;
			char *q = own(dt, len);

			if (!q)
				return NULL;
			snprintf(q, len, "%s::%s", scope, t->name);
			t->name = q;
		}
	}
	t->size = attr_udata(die, DW_AT_byte_size, 0);
	t->declaration = attr_flag(die, DW_AT_declaration);
	switch (tag) {
	case DW_TAG_base_type:
		switch (attr_udata(die, DW_AT_encoding, 0)) {
		case DW_ATE_boolean:
			t->kind = VG_TYPE_BOOL;
			break;
		case DW_ATE_float:
			t->kind = VG_TYPE_FLOAT;
			break;
		case DW_ATE_signed_char:
			t->is_char = true;
			/* fallthrough */
		case DW_ATE_signed:
			t->kind = VG_TYPE_INT;
			t->is_signed = true;
			break;
		case DW_ATE_unsigned_char:
			t->is_char = true;
			/* fallthrough */
		case DW_ATE_unsigned:
		case DW_ATE_UTF:
			t->kind = VG_TYPE_INT;
			break;
		default:
			t->kind = VG_TYPE_UNKNOWN;
		}
		break;
	case DW_TAG_unspecified_type:
		t->kind = VG_TYPE_VOID;
		break;
	case DW_TAG_enumeration_type:
		t->kind = VG_TYPE_ENUM;
		t->target = type_attr(dt, die);
		{
			const struct vg_type *u = vg_type_strip(t->target);

			t->is_signed = u ? u->is_signed
					 : attr_udata(die, DW_AT_encoding, DW_ATE_unsigned) == DW_ATE_signed;
			if (!t->size && u)
				t->size = u->size;
		}
		build_enumerators(dt, die, t);
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		t->kind = VG_TYPE_POINTER;
		t->is_reference = tag != DW_TAG_pointer_type;
		if (!t->size)
			t->size = 8;
		t->target = type_attr(dt, die);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		t->kind = tag == DW_TAG_structure_type ? VG_TYPE_STRUCT
			: tag == DW_TAG_union_type ? VG_TYPE_UNION : VG_TYPE_CLASS;
		build_members(dt, die, t);
		break;
	case DW_TAG_array_type:
		t->kind = VG_TYPE_ARRAY;
		build_array(dt, die, t);
		break;
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		t->kind = tag == DW_TAG_typedef ? VG_TYPE_TYPEDEF
			: tag == DW_TAG_const_type ? VG_TYPE_CONST : VG_TYPE_VOLATILE;
		t->target = type_attr(dt, die);
		t->size = vg_type_size(t->target);
		break;
	case DW_TAG_subroutine_type:
		t->kind = VG_TYPE_FUNC;
		build_function(dt, die, t);
		break;
	default:
		t->kind = VG_TYPE_UNKNOWN;
	}
	return dt->error ? NULL : t;
}

/* ------------------------------------------------------------------ */
/* walking the CUs' top level                                          */

/* Calls fn on every top-level DIE of every CU (namespaces entered, their
 * names joined with "::" into prefix) until fn returns non-zero. */
typedef int (*die_fn)(Dwarf_Die *cu, Dwarf_Die *die, const char *prefix, void *ctx);

/* Is the namespace ns (qualified) on the way to the qualified name path?
 * NULL path: every namespace is. */
static bool on_path(const char *path, const char *ns)
{
	size_t n = strlen(ns);

	return !path || (strncmp(path, ns, n) == 0 && path[n] == ':' && path[n + 1] == ':');
}

/* Only the namespaces on the way to path are entered (NULL: all): a name
 * is found without reading the DIEs of every other namespace, which in a
 * large C++ program hold most of them. */
static int walk_scope(Dwarf_Die *cu, Dwarf_Die *scope, const char *prefix, const char *path,
		      die_fn fn, void *ctx)
{
	Dwarf_Die c;
	int r;

	if (dwarf_child(scope, &c) != 0)
		return 0;
	do {
		if (dwarf_tag(&c) == DW_TAG_namespace && !dwarf_diename(&c)) {
			/* An anonymous namespace is transparent to lookups, as in
			 * C++ and gdb (g_anon, not "(anonymous namespace)::g_anon",
			 * which no one can type). */
			r = walk_scope(cu, &c, prefix, path, fn, ctx);
		} else if (dwarf_tag(&c) == DW_TAG_namespace) {
			const char *ns = dwarf_diename(&c);
			char sub[512];

			snprintf(sub, sizeof(sub), "%s%s%s", prefix, prefix[0] ? "::" : "", ns);
			r = on_path(path, sub) ? walk_scope(cu, &c, sub, path, fn, ctx) : 0;
		} else {
			r = fn(cu, &c, prefix, ctx);
		}
		if (r)
			return r;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int walk_cus(struct vg_dwtypes *dt, uint64_t first_cu, const char *path, die_fn fn, void *ctx)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	int r;

	if (first_cu) {
		Dwarf_Die d;

		if (dwarf_offdie(dt->dw, first_cu, &d) && (r = walk_scope(&d, &d, "", path, fn, ctx)))
			return r;
	}
	while (dwarf_get_units(dt->dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Die *top = unit_type == DW_UT_skeleton ? &subdie : &cudie;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue;
		if (first_cu && dwarf_dieoffset(top) == first_cu)
			continue;
		r = walk_scope(top, top, "", path, fn, ctx);
		if (r)
			return r;
	}
	return 0;
}

/* C++ writes a namespace variable twice: a declaration inside the
 * DW_TAG_namespace, and the definition (with the location) at the CU's
 * top level, naming the declaration by DW_AT_specification.  The walk
 * meets the namespace first and remembers the declarations whose last
 * name component matches, with their qualified names. */
#define MAX_NS_DECLS 32

struct var_search {
	struct vg_dwtypes *dt;
	const char *name, *file;
	const char *last;             /* name after its last "::" */
	struct vg_dwvar *out;
	size_t max, n;
	struct { uint64_t off; bool qualified_match; } decls[MAX_NS_DECLS];
	size_t n_decls;
	bool by_addr;                 /* match the static address, not the name */
	uint64_t addr;
};

static bool cu_matches(Dwarf_Die *cu, const char *file)
{
	const char *n = dwarf_diename(cu);
	size_t ln, lf;

	if (!file)
		return true;
	if (!n)
		return false;
	if (strcmp(n, file) == 0)
		return true;
	ln = strlen(n);
	lf = strlen(file);
	return ln > lf && n[ln - lf - 1] == '/' && strcmp(n + ln - lf, file) == 0;
}

/* Where a variable lives: DW_OP_addr (or DW_OP_addrx) alone; TLS when the
 * expression asks for the thread's block.  false: no static address. */
static bool var_location(Dwarf_Die *die, uint64_t *addr, bool *tls)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	*tls = false;
	if (!dwarf_attr(die, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) != 0 || n == 0)
		return false;
	/* Thread-local: "DW_OP_const* OFFSET; DW_OP_form_tls_address" (or
	 * the GNU spelling), OFFSET in the module's TLS block. */
	if (n == 2 && (ops[1].atom == DW_OP_form_tls_address ||
		       ops[1].atom == DW_OP_GNU_push_tls_address)) {
		*tls = true;
		*addr = ops[0].number;
		return ops[0].atom == DW_OP_const8u || ops[0].atom == DW_OP_const4u ||
		       ops[0].atom == DW_OP_constu || ops[0].atom == DW_OP_const2u ||
		       ops[0].atom == DW_OP_const1u;
	}
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom == DW_OP_form_tls_address || ops[i].atom == DW_OP_GNU_push_tls_address)
			return *tls = false;  /* a TLS form this reader does not know */
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_addr) {
		*addr = ops[0].number;
		return true;
	}
	if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
		Dwarf_Attribute r;
		Dwarf_Addr v;

		if (dwarf_getlocation_attr(&a, &ops[0], &r) == 0 && dwarf_formaddr(&r, &v) == 0) {
			*addr = v;
			return true;
		}
	}
	return false;
}

static int var_visit(Dwarf_Die *cu, Dwarf_Die *die, const char *prefix, void *ctx)
{
	struct var_search *s = ctx;
	const char *name;
	char full[512];
	uint64_t addr = 0;
	bool tls;

	Dwarf_Attribute a;
	Dwarf_Die spec;

	if (dwarf_tag(die) != DW_TAG_variable || !cu_matches(cu, s->file))
		return 0;
	if (!dwarf_attr_integrate(die, DW_AT_name, &a) || !(name = dwarf_formstring(&a)))
		return 0;
	if (s->by_addr) {
		if (!var_location(die, &addr, &tls) || tls || addr != s->addr)
			return 0;
		name = s->name;
		goto found;
	}
	/* Every candidate ends in the searched name's last component. */
	if (strcmp(name, s->last) != 0)
		return 0;
	if (prefix[0]) {
		snprintf(full, sizeof(full), "%s::%s", prefix, name);
		if (strcmp(name, s->last) == 0 && attr_flag(die, DW_AT_declaration) &&
		    s->n_decls < MAX_NS_DECLS) {
			s->decls[s->n_decls].off = dwarf_dieoffset(die);
			s->decls[s->n_decls++].qualified_match = strcmp(full, s->name) == 0;
			return 0;
		}
		name = full;
	} else if (dwarf_attr(die, DW_AT_specification, &a) && dwarf_formref_die(&a, &spec)) {
		uint64_t off = dwarf_dieoffset(&spec);
		bool seen = false;

		for (size_t i = 0; i < s->n_decls; i++) {
			if (s->decls[i].off == off) {
				name = s->decls[i].qualified_match ? s->name : "";
				seen = true;
			}
		}
		/* A static data member (Cls::s_count) is declared inside its
		 * class, where the walk does not go: its scope is asked for,
		 * only for a candidate whose last name component matches. */
		if (!seen && strcmp(name, s->last) == 0) {
			char scope[384];

			cxx_scope(&spec, false, true, scope, sizeof(scope));
			if (scope[0]) {
				snprintf(full, sizeof(full), "%s::%s", scope, name);
				name = full;
			}
		}
	}
	if (strcmp(name, s->name) != 0 || !var_location(die, &addr, &tls))
		return 0;
found:
	if (s->n < s->max) {
		struct vg_dwvar *v = &s->out[s->n];

		*v = (struct vg_dwvar){ .name = s->name, .cu_name = dwarf_diename(cu),
					.static_addr = addr, .tls = tls,
					.external = attr_flag(die, DW_AT_external),
					.cu = dwarf_dieoffset(cu) };
		v->type = type_attr(s->dt, die);
		if (s->dt->error)
			return s->dt->error;
	}
	s->n++;
	return 0;
}

int vg_dwtypes_find_var_at(struct vg_dwtypes *dt, uint64_t static_addr, const char *label,
			   struct vg_dwvar *out, struct vg_error *err)
{
	struct var_search s = { .dt = dt, .name = label, .last = label, .out = out, .max = 1,
				.by_addr = true, .addr = static_addr };
	int r = walk_cus(dt, 0, NULL, var_visit, &s);

	if (r < 0)
		return vg_error_set(err, r, "out of memory reading the DWARF types");
	return s.n ? 1 : 0;
}

/* The direct path: the CU(s) the ELF symbol of the name points to
 * (dwvarsym.h), their top level alone.  1 when it answered (s filled),
 * 0 when every CU must be walked, <0 on error.  It answers only when the
 * symbol table proves one definition and the CU holds it at the symbol's
 * address, so the answer is the full walk's. */
static int find_var_by_symbol(struct vg_dwtypes *dt, struct var_search *s)
{
	const struct vg_image *symimg = dt->dbg->symbol_image ? dt->dbg->symbol_image
							       : dt->dbg->dwarf_image;
	uint64_t cus[8], addr;
	int n = vg_dwvar_symbol_cus(dt->dw, vg_image_elf(symimg), s->name, &addr, cus, 8);

	for (int i = 0; i < n; i++) {
		Dwarf_Die d;
		int r;

		if (!dwarf_offdie(dt->dw, cus[i], &d))
			return 0;
		r = walk_scope(&d, &d, "", s->name, var_visit, s);
		if (r)
			return r < 0 ? r : 0;
	}
	if (s->n == 0 || s->n > s->max)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->out[i].static_addr != addr || s->out[i].tls)
			return 0;
	return 1;
}

int vg_dwtypes_find_var(struct vg_dwtypes *dt, const char *name, const char *file,
			struct vg_dwvar *out, size_t max, struct vg_error *err)
{
	struct var_search s = { .dt = dt, .name = name, .file = file, .out = out, .max = max };
	const char *colons = strstr(name, "::");
	int r;

	s.last = name;
	while (colons) {
		s.last = colons + 2;
		colons = strstr(s.last, "::");
	}
	r = find_var_by_symbol(dt, &s);
	if (r == 0) {
		s.n = 0;
		r = walk_cus(dt, 0, name, var_visit, &s);
	}

	if (r < 0)
		return vg_error_set(err, r, "out of memory reading the DWARF types");
	return (int)(s.n > INT32_MAX ? INT32_MAX : s.n);
}

struct static_search {
	uint64_t decl, addr;
	bool found;
};

static int static_visit(Dwarf_Die *cu, Dwarf_Die *die, const char *prefix, void *ctx)
{
	struct static_search *s = ctx;
	Dwarf_Attribute a;
	Dwarf_Die spec;
	bool tls;

	(void)cu;
	(void)prefix;
	if (dwarf_tag(die) != DW_TAG_variable || !dwarf_attr(die, DW_AT_specification, &a) ||
	    !dwarf_formref_die(&a, &spec) || dwarf_dieoffset(&spec) != s->decl)
		return 0;
	s->found = var_location(die, &s->addr, &tls) && !tls;
	return 1;
}

int vg_dwtypes_static_member(struct vg_dwtypes *dt, uint64_t decl, uint64_t *static_addr,
			     struct vg_error *err)
{
	struct static_search s = { .decl = decl };
	Dwarf_Die d, cu;
	uint64_t first = 0;
	int r;

	/* The class's own CU first: usually where its statics are defined. */
	if (dwarf_offdie(dt->dw, decl, &d) && dwarf_diecu(&d, &cu, NULL, NULL))
		first = dwarf_dieoffset(&cu);
	r = walk_cus(dt, first, NULL, static_visit, &s);
	if (r < 0)
		return vg_error_set(err, r, "out of memory reading the DWARF types");
	if (!s.found)
		return 0;
	*static_addr = s.addr;
	return 1;
}

/* ------------------------------------------------------------------ */
/* types by name                                                        */

/* The C base types, for casts whatever the DWARF holds; names as gcc
 * writes them in DW_AT_name. */
static const struct vg_type base_types[] = {
	{ .kind = VG_TYPE_VOID, .name = "void" },
	{ .kind = VG_TYPE_INT, .name = "char", .size = 1, .is_signed = true, .is_char = true },
	{ .kind = VG_TYPE_INT, .name = "signed char", .size = 1, .is_signed = true, .is_char = true },
	{ .kind = VG_TYPE_INT, .name = "unsigned char", .size = 1, .is_char = true },
	{ .kind = VG_TYPE_INT, .name = "short int", .size = 2, .is_signed = true },
	{ .kind = VG_TYPE_INT, .name = "short unsigned int", .size = 2 },
	{ .kind = VG_TYPE_INT, .name = "int", .size = 4, .is_signed = true },
	{ .kind = VG_TYPE_INT, .name = "unsigned int", .size = 4 },
	{ .kind = VG_TYPE_INT, .name = "long int", .size = 8, .is_signed = true },
	{ .kind = VG_TYPE_INT, .name = "long unsigned int", .size = 8 },
	{ .kind = VG_TYPE_INT, .name = "long long int", .size = 8, .is_signed = true },
	{ .kind = VG_TYPE_INT, .name = "long long unsigned int", .size = 8 },
	{ .kind = VG_TYPE_FLOAT, .name = "float", .size = 4 },
	{ .kind = VG_TYPE_FLOAT, .name = "double", .size = 8 },
	{ .kind = VG_TYPE_BOOL, .name = "_Bool", .size = 1 },
	{ .kind = VG_TYPE_BOOL, .name = "bool", .size = 1 },
};

/* "unsigned long" -> "long unsigned int"; NULL if not a base type. */
static const struct vg_type *base_type(const char *name)
{
	int n_unsigned = 0, n_signed = 0, n_short = 0, n_long = 0, n_int = 0, n_char = 0, other = 0;
	char buf[128], *save = NULL, *w;
	const char *canon;

	for (size_t i = 0; i < sizeof(base_types) / sizeof(base_types[0]); i++)
		if (strcmp(base_types[i].name, name) == 0)
			return &base_types[i];
	snprintf(buf, sizeof(buf), "%s", name);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		n_unsigned += strcmp(w, "unsigned") == 0;
		n_signed += strcmp(w, "signed") == 0;
		n_short += strcmp(w, "short") == 0;
		n_long += strcmp(w, "long") == 0;
		n_int += strcmp(w, "int") == 0;
		n_char += strcmp(w, "char") == 0;
		other += strcmp(w, "unsigned") && strcmp(w, "signed") && strcmp(w, "short") &&
			 strcmp(w, "long") && strcmp(w, "int") && strcmp(w, "char");
	}
	if (other || (n_unsigned && n_signed) || n_int > 1 || n_char > 1 || n_short > 1 ||
	    n_long > 2 || (n_short && n_long) || (n_char && (n_int || n_short || n_long)))
		return NULL;
	if (n_char)
		canon = n_unsigned ? "unsigned char" : n_signed ? "signed char" : "char";
	else if (n_short)
		canon = n_unsigned ? "short unsigned int" : "short int";
	else if (n_long == 2)
		canon = n_unsigned ? "long long unsigned int" : "long long int";
	else if (n_long)
		canon = n_unsigned ? "long unsigned int" : "long int";
	else if (n_unsigned || n_signed || n_int)
		canon = n_unsigned ? "unsigned int" : "int";
	else
		return NULL;
	for (size_t i = 0; i < sizeof(base_types) / sizeof(base_types[0]); i++)
		if (strcmp(base_types[i].name, canon) == 0)
			return &base_types[i];
	return NULL;
}

struct type_search {
	struct vg_dwtypes *dt;
	int tag;                      /* 0: typedef or base type */
	const char *name;
	Dwarf_Die found;
	bool have, have_decl;
};

static int type_visit(Dwarf_Die *cu, Dwarf_Die *die, const char *prefix, void *ctx)
{
	struct type_search *s = ctx;
	int tag = dwarf_tag(die);
	const char *name;
	char full[512];

	/* Without a keyword: a typedef, a base type, or (C++) a class name. */
	if (s->tag ? tag != s->tag
		   : tag != DW_TAG_typedef && tag != DW_TAG_base_type && tag != DW_TAG_class_type &&
		     tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
		     tag != DW_TAG_enumeration_type)
		return 0;
	name = dwarf_diename(die);
	if (!name)
		return 0;
	if (prefix[0]) {
		snprintf(full, sizeof(full), "%s::%s", prefix, name);
		name = full;
	}
	if (strcmp(name, s->name) != 0)
		return 0;
	if (attr_flag(die, DW_AT_declaration)) {
		if (!s->have && !s->have_decl) {
			s->found = *die;
			s->have_decl = true;
		}
		return 0;
	}
	s->found = *die;
	s->have = true;
	return 1;
}

const struct vg_type *vg_dwtypes_find_type(struct vg_dwtypes *dt, const char *name,
					   uint64_t cu, struct vg_error *err)
{
	static const struct { const char *kw; int tag; } kws[] = {
		{ "struct ", DW_TAG_structure_type }, { "union ", DW_TAG_union_type },
		{ "enum ", DW_TAG_enumeration_type }, { "class ", DW_TAG_class_type },
	};
	struct type_search s = { .dt = dt, .name = name };
	const struct vg_type *t;

	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (strncmp(name, kws[i].kw, strlen(kws[i].kw)) == 0) {
			s.tag = kws[i].tag;
			s.name = name + strlen(kws[i].kw);
			while (*s.name == ' ')
				s.name++;
		}
	}
	if (!s.tag && (t = base_type(name)))
		return t;
	if (dt && walk_cus(dt, cu, s.name, type_visit, &s) < 0) {
		vg_error_set(err, -ENOMEM, "out of memory reading the DWARF types");
		return NULL;
	}
	if (dt && (s.have || s.have_decl)) {
		t = type_of_die(dt, &s.found);
		if (!t)
			vg_error_set(err, -ENOMEM, "out of memory reading the DWARF types");
		return t;
	}
	vg_error_set(err, -ENOENT, "no type named '%s' in the debug info", name);
	return NULL;
}

const struct vg_type *vg_dwtypes_pointer_to(struct vg_dwtypes *dt, const struct vg_type *t)
{
	struct vg_type *p;

	if (!dt) {
		/* No DWARF at all: casts to base types still work. */
		static struct vg_type ptrs[sizeof(base_types) / sizeof(base_types[0])];

		for (size_t i = 0; i < sizeof(base_types) / sizeof(base_types[0]); i++) {
			if (&base_types[i] == t) {
				ptrs[i] = (struct vg_type){ .kind = VG_TYPE_POINTER, .size = 8, .target = t };
				return &ptrs[i];
			}
		}
		return NULL;
	}
	p = own(dt, sizeof(*p));
	if (p)
		*p = (struct vg_type){ .kind = VG_TYPE_POINTER, .size = 8, .target = t };
	return p;
}

const struct vg_type *vg_dwtypes_complete(struct vg_dwtypes *dt, const struct vg_type *t)
{
	static const int tags[] = {
		[VG_TYPE_STRUCT] = DW_TAG_structure_type, [VG_TYPE_UNION] = DW_TAG_union_type,
		[VG_TYPE_CLASS] = DW_TAG_class_type, [VG_TYPE_ENUM] = DW_TAG_enumeration_type,
	};
	struct type_search s;

	if (!dt || !t || !t->declaration || !t->name ||
	    (t->kind != VG_TYPE_STRUCT && t->kind != VG_TYPE_UNION &&
	     t->kind != VG_TYPE_CLASS && t->kind != VG_TYPE_ENUM))
		return t;
	s = (struct type_search){ .dt = dt, .tag = tags[t->kind], .name = t->name };
	if (walk_cus(dt, 0, s.name, type_visit, &s) < 0 || !s.have)
		return t;
	const struct vg_type *full = type_of_die(dt, &s.found);

	return full ? full : t;
}

/* ------------------------------------------------------------------ */
/* questions about a type                                               */

const struct vg_type *vg_type_strip(const struct vg_type *t)
{
	for (int i = 0; t && (t->kind == VG_TYPE_TYPEDEF || t->kind == VG_TYPE_CONST ||
			      t->kind == VG_TYPE_VOLATILE); i++) {
		if (i == MAX_TYPE_DEPTH)
			return NULL;  /* a typedef cycle: no type */
		t = t->target;
	}
	return t;
}

uint64_t vg_type_size(const struct vg_type *t)
{
	const struct vg_type *s = vg_type_strip(t);
	uint64_t n = 1;

	for (int i = 0; s && s->kind == VG_TYPE_ARRAY; i++) {
		if (!s->count_known || i == MAX_TYPE_DEPTH ||
		    __builtin_mul_overflow(n, s->count, &n))
			return 0;
		s = vg_type_strip(s->target);
	}
	if (!s || __builtin_mul_overflow(n, s->size, &n))
		return 0;
	return n;
}

/* C declarator syntax: the type is built around what is inside (inner),
 * e.g. pointer to array of 4 int: inner "*" -> "(*)" -> "int (*)[4]". */
static void type_name_in(const struct vg_type *t, const char *inner, char *buf, size_t size,
			 int depth)
{
	char in[512];

	if (depth > MAX_TYPE_DEPTH) {
		snprintf(buf, size, "<too deep>%s%s", inner[0] ? " " : "", inner);
		return;
	}
	if (!t) {
		snprintf(buf, size, "void%s%s", inner[0] ? " " : "", inner);
		return;
	}
	switch (t->kind) {
	case VG_TYPE_POINTER: {
		const struct vg_type *to = t->target;
		bool wrap = to && (to->kind == VG_TYPE_ARRAY || to->kind == VG_TYPE_FUNC);

		snprintf(in, sizeof(in), "%s%s%s%s", wrap ? "(" : "", t->is_reference ? "&" : "*",
			 inner, wrap ? ")" : "");
		type_name_in(to, in, buf, size, depth + 1);
		return;
	}
	case VG_TYPE_ARRAY:
		if (t->count_known)
			snprintf(in, sizeof(in), "%s[%llu]", inner, (unsigned long long)t->count);
		else
			snprintf(in, sizeof(in), "%s[]", inner);
		type_name_in(t->target, in, buf, size, depth + 1);
		return;
	case VG_TYPE_FUNC: {
		size_t n = (size_t)snprintf(in, sizeof(in), "%s(", inner);

		for (size_t i = 0; i < t->n_params && n < sizeof(in); i++) {
			char p[256];

			type_name_in(t->params[i], "", p, sizeof(p), depth + 1);
			n += (size_t)snprintf(in + n, sizeof(in) - n, "%s%s", i ? ", " : "", p);
		}
		if (n < sizeof(in))
			n += (size_t)snprintf(in + n, sizeof(in) - n, "%s%s)",
					      t->varargs ? (t->n_params ? ", ..." : "...") : "",
					      !t->n_params && !t->varargs ? "void" : "");
		type_name_in(t->target, in, buf, size, depth + 1);
		return;
	}
	case VG_TYPE_CONST:
	case VG_TYPE_VOLATILE: {
		const char *q = t->kind == VG_TYPE_CONST ? "const" : "volatile";
		const struct vg_type *to = t->target;

		if (to && to->kind == VG_TYPE_POINTER) {
			snprintf(in, sizeof(in), "%s%s%s", q, inner[0] ? " " : "", inner);
			type_name_in(to, in, buf, size, depth + 1);
		} else {
			char b[512];

			type_name_in(to, inner, b, sizeof(b), depth + 1);
			snprintf(buf, size, "%s %s", q, b);
		}
		return;
	}
	default: {
		const char *kw = t->kind == VG_TYPE_STRUCT ? "struct "
			: t->kind == VG_TYPE_UNION ? "union "
			: t->kind == VG_TYPE_ENUM ? "enum "
			: t->kind == VG_TYPE_CLASS ? "class " : "";

		snprintf(buf, size, "%s%s%s%s", kw, t->name ? t->name : "{...}",
			 inner[0] ? " " : "", inner);
	}
	}
}

char *vg_type_name(const struct vg_type *t, char *buf, size_t size)
{
	type_name_in(t, "", buf, size, 0);
	return buf;
}
