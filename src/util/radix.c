/* radix.c - the stable byte-wise radix sort of radix.h. */
#include "util/radix.h"

#include <string.h>

void vg_radix_sort(struct vg_radix_item *v, struct vg_radix_item *tmp, size_t n)
{
	struct vg_radix_item *from = v, *to = tmp;
	uint64_t differ = 0;

	if (n < 2)
		return;
	/* The bytes in which some key differs from the first, found in one
	 * read: only those are counted and scattered (a count per byte of
	 * all eight was two fifths of the sort of a batch's addresses). */
	for (size_t i = 1; i < n; i++)
		differ |= v[i].key ^ v[0].key;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, sum = 0;
		struct vg_radix_item *t;

		if (!((differ >> shift) & 0xff))
			continue;      /* every key has this byte */
		for (size_t i = 0; i < n; i++)
			count[(from[i].key >> shift) & 0xff]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].key >> shift) & 0xff]++] = from[i];
		/* The scatter's output is the next pass's input, not copied
		 * back after each pass. */
		t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}
