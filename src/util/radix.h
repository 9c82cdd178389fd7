/* radix.h - a stable sort of (64-bit key, index) pairs, least significant
 * byte first, skipping the bytes every key shares (addresses of one image
 * differ in their low three or four bytes only).  Where qsort's indirect
 * compares cost a tenth of a batch of lookups, or most of the sort of an
 * image's 20,000 symbols by address at every start. */
#ifndef VG_RADIX_H
#define VG_RADIX_H

#include <stddef.h>
#include <stdint.h>

struct vg_radix_item {
	uint64_t key;
	size_t index;
};

/* Sorts v[0..n) by key, equal keys in their order in v; tmp holds n
 * items (scratch). */
void vg_radix_sort(struct vg_radix_item *v, struct vg_radix_item *tmp, size_t n);

#endif
