/* read.c - `vigil read` as a dump, typed values or JSON.
 *
 * 64-bit integers are JSON strings (a double cannot hold them), floats
 * are printed with round-trip precision, and a pointer says which region
 * it points into.  Strings from the target go through vg_json_add_text
 * (JSON) and vg_text_put (table). */
#include "report/read.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"

static const struct vg_read_type read_types[] = {
	{ "u8", 1, VG_READ_UNSIGNED }, { "u16", 2, VG_READ_UNSIGNED }, { "u32", 4, VG_READ_UNSIGNED },
	{ "u64", 8, VG_READ_UNSIGNED }, { "i8", 1, VG_READ_SIGNED }, { "i16", 2, VG_READ_SIGNED },
	{ "i32", 4, VG_READ_SIGNED }, { "i64", 8, VG_READ_SIGNED }, { "f32", 4, VG_READ_FLOAT },
	{ "f64", 8, VG_READ_FLOAT }, { "ptr", 8, VG_READ_PTR }, { "str", 256, VG_READ_STR },
};

const struct vg_read_type *vg_read_type_find(const char *name)
{
	for (size_t i = 0; i < sizeof(read_types) / sizeof(read_types[0]); i++)
		if (strcmp(read_types[i].name, name) == 0)
			return &read_types[i];
	return NULL;
}

void vg_read_outcome_add(struct vg_read_outcome *o, const struct vg_mem_result *res)
{
	for (size_t i = 0; i < res->n_seg; i++) {
		struct vg_mem_segment *last = o->n_seg ? &o->seg[o->n_seg - 1] : NULL;

		if (last && last->source == res->seg[i].source &&
		    last->addr + last->len == res->seg[i].addr) {
			last->len += res->seg[i].len;
		} else if (o->n_seg < VG_MEM_MAX_SEGMENTS) {
			o->seg[o->n_seg++] = res->seg[i];
		} else {
			last->len = res->seg[i].addr + res->seg[i].len - last->addr;
		}
	}
}

static const char *source_summary(const struct vg_read_outcome *o)
{
	if (o->n_seg == 0)
		return "none";
	for (size_t i = 1; i < o->n_seg; i++)
		if (o->seg[i].source != o->seg[0].source)
			return "mixed";
	return vg_mem_source_name(o->seg[0].source);
}

static uint64_t load_le(const unsigned char *p, size_t size)
{
	uint64_t v = 0;

	for (size_t i = size; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static int64_t sign_extend(uint64_t v, size_t size)
{
	unsigned shift = (unsigned)(64 - 8 * size);

	return (int64_t)(v << shift) >> shift;
}

/* The string up to the first NUL, non-printable bytes as \xNN. */
static char *printable_string(const unsigned char *p, size_t n, bool *terminated)
{
	char *s = malloc(4 * n + 1);
	size_t j = 0;

	*terminated = false;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\0') {
			*terminated = true;
			break;
		}
		if (isprint(p[i]) && p[i] != '\\' && p[i] != '"')
			s[j++] = (char)p[i];
		else
			j += (size_t)sprintf(s + j, "\\x%02x", p[i]);
	}
	s[j] = '\0';
	return s;
}

/* One element of an --as array as text. */
static void element_text(const struct vg_read_type *t, const unsigned char *p,
			 char *text, size_t size)
{
	uint64_t v = load_le(p, t->size);

	switch (t->kind) {
	case VG_READ_UNSIGNED:
		snprintf(text, size, "%" PRIu64, v);
		break;
	case VG_READ_SIGNED:
		snprintf(text, size, "%" PRId64, sign_extend(v, t->size));
		break;
	case VG_READ_FLOAT:
		if (t->size == 4) {
			float f;

			memcpy(&f, p, 4);
			snprintf(text, size, "%.9g", (double)f);
		} else {
			double d;

			memcpy(&d, p, 8);
			snprintf(text, size, "%.17g", d);
		}
		break;
	case VG_READ_PTR:
	case VG_READ_STR:
		snprintf(text, size, "0x%" PRIx64, v);
		break;
	}
}

static cJSON *element_json(const struct vg_read_type *t, const unsigned char *p)
{
	char text[64];

	element_text(t, p, text, sizeof(text));
	/* 64-bit integers do not survive a JSON double: strings. */
	if (t->size == 8 && t->kind != VG_READ_FLOAT)
		return cJSON_CreateString(text);
	/* Floats as printed with round-trip precision (cJSON would cut them
	 * to 15 digits); JSON has no inf or nan: those are strings. */
	if (t->kind == VG_READ_FLOAT)
		return isfinite(strtod(text, NULL)) ? cJSON_CreateRaw(text) : cJSON_CreateString(text);
	return cJSON_CreateNumber(strtod(text, NULL));
}

/* Where a pointer value points, as "rw-p [heap]", or NULL if unmapped. */
static const char *pointee(const struct vg_maps *maps, uint64_t v, char *buf, size_t size)
{
	const struct vg_region *r = vg_maps_find(maps, v);

	if (!r)
		return NULL;
	snprintf(buf, size, "%s %s", r->perms, r->path[0] ? r->path : vg_region_kind_name(r->kind));
	return buf;
}

/* The decoded values of n bytes: "value" (the first element or the
 * string), "values" when LEN holds more than one element. */
static void values_json(cJSON *doc, const struct vg_read_type *t, const unsigned char *p,
			size_t n, const struct vg_maps *maps)
{
	size_t count = t->kind == VG_READ_STR ? 0 : n / t->size;
	char where[4200];

	cJSON_AddStringToObject(doc, "as", t->name);
	if (t->kind == VG_READ_STR) {
		size_t len = strnlen((const char *)p, n);
		char *str = strndup((const char *)p, len);

		/* UTF-8 stays readable; invalid bytes are escaped, value_hex
		 * then has them exactly. */
		vg_json_add_text(doc, "value", str ? str : "");
		cJSON_AddBoolToObject(doc, "nul_terminated", len < n);
		free(str);
		return;
	}
	if (count == 0) {
		cJSON_AddNullToObject(doc, "value");
		return;
	}
	cJSON_AddItemToObject(doc, "value", element_json(t, p));
	if (t->kind == VG_READ_PTR && pointee(maps, load_le(p, 8), where, sizeof(where)))
		vg_json_add_text(doc, "points_to", where);
	if (count > 1) {
		cJSON *arr = cJSON_AddArrayToObject(doc, "values");

		for (size_t i = 0; arr && i < count; i++)
			cJSON_AddItemToArray(arr, element_json(t, p + i * t->size));
	}
	if (n % t->size)
		cJSON_AddNumberToObject(doc, "undecoded_bytes", (double)(n % t->size));
}

static cJSON *segments_json(const struct vg_read_outcome *o)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < o->n_seg; i++) {
		cJSON *s = cJSON_CreateObject();

		vg_json_add_addr(s, "address", o->seg[i].addr);
		cJSON_AddNumberToObject(s, "length", (double)o->seg[i].len);
		cJSON_AddStringToObject(s, "source", vg_mem_source_name(o->seg[i].source));
		cJSON_AddItemToArray(arr, s);
	}
	return arr;
}

cJSON *vg_report_read_json(const struct vg_target *t, const struct vg_read_view *v)
{
	const struct vg_read_outcome *o = v->o;
	cJSON *doc = vg_json_report_new("read", t);
	char *hex = vg_hex_string(v->bytes, (size_t)o->bytes_read);

	if (!doc || !hex) {
		cJSON_Delete(doc);
		free(hex);
		return NULL;
	}
	vg_json_add_addr(doc, "address", o->addr);
	cJSON_AddNumberToObject(doc, "length", (double)o->length);
	cJSON_AddNumberToObject(doc, "bytes_read", (double)o->bytes_read);
	cJSON_AddBoolToObject(doc, "complete", o->bytes_read == o->length);
	cJSON_AddBoolToObject(doc, "mapping_stable", v->mapping_stable);
	cJSON_AddStringToObject(doc, "source", source_summary(o));
	cJSON_AddItemToObject(doc, "segments", segments_json(o));
	cJSON_AddItemToObject(doc, "region", vg_json_region(v->region));
	if (v->addr->symbol) {
		vg_json_add_text(doc, "symbol", v->addr->symbol);
		cJSON_AddNumberToObject(doc, "symbol_offset", (double)v->addr->symbol_offset);
	}
	if (v->expression)
		vg_json_add_text(doc, "expression", v->expression);
	else
		cJSON_AddNullToObject(doc, "expression");
	if (v->addr->image)
		vg_json_add_text(doc, "image", v->addr->image->path);
	if (v->bin_match)
		cJSON_AddStringToObject(doc, "binary_match", v->bin_match);
	cJSON_AddStringToObject(doc, "hex", hex);
	free(hex);
	if (v->as)
		values_json(doc, v->as, v->bytes, (size_t)o->bytes_read, v->maps);
	if (o->err.code) {
		cJSON *e = cJSON_AddObjectToObject(doc, "error");

		vg_json_add_text(e, "message", o->err.msg);
		cJSON_AddNumberToObject(e, "errno", -o->err.code);
		cJSON_AddNumberToObject(e, "exit_code", o->err.exit);
	}
	return doc;
}

int vg_report_read_header(FILE *out, const struct vg_target *t, const struct vg_read_view *v)
{
	const struct vg_read_outcome *o = v->o;
	const struct vg_region *region = v->region;

	fprintf(out, "# pid %d: %" PRIu64 " byte%s at 0x%" PRIx64, (int)t->pid, o->length,
		o->length == 1 ? "" : "s", o->addr);
	if (v->expression) {
		fputs(" (", out);
		vg_text_put(out, v->expression);  /* names from the target's DWARF */
		fputc(')', out);
	} else if (v->addr->symbol) {
		fputs(" (", out);
		vg_text_put(out, v->addr->symbol);  /* a name from the target's ELF */
		if (v->addr->symbol_offset)
			fprintf(out, "+%" PRIu64, v->addr->symbol_offset);
		fputc(')', out);
	}
	fprintf(out, " in %s 0x%" PRIx64 "-0x%" PRIx64 " ", region->perms, region->start, region->end);
	if (region->path[0])
		vg_text_put_path(out, region->path, region->deleted);
	else
		fputs(vg_region_kind_name(region->kind), out);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}

int vg_report_read_dump(FILE *out, uint64_t addr, const unsigned char *buf, size_t n)
{
	for (size_t off = 0; off < n; off += 16) {
		size_t k = n - off < 16 ? n - off : 16;
		char hex[48], asc[17];
		size_t h = 0;

		for (size_t i = 0; i < 16; i++) {
			if (i < k)
				h += (size_t)snprintf(hex + h, sizeof(hex) - h, "%02x", buf[off + i]);
			else
				h += (size_t)snprintf(hex + h, sizeof(hex) - h, "  ");
			if (i % 2 == 1 && i != 15)
				hex[h++] = ' ';
			asc[i] = i < k ? (isprint(buf[off + i]) ? (char)buf[off + i] : '.') : '\0';
		}
		hex[h] = '\0';
		asc[k] = '\0';
		fprintf(out, "0x%012" PRIx64 ": %s  %s\n", addr + off, hex, asc);
	}
	return ferror(out) ? -EIO : 0;
}

/* One line per element, "ADDR  TYPE[i]  VALUE". */
int vg_report_read_values(FILE *out, const struct vg_read_view *v)
{
	const struct vg_read_type *t = v->as;
	const unsigned char *p = v->bytes;
	uint64_t addr = v->o->addr;
	size_t n = (size_t)v->o->bytes_read;
	char text[64], where[4200];

	if (t->kind == VG_READ_STR) {
		bool term;
		char *str = printable_string(p, n, &term);

		fprintf(out, "0x%012" PRIx64 "  str  \"%s\"%s\n", addr, str ? str : "",
			term ? "" : "  (no NUL within the length read)");
		free(str);
		return ferror(out) ? -EIO : 0;
	}
	for (size_t i = 0; i + t->size <= n; i++) {
		if (i % t->size)
			continue;
		element_text(t, p + i, text, sizeof(text));
		if (n >= 2 * t->size)
			fprintf(out, "0x%012" PRIx64 "  %s[%zu]  %s", addr + i, t->name, i / t->size, text);
		else
			fprintf(out, "0x%012" PRIx64 "  %s  %s", addr + i, t->name, text);
		if (t->kind == VG_READ_PTR) {
			uint64_t val = load_le(p + i, 8);

			if (pointee(v->maps, val, where, sizeof(where))) {
				fputs("  -> ", out);
				vg_text_put(out, where);
			}
			else if (val)
				fprintf(out, "  -> not mapped");
		}
		fprintf(out, "\n");
	}
	if (n % t->size)
		fprintf(out, "# %zu trailing bytes do not make a whole %s\n", n % t->size, t->name);
	return ferror(out) ? -EIO : 0;
}

int vg_report_read_footer(FILE *out, const struct vg_read_outcome *o)
{
	fprintf(out, "# %" PRIu64 " of %" PRIu64 " byte%s via %s\n", o->bytes_read,
		o->length, o->length == 1 ? "" : "s", source_summary(o));
	for (size_t i = 0; o->n_seg > 1 && i < o->n_seg; i++)
		fprintf(out, "#   0x%" PRIx64 " +%zu via %s\n", o->seg[i].addr, o->seg[i].len,
			vg_mem_source_name(o->seg[i].source));
	return ferror(out) ? -EIO : 0;
}
