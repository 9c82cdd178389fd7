/* params.c - a function's parameters as its entry holds them (params.h):
 * System V x86-64 classification of each DWARF formal parameter, only as
 * far as vigil can be sure which integer register holds it (see
 * vg_sym_params), and its type named as C prints it.
 *
 * The DWARF is the symbolizer's own (vg_symbolizer_dwarf).  Never prints. */
#include "sym/params.h"

#include <dwarf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <elfutils/libdw.h>

#define N_INT_REGS 6

const char *vg_sym_param_reg_name(unsigned reg)
{
	static const char *const names[N_INT_REGS] = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" };

	return reg < N_INT_REGS ? names[reg] : "?";
}

static const char *attr_string(Dwarf_Die *d, unsigned name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, name, &a) ? dwarf_formstring(&a) : NULL;
}

static bool attr_die(Dwarf_Die *d, unsigned name, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, name, &a) && dwarf_formref_die(&a, out);
}

static bool attr_uint(Dwarf_Die *d, unsigned name, Dwarf_Word *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, name, &a) && dwarf_formudata(&a, out) == 0;
}

/* ---- type names as C prints them ---- */

#define TYPE_DEPTH 8

static void type_name(Dwarf_Die *t, char *buf, size_t size, int depth);

/* "T *", "T **", "T &": no space between stars. */
static void append_declarator(const char *inner, const char *op, char *buf, size_t size)
{
	size_t n = strlen(inner);
	bool tight = n && (inner[n - 1] == '*' || inner[n - 1] == '&');

	snprintf(buf, size, "%s%s%s", inner, tight ? "" : " ", op);
}

static void tagged_name(Dwarf_Die *t, const char *kw, char *buf, size_t size)
{
	const char *name = attr_string(t, DW_AT_name);

	snprintf(buf, size, "%s%s%s", kw, kw[0] ? " " : "", name ? name : "<anonymous>");
}

/* "int (*)(int, char *)" for a pointer to a function type. */
/* Type names are for reading: a long one is cut, on purpose (vsnprintf,
 * so the compiler does not warn about each cut snprintf may make). */
__attribute__((format(printf, 3, 4)))
static void type_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void function_pointer(Dwarf_Die *fn, char *buf, size_t size, int depth)
{
	char ret[96], arg[96], args[128] = "";
	Dwarf_Die ret_t, child;
	size_t used = 0;

	if (attr_die(fn, DW_AT_type, &ret_t))
		type_name(&ret_t, ret, sizeof(ret), depth + 1);
	else
		snprintf(ret, sizeof(ret), "void");
	/* Each argument may be a function pointer again (a type loop in
	 * corrupt DWARF need not end): past two levels, or once the text
	 * is full, do not name them, or the work grows as args^TYPE_DEPTH. */
	if (depth >= 2) {
		type_text(buf, size, "%s (*)(...)", ret);
		return;
	}
	if (dwarf_child(fn, &child) == 0) {
		do {
			Dwarf_Die at;
			int tag = dwarf_tag(&child);

			if (used >= sizeof(args))
				break;
			if (tag == DW_TAG_unspecified_parameters)
				snprintf(arg, sizeof(arg), "...");
			else if (tag == DW_TAG_formal_parameter && attr_die(&child, DW_AT_type, &at))
				type_name(&at, arg, sizeof(arg), depth + 1);
			else
				continue;
			used += (size_t)snprintf(args + used, sizeof(args) - used, "%s%s",
							 used ? ", " : "", arg);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	type_text(buf, size, "%s (*)(%s)", ret, used ? args : "void");
}

/* const/volatile: before a named type, after a pointer ("char *const"). */
static void qualified(Dwarf_Die *t, const char *q, char *buf, size_t size, int depth)
{
	char inner[96];
	Dwarf_Die target;

	if (!attr_die(t, DW_AT_type, &target)) {
		snprintf(buf, size, "%s void", q);
		return;
	}
	type_name(&target, inner, sizeof(inner), depth + 1);
	if (dwarf_tag(&target) == DW_TAG_pointer_type)
		append_declarator(inner, q, buf, size);
	else
		type_text(buf, size, "%s %s", q, inner);
}

static void pointer_like(Dwarf_Die *t, const char *op, char *buf, size_t size, int depth)
{
	char inner[96];
	Dwarf_Die target;

	if (!attr_die(t, DW_AT_type, &target)) {
		append_declarator("void", op, buf, size);
		return;
	}
	if (dwarf_tag(&target) == DW_TAG_subroutine_type && op[0] == '*') {
		function_pointer(&target, buf, size, depth);
		return;
	}
	type_name(&target, inner, sizeof(inner), depth + 1);
	append_declarator(inner, op, buf, size);
}

static void type_name(Dwarf_Die *t, char *buf, size_t size, int depth)
{
	Dwarf_Die target;

	if (depth > TYPE_DEPTH) {
		snprintf(buf, size, "...");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
	case DW_TAG_unspecified_type:
	case DW_TAG_class_type:
		tagged_name(t, "", buf, size);
		break;
	case DW_TAG_structure_type:
		tagged_name(t, "struct", buf, size);
		break;
	case DW_TAG_union_type:
		tagged_name(t, "union", buf, size);
		break;
	case DW_TAG_enumeration_type:
		tagged_name(t, "enum", buf, size);
		break;
	case DW_TAG_const_type:
		qualified(t, "const", buf, size, depth);
		break;
	case DW_TAG_volatile_type:
		qualified(t, "volatile", buf, size, depth);
		break;
	case DW_TAG_atomic_type:
		qualified(t, "_Atomic", buf, size, depth);
		break;
	case DW_TAG_pointer_type:
		pointer_like(t, "*", buf, size, depth);
		break;
	case DW_TAG_reference_type:
		pointer_like(t, "&", buf, size, depth);
		break;
	case DW_TAG_rvalue_reference_type:
		pointer_like(t, "&&", buf, size, depth);
		break;
	case DW_TAG_array_type:
		pointer_like(t, "[]", buf, size, depth);
		break;
	case DW_TAG_restrict_type:
		/* "char *restrict" reads as noise in a report: the type is
		 * the pointer. */
		if (attr_die(t, DW_AT_type, &target))
			type_name(&target, buf, size, depth + 1);
		else
			snprintf(buf, size, "void");
		break;
	default:
		snprintf(buf, size, "?");
		break;
	}
}

/* ---- System V classification ---- */

enum param_class {
	PARAM_INT,    /* the next integer register */
	PARAM_SKIP,   /* xmm or memory: no integer register */
	PARAM_STOP,   /* vigil cannot tell which registers it takes */
};

static enum vg_param_kind kind_of_encoding(Dwarf_Word enc, bool *ok)
{
	*ok = true;
	switch (enc) {
	case DW_ATE_signed:
	case DW_ATE_signed_char:
		return VG_PARAM_SIGNED;
	case DW_ATE_unsigned:
	case DW_ATE_unsigned_char:
	case DW_ATE_boolean:
	case DW_ATE_UTF:
		return VG_PARAM_UNSIGNED;
	default:
		*ok = false;
		return VG_PARAM_UNKNOWN;
	}
}

static bool is_float_encoding(Dwarf_Word enc)
{
	return enc == DW_ATE_float || enc == DW_ATE_complex_float ||
	       enc == DW_ATE_imaginary_float || enc == DW_ATE_decimal_float;
}

static enum param_class classify_base(Dwarf_Die *t, struct vg_sym_param *p)
{
	Dwarf_Word enc;
	int size = dwarf_bytesize(t);
	bool ok;

	if (!attr_uint(t, DW_AT_encoding, &enc) || size <= 0)
		return PARAM_STOP;
	/* float, double: xmm; long double and complex long double: memory. */
	if (is_float_encoding(enc))
		return PARAM_SKIP;
	p->kind = kind_of_encoding(enc, &ok);
	/* __int128 takes two registers: past it, vigil would be guessing. */
	if (!ok || size > 8)
		return PARAM_STOP;
	p->size = (uint8_t)size;
	return PARAM_INT;
}

/* An enum is its underlying type: DW_AT_type (DWARF 3+), else its own
 * encoding (some producers), else C's default, a signed int. */
static enum param_class classify_enum(Dwarf_Die *t, struct vg_sym_param *p)
{
	Dwarf_Die under;
	Dwarf_Word enc;
	int size = dwarf_bytesize(t);
	bool ok = false;

	if (attr_die(t, DW_AT_type, &under) && dwarf_peel_type(&under, &under) == 0 &&
	    attr_uint(&under, DW_AT_encoding, &enc))
		p->kind = kind_of_encoding(enc, &ok);
	else if (attr_uint(t, DW_AT_encoding, &enc))
		p->kind = kind_of_encoding(enc, &ok);
	if (!ok)
		p->kind = VG_PARAM_SIGNED;
	if (size <= 0 || size > 8)
		return PARAM_STOP;
	p->size = (uint8_t)size;
	return PARAM_INT;
}

/* A class with a non-trivial copy constructor or destructor is passed by
 * invisible reference (the compiler says so in DW_AT_calling_convention,
 * DWARF 5); any other aggregate over 16 bytes goes to memory.  An
 * aggregate of 16 bytes or less is split over integer and SSE registers
 * by its fields' classes, which vigil does not work out: stop there. */
static enum param_class classify_aggregate(Dwarf_Die *t, struct vg_sym_param *p)
{
	Dwarf_Word cc;
	int size = dwarf_bytesize(t);

	if (attr_uint(t, DW_AT_calling_convention, &cc) && cc == DW_CC_pass_by_reference) {
		p->kind = VG_PARAM_POINTER;
		p->size = 8;
		return PARAM_INT;
	}
	if (size > 16)
		return PARAM_SKIP;
	return PARAM_STOP;
}

static enum param_class classify_type(Dwarf_Die *type, struct vg_sym_param *p)
{
	Dwarf_Die t;

	if (dwarf_peel_type(type, &t) != 0)
		return PARAM_STOP;
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_array_type:  /* decays to a pointer */
		p->kind = VG_PARAM_POINTER;
		p->size = 8;
		return PARAM_INT;
	case DW_TAG_base_type:
		return classify_base(&t, p);
	case DW_TAG_enumeration_type:
		return classify_enum(&t, p);
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		return classify_aggregate(&t, p);
	default:
		return PARAM_STOP;
	}
}

static enum param_class classify_param(Dwarf_Die *param, struct vg_sym_param *p)
{
	const char *name = attr_string(param, DW_AT_name);
	Dwarf_Die type;

	memset(p, 0, sizeof(*p));
	if (!attr_die(param, DW_AT_type, &type))
		return PARAM_STOP;
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	type_name(&type, p->type, sizeof(p->type), 0);
	return classify_type(&type, p);
}

struct param_fill {
	struct vg_sym_param *params;
	size_t max, n;
	unsigned reg;   /* next integer register */
};

static void fill_unnamed(struct param_fill *f)
{
	while (f->n < f->max && f->reg < N_INT_REGS)
		f->params[f->n++] = (struct vg_sym_param){
			.kind = VG_PARAM_UNKNOWN, .size = 8, .reg = f->reg++,
		};
}

static bool has_params(Dwarf_Die *fn)
{
	Dwarf_Die c;

	if (dwarf_child(fn, &c) != 0)
		return false;
	do {
		if (dwarf_tag(&c) == DW_TAG_formal_parameter)
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* A struct over 16 bytes returned by value: the caller passes where to
 * put it in rdi, before the first parameter. */
static bool returns_in_memory(Dwarf_Die *fn)
{
	Dwarf_Die t;
	struct vg_sym_param scratch;
	int tag;

	if (!attr_die(fn, DW_AT_type, &t) || dwarf_peel_type(&t, &t) != 0)
		return false;
	tag = dwarf_tag(&t);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return false;
	return classify_aggregate(&t, &scratch) != PARAM_STOP;
}

static void params_of(Dwarf_Die *fn, struct param_fill *f)
{
	Dwarf_Die origin, c;
	Dwarf_Die *src = fn;

	/* An out-of-line copy usually repeats the parameters (pointing at
	 * the abstract instance); when it lists none, the abstract
	 * instance or declaration has them. */
	if (!has_params(fn) && (attr_die(fn, DW_AT_abstract_origin, &origin) ||
				attr_die(fn, DW_AT_specification, &origin)))
		src = &origin;
	/* A struct returned in memory: the caller passes its address in rdi,
	 * ahead of the parameters (a slot of its own, so the registers
	 * listed stay rdi, rsi, ... in order). */
	if (returns_in_memory(fn) && f->n < f->max)
		f->params[f->n++] = (struct vg_sym_param){
			.name = "", .type = "", .kind = VG_PARAM_POINTER, .size = 8, .reg = f->reg++,
		};
	if (dwarf_child(src, &c) != 0)
		return;
	do {
		struct vg_sym_param p;
		int tag = dwarf_tag(&c);

		if (f->n >= f->max || f->reg >= N_INT_REGS)
			return;
		/* varargs: the rest are in registers, with no names */
		if (tag == DW_TAG_unspecified_parameters) {
			fill_unnamed(f);
			return;
		}
		if (tag != DW_TAG_formal_parameter)
			continue;
		switch (classify_param(&c, &p)) {
		case PARAM_INT:
			p.reg = f->reg++;
			f->params[f->n++] = p;
			break;
		case PARAM_SKIP:
			break;
		case PARAM_STOP:
			fill_unnamed(f);
			return;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static bool holds_subprograms(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_module;
}

/* The out-of-line function (not an inlined copy) containing addr, among
 * the children of parent.  dwarf_getscopes would not do: inside an
 * inlined copy it continues into the inlined function's abstract
 * definition, whose parameters are not the probed function's. */
static bool subprogram_at(Dwarf_Die *parent, uint64_t addr, int depth, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_subprogram && dwarf_haspc(&c, addr) == 1) {
			*out = c;
			return true;
		}
		if (holds_subprograms(tag) && subprogram_at(&c, addr, depth + 1, out))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* dwarf_addrdie reads .debug_aranges only (libdw 0.188), which clang
 * does not emit by default: without it, ask each CU's own ranges. */
static bool function_die(Dwarf *dw, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;

	if (dwarf_addrdie(dw, addr, &cudie))
		return subprogram_at(&cudie, addr, 0, out);
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0)
		if ((unit_type == DW_UT_compile || unit_type == DW_UT_partial) &&
		    dwarf_haspc(&cudie, addr) == 1 && subprogram_at(&cudie, addr, 0, out))
			return true;
	return false;
}

/* The DWARF entry of the function at runtime address fn_addr: 1 and *fn,
 * 0 when there is none (no image, no DWARF, no such function), or the
 * lookup's negative error. */
static int function_die_at(struct vg_symbolizer *sym, uint64_t fn_addr, Dwarf_Die *fn,
			   struct vg_error *err)
{
	struct vg_sym_result res;
	Dwarf *dwarf = NULL;
	int rc = vg_sym_lookup(sym, fn_addr, &res, err);

	if (rc < 0)
		return rc;
	if (res.image)
		dwarf = vg_symbolizer_dwarf(sym, res.image, err);
	return dwarf && function_die(dwarf, fn_addr - res.image->bias, fn);
}

int vg_sym_params(struct vg_symbolizer *sym, uint64_t fn_addr, struct vg_sym_param *params,
		    size_t max, size_t *n, struct vg_error *err)
{
	struct param_fill f = { .params = params, .max = max < N_INT_REGS ? max : N_INT_REGS };
	Dwarf_Die fn;
	int rc;

	*n = 0;
	rc = function_die_at(sym, fn_addr, &fn, err);
	if (rc < 0)
		return rc;
	if (rc > 0)
		params_of(&fn, &f);
	else
		fill_unnamed(&f);
	*n = f.n;
	return 0;
}

int vg_sym_return_type(struct vg_symbolizer *sym, uint64_t fn_addr, struct vg_sym_param *out,
		       struct vg_error *err)
{
	Dwarf_Die fn, origin, type;
	Dwarf_Die *src;
	int rc;

	*out = (struct vg_sym_param){ .kind = VG_PARAM_UNKNOWN, .size = 8 };
	rc = function_die_at(sym, fn_addr, &fn, err);
	if (rc <= 0)
		return rc;
	/* An out-of-line copy of an inlined or declared function names its
	 * type on the abstract instance or the declaration. */
	src = &fn;
	if (!attr_die(&fn, DW_AT_type, &type) && (attr_die(&fn, DW_AT_abstract_origin, &origin) ||
						  attr_die(&fn, DW_AT_specification, &origin)))
		src = &origin;
	if (!attr_die(src, DW_AT_type, &type)) {
		/* No type: void; rax is whatever was left there (raw, hex). */
		snprintf(out->type, sizeof(out->type), "void");
		return 0;
	}
	type_name(&type, out->type, sizeof(out->type), 0);
	/* Only an integer-class value is in rax; a float (xmm0) or a struct
	 * (rax:rdx, or memory) is shown raw, as unknown. */
	if (classify_type(&type, out) != PARAM_INT) {
		out->kind = VG_PARAM_UNKNOWN;
		out->size = 8;
	}
	return 0;
}
