/* sym.h - the report of `vigil sym`: one answer per address, as a table
 * (vigil's style or llvm-symbolizer's) written as each answer is known,
 * or one JSON document (docs/json-schema/symbolize.json) of results[] in
 * input order.
 *
 * The answers are written one at a time because sym is a pipeline filter:
 * a coprocess waits for each.  The CLI flushes; these only write. */
#ifndef VG_REPORT_SYM_H
#define VG_REPORT_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "elf/image.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "util/error.h"

enum vg_report_sym_style {
	VG_REPORT_SYM_VIGIL,   /* one line per address, one per frame */
	VG_REPORT_SYM_LLVM,    /* exactly llvm-symbolizer --inlining's output */
};

/* The table across answers: its style, and the images whose
 * missing-debug-info note was written (said once per image, under the
 * first address only).  Zero it, then set style. */
#define VG_REPORT_SYM_PLAIN 1024

struct vg_report_sym_table {
	enum vg_report_sym_style style;
	const struct vg_image *noted[64];
	size_t n_noted;
	/* The answer being written, in one piece: one fwrite per answer
	 * (stdio per field and printf per number were a third of a batch
	 * with the persistent index). */
	char *text;
	size_t len, cap;
	bool oom;
	/* Strings of images (names, files: they live as long as the
	 * symbolizer) already known to need no escaping, by address:
	 * VG_REPORT_SYM_PLAIN slots, allocated at the first such string
	 * (cleared in the struct, 16 KiB of a one-answer run's stack were
	 * four page faults). */
	struct vg_report_sym_plain { const char *s; size_t len; } *plain;
	/* Answers composed out of input order (vg_report_sym_compose): the
	 * image notes go out as they are written, in input order. */
	const struct vg_image *note_of;   /* the answer just composed */
	bool composing;
	struct { const struct vg_image *img; char *text; } notes[64];
	size_t n_notes;
};

/* Room for n bytes of answers before the table grows (a batch of many
 * lines reserves it at once, in huge pages from VG_HUGEBUF_MIN on: the
 * doubling of the text copied it and faulted in fresh pages at each
 * step).  False when that memory cannot be had; the table is unchanged
 * and still grows as needed. */
bool vg_report_sym_reserve(struct vg_report_sym_table *tb, size_t n);

/* Frees what the table allocated. */
void vg_report_sym_table_free(struct vg_report_sym_table *tb);

/* One answer.  input: what was asked; a symbolic one (not hex) is echoed
 * after the answer in vigil's style.  0, or -EIO when out has a write
 * error. */
int vg_report_sym_answer(FILE *out, struct vg_report_sym_table *tb, const char *input,
			 const struct vg_sym_result *res);

/* For a batch looked up in address order and written in input order:
 * the answer's text is appended to tb->text (from tb->len on), nothing
 * is written; tb->note_of is set to its image when the answer carries
 * the image's missing-debug-info note, which vg_report_sym_note then
 * writes under the first answer of that image in input order. */
void vg_report_sym_compose(struct vg_report_sym_table *tb, const char *input,
			   const struct vg_sym_result *res);
void vg_report_sym_compose_bad(struct vg_report_sym_table *tb, const char *input,
			       const char *msg);
/* The note of img (composed with one of its answers), unless written
 * before.  0, or -EIO on a write error. */
int vg_report_sym_note(FILE *out, struct vg_report_sym_table *tb, const struct vg_image *img);

/* A batch composed by two threads, each into its own table: the notes
 * composed in from that tb lacks are copied into tb, so that
 * vg_report_sym_note(out, tb, img) writes any of them (once per image,
 * as ever).  Out of memory leaves a note unwritten. */
void vg_report_sym_merge_notes(struct vg_report_sym_table *tb,
			       const struct vg_report_sym_table *from);

/* An input that is not an address, answered in its place with msg. */
int vg_report_sym_bad_input(FILE *out, struct vg_report_sym_table *tb, const char *input,
			    const char *msg);

/* One element of results[]: the answer to input, or (res NULL) the error
 * that input was answered with.  NULL only on allocation failure. */
cJSON *vg_report_sym_result_json(const char *input, const struct vg_sym_result *res,
				 const char *error);

/* The document: the common header (t NULL offline), binary {path,
 * build_id} when s was opened on a file (binary true), the symbolizer's
 * warnings and results.  results is taken: the document owns it, and it
 * is freed on failure.  Caller owns the document; NULL with err filled on
 * allocation failure. */
cJSON *vg_report_sym_json(const struct vg_symbolizer *s, const struct vg_target *t, bool binary,
			  cJSON *results, struct vg_error *err);

#endif
