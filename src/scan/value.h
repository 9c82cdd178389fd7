/* value.h - what vigil scan looks for: a type, a VALUE parsed for it, the
 * regions to look in, and the comparisons that narrow matches.
 *
 * Numbers are little-endian in the target (x86-64).  Integers match
 * exactly; floats match within an epsilon (|x - v| <= epsilon, NaN never
 * matches); str matches its UTF-8 bytes and its UTF-16LE encoding (two
 * patterns); bytes is hex with "??" wildcards ("de ad ?? ef", spaces
 * optional).  Nothing here reads the target. */
#ifndef VG_SCAN_VALUE_H
#define VG_SCAN_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/maps.h"
#include "util/error.h"

enum vg_scan_type {
	VG_SCAN_I8, VG_SCAN_I16, VG_SCAN_I32, VG_SCAN_I64,
	VG_SCAN_U8, VG_SCAN_U16, VG_SCAN_U32, VG_SCAN_U64,
	VG_SCAN_F32, VG_SCAN_F64,
	VG_SCAN_STR, VG_SCAN_BYTES,
};

/* "i8".."u64", "f32", "f64", "str", "bytes".  -EINVAL with the list of
 * valid names in err. */
int vg_scan_type_parse(const char *name, enum vg_scan_type *out,
		       struct vg_error *err);
const char *vg_scan_type_name(enum vg_scan_type t);
/* Bytes of a numeric type; 0 for str and bytes. */
size_t vg_scan_type_width(enum vg_scan_type t);
bool vg_scan_type_is_float(enum vg_scan_type t);
/* str and bytes: matched as byte patterns, each match with its variant. */
bool vg_scan_type_is_pattern(enum vg_scan_type t);
bool vg_scan_type_is_signed(enum vg_scan_type t);

/* One byte pattern: str (one per encoding) and bytes. */
struct vg_scan_pattern {
	uint8_t *bytes;
	uint8_t *mask;           /* NULL: every byte significant; else 0xff/0x00 */
	size_t len;
	const char *encoding;    /* "utf-8", "utf-16le", or "hex" */
};

/* A VALUE parsed for a type. */
struct vg_scan_value {
	enum vg_scan_type type;
	uint8_t raw[8];          /* numeric: the value as the target stores it */
	int64_t i;               /* signed types */
	uint64_t u;              /* unsigned types */
	double f;                /* float types */
	double epsilon;          /* float types; >= 0 */
	struct vg_scan_pattern pat[2];
	size_t npat;             /* str: 2 (utf-8, utf-16le); bytes: 1; else 0 */
};

/* Parse text as a value of type t.  Integers: decimal, 0xHEX, a leading
 * '-' (or '+'), no spaces; out of range is -ERANGE ("300 is out of range
 * for u8 (0..255)"; "-1" for an unsigned type too; "0xff" for i8, with a
 * hint to use u8 for the bit pattern).  Floats: strtod syntax, finite
 * only (nan/inf -EINVAL, overflow -ERANGE); for f32, f and raw hold the
 * value rounded to float (0.1 is 0.1f, so epsilon 0 finds it).  str: any
 * non-empty valid UTF-8 text.  bytes: hex pairs or "??", spaces optional,
 * at least one significant byte.  Malformed text is -EINVAL.  epsilon is
 * kept for float types (default chosen by the caller; -EINVAL unless
 * finite and >= 0) and ignored otherwise.  out is cleared first; free
 * with vg_scan_value_clear() on success or failure. */
int vg_scan_value_parse(enum vg_scan_type t, const char *text, double epsilon,
			struct vg_scan_value *out, struct vg_error *err);
void vg_scan_value_clear(struct vg_scan_value *v);

/* The number stored in raw (vg_scan_type_width(t) bytes) as text: "42",
 * "-7", "3.25" (floats with %.9g / %.17g).  str/bytes: not handled here. */
void vg_scan_format_number(enum vg_scan_type t, const void *raw, char *buf,
			   size_t size);

/* Which regions a scan reads (--regions). */
enum vg_scan_region_set {
	VG_SCAN_REGIONS_WRITABLE,  /* default: readable and writable */
	VG_SCAN_REGIONS_ALL,       /* every readable region */
	VG_SCAN_REGIONS_HEAP,      /* [heap] and anonymous private rw mappings */
	VG_SCAN_REGIONS_STACK,     /* [stack] (thread stacks are anonymous) */
	VG_SCAN_REGIONS_ANON,      /* anonymous mappings (any protection) */
	VG_SCAN_REGIONS_IMAGE,     /* mappings of one file, by name or path
				      (not the anonymous .bss after it) */
};
struct vg_scan_select {
	enum vg_scan_region_set set;
	const char *image;         /* VG_SCAN_REGIONS_IMAGE: borrowed */
};
/* "writable", "all", "heap", "stack", "anon"; anything else names an image
 * (matched against the file name or the full path of file mappings). */
void vg_scan_select_parse(const char *text, struct vg_scan_select *out);
/* [vvar], [vvar_vclock] and [vsyscall] are never selected (not memory the
 * program stores values in, and reads of them fail or fault), nor any
 * region that is not readable.  "Anonymous" includes regions named with
 * prctl(PR_SET_VMA_ANON_NAME) ("[anon:NAME]"). */
bool vg_scan_region_selected(const struct vg_scan_select *sel,
			     const struct vg_region *r);
/* An image name that selects no region of maps is a mistake, not "0
 * matches": -ENOENT with a sentence naming the mapped files (those that
 * contain the name first) and the set names.  0 for the set names and for
 * an image that selects something. */
int vg_scan_select_check(const struct vg_scan_select *sel, const struct vg_maps *maps,
			 struct vg_error *err);

/* Narrowing: keep a match whose value now (new) satisfies op against the
 * value it had at the last scan (old) and the operands. */
enum vg_narrow_op {
	VG_NARROW_EQ,            /* new == a (floats: within epsilon) */
	VG_NARROW_CHANGED,       /* new != old (bitwise) */
	VG_NARROW_UNCHANGED,     /* new == old (bitwise) */
	VG_NARROW_INCREASED,     /* new > old (numeric types only) */
	VG_NARROW_DECREASED,     /* new < old */
	VG_NARROW_INCREASED_BY,  /* new == old + a (wrapping for integers;
				    floats within epsilon) */
	VG_NARROW_DECREASED_BY,  /* new == old - a */
	VG_NARROW_RANGE,         /* a <= new <= b */
};
struct vg_narrow {
	enum vg_narrow_op op;
	struct vg_scan_value a, b;   /* operands (parsed for the set's type) */
};
const char *vg_narrow_op_name(enum vg_narrow_op op);  /* "eq", "changed", ... */
/* Ordering ops (increased, decreased, *_by, range) need a numeric type:
 * -EINVAL with a sentence for str/bytes.  Also -EINVAL when an operand the
 * op uses was parsed for another type, or the range is empty (a > b). */
int vg_narrow_check(enum vg_scan_type t, const struct vg_narrow *n,
		    struct vg_error *err);
/* old/new: vg_scan_type_width(t) bytes (numeric types).  For str/bytes
 * only EQ/CHANGED/UNCHANGED exist and the caller compares patterns
 * (false here).  Floats: NaN satisfies no ordering op, and neither NaN
 * nor an infinity satisfies EQ or *_BY; for f32 the sum of *_BY is
 * rounded to float as the program would compute it; RANGE has no
 * epsilon. */
bool vg_narrow_test(enum vg_scan_type t, const struct vg_narrow *n,
		   const void *old_raw, const void *new_raw);

#endif
