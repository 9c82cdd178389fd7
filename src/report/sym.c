/* sym.c - `vigil sym` answers: vigil's table, llvm-symbolizer's, JSON. */
#include "report/sym.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "report/json.h"
#include "report/text.h"
#include "util/hugebuf.h"
#include "util/number.h"
#include "util/sparse.h"
#include "util/utf8.h"

/* ------------------------------------------------------------------ */
/* the answer's text, built in tb->text and written in one piece         */

static void text_free(struct vg_report_sym_table *tb)
{
	if (tb->cap >= VG_HUGEBUF_MIN)
		vg_hugebuf_free(tb->text, tb->cap);
	else
		free(tb->text);
}

/* The text in cap bytes, keeping what it holds: false when out of
 * memory.  From VG_HUGEBUF_MIN on, the text is in huge pages (a large
 * batch's answers are megabytes, written once: util/hugebuf.h); tb->cap
 * tells which kind it is. */
static bool tb_resize(struct vg_report_sym_table *tb, size_t cap)
{
	char *p;

	if (cap < VG_HUGEBUF_MIN) {
		p = realloc(tb->text, cap);
	} else {
		cap = vg_hugebuf_size(cap);
		p = cap ? vg_hugebuf_alloc(cap) : NULL;
		if (p) {
			if (tb->len)
				memcpy(p, tb->text, tb->len);
			text_free(tb);
		}
	}
	if (!p)
		return false;
	tb->text = p;
	tb->cap = cap;
	return true;
}

/* Room for n more bytes: false when out of memory (tb->oom). */
static bool tb_grow(struct vg_report_sym_table *tb, size_t n)
{
	size_t cap = tb->cap ? tb->cap : 4096;

	if (tb->oom)
		return false;
	while (cap < tb->len + n)
		cap *= 2;
	if (!tb_resize(tb, cap)) {
		tb->oom = true;
		return false;
	}
	return true;
}

bool vg_report_sym_reserve(struct vg_report_sym_table *tb, size_t n)
{
	return n <= tb->cap || tb_resize(tb, n);
}

static inline void put_mem(struct vg_report_sym_table *tb, const char *s, size_t n)
{
	if (tb->len + n > tb->cap && !tb_grow(tb, n))
		return;
	memcpy(tb->text + tb->len, s, n);
	tb->len += n;
}

static void put_s(struct vg_report_sym_table *tb, const char *s)
{
	put_mem(tb, s, strlen(s));
}

static inline void put_c(struct vg_report_sym_table *tb, char c)
{
	if (tb->len + 1 > tb->cap && !tb_grow(tb, 1))
		return;
	tb->text[tb->len++] = c;
}

static void put_u64(struct vg_report_sym_table *tb, uint64_t v)
{
	char d[24], *p = d + sizeof(d);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put_mem(tb, p, (size_t)(d + sizeof(d) - p));
}

/* "0x" and lower-case hex, as printf("0x%" PRIx64) writes it. */
static void put_hex(struct vg_report_sym_table *tb, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char d[20], *p = d + sizeof(d);

	do
		*--p = digits[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	put_mem(tb, p, (size_t)(d + sizeof(d) - p));
}

/* Target text, escaped as vg_text_put escapes it (report/text.c): a
 * string with nothing to escape is copied as is. */
static void put_text(struct vg_report_sym_table *tb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char esc[8];

	for (; *p; p++) {
		size_t n;

		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			continue;
		n = vg_utf8_seq(p);
		if (n > 1) {
			p += n - 1;
			continue;
		}
		put_mem(tb, (const char *)run, (size_t)(p - run));
		snprintf(esc, sizeof(esc), "\\%03o", *p);
		put_s(tb, esc);
		run = p + 1;
	}
	put_mem(tb, (const char *)run, (size_t)(p - run));
}

/* A string of an image (its names and files live as long as the
 * symbolizer, at one address): whether it needs escaping is found once. */
static void put_image_text(struct vg_report_sym_table *tb, const char *s)
{
	size_t slot = ((uintptr_t)s >> 3 ^ (uintptr_t)s >> 13) % VG_REPORT_SYM_PLAIN;
	const unsigned char *p;

	if (!tb->plain &&
	    !(tb->plain = vg_sparse_calloc(VG_REPORT_SYM_PLAIN, sizeof(*tb->plain)))) {
		put_text(tb, s);  /* out of memory: escaped, uncached */
		return;
	}
	if (tb->plain[slot].s == s) {
		put_mem(tb, s, tb->plain[slot].len);
		return;
	}
	for (p = (const unsigned char *)s; *p; p++)
		if (!(*p >= 0x20 && *p < 0x7f && *p != '\\'))
			break;
	if (*p) {
		put_text(tb, s);
		return;
	}
	tb->plain[slot].s = s;
	tb->plain[slot].len = (size_t)(p - (const unsigned char *)s);
	put_mem(tb, s, tb->plain[slot].len);
}

/* Names and files of an answer: an image's are cached (put_image_text);
 * the kernel's and a JIT map's are not. */
static void put_name(struct vg_report_sym_table *tb, const struct vg_sym_result *res,
		     const char *s)
{
	if (res->image)
		put_image_text(tb, s);
	else
		put_text(tb, s);
}

static int flush_answer(FILE *out, struct vg_report_sym_table *tb)
{
	if (tb->oom) {
		tb->oom = false;
		tb->len = 0;
		return -ENOMEM;
	}
	if (tb->len)
		fwrite_unlocked(tb->text, 1, tb->len, out);
	tb->len = 0;
	return ferror(out) ? -EIO : 0;
}

void vg_report_sym_table_free(struct vg_report_sym_table *tb)
{
	for (size_t i = 0; i < tb->n_notes; i++)
		free(tb->notes[i].text);
	tb->n_notes = 0;
	text_free(tb);
	tb->text = NULL;
	tb->len = tb->cap = 0;
	vg_sparse_free(tb->plain, VG_REPORT_SYM_PLAIN, sizeof(*tb->plain));
	tb->plain = NULL;
}

static void put_or(struct vg_report_sym_table *tb, const struct vg_sym_result *res,
		   const char *s, const char *dflt)
{
	if (s)
		put_name(tb, res, s);
	else
		put_s(tb, dflt);
}

/* v in decimal at p, two digits per step (a division per digit was a
 * sixth of composing an answer): the end of what was written. */
static inline char *put_dec_at(char *p, uint32_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	/* Columns have a digit or two, lines up to five: compares in that
	 * order (ten without branches cost more than the digits). */
	unsigned n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : 5;
	char *end;

	for (uint32_t t = v / 100000; t; t /= 10)
		n++;
	end = p + n;

	p = end;
	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return end;
}

/* ":LINE:COLUMN\n", at most this long. */
#define LINE_COL_MAX 24

/* Where LINE_COL_MAX bytes of room are known to be. */
static inline void put_line_col_at(struct vg_report_sym_table *tb, uint32_t line,
				   uint32_t column)
{
	char *p = tb->text + tb->len;

	*p++ = ':';
	p = put_dec_at(p, line);
	*p++ = ':';
	p = put_dec_at(p, column);
	*p++ = '\n';
	tb->len = (size_t)(p - tb->text);
}

static void put_line_col(struct vg_report_sym_table *tb, uint32_t line, uint32_t column)
{
	if (tb->len + LINE_COL_MAX > tb->cap && !tb_grow(tb, LINE_COL_MAX))
		return;
	put_line_col_at(tb, line, column);
}

static void put_llvm(struct vg_report_sym_table *tb, const struct vg_sym_result *res)
{
	if (res->n_frames == 0) {
		put_s(tb, "??\n");
		if (res->file) {
			put_name(tb, res, res->file);
			put_line_col(tb, res->line, res->column);
		} else
			put_s(tb, "??:0:0\n");
	}
	for (size_t i = 0; i < res->n_frames; i++) {
		const struct vg_sym_frame *f = &res->frames[i];

		put_or(tb, res, f->function, "??");
		put_c(tb, '\n');
		if (f->file) {
			put_name(tb, res, f->file);
			put_line_col(tb, f->line, f->column);
		} else {
			put_s(tb, "??:0:0\n");
		}
	}
	put_c(tb, '\n');
}

static void put_location(struct vg_report_sym_table *tb, const struct vg_sym_result *res,
			 const char *file, uint32_t line, uint32_t column)
{
	if (!file) {
		put_s(tb, "??");
		return;
	}
	put_name(tb, res, file);
	put_c(tb, ':');
	put_u64(tb, line);
	if (column) {
		put_c(tb, ':');
		put_u64(tb, column);
	}
}

/* The missing-debug-info note of an image, under its first address only,
 * with the Debian package that would supply the debug info when dpkg
 * knows who ships the image (libc6's is libc6-dbg, the others' the
 * PACKAGE-dbgsym of the debian-debug archive). */
static void put_note_text(struct vg_report_sym_table *tb, const struct vg_sym_result *res)
{
	char pkg[256];

	put_s(tb, "  # ");
	put_text(tb, res->why);
	if (res->image && vg_debuginfo_owner_package(res->image->path, pkg, sizeof(pkg))) {
		put_s(tb, "; the Debian package ");
		put_text(tb, pkg);
		put_s(tb, strcmp(pkg, "libc6") == 0 ? "-dbg" : "-dbgsym (debian-debug archive)");
		put_s(tb, " would supply it");
	}
	put_s(tb, " (said once per image)\n");
}

static void put_image_note(struct vg_report_sym_table *tb, const struct vg_sym_result *res)
{
	for (size_t i = 0; i < tb->n_noted; i++)
		if (tb->noted[i] == res->image)
			return;
	if (tb->n_noted < sizeof(tb->noted) / sizeof(tb->noted[0]))
		tb->noted[tb->n_noted++] = res->image;
	put_note_text(tb, res);
}

/* Out of input order: the note of res's image, composed once into
 * tb->notes (not into the answer); tb->note_of says it is due. */
static void compose_note(struct vg_report_sym_table *tb, const struct vg_sym_result *res)
{
	size_t start = tb->len, k;

	for (k = 0; k < tb->n_notes; k++)
		if (tb->notes[k].img == res->image)
			break;
	if (k == tb->n_notes && k < sizeof(tb->notes) / sizeof(tb->notes[0])) {
		put_note_text(tb, res);
		if (!tb->oom && (tb->notes[k].text = strndup(tb->text + start, tb->len - start))) {
			tb->notes[k].img = res->image;
			tb->n_notes++;
		}
		tb->len = start;
	}
	tb->note_of = res->image;
}

static void put_vigil(struct vg_report_sym_table *tb, const char *input,
		      const struct vg_sym_result *res)
{
	put_hex(tb, res->address);
	if (res->has_symbol) {
		put_s(tb, "  ");
		put_name(tb, res, res->symbol);
		put_c(tb, '+');
		put_hex(tb, res->offset);
	} else if (res->function_start) {
		put_s(tb, "  [function at ");
		put_hex(tb, res->function_start);
		put_s(tb, ", no symbol]+");
		put_hex(tb, res->address - res->function_start);
	} else if (res->nearest_symbol) {
		put_s(tb, "  ?? (padding after ");
		put_name(tb, res, res->nearest_symbol);
		put_c(tb, '+');
		put_hex(tb, res->nearest_offset);
		put_c(tb, ')');
	} else {
		put_s(tb, "  ??");
	}
	if (res->image_path) {
		put_s(tb, "  ");
		put_text(tb, res->image_path);
		if (res->image) {
			put_s(tb, " @");
			put_hex(tb, res->static_address);
		}
	}
	put_s(tb, "  [");
	put_s(tb, vg_sym_source_name(res->source));
	put_c(tb, ']');
	/* Echo a symbolic input (what was asked); a hex one is the address. */
	if (input && strncmp(input, "0x", 2) != 0 && !vg_is_hex_digits(input)) {
		put_s(tb, "  (");
		put_text(tb, input);
		put_c(tb, ')');
	}
	put_c(tb, '\n');
	for (size_t i = 0; i < res->n_frames; i++) {
		const struct vg_sym_frame *f = &res->frames[i];

		put_s(tb, "  #");
		put_u64(tb, i);
		put_c(tb, ' ');
		put_or(tb, res, f->function, "??");
		if (f->file) {
			put_s(tb, "  ");
			put_location(tb, res, f->file, f->line, f->column);
		}
		if (f->inlined)
			put_s(tb, "  (inlined)");
		put_c(tb, '\n');
	}
	if (res->frames_truncated) {
		put_s(tb, "  # more than ");
		put_u64(tb, res->n_frames);
		put_s(tb, " frames: the outer ones are not shown\n");
	}
	if (res->n_frames == 0 && res->file) {
		put_s(tb, "  line ");
		put_location(tb, res, res->file, res->line, res->column);
		put_c(tb, '\n');
	}
	if (res->why && res->why_is_image_note && tb->composing) {
		compose_note(tb, res);
	} else if (res->why && res->why_is_image_note) {
		put_image_note(tb, res);
	} else if (res->why && !(res->n_frames && res->frames[0].file)) {
		put_s(tb, "  # ");
		put_text(tb, res->why);
		put_c(tb, '\n');
	}
}

int vg_report_sym_answer(FILE *out, struct vg_report_sym_table *tb, const char *input,
			 const struct vg_sym_result *res)
{
	if (tb->style == VG_REPORT_SYM_LLVM)
		put_llvm(tb, res);
	else
		put_vigil(tb, input, res);
	return flush_answer(out, tb);
}

void vg_report_sym_compose_bad(struct vg_report_sym_table *tb, const char *input,
			       const char *msg)
{
	if (tb->style == VG_REPORT_SYM_LLVM) {
		put_s(tb, "??\n??:0:0\n\n");
	} else {
		put_text(tb, input);
		put_s(tb, "  error: ");
		put_text(tb, msg);
		put_c(tb, '\n');
	}
}

int vg_report_sym_bad_input(FILE *out, struct vg_report_sym_table *tb, const char *input,
			    const char *msg)
{
	vg_report_sym_compose_bad(tb, input, msg);
	return flush_answer(out, tb);
}

void vg_report_sym_compose(struct vg_report_sym_table *tb, const char *input,
			   const struct vg_sym_result *res)
{
	tb->note_of = NULL;
	tb->composing = true;
	if (tb->style == VG_REPORT_SYM_LLVM)
		put_llvm(tb, res);
	else
		put_vigil(tb, input, res);
	tb->composing = false;
}

int vg_report_sym_note(FILE *out, struct vg_report_sym_table *tb, const struct vg_image *img)
{
	for (size_t i = 0; i < tb->n_noted; i++)
		if (tb->noted[i] == img)
			return 0;
	if (tb->n_noted < sizeof(tb->noted) / sizeof(tb->noted[0]))
		tb->noted[tb->n_noted++] = img;
	for (size_t k = 0; k < tb->n_notes; k++)
		if (tb->notes[k].img == img)
			fputs(tb->notes[k].text, out);
	return ferror(out) ? -EIO : 0;
}

void vg_report_sym_merge_notes(struct vg_report_sym_table *tb,
			       const struct vg_report_sym_table *from)
{
	for (size_t j = 0; j < from->n_notes; j++) {
		size_t k;

		for (k = 0; k < tb->n_notes; k++)
			if (tb->notes[k].img == from->notes[j].img)
				break;
		if (k < tb->n_notes || k == sizeof(tb->notes) / sizeof(tb->notes[0]))
			continue;
		if ((tb->notes[k].text = strdup(from->notes[j].text))) {
			tb->notes[k].img = from->notes[j].img;
			tb->n_notes++;
		}
	}
}

static void add_text_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		vg_json_add_text(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static void add_addr_or_null(cJSON *o, const char *key, bool has, uint64_t v)
{
	if (has)
		vg_json_add_addr(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

cJSON *vg_report_sym_result_json(const char *input, const struct vg_sym_result *res,
				 const char *error)
{
	cJSON *o = cJSON_CreateObject(), *frames, *near;
	bool ok = res != NULL;

	if (!o)
		return NULL;
	vg_json_add_text(o, "input", input);
	add_addr_or_null(o, "address", ok, ok ? res->address : 0);
	add_text_or_null(o, "image", ok ? res->image_path : NULL);
	add_addr_or_null(o, "static_address", ok && res->image_path, ok ? res->static_address : 0);
	ok = ok && res->has_symbol;
	add_text_or_null(o, "symbol", ok ? res->symbol : NULL);
	add_text_or_null(o, "symbol_raw", ok ? res->symbol_raw : NULL);
	add_addr_or_null(o, "symbol_address", ok, ok ? res->symbol_address : 0);
	add_addr_or_null(o, "symbol_size", ok, ok ? res->symbol_size : 0);
	add_addr_or_null(o, "offset", ok, ok ? res->offset : 0);
	cJSON_AddStringToObject(o, "source", res ? vg_sym_source_name(res->source) : "none");
	frames = cJSON_AddArrayToObject(o, "frames");
	for (size_t i = 0; res && frames && i < res->n_frames; i++)
		cJSON_AddItemToArray(frames, vg_json_sym_frame(&res->frames[i]));
	if (res && res->frames_truncated)
		cJSON_AddBoolToObject(o, "frames_truncated", true);
	add_text_or_null(o, "file", res ? res->file : NULL);
	cJSON_AddNumberToObject(o, "line", res ? res->line : 0);
	cJSON_AddNumberToObject(o, "column", res ? res->column : 0);
	if (res && res->nearest_symbol && (near = cJSON_AddObjectToObject(o, "nearest_symbol"))) {
		vg_json_add_text(near, "name", res->nearest_symbol);
		vg_json_add_addr(near, "offset", res->nearest_offset);
	} else {
		cJSON_AddNullToObject(o, "nearest_symbol");
	}
	if (res && !res->has_symbol && res->function_start) {
		vg_json_add_addr(o, "function_start", res->function_start);
		vg_json_add_addr(o, "function_end", res->function_end);
	}
	add_text_or_null(o, "why", res ? res->why : NULL);
	add_text_or_null(o, "error", error);
	return o;
}

static cJSON *binary_json(const struct vg_symbolizer *s)
{
	const struct vg_image *img = vg_symbolizer_images(s)->images[0];
	cJSON *o = cJSON_CreateObject();
	char hex[160];

	if (!o)
		return NULL;
	vg_json_add_text(o, "path", img->open_path ? img->open_path : img->path);
	if (img->build_id_len)
		cJSON_AddStringToObject(o, "build_id", vg_image_build_id_hex(img, hex, sizeof(hex)));
	else
		cJSON_AddNullToObject(o, "build_id");
	return o;
}

cJSON *vg_report_sym_json(const struct vg_symbolizer *s, const struct vg_target *t, bool binary,
			  cJSON *results, struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("symbolize", t);
	cJSON *w;

	if (!doc) {
		cJSON_Delete(results);
		vg_error_set(err, -ENOMEM, "out of memory for the JSON report");
		return NULL;
	}
	if (binary)
		cJSON_AddItemToObject(doc, "binary", binary_json(s));
	w = cJSON_AddArrayToObject(doc, "warnings");
	for (const char *const *p = vg_symbolizer_warnings(s); w && *p; p++)
		cJSON_AddItemToArray(w, vg_json_text(*p));
	cJSON_AddItemToObject(doc, "results", results);
	return doc;
}
