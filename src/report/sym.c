/* sym.c - `vigil sym` answers: vigil's table, llvm-symbolizer's, JSON. */
#include "report/sym.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "report/json.h"
#include "report/text.h"

static bool is_hex_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

static int out_status(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

static void put_or(FILE *out, const char *s, const char *dflt)
{
	if (s)
		vg_text_put(out, s);
	else
		fputs(dflt, out);
}

static void put_llvm(FILE *out, const struct vg_sym_result *res)
{
	if (res->n_frames == 0) {
		fputs("??\n", out);
		if (res->file) {
			vg_text_put(out, res->file);
			fprintf(out, ":%" PRIu32 ":%" PRIu32 "\n", res->line, res->column);
		} else
			fputs("??:0:0\n", out);
	}
	for (size_t i = 0; i < res->n_frames; i++) {
		const struct vg_sym_frame *f = &res->frames[i];

		put_or(out, f->function, "??");
		putc('\n', out);
		if (f->file) {
			vg_text_put(out, f->file);
			fprintf(out, ":%" PRIu32 ":%" PRIu32 "\n", f->line, f->column);
		} else {
			fputs("??:0:0\n", out);
		}
	}
	putc('\n', out);
}

static void put_location(FILE *out, const char *file, uint32_t line, uint32_t column)
{
	if (!file) {
		fputs("??", out);
		return;
	}
	vg_text_put(out, file);
	fprintf(out, ":%" PRIu32, line);
	if (column)
		fprintf(out, ":%" PRIu32, column);
}

/* The missing-debug-info note of an image, under its first address only,
 * with the Debian package that would supply the debug info when dpkg
 * knows who ships the image (libc6's is libc6-dbg, the others' the
 * PACKAGE-dbgsym of the debian-debug archive). */
static void put_image_note(FILE *out, struct vg_report_sym_table *tb,
			   const struct vg_sym_result *res)
{
	char pkg[256];

	for (size_t i = 0; i < tb->n_noted; i++)
		if (tb->noted[i] == res->image)
			return;
	if (tb->n_noted < sizeof(tb->noted) / sizeof(tb->noted[0]))
		tb->noted[tb->n_noted++] = res->image;
	fputs("  # ", out);
	vg_text_put(out, res->why);
	if (res->image && vg_debuginfo_owner_package(res->image->path, pkg, sizeof(pkg))) {
		fputs("; the Debian package ", out);
		vg_text_put(out, pkg);
		fputs(strcmp(pkg, "libc6") == 0 ? "-dbg" : "-dbgsym (debian-debug archive)", out);
		fputs(" would supply it", out);
	}
	fputs(" (said once per image)\n", out);
}

static void put_vigil(FILE *out, struct vg_report_sym_table *tb, const char *input,
		      const struct vg_sym_result *res)
{
	fprintf(out, "0x%" PRIx64, res->address);
	if (res->has_symbol) {
		fputs("  ", out);
		vg_text_put(out, res->symbol);
		fprintf(out, "+0x%" PRIx64, res->offset);
	} else if (res->function_start) {
		fprintf(out, "  [function at 0x%" PRIx64 ", no symbol]+0x%" PRIx64,
			res->function_start, res->address - res->function_start);
	} else if (res->nearest_symbol) {
		fputs("  ?? (padding after ", out);
		vg_text_put(out, res->nearest_symbol);
		fprintf(out, "+0x%" PRIx64 ")", res->nearest_offset);
	} else {
		fputs("  ??", out);
	}
	if (res->image_path) {
		fputs("  ", out);
		vg_text_put(out, res->image_path);
		if (res->image)
			fprintf(out, " @0x%" PRIx64, res->static_address);
	}
	fprintf(out, "  [%s]", vg_sym_source_name(res->source));
	/* Echo a symbolic input (what was asked); a hex one is the address. */
	if (input && strncmp(input, "0x", 2) != 0 && !is_hex_digits(input)) {
		fputs("  (", out);
		vg_text_put(out, input);
		putc(')', out);
	}
	putc('\n', out);
	for (size_t i = 0; i < res->n_frames; i++) {
		const struct vg_sym_frame *f = &res->frames[i];

		fprintf(out, "  #%zu ", i);
		put_or(out, f->function, "??");
		if (f->file) {
			fputs("  ", out);
			put_location(out, f->file, f->line, f->column);
		}
		if (f->inlined)
			fputs("  (inlined)", out);
		putc('\n', out);
	}
	if (res->frames_truncated)
		fprintf(out, "  # more than %zu frames: the outer ones are not shown\n", res->n_frames);
	if (res->n_frames == 0 && res->file) {
		fputs("  line ", out);
		put_location(out, res->file, res->line, res->column);
		putc('\n', out);
	}
	if (res->why && res->why_is_image_note) {
		put_image_note(out, tb, res);
	} else if (res->why && !(res->n_frames && res->frames[0].file)) {
		fputs("  # ", out);
		vg_text_put(out, res->why);
		putc('\n', out);
	}
}

int vg_report_sym_answer(FILE *out, struct vg_report_sym_table *tb, const char *input,
			 const struct vg_sym_result *res)
{
	if (tb->style == VG_REPORT_SYM_LLVM)
		put_llvm(out, res);
	else
		put_vigil(out, tb, input, res);
	return out_status(out);
}

int vg_report_sym_bad_input(FILE *out, const struct vg_report_sym_table *tb, const char *input,
			    const char *msg)
{
	if (tb->style == VG_REPORT_SYM_LLVM) {
		fputs("??\n??:0:0\n\n", out);
	} else {
		vg_text_put(out, input);
		fputs("  error: ", out);
		vg_text_put(out, msg);
		putc('\n', out);
	}
	return out_status(out);
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
