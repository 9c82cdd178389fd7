/* matchset.h - the matches of a scan: what vigil scan finds, narrows,
 * saves (scanset.h) and compares with a snapshot (snapshot.h). */
#ifndef VG_SCAN_MATCHSET_H
#define VG_SCAN_MATCHSET_H

#include <stddef.h>
#include <stdint.h>

#include "scan/value.h"

/* Matches, ascending by address, with the value each had when last read.
 * At most one match per address: where both encodings of a str match at
 * one address (a one-character ASCII string), the UTF-8 one is kept. */
struct vg_match_set {
	enum vg_scan_type type;
	/* Bytes stored per match: the type width, or for str/bytes the longest
	 * pattern's length (a shorter match is zero-padded; len[] says). */
	size_t value_size;
	uint64_t *addr;
	uint8_t *value;          /* n * value_size */
	uint8_t *variant;        /* str/bytes: index of the pattern matched
				    (0 utf-8, 1 utf-16le); NULL for numbers */
	size_t n, cap;
};
void vg_match_set_init(struct vg_match_set *s, enum vg_scan_type t,
		       size_t value_size);
void vg_match_set_clear(struct vg_match_set *s);
/* Make room for need matches in all three arrays.  0 or -ENOMEM. */
int vg_match_set_reserve(struct vg_match_set *s, size_t need);
/* Append (addresses must be appended in ascending order). 0 or -ENOMEM. */
int vg_match_set_push(struct vg_match_set *s, uint64_t addr,
		      const void *value, uint8_t variant);
/* Bytes of the value actually matched at index i (the pattern length for
 * str/bytes, else value_size). */
size_t vg_match_set_len(const struct vg_match_set *s,
			const struct vg_scan_value *v, size_t i);

#endif
