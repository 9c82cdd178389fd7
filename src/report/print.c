/* print.c - typed values as gdb prints them, and as JSON (print.h).
 *
 * The text follows gdb 13's defaults, so that what a gdb user reads is
 * what vigil prints: chars as `65 'A'`, char arrays as strings with one
 * trailing NUL dropped and runs of more than 10 equal elements as
 * `<repeats N times>`, floats with 9 (float) or 17 (double) significant
 * digits, flag enums as `(A | B)`, pointers with the symbol they point
 * into, `{...}` past --depth, `...` past --max-elements.  Bytes that
 * could not be read print as `<unreadable>`. */
#include "report/print.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"

#define REPEAT_THRESHOLD 10   /* gdb's `print repeats` */

struct fmt {
	FILE *out;
	const struct vg_value *v;
	const struct vg_print_opts *o;
};

static bool readable(const struct vg_value *v, uint64_t off, uint64_t n)
{
	if (off + n > v->size)
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!v->ok[off + i])
			return false;
	return true;
}

/* The integer at off (a bit-field when bit_size), sign-extended for
 * signed types.  false: some byte unreadable. */
static bool get_int(const struct vg_value *v, uint64_t off, uint64_t size, uint32_t bit_offset,
		    uint32_t bit_size, bool is_signed, uint64_t *out)
{
	uint64_t len = bit_size ? (bit_offset + bit_size + 7) / 8 : size;
	unsigned __int128 w = 0;
	uint64_t x;
	unsigned bits = bit_size ? bit_size : (unsigned)(size * 8);

	if (len == 0 || len > 16 || !readable(v, off, len))
		return false;
	memcpy(&w, v->bytes + off, (size_t)len);
	x = (uint64_t)(w >> bit_offset);
	if (bits < 64) {
		x &= (1ull << bits) - 1;
		if (is_signed && (x >> (bits - 1) & 1))
			x |= ~0ull << bits;
	}
	*out = x;
	return true;
}

/* Equal elements make a run; bytes past what was fetched never do (the
 * DWARF may claim more elements than were read). */
static bool same_bytes(const struct vg_value *v, uint64_t a, uint64_t b, uint64_t n)
{
	if (a + n > v->size || b + n > v->size)
		return false;
	return memcmp(v->ok + a, v->ok + b, (size_t)n) == 0 &&
	       memcmp(v->bytes + a, v->bytes + b, (size_t)n) == 0;
}

/* gdb's escapes for a character inside quote q. */
static void put_char(FILE *out, unsigned char c, char q)
{
	static const char esc[] = { ['\a'] = 'a', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
				    ['\r'] = 'r', ['\t'] = 't', ['\v'] = 'v' };

	if (c == (unsigned char)q || c == '\\')
		fprintf(out, "\\%c", c);
	else if (c < sizeof(esc) && esc[c])
		fprintf(out, "\\%c", esc[c]);
	else if (c < 0x20 || c >= 0x7f)
		fprintf(out, "\\%03o", c);
	else
		fputc(c, out);
}

/* A run of chars as gdb prints a string: quoted segments, and runs of
 * more than REPEAT_THRESHOLD equal chars as 'c' <repeats N times>. */
static void put_string(FILE *out, const unsigned char *s, size_t n, bool ellipsis)
{
	bool in_quote = false, any = false;

	if (n == 0)
		fputs("\"\"", out);
	for (size_t i = 0; i < n;) {
		size_t run = 1;

		while (i + run < n && s[i + run] == s[i])
			run++;
		if (run > REPEAT_THRESHOLD) {
			if (in_quote)
				fputs("\", ", out);
			else if (any)
				fputs(", ", out);
			fputc('\'', out);
			put_char(out, s[i], '\'');
			fprintf(out, "' <repeats %zu times>", run);
			in_quote = false;
			i += run;
		} else {
			if (!in_quote)
				fputs(any ? ", \"" : "\"", out);
			in_quote = true;
			for (size_t k = 0; k < run; k++)
				put_char(out, s[i], '"');
			i += run;
		}
		any = true;
	}
	if (in_quote)
		fputc('"', out);
	if (ellipsis)
		fputs("...", out);
}

static void put_int(struct fmt *f, const struct vg_type *t, uint32_t bit_size, uint64_t x)
{
	unsigned bits = bit_size ? bit_size : (unsigned)(t->size * 8);

	if (f->o->hex) {
		/* gdb's print/x: the value's own width (a bit-field's bits). */
		if (bits < 64)
			x &= (1ull << bits) - 1;
		fprintf(f->out, "0x%" PRIx64, x);
	} else if (t->is_signed) {
		fprintf(f->out, "%" PRId64, (int64_t)x);
	} else {
		fprintf(f->out, "%" PRIu64, x);
	}
}

static void put_enum(struct fmt *f, const struct vg_type *t, uint64_t x)
{
	int64_t v = (int64_t)x;
	uint64_t rest = x;
	bool first = true;

	if (f->o->hex) {
		fprintf(f->out, "0x%" PRIx64, (uint64_t)(t->size < 8 ? x & ((1ull << (t->size * 8)) - 1) : x));
		return;
	}
	for (size_t i = 0; i < t->n_enumerators; i++) {
		if (t->enumerators[i].value == v) {
			vg_text_put(f->out, t->enumerators[i].name ? t->enumerators[i].name : "?");
			return;
		}
	}
	if (!t->flag_enum || x == 0) {
		fprintf(f->out, t->is_signed ? "%" PRId64 : "%" PRIu64, x);
		return;
	}
	fputc('(', f->out);
	for (size_t i = 0; i < t->n_enumerators; i++) {
		uint64_t e = (uint64_t)t->enumerators[i].value;

		if (e && (x & e) == e) {
			fputs(first ? "" : " | ", f->out);
			vg_text_put(f->out, t->enumerators[i].name ? t->enumerators[i].name : "?");
			rest &= ~e;
			first = false;
		}
	}
	if (rest)
		fprintf(f->out, "%sunknown: 0x%" PRIx64, first ? "" : " | ", rest);
	fputc(')', f->out);
}

static void put_float(FILE *out, const unsigned char *b, uint64_t size)
{
	if (size == 4) {
		float x;

		memcpy(&x, b, 4);
		if (isnan(x))
			fputs(signbit(x) ? "-nan" : "nan", out);
		else
			fprintf(out, "%.9g", (double)x);
	} else if (size == 8) {
		double x;

		memcpy(&x, b, 8);
		if (isnan(x))
			fputs(signbit(x) ? "-nan" : "nan", out);
		else
			fprintf(out, "%.17g", x);
	} else if (size == 16 || size == 10) {
		long double x = 0;

		memcpy(&x, b, 10);
		if (isnan(x))
			fputs("nan", out);
		else
			fprintf(out, "%.18Lg", x);
	} else {
		fputs("<float of unsupported size>", out);
	}
}

static void fmt_value(struct fmt *f, const struct vg_type *t, uint64_t off, uint32_t bit_offset,
		      uint32_t bit_size, unsigned depth, bool top);

static void put_pointer(struct fmt *f, const struct vg_type *decl, const struct vg_type *t,
			uint64_t off, bool top)
{
	const struct vg_value_ptr *p = vg_value_ptr_at(f->v, off);
	uint64_t x;
	char tn[512];

	memcpy(&x, f->v->bytes + off, 8);
	if (p && p->is_string) {
		fprintf(f->out, "0x%" PRIx64 " ", x);
		if (p->str_unreadable)
			fprintf(f->out, "<error: Cannot access memory at address 0x%" PRIx64 ">", x);
		else
			put_string(f->out, p->str, p->str_len, !p->str_terminated);
		return;
	}
	if (top && !t->is_reference)
		fprintf(f->out, "(%s) ", vg_type_name(decl, tn, sizeof(tn)));
	fprintf(f->out, "0x%" PRIx64, x);
	if (p && p->sym[0]) {
		fputs(" <", f->out);
		vg_text_put(f->out, p->sym);
		fputc('>', f->out);
	}
}

static void fmt_array(struct fmt *f, const struct vg_type *t, uint64_t off, unsigned depth)
{
	const struct vg_type *et = vg_type_strip(t->target);
	uint64_t es = vg_type_size(t->target), n = t->count, shown = 0;
	uint64_t max = f->o->max_elements;

	if (!t->count_known) {
		fputs("<unknown length>", f->out);
		return;
	}
	if (et && et->kind == VG_TYPE_INT && et->is_char && es == 1 && !f->o->hex) {
		/* gdb: one trailing NUL is the terminator, not shown. */
		uint64_t len = n, show;

		if (len && readable(f->v, off + len - 1, 1) && f->v->bytes[off + len - 1] == 0)
			len--;
		show = len > max ? max : len;
		if (!readable(f->v, off, show)) {
			fputs("<unreadable>", f->out);
			return;
		}
		put_string(f->out, f->v->bytes + off, (size_t)show, len > max);
		return;
	}
	if (!es) {
		fputs("{}", f->out);
		return;
	}
	fputc('{', f->out);
	for (uint64_t i = 0; i < n;) {
		uint64_t run = 1;

		/* Past --max-elements, or past what was fetched (the value's
		 * note says how much that was). */
		if (shown >= max || off + i * es >= f->v->size) {
			fputs("...", f->out);
			break;
		}
		while (i + run < n && same_bytes(f->v, off + i * es, off + (i + run) * es, es))
			run++;
		if (i)
			fputs(", ", f->out);
		fmt_value(f, t->target, off + i * es, 0, 0, depth + 1, false);
		if (run > REPEAT_THRESHOLD) {
			fprintf(f->out, " <repeats %" PRIu64 " times>", run);
			i += run;
			shown += REPEAT_THRESHOLD;
		} else {
			i++;
			shown++;
		}
	}
	fputc('}', f->out);
}

/* The static data members shown before members[at] (gdb's order, the
 * class's), each from its own variable: "static count = 42".  *first:
 * nothing printed yet in these braces. */
static void fmt_statics(struct fmt *f, const struct vg_type *t, size_t at, unsigned depth,
			bool *first)
{
	for (size_t i = 0; i < t->n_statics; i++) {
		const struct vg_value_static *s;
		const struct vg_value *keep = f->v;

		if (t->statics[i].before != at || !(s = vg_value_static_of(f->v, t, i)))
			continue;
		if (!*first)
			fputs(", ", f->out);
		*first = false;
		fputs("static ", f->out);
		vg_text_put(f->out, t->statics[i].name);
		fputs(" = ", f->out);
		if (!s->value) {
			fputs("<optimized out>", f->out);
			continue;
		}
		f->v = s->value;
		fmt_value(f, s->value->type, 0, 0, 0, depth + 1, false);
		f->v = keep;
	}
}

static void fmt_aggregate(struct fmt *f, const struct vg_type *t, uint64_t off, unsigned depth)
{
	bool first = true;

	if (depth >= f->o->max_depth) {
		fputs("{...}", f->out);
		return;
	}
	if (t->declaration) {
		fputs("<incomplete type>", f->out);
		return;
	}
	fputc('{', f->out);
	for (size_t i = 0; i < t->n_members; i++) {
		const struct vg_type_member *m = &t->members[i];

		fmt_statics(f, t, i, depth, &first);
		if (!first)
			fputs(", ", f->out);
		first = false;
		if (m->is_base) {
			fputc('<', f->out);
			vg_text_put(f->out, m->name ? m->name : "?");
			fputs("> = ", f->out);
		} else if (m->name) {
			vg_text_put(f->out, m->name);
			fputs(" = ", f->out);
		}
		fmt_value(f, m->type, off + m->offset, m->bit_offset, m->bit_size, depth + 1, false);
	}
	fmt_statics(f, t, t->n_members, depth, &first);
	fputc('}', f->out);
}

static void fmt_value(struct fmt *f, const struct vg_type *decl, uint64_t off, uint32_t bit_offset,
		      uint32_t bit_size, unsigned depth, bool top)
{
	const struct vg_type *t = vg_type_strip(decl);
	uint64_t x;

	if (!t || t->kind == VG_TYPE_VOID) {
		fputs("void", f->out);
		return;
	}
	switch (t->kind) {
	case VG_TYPE_INT:
		if (!get_int(f->v, off, t->size, bit_offset, bit_size, t->is_signed, &x)) {
			fputs("<unreadable>", f->out);
			return;
		}
		put_int(f, t, bit_size, x);
		if (t->is_char && t->size == 1 && !f->o->hex) {
			fputs(" '", f->out);
			put_char(f->out, (unsigned char)x, '\'');
			fputc('\'', f->out);
		}
		return;
	case VG_TYPE_BOOL:
		if (!get_int(f->v, off, t->size, bit_offset, bit_size, false, &x)) {
			fputs("<unreadable>", f->out);
			return;
		}
		if (f->o->hex)
			fprintf(f->out, "0x%" PRIx64, x);
		else if (x <= 1)
			fputs(x ? "true" : "false", f->out);
		else
			fprintf(f->out, "%" PRIu64, x);
		return;
	case VG_TYPE_ENUM:
		if (!get_int(f->v, off, t->size, bit_offset, bit_size, t->is_signed, &x)) {
			fputs("<unreadable>", f->out);
			return;
		}
		put_enum(f, t, x);
		return;
	case VG_TYPE_FLOAT:
		if (!readable(f->v, off, t->size)) {
			fputs("<unreadable>", f->out);
			return;
		}
		put_float(f->out, f->v->bytes + off, t->size);
		return;
	case VG_TYPE_POINTER:
		if (!readable(f->v, off, 8)) {
			fputs("<unreadable>", f->out);
			return;
		}
		put_pointer(f, decl, t, off, top);
		return;
	case VG_TYPE_STRUCT:
	case VG_TYPE_UNION:
	case VG_TYPE_CLASS:
		fmt_aggregate(f, t, off, depth);
		return;
	case VG_TYPE_ARRAY:
		fmt_array(f, t, off, depth);
		return;
	default:
		fputs("<type not shown>", f->out);
	}
}

int vg_report_print_text(FILE *out, const struct vg_print_item *item, const struct vg_print_opts *o)
{
	struct fmt f = { .out = out, .v = item->value, .o = o };

	fprintf(out, "%s = ", item->expr);
	fmt_value(&f, item->value->type, 0, item->value->bit_offset, item->value->bit_size, 0, true);
	if (!item->value->bit_size && item->value->size < item->value->type_size)
		fprintf(out, " <only the first %" PRIu64 " of %" PRIu64 " bytes read>",
			item->value->size, item->value->type_size);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}

char *vg_report_print_scalar(const struct vg_type *t, const unsigned char *bytes, size_t n,
			     const char *sym, const struct vg_print_opts *o)
{
	unsigned char b[8] = { 0 }, ok[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct vg_value_ptr ptr = { 0 };
	struct vg_value v = { 0 };
	struct fmt f = { .v = &v, .o = o };
	char *text = NULL;
	size_t len = 0;

	if (n > sizeof(b))
		n = sizeof(b);
	memcpy(b, bytes, n);
	v.type = t;
	v.type_size = v.size = n;
	v.bytes = b;
	v.ok = ok;
	if (sym && *sym) {
		snprintf(ptr.sym, sizeof(ptr.sym), "%s", sym);
		v.ptrs = &ptr;
		v.n_ptrs = 1;
	}
	f.out = open_memstream(&text, &len);
	if (!f.out)
		return NULL;
	fmt_value(&f, t, 0, 0, 0, 0, true);
	if (fclose(f.out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */

static const char *kind_name(const struct vg_type *t)
{
	static const char *const names[] = {
		[VG_TYPE_VOID] = "void", [VG_TYPE_INT] = "int", [VG_TYPE_BOOL] = "bool",
		[VG_TYPE_FLOAT] = "float", [VG_TYPE_ENUM] = "enum", [VG_TYPE_POINTER] = "pointer",
		[VG_TYPE_STRUCT] = "struct", [VG_TYPE_UNION] = "union", [VG_TYPE_CLASS] = "class",
		[VG_TYPE_ARRAY] = "array", [VG_TYPE_FUNC] = "function", [VG_TYPE_UNKNOWN] = "unknown",
	};

	if (!t)
		return "void";
	if (t->kind == VG_TYPE_INT && t->is_char && t->size == 1)
		return "char";
	return names[t->kind] ? names[t->kind] : "unknown";
}

static cJSON *add_u64(cJSON *obj, const char *key, uint64_t x, bool is_signed, uint64_t size)
{
	char b[32];

	if (size < 8)
		return cJSON_AddNumberToObject(obj, key, is_signed ? (double)(int64_t)x : (double)x);
	snprintf(b, sizeof(b), is_signed ? "%" PRId64 : "%" PRIu64, x);
	return cJSON_AddStringToObject(obj, key, b);
}

/* [{offset, length}] of the unreadable bytes in [off, off+n), or NULL. */
static cJSON *unreadable_ranges(const struct vg_value *v, uint64_t off, uint64_t n)
{
	cJSON *a = NULL;
	/* Past the bytes fetched everything is unreadable: one range, found
	 * without walking it (the DWARF may claim a huge array). */
	uint64_t avail = off < v->size ? v->size - off : 0;

	for (uint64_t i = 0; i < n;) {
		uint64_t j = i;

		if (i < avail && v->ok[off + i]) {
			i++;
			continue;
		}
		while (j < n && j < avail && !v->ok[off + j])
			j++;
		if (j == avail)
			j = n;
		if (!a)
			a = cJSON_CreateArray();
		if (!a)
			return NULL;
		cJSON *r = cJSON_CreateObject();

		cJSON_AddNumberToObject(r, "offset", (double)(off + i));
		cJSON_AddNumberToObject(r, "length", (double)(j - i));
		cJSON_AddItemToArray(a, r);
		i = j;
	}
	return a;
}

static cJSON *json_value(const struct vg_value *v, const struct vg_print_opts *o,
			 const struct vg_type *decl, uint64_t off, uint32_t bit_offset,
			 uint32_t bit_size, unsigned depth);

static void json_scalar(cJSON *n, const struct vg_value *v, const struct vg_type *t, uint64_t off,
			uint32_t bit_offset, uint32_t bit_size)
{
	uint64_t x;
	char b[64];

	switch (t->kind) {
	case VG_TYPE_INT:
		if (get_int(v, off, t->size, bit_offset, bit_size, t->is_signed, &x)) {
			add_u64(n, "value", x, t->is_signed, t->size);
			if (t->is_char && t->size == 1) {
				char s[2] = { (char)x, 0 };

				vg_json_add_text(n, "char", s);
			}
		} else {
			cJSON_AddNullToObject(n, "value");
		}
		return;
	case VG_TYPE_BOOL:
		if (get_int(v, off, t->size, bit_offset, bit_size, false, &x)) {
			if (x <= 1)
				cJSON_AddBoolToObject(n, "value", x != 0);
			else
				cJSON_AddNumberToObject(n, "value", (double)x);
		} else {
			cJSON_AddNullToObject(n, "value");
		}
		return;
	case VG_TYPE_ENUM:
		if (!get_int(v, off, t->size, bit_offset, bit_size, t->is_signed, &x)) {
			cJSON_AddNullToObject(n, "value");
			return;
		}
		add_u64(n, "value", x, t->is_signed, t->size);
		for (size_t i = 0; i < t->n_enumerators; i++) {
			if ((uint64_t)t->enumerators[i].value == x) {
				vg_json_add_text(n, "enumerator", t->enumerators[i].name);
				return;
			}
		}
		if (t->flag_enum && x) {
			cJSON *fl = cJSON_AddArrayToObject(n, "flags");
			uint64_t rest = x;

			for (size_t i = 0; fl && i < t->n_enumerators; i++) {
				uint64_t e = (uint64_t)t->enumerators[i].value;

				if (e && (x & e) == e) {
					cJSON_AddItemToArray(fl, cJSON_CreateString(t->enumerators[i].name));
					rest &= ~e;
				}
			}
			if (rest) {
				snprintf(b, sizeof(b), "0x%" PRIx64, rest);
				cJSON_AddStringToObject(n, "unknown_bits", b);
			}
		}
		return;
	case VG_TYPE_FLOAT:
		if (!readable(v, off, t->size) || (t->size != 4 && t->size != 8)) {
			cJSON_AddNullToObject(n, "value");
			return;
		}
		double d;

		if (t->size == 4) {
			float fl;

			memcpy(&fl, v->bytes + off, 4);
			d = fl;
		} else {
			memcpy(&d, v->bytes + off, 8);
		}
		if (isfinite(d))
			cJSON_AddItemToObject(n, "value", cJSON_CreateRaw((snprintf(b, sizeof(b), t->size == 4 ? "%.9g" : "%.17g", d), b)));
		else
			cJSON_AddStringToObject(n, "value", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
		return;
	default:
		return;
	}
}

static cJSON *json_value(const struct vg_value *v, const struct vg_print_opts *o,
			 const struct vg_type *decl, uint64_t off, uint32_t bit_offset,
			 uint32_t bit_size, unsigned depth)
{
	const struct vg_type *t = vg_type_strip(decl);
	cJSON *n = cJSON_CreateObject(), *bad;
	char tn[512];
	uint64_t size = bit_size ? (bit_offset + bit_size + 7) / 8 : vg_type_size(decl);

	if (!n)
		return NULL;
	cJSON_AddStringToObject(n, "type", vg_type_name(decl, tn, sizeof(tn)));
	cJSON_AddNumberToObject(n, "size", (double)vg_type_size(decl));
	cJSON_AddStringToObject(n, "kind", kind_name(t));
	bad = size && (t && t->kind != VG_TYPE_STRUCT && t->kind != VG_TYPE_UNION &&
		       t->kind != VG_TYPE_CLASS && t->kind != VG_TYPE_ARRAY)
		? unreadable_ranges(v, off, size) : NULL;
	if (bad)
		cJSON_AddItemToObject(n, "unreadable", bad);
	if (!t)
		return n;
	switch (t->kind) {
	case VG_TYPE_POINTER: {
		const struct vg_value_ptr *p = vg_value_ptr_at(v, off);
		uint64_t x;

		if (!readable(v, off, 8)) {
			cJSON_AddNullToObject(n, "value");
			break;
		}
		memcpy(&x, v->bytes + off, 8);
		vg_json_add_addr(n, "value", x);
		if (p && p->sym[0])
			vg_json_add_text(n, "symbol", p->sym);
		if (p && p->is_string && !p->str_unreadable) {
			char *s = strndup((const char *)p->str, p->str_len);

			if (s)
				vg_json_add_text(n, "string", s);
			free(s);
			cJSON_AddBoolToObject(n, "string_complete", p->str_terminated);
		} else if (p && p->is_string) {
			cJSON_AddNullToObject(n, "string");
		}
		break;
	}
	case VG_TYPE_STRUCT:
	case VG_TYPE_UNION:
	case VG_TYPE_CLASS: {
		cJSON *ms;

		if (depth >= o->max_depth) {
			cJSON_AddBoolToObject(n, "depth_limited", true);
			break;
		}
		ms = cJSON_AddArrayToObject(n, "members");
		for (size_t i = 0; ms && i < t->n_members; i++) {
			const struct vg_type_member *m = &t->members[i];
			cJSON *mj = json_value(v, o, m->type, off + m->offset, m->bit_offset,
					       m->bit_size, depth + 1);

			if (!mj)
				return cJSON_Delete(n), NULL;
			if (m->name)
				vg_json_add_text(mj, "name", m->name);
			else
				cJSON_AddNullToObject(mj, "name");
			cJSON_AddNumberToObject(mj, "offset", (double)m->offset);
			if (m->bit_size) {
				cJSON_AddNumberToObject(mj, "bit_offset", m->bit_offset);
				cJSON_AddNumberToObject(mj, "bit_size", m->bit_size);
			}
			if (m->is_base)
				cJSON_AddBoolToObject(mj, "base_class", true);
			cJSON_AddItemToArray(ms, mj);
		}
		/* C++ static data members: each its own variable's value. */
		for (size_t i = 0; ms && i < t->n_statics; i++) {
			const struct vg_value_static *s = vg_value_static_of(v, t, i);
			cJSON *sj, *arr = cJSON_GetObjectItem(n, "static_members");

			if (!s || !s->value)
				continue;
			if (!arr && !(arr = cJSON_AddArrayToObject(n, "static_members")))
				return cJSON_Delete(n), NULL;
			sj = json_value(s->value, o, s->value->type, 0, 0, 0, depth + 1);
			if (!sj)
				return cJSON_Delete(n), NULL;
			vg_json_add_text(sj, "name", t->statics[i].name);
			vg_json_add_addr(sj, "address", s->value->addr);
			cJSON_AddItemToArray(arr, sj);
		}
		break;
	}
	case VG_TYPE_ARRAY: {
		const struct vg_type *et = vg_type_strip(t->target);
		uint64_t es = vg_type_size(t->target);
		cJSON *els;

		if (!t->count_known) {
			cJSON_AddNullToObject(n, "count");
			break;
		}
		cJSON_AddNumberToObject(n, "count", (double)t->count);
		if (et && et->kind == VG_TYPE_INT && et->is_char && es == 1) {
			uint64_t len = t->count;

			if ((bad = unreadable_ranges(v, off, t->count)))
				cJSON_AddItemToObject(n, "unreadable", bad);
			else {
				const unsigned char *b = v->bytes + off;
				const unsigned char *z = memchr(b, 0, (size_t)len);
				char *s = strndup((const char *)b, z ? (size_t)(z - b) : (size_t)len);

				if (s)
					vg_json_add_text(n, "string", s);
				free(s);
				char *hex = vg_hex_string(b, (size_t)len);

				if (hex)
					cJSON_AddStringToObject(n, "hex", hex);
				free(hex);
			}
			break;
		}
		els = cJSON_AddArrayToObject(n, "elements");
		for (uint64_t i = 0; els && es && i < t->count && i < o->max_elements; i++) {
			cJSON *e = json_value(v, o, t->target, off + i * es, 0, 0, depth + 1);

			if (!e)
				return cJSON_Delete(n), NULL;
			cJSON_AddItemToArray(els, e);
		}
		cJSON_AddBoolToObject(n, "elements_truncated", t->count > o->max_elements);
		break;
	}
	default:
		json_scalar(n, v, t, off, bit_offset, bit_size);
	}
	return n;
}

cJSON *vg_report_print_json(const struct vg_target *t, const struct vg_print_item *items,
			    size_t n, const struct vg_print_opts *o)
{
	cJSON *doc = vg_json_report_new("print", t), *rs;

	if (!doc)
		return NULL;
	rs = cJSON_AddArrayToObject(doc, "results");
	for (size_t i = 0; rs && i < n; i++) {
		const struct vg_value *v = items[i].value;
		const struct vg_expr_result *r = items[i].res;
		cJSON *it = cJSON_CreateObject(), *hops, *val;
		char tn[512];

		if (!it)
			goto oom;
		cJSON_AddItemToArray(rs, it);
		vg_json_add_text(it, "expression", items[i].expr);
		cJSON_AddStringToObject(it, "type", vg_type_name(v->type, tn, sizeof(tn)));
		cJSON_AddNumberToObject(it, "size", (double)v->type_size);
		if (v->has_addr) {
			vg_json_add_addr(it, "address", v->addr);
			if (v->sym[0])
				vg_json_add_text(it, "symbol", v->sym);
		} else {
			cJSON_AddNullToObject(it, "address");
		}
		if (v->bit_size) {
			cJSON_AddNumberToObject(it, "bit_offset", v->bit_offset);
			cJSON_AddNumberToObject(it, "bit_size", v->bit_size);
		}
		if (r->image)
			vg_json_add_text(it, "image", r->image->path);
		if (r->var_cu)
			vg_json_add_text(it, "source_file", r->var_cu);
		hops = cJSON_AddArrayToObject(it, "hops");
		for (size_t k = 0; hops && k < r->n_hops; k++) {
			cJSON *h = cJSON_CreateObject();

			if (!h)
				goto oom;
			cJSON_AddItemToArray(hops, h);
			vg_json_add_text(h, "expression", r->hops[k].expr);
			vg_json_add_addr(h, "address", r->hops[k].slot);
			vg_json_add_addr(h, "value", r->hops[k].value);
		}
		cJSON_AddNumberToObject(it, "bytes_read", (double)(v->size - v->n_unreadable));
		cJSON_AddNumberToObject(it, "bytes_unreadable", (double)v->n_unreadable);
		cJSON_AddBoolToObject(it, "truncated", !v->bit_size && v->size < v->type_size);
		val = json_value(v, o, v->type, 0, v->bit_offset, v->bit_size, 0);
		if (!val)
			goto oom;
		cJSON_AddItemToObject(it, "value", val);
	}
	if (!rs)
		goto oom;
	return doc;
oom:
	cJSON_Delete(doc);
	return NULL;
}
