/* print.h - the report of `vigil print`: typed values in the layout gdb
 * users know ({port = 8080, name = "demo", limits = {max = 100}}), or one
 * JSON document (docs/json-schema/print.json) with every value's type
 * name, size and offset and the bytes that could not be read. */
#ifndef VG_REPORT_PRINT_H
#define VG_REPORT_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "expr/eval.h"
#include "expr/value.h"
#include "target/target.h"

struct vg_print_opts {
	unsigned max_depth;           /* --depth */
	unsigned max_elements;        /* --max-elements */
	bool hex;                     /* --hex: integers in hex */
};

struct vg_print_item {
	const char *expr;             /* as the user wrote it */
	const struct vg_expr_result *res;
	const struct vg_value *value;
};

/* "EXPR = VALUE\n"; 0 or the stream's negative errno. */
int vg_report_print_text(FILE *out, const struct vg_print_item *item,
			 const struct vg_print_opts *o);

/* A value of at most 8 bytes (a watch's written value) formatted as
 * print formats it (enum names, bools, signed integers, pointers with the
 * symbol they point into: sym, or "" for none) into a malloc'ed string;
 * NULL on out-of-memory. */
char *vg_report_print_scalar(const struct vg_type *t, const unsigned char *bytes, size_t n,
			     const char *sym, const struct vg_print_opts *o);

/* The whole document for items[0..n); NULL on out-of-memory. */
cJSON *vg_report_print_json(const struct vg_target *t, const struct vg_print_item *items,
			    size_t n, const struct vg_print_opts *o);

#endif
