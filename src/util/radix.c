/* radix.c - the stable byte-wise radix sort of radix.h. */
#include "util/radix.h"

#include <string.h>

void vg_radix_sort(struct vg_radix_item *v, struct vg_radix_item *tmp, size_t n)
{
	if (n < 2)
		return;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };

		for (size_t i = 0; i < n; i++)
			count[((v[i].key >> shift) & 0xff) + 1]++;
		if (count[((v[0].key >> shift) & 0xff) + 1] == n)
			continue;      /* every key has this byte */
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].key >> shift) & 0xff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
}
