/* fuzz_dwtypes.c - libFuzzer harness for the DWARF type reader of `vigil
 * print` (src/sym/dwtypes.c).
 *
 * The input is an ELF file in memory whose embedded DWARF describes
 * variables and types.  The harness names every top-level variable and
 * struct/union/enum/typedef of the first CUs, and those of their C++
 * namespaces and classes qualified (app::Cls::s_count), read with libdw; looks each
 * one up through dwtypes as `vigil print` does (through the input's own
 * .symtab first, sym/dwvarsym.c, then every CU), and walks what comes back:
 * names, sizes, members, enumerators, array bounds, to a bounded depth.
 * Each variable's type is then printed, as text and as JSON, over bytes
 * taken from the input (some marked unreadable), with small --depth and
 * --max-elements: the formatter must stay inside the bytes it was given
 * whatever sizes, bounds and offsets the DWARF claims.
 * Every variable's bytes are also named as `vigil read` and `vigil scan`
 * name them (sym/dwname.c): offsets and lengths from the input, through
 * the type and through the namer's symbol lookup.
 * Nothing may crash, hang (typedef or member cycles, absurd nesting) or
 * leak; a variable found must have a type or none, never a dangling one.
 * Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elf/debuginfo.h"
#include "elf/image.h"
#include "report/print.h"
#include "sym/dwname.h"
#include "sym/dwtypes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NAMES 64

static volatile uint64_t sink;

static void walk_type(const struct vg_type *t, int depth)
{
	char buf[512];

	if (!t || depth > 12)
		return;
	sink += vg_type_size(t);
	vg_type_name(t, buf, sizeof(buf));
	sink += strlen(buf);
	t = vg_type_strip(t);
	if (!t)
		return;
	for (size_t i = 0; i < t->n_members && i < 64; i++) {
		sink += t->members[i].offset + t->members[i].bit_size;
		sink += t->members[i].name ? strlen(t->members[i].name) : 0;
		walk_type(t->members[i].type, depth + 1);
	}
	for (size_t i = 0; i < t->n_statics && i < 16; i++) {
		sink += t->statics[i].before + (t->statics[i].name ? strlen(t->statics[i].name) : 0);
		walk_type(t->statics[i].type, depth + 1);
	}
	for (size_t i = 0; i < t->n_enumerators; i++)
		sink += (uint64_t)t->enumerators[i].value +
			(t->enumerators[i].name ? strlen(t->enumerators[i].name) : 0);
	for (size_t i = 0; i < t->n_params && i < 16; i++)
		walk_type(t->params[i], depth + 1);
	if (t->kind == VG_TYPE_POINTER || t->kind == VG_TYPE_ARRAY || t->kind == VG_TYPE_ENUM ||
	    t->kind == VG_TYPE_FUNC)
		walk_type(t->target, depth + 1);
}

/* Print t over the input's bytes as vigil print would (value.h's view,
 * built here without a process). */
static void print_over(const struct vg_type *t, const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct vg_value v = { .type = t, .has_addr = true, .addr = 0x1000 };
	struct vg_expr_result res = { .type = t, .lvalue = true, .addr = 0x1000 };
	struct vg_print_opts o = { .max_depth = 4, .max_elements = 8 };
	struct vg_print_item item = { .expr = "x", .res = &res, .value = &v };
	cJSON *doc;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		return;
	v.type_size = vg_type_size(t);
	v.size = v.type_size < 4096 ? v.type_size : 4096;
	v.bytes = calloc(1, v.size + 1);
	v.ok = calloc(1, v.size + 1);
	if (v.bytes && v.ok) {
		for (uint64_t i = 0; i < v.size; i++) {
			v.bytes[i] = size ? data[i % size] : 0;
			v.ok[i] = (i % 13) != 5;
		}
		vg_report_print_text(devnull, &item, &o);
		doc = vg_report_print_json(NULL, &item, 1, &o);
		cJSON_Delete(doc);
	}
	free(v.bytes);
	free(v.ok);
}

/* The names of the first top-level DIEs, prefixed as C spells them. */
/* The names of scope's children, C++ names qualified by prefix as a
 * user writes them (app::inner::g_point, app::Cls::s_count): namespaces
 * and classes entered a few levels deep. */
static void collect_scope(Dwarf_Die *scope, const char *prefix, int depth, char names[][96],
			  size_t max, size_t *n)
{
	Dwarf_Die c;
	int k = 0;

	if (depth > 3 || dwarf_child(scope, &c) != 0)
		return;
	do {
		const char *nm = dwarf_diename(&c);
		const char *kw = "";
		int tag = dwarf_tag(&c);
		char sub[96];

		switch (tag) {
		case DW_TAG_namespace:
		case DW_TAG_class_type:
			if (nm) {
				snprintf(sub, sizeof(sub), "%s%s::", prefix, nm);
				collect_scope(&c, sub, depth + 1, names, max, n);
			}
			if (tag == DW_TAG_namespace)
				nm = NULL;
			break;
		case DW_TAG_structure_type:
			kw = "struct ";
			if (nm) {
				snprintf(sub, sizeof(sub), "%s%s::", prefix, nm);
				collect_scope(&c, sub, depth + 1, names, max, n);
			}
			break;
		case DW_TAG_union_type: kw = "union "; break;
		case DW_TAG_enumeration_type: kw = "enum "; break;
		case DW_TAG_variable: kw = "="; break;
		case DW_TAG_member:
			/* A C++ static data member (DWARF 4 spelling). */
			kw = "=";
			if (depth == 0)
				nm = NULL;
			break;
		case DW_TAG_typedef: case DW_TAG_base_type: break;
		default: nm = NULL;
		}
		if (nm && *n < max)
			snprintf(names[(*n)++], 96, "%s%s%s", kw, prefix, nm);
	} while (*n < max && k++ < 256 && dwarf_siblingof(&c, &c) == 0);
}

static size_t collect_names(Dwarf *dw, char names[][96], size_t max)
{
	Dwarf_Off off = 0, next;
	size_t hsize, n = 0;
	int units = 0;

	while (n < max && units++ < 16 &&
	       dwarf_next_unit(dw, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			collect_scope(&cu, "", 0, names, max, &n);
		if (next <= off)
			break;
		off = next;
	}
	return n;
}

/* Name bytes of var at offsets and lengths taken from the input (and just
 * past its type's size); the text must stay terminated in its buffer. */
static void name_over(struct vg_dwtypes *dt, struct vg_dwnamer *nm, struct vg_image *img,
		      const struct vg_dwvar *var, const uint8_t *data, size_t size)
{
	uint64_t tsize = vg_type_size(var->type);
	char buf[96];

	for (size_t k = 0; k < 8; k++) {
		uint64_t off = size > k ? data[size - 1 - k] : k, len = k & 3 ? k : 16;

		if (k == 7)
			off = tsize;
		snprintf(buf, sizeof(buf), "%s", var->name ? var->name : "v");
		(void)vg_dwname_path(dt, var->type, off, len, buf, k & 1 ? 12 : sizeof(buf));
		sink += strlen(buf);
		if (vg_dwnamer_name(nm, img, var->static_addr + off, len, buf, sizeof(buf)) == 1)
			sink += strlen(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_dwnamer *nm = vg_dwnamer_new(NULL);
	struct vg_image *img = NULL;
	struct vg_dwtypes *dt = NULL;
	struct vg_error err = { 0 };
	struct vg_debuginfo_opts opts = { .debug_dir = "/nonexistent/vigil-fuzz-debug-dir",
					  .no_debuginfod = true };
	struct vg_debuginfo *d = NULL;
	static char names[MAX_NAMES][96];
	size_t n = 0;

	if (vg_image_open_memory(data, size, "fuzz", &img, &err) != 0) {
		vg_dwnamer_free(nm);
		return 0;
	}
	/* The names come from the same DWARF dwtypes will read. */
	if (vg_debuginfo_find(img, &opts, &d, &err) == 0 && d->dwarf)
		n = collect_names(d->dwarf, names, MAX_NAMES);
	vg_debuginfo_free(d);
	if (vg_dwtypes_open(img, NULL, &dt, &err) != 0 || !dt) {
		vg_dwnamer_free(nm);
		vg_image_free(img);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (names[i][0] == '=') {
			struct vg_dwvar vars[4];
			int nv = vg_dwtypes_find_var(dt, names[i] + 1, NULL, vars, 4, &err);

			for (int k = 0; k < nv && k < 4; k++) {
				sink += vars[k].static_addr + vars[k].tls;
				walk_type(vars[k].type, 0);
				print_over(vars[k].type, data, size);
				walk_type(vg_dwtypes_complete(dt, vg_type_strip(vars[k].type)), 0);
				/* Where a class's static data members are defined. */
				{
					const struct vg_type *st = vg_type_strip(vars[k].type);
					uint64_t sa;

					for (size_t j = 0; st && j < st->n_statics && j < 4; j++)
						if (vg_dwtypes_static_member(dt, st->statics[j].decl, &sa, &err) == 1)
							sink += sa;
				}
				if (!vars[k].tls)
					name_over(dt, nm, img, &vars[k], data, size);
			}
		} else {
			const struct vg_type *t = vg_dwtypes_find_type(dt, names[i], 0, &err);

			walk_type(t, 0);
			walk_type(vg_dwtypes_pointer_to(dt, t), 0);
		}
	}
	walk_type(vg_dwtypes_find_type(dt, "unsigned long", 0, &err), 0);
	vg_dwnamer_free(nm);  /* its tables borrow img: freed first */
	vg_dwtypes_free(dt);
	vg_image_free(img);
	return 0;
}
