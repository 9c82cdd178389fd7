/* value.c - see value.h. */
#include "util/hex.h"
#include "scan/value.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static const char *const type_names[] = {
	[VG_SCAN_I8] = "i8", [VG_SCAN_I16] = "i16", [VG_SCAN_I32] = "i32",
	[VG_SCAN_I64] = "i64", [VG_SCAN_U8] = "u8", [VG_SCAN_U16] = "u16",
	[VG_SCAN_U32] = "u32", [VG_SCAN_U64] = "u64", [VG_SCAN_F32] = "f32",
	[VG_SCAN_F64] = "f64", [VG_SCAN_STR] = "str", [VG_SCAN_BYTES] = "bytes",
};
#define N_TYPES (sizeof(type_names) / sizeof(type_names[0]))

int vg_scan_type_parse(const char *name, enum vg_scan_type *out,
		       struct vg_error *err)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		if (name && strcmp(name, type_names[i]) == 0) {
			*out = (enum vg_scan_type)i;
			return 0;
		}
	}
	return vg_error_set(err, -EINVAL,
			    "unknown type '%s': use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, str, bytes",
			    name ? name : "");
}

const char *vg_scan_type_name(enum vg_scan_type t)
{
	return (unsigned)t < N_TYPES ? type_names[t] : "?";
}

size_t vg_scan_type_width(enum vg_scan_type t)
{
	switch (t) {
	case VG_SCAN_I8: case VG_SCAN_U8:
		return 1;
	case VG_SCAN_I16: case VG_SCAN_U16:
		return 2;
	case VG_SCAN_I32: case VG_SCAN_U32: case VG_SCAN_F32:
		return 4;
	case VG_SCAN_I64: case VG_SCAN_U64: case VG_SCAN_F64:
		return 8;
	default:
		return 0;
	}
}

bool vg_scan_type_is_pattern(enum vg_scan_type t)
{
	return t == VG_SCAN_STR || t == VG_SCAN_BYTES;
}

bool vg_scan_type_is_float(enum vg_scan_type t)
{
	return t == VG_SCAN_F32 || t == VG_SCAN_F64;
}

bool vg_scan_type_is_signed(enum vg_scan_type t)
{
	return t == VG_SCAN_I8 || t == VG_SCAN_I16 || t == VG_SCAN_I32 ||
	       t == VG_SCAN_I64;
}

static bool is_int_type(enum vg_scan_type t)
{
	return t <= VG_SCAN_U64;
}

void vg_scan_value_clear(struct vg_scan_value *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < 2; i++) {
		free(v->pat[i].bytes);
		free(v->pat[i].mask);
	}
	memset(v, 0, sizeof(*v));
}

/* Limits of an integer type, as numbers and as the text of the range. */
static void int_limits(enum vg_scan_type t, int64_t *smin, int64_t *smax,
		       uint64_t *umax)
{
	unsigned bits = (unsigned)vg_scan_type_width(t) * 8;

	*umax = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	*smax = (int64_t)(*umax >> 1);
	*smin = -*smax - 1;
}

static int range_error(struct vg_error *err, enum vg_scan_type t,
		       const char *text, bool hex_fits_unsigned)
{
	int64_t smin, smax;
	uint64_t umax;

	int_limits(t, &smin, &smax, &umax);
	if (vg_scan_type_is_signed(t))
		return vg_error_set(err, -ERANGE,
				    "%s is out of range for %s (%" PRId64 "..%" PRId64 ")%s%s",
				    text, vg_scan_type_name(t), smin, smax,
				    hex_fits_unsigned ? "; for the bit pattern use u" : "",
				    hex_fits_unsigned ? vg_scan_type_name(t) + 1 : "");
	return vg_error_set(err, -ERANGE, "%s is out of range for %s (0..%" PRIu64 ")",
			    text, vg_scan_type_name(t), umax);
}

static int parse_int(enum vg_scan_type t, const char *text,
		     struct vg_scan_value *out, struct vg_error *err)
{
	const char *p = text;
	bool neg = false, hex = false, overflow = false;
	uint64_t mag = 0;
	unsigned base = 10;
	int64_t smin, smax;
	uint64_t umax;
	size_t digits = 0;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		hex = true;
		base = 16;
		p += 2;
	}
	for (; *p; p++, digits++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (hex && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (hex && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (mag > (UINT64_MAX - d) / base)
			overflow = true;
		else
			mag = mag * base + d;
	}
	if (digits == 0 || *p)
		return vg_error_set(err, -EINVAL,
				    "'%s' is not a valid %s: use a decimal number%s or 0x followed by hex digits",
				    text, vg_scan_type_name(t),
				    vg_scan_type_is_signed(t) ? " (a leading '-' for negative)" : "");
	int_limits(t, &smin, &smax, &umax);
	if (overflow)
		return range_error(err, t, text, false);
	if (vg_scan_type_is_signed(t)) {
		if (neg ? mag > (uint64_t)smax + 1 : mag > (uint64_t)smax)
			return range_error(err, t, text, hex && !neg && mag <= umax);
		out->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		out->u = (uint64_t)out->i & umax;
	} else {
		if ((neg && mag != 0) || mag > umax)
			return range_error(err, t, text, false);
		out->u = mag;
		out->i = (int64_t)mag;
	}
	/* Little-endian: the low bytes of the two's complement pattern. */
	for (size_t k = 0; k < vg_scan_type_width(t); k++)
		out->raw[k] = (uint8_t)(out->u >> (8 * k));
	return 0;
}

static int parse_float(enum vg_scan_type t, const char *text,
		       struct vg_scan_value *out, struct vg_error *err)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(text, &end);
	if (end == text || *end || text[0] == ' ' || text[0] == '\t' ||
	    text[0] == '\n')
		return vg_error_set(err, -EINVAL, "'%s' is not a valid %s: use a decimal number such as 3.25 or -1e-3",
				    text, vg_scan_type_name(t));
	if (isnan(d) || (isinf(d) && errno != ERANGE))
		return vg_error_set(err, -EINVAL, "'%s' is not a valid %s: only finite numbers can be scanned for",
				    text, vg_scan_type_name(t));
	if (isinf(d) || (t == VG_SCAN_F32 && fabs(d) > FLT_MAX))
		return vg_error_set(err, -ERANGE, "%s is out of range for %s (-%.9g..%.9g)",
				    text, vg_scan_type_name(t),
				    t == VG_SCAN_F32 ? (double)FLT_MAX : DBL_MAX,
				    t == VG_SCAN_F32 ? (double)FLT_MAX : DBL_MAX);
	if (t == VG_SCAN_F32) {
		float f = (float)d;

		/* The value as the target stores it: 0.1 is 0.1f. */
		memcpy(out->raw, &f, 4);
		out->f = f;
	} else {
		memcpy(out->raw, &d, 8);
		out->f = d;
	}
	return 0;
}

static int pattern_alloc(struct vg_scan_pattern *p, size_t len, bool mask,
			 const char *encoding)
{
	p->bytes = malloc(len ? len : 1);
	p->mask = mask ? malloc(len ? len : 1) : NULL;
	p->len = len;
	p->encoding = encoding;
	if (!p->bytes || (mask && !p->mask))
		return -ENOMEM;
	return 0;
}

/* Code point of the valid UTF-8 sequence of n bytes at s. */
static uint32_t utf8_decode(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0];
	if (n == 2)
		return ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
	if (n == 3)
		return ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
		       (s[2] & 0x3f);
	return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
	       ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
}

static int parse_str(const char *text, struct vg_scan_value *out,
		     struct vg_error *err)
{
	size_t len = strlen(text), n16 = 0;
	const unsigned char *s = (const unsigned char *)text;
	uint8_t *w;

	if (len == 0)
		return vg_error_set(err, -EINVAL, "the str VALUE is empty: give at least one character");
	if (!vg_utf8_valid(text))
		return vg_error_set(err, -EINVAL, "the str VALUE is not valid UTF-8");
	if (pattern_alloc(&out->pat[0], len, false, "utf-8") < 0 ||
	    pattern_alloc(&out->pat[1], len * 2 + 4, false, "utf-16le") < 0)
		return vg_error_set(err, -ENOMEM, "cannot parse the str VALUE: out of memory");
	memcpy(out->pat[0].bytes, text, len);
	w = out->pat[1].bytes;
	for (size_t i = 0; i < len;) {
		size_t k = vg_utf8_seq(s + i);
		uint32_t cp = utf8_decode(s + i, k);

		i += k;
		if (cp >= 0x10000) {
			uint32_t c = cp - 0x10000;
			uint16_t hi = (uint16_t)(0xd800 | (c >> 10));
			uint16_t lo = (uint16_t)(0xdc00 | (c & 0x3ff));

			w[n16++] = (uint8_t)hi;
			w[n16++] = (uint8_t)(hi >> 8);
			w[n16++] = (uint8_t)lo;
			w[n16++] = (uint8_t)(lo >> 8);
		} else {
			w[n16++] = (uint8_t)cp;
			w[n16++] = (uint8_t)(cp >> 8);
		}
	}
	out->pat[1].len = n16;
	out->npat = 2;
	return 0;
}

static int parse_bytes(const char *text, struct vg_scan_value *out,
		       struct vg_error *err)
{
	size_t cap = strlen(text) / 2 + 1, n = 0, sig = 0;
	struct vg_scan_pattern *p = &out->pat[0];
	bool wild = false;

	if (pattern_alloc(p, cap, true, "hex") < 0)
		return vg_error_set(err, -ENOMEM, "cannot parse the bytes VALUE: out of memory");
	for (const char *c = text; *c;) {
		if (*c == ' ' || *c == '\t') {
			c++;
			continue;
		}
		if (c[0] == '?' && c[1] == '?') {
			p->bytes[n] = 0;
			p->mask[n++] = 0;
			wild = true;
			c += 2;
			continue;
		}
		if (vg_hex_digit(c[0]) < 0 || !c[1] || vg_hex_digit(c[1]) < 0)
			return vg_error_set(err, -EINVAL,
					    "'%s' is not a valid bytes VALUE at offset %zu: use pairs of hex digits or ?? (\"de ad ?? ef\")",
					    text, (size_t)(c - text));
		p->bytes[n] = (uint8_t)(vg_hex_digit(c[0]) << 4 | vg_hex_digit(c[1]));
		p->mask[n++] = 0xff;
		sig++;
		c += 2;
	}
	if (sig == 0)
		return vg_error_set(err, -EINVAL,
				    "'%s' is not a valid bytes VALUE: it needs at least one byte that is not ??",
				    text);
	p->len = n;
	if (!wild) {
		free(p->mask);
		p->mask = NULL;
	}
	out->npat = 1;
	return 0;
}

int vg_scan_value_parse(enum vg_scan_type t, const char *text, double epsilon,
			struct vg_scan_value *out, struct vg_error *err)
{
	memset(out, 0, sizeof(*out));
	out->type = t;
	if ((unsigned)t >= N_TYPES)
		return vg_error_set(err, -EINVAL, "unknown scan type %d", (int)t);
	if (!text)
		text = "";
	if (is_int_type(t))
		return parse_int(t, text, out, err);
	if (vg_scan_type_is_float(t)) {
		if (!(epsilon >= 0) || isinf(epsilon))
			return vg_error_set(err, -EINVAL, "the epsilon %g is not valid: use a finite number >= 0",
					    epsilon);
		out->epsilon = epsilon;
		return parse_float(t, text, out, err);
	}
	if (t == VG_SCAN_STR)
		return parse_str(text, out, err);
	return parse_bytes(text, out, err);
}

void vg_scan_format_number(enum vg_scan_type t, const void *raw, char *buf,
			   size_t size)
{
	const uint8_t *r = raw;
	uint64_t u = 0;
	size_t w = vg_scan_type_width(t);

	if (!size)
		return;
	for (size_t k = 0; k < w; k++)
		u |= (uint64_t)r[k] << (8 * k);
	switch (t) {
	case VG_SCAN_I8:
		snprintf(buf, size, "%d", (int)(int8_t)u);
		break;
	case VG_SCAN_I16:
		snprintf(buf, size, "%d", (int)(int16_t)u);
		break;
	case VG_SCAN_I32:
		snprintf(buf, size, "%" PRId32, (int32_t)u);
		break;
	case VG_SCAN_I64:
		snprintf(buf, size, "%" PRId64, (int64_t)u);
		break;
	case VG_SCAN_U8: case VG_SCAN_U16: case VG_SCAN_U32: case VG_SCAN_U64:
		snprintf(buf, size, "%" PRIu64, u);
		break;
	case VG_SCAN_F32: {
		float f;

		memcpy(&f, r, 4);
		snprintf(buf, size, "%.9g", (double)f);
		break;
	}
	case VG_SCAN_F64: {
		double d;

		memcpy(&d, r, 8);
		snprintf(buf, size, "%.17g", d);
		break;
	}
	default:
		buf[0] = '\0';
		break;
	}
}

void vg_scan_select_parse(const char *text, struct vg_scan_select *out)
{
	static const struct {
		const char *name;
		enum vg_scan_region_set set;
	} names[] = {
		{ "writable", VG_SCAN_REGIONS_WRITABLE }, { "all", VG_SCAN_REGIONS_ALL },
		{ "heap", VG_SCAN_REGIONS_HEAP }, { "stack", VG_SCAN_REGIONS_STACK },
		{ "anon", VG_SCAN_REGIONS_ANON },
	};

	out->image = NULL;
	out->set = VG_SCAN_REGIONS_WRITABLE;
	if (!text)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(text, names[i].name) == 0) {
			out->set = names[i].set;
			return;
		}
	}
	out->set = VG_SCAN_REGIONS_IMAGE;
	out->image = text;
}

/* Anonymous memory: no path, or a name given with prctl(PR_SET_VMA_ANON_NAME). */
static bool region_is_anon(const struct vg_region *r)
{
	return r->kind == VG_REGION_ANON ||
	       (r->kind == VG_REGION_SPECIAL && r->path &&
		strncmp(r->path, "[anon:", 6) == 0);
}

bool vg_scan_region_selected(const struct vg_scan_select *sel,
			     const struct vg_region *r)
{
	const char *base;

	if (!r->readable || r->end <= r->start || r->kind == VG_REGION_VVAR ||
	    r->kind == VG_REGION_VSYSCALL)
		return false;
	switch (sel->set) {
	case VG_SCAN_REGIONS_WRITABLE:
		return r->writable;
	case VG_SCAN_REGIONS_ALL:
		return true;
	case VG_SCAN_REGIONS_HEAP:
		return r->kind == VG_REGION_HEAP ||
		       (region_is_anon(r) && r->writable && !r->shared);
	case VG_SCAN_REGIONS_STACK:
		return r->kind == VG_REGION_STACK;
	case VG_SCAN_REGIONS_ANON:
		return region_is_anon(r);
	case VG_SCAN_REGIONS_IMAGE:
		if (r->kind != VG_REGION_FILE || !sel->image || !sel->image[0] || !r->path)
			return false;
		if (strcmp(r->path, sel->image) == 0)
			return true;
		base = strrchr(r->path, '/');
		return base && strcmp(base + 1, sel->image) == 0;
	}
	return false;
}

static const char *region_base(const struct vg_region *r)
{
	const char *b = strrchr(r->path, '/');

	return b ? b + 1 : r->path;
}

int vg_scan_select_check(const struct vg_scan_select *sel, const struct vg_maps *maps,
			 struct vg_error *err)
{
	char list[512];
	size_t len = 0, shown = 0, more = 0;

	if (sel->set != VG_SCAN_REGIONS_IMAGE)
		return 0;
	for (size_t i = 0; i < maps->n; i++)
		if (vg_scan_region_selected(sel, &maps->regions[i]))
			return 0;
	list[0] = '\0';
	/* Two passes: names containing the text first, then the others. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < maps->n; i++) {
			const struct vg_region *r = &maps->regions[i];
			const char *b;
			bool seen = false, near;

			if (r->kind != VG_REGION_FILE || !r->path || !r->readable)
				continue;
			b = region_base(r);
			near = sel->image && strstr(b, sel->image) != NULL;
			if (near != (pass == 0))
				continue;
			for (size_t j = 0; j < i && !seen; j++) {
				const struct vg_region *q = &maps->regions[j];

				seen = q->kind == VG_REGION_FILE && q->path && q->readable &&
				       strcmp(region_base(q), b) == 0;
			}
			if (seen)
				continue;
			if (shown < 12 && len + strlen(b) + 3 < sizeof(list)) {
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
							shown ? ", " : "", b);
				shown++;
			} else {
				more++;
			}
		}
	}
	if (more)
		snprintf(list + len, sizeof(list) - len, " and %zu more", more);
	return vg_error_set(err, -ENOENT,
			    "--regions '%s' matches no mapped file: give a mapped file's name or path (%s) or one of writable, all, heap, stack, anon",
			    sel->image ? sel->image : "", shown ? list : "none is mapped");
}

static const char *const op_names[] = {
	[VG_NARROW_EQ] = "eq", [VG_NARROW_CHANGED] = "changed",
	[VG_NARROW_UNCHANGED] = "unchanged", [VG_NARROW_INCREASED] = "increased",
	[VG_NARROW_DECREASED] = "decreased", [VG_NARROW_INCREASED_BY] = "increased-by",
	[VG_NARROW_DECREASED_BY] = "decreased-by", [VG_NARROW_RANGE] = "range",
};

const char *vg_narrow_op_name(enum vg_narrow_op op)
{
	return (unsigned)op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[op] : "?";
}

/* A number of type t read from raw, widened. */
static uint64_t load_u(enum vg_scan_type t, const void *raw)
{
	const uint8_t *r = raw;
	uint64_t u = 0;

	for (size_t k = 0; k < vg_scan_type_width(t); k++)
		u |= (uint64_t)r[k] << (8 * k);
	return u;
}

static int64_t load_i(enum vg_scan_type t, const void *raw)
{
	uint64_t u = load_u(t, raw);
	unsigned sh = 64 - 8 * (unsigned)vg_scan_type_width(t);

	return (int64_t)(u << sh) >> sh;
}

static double load_f(enum vg_scan_type t, const void *raw)
{
	if (t == VG_SCAN_F32) {
		float f;

		memcpy(&f, raw, 4);
		return f;
	}
	double d;

	memcpy(&d, raw, 8);
	return d;
}

static bool op_needs_number(enum vg_narrow_op op)
{
	return op != VG_NARROW_EQ && op != VG_NARROW_CHANGED &&
	       op != VG_NARROW_UNCHANGED;
}

int vg_narrow_check(enum vg_scan_type t, const struct vg_narrow *n,
		    struct vg_error *err)
{
	bool numeric = vg_scan_type_width(t) != 0;

	if ((unsigned)n->op >= sizeof(op_names) / sizeof(op_names[0]))
		return vg_error_set(err, -EINVAL, "unknown narrowing test %d", (int)n->op);
	if (!numeric && op_needs_number(n->op))
		return vg_error_set(err, -EINVAL,
				    "%s needs a numeric type, but the matches are %s: narrow them with eq, changed or unchanged",
				    vg_narrow_op_name(n->op), vg_scan_type_name(t));
	if (!numeric)
		return 0;
	if ((n->op == VG_NARROW_EQ || n->op == VG_NARROW_INCREASED_BY ||
	     n->op == VG_NARROW_DECREASED_BY || n->op == VG_NARROW_RANGE) &&
	    n->a.type != t)
		return vg_error_set(err, -EINVAL, "the operand of %s is of type %s, but the matches are %s",
				    vg_narrow_op_name(n->op), vg_scan_type_name(n->a.type),
				    vg_scan_type_name(t));
	if (n->op == VG_NARROW_RANGE) {
		bool empty;

		if (n->b.type != t)
			return vg_error_set(err, -EINVAL, "the upper bound of range is of type %s, but the matches are %s",
					    vg_scan_type_name(n->b.type), vg_scan_type_name(t));
		if (vg_scan_type_is_float(t))
			empty = n->a.f > n->b.f;
		else if (vg_scan_type_is_signed(t))
			empty = n->a.i > n->b.i;
		else
			empty = n->a.u > n->b.u;
		if (empty) {
			char lo[64], hi[64];

			vg_scan_format_number(t, n->a.raw, lo, sizeof(lo));
			vg_scan_format_number(t, n->b.raw, hi, sizeof(hi));
			return vg_error_set(err, -EINVAL, "the range %s..%s is empty: give the lower bound first",
					    lo, hi);
		}
	}
	return 0;
}

/* |x - v| <= eps with NaN never inside (the first scan's test). */
static bool within(double x, double v, double eps)
{
	return isfinite(x) && x >= v - eps && x <= v + eps;
}

bool vg_narrow_test(enum vg_scan_type t, const struct vg_narrow *n,
		    const void *old_raw, const void *new_raw)
{
	size_t w = vg_scan_type_width(t);

	if (w == 0)
		return false;
	if (n->op == VG_NARROW_CHANGED)
		return memcmp(old_raw, new_raw, w) != 0;
	if (n->op == VG_NARROW_UNCHANGED)
		return memcmp(old_raw, new_raw, w) == 0;
	if (vg_scan_type_is_float(t)) {
		double o = load_f(t, old_raw), x = load_f(t, new_raw), want;

		switch (n->op) {
		case VG_NARROW_EQ:
			return within(x, n->a.f, n->a.epsilon);
		case VG_NARROW_INCREASED:
			return x > o;
		case VG_NARROW_DECREASED:
			return x < o;
		case VG_NARROW_INCREASED_BY:
		case VG_NARROW_DECREASED_BY:
			want = n->op == VG_NARROW_INCREASED_BY ? o + n->a.f : o - n->a.f;
			/* f32: the sum as the program computes it, in float. */
			if (t == VG_SCAN_F32)
				want = (float)want;
			return isfinite(o) && within(x, want, n->a.epsilon);
		case VG_NARROW_RANGE:
			return x >= n->a.f && x <= n->b.f;
		default:
			return false;
		}
	}
	uint64_t mask = w == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * w)) - 1;
	uint64_t ou = load_u(t, old_raw), nu = load_u(t, new_raw);
	bool sgn = vg_scan_type_is_signed(t);
	int64_t oi = load_i(t, old_raw), ni = load_i(t, new_raw);

	switch (n->op) {
	case VG_NARROW_EQ:
		return nu == (n->a.u & mask);
	case VG_NARROW_INCREASED:
		return sgn ? ni > oi : nu > ou;
	case VG_NARROW_DECREASED:
		return sgn ? ni < oi : nu < ou;
	case VG_NARROW_INCREASED_BY:
		return nu == ((ou + n->a.u) & mask);
	case VG_NARROW_DECREASED_BY:
		return nu == ((ou - n->a.u) & mask);
	case VG_NARROW_RANGE:
		return sgn ? (ni >= n->a.i && ni <= n->b.i) : (nu >= n->a.u && nu <= n->b.u);
	default:
		return false;
	}
}
