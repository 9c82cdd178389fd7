/* bucket.c - building the coarse position table of bucket.h. */
#include "util/bucket.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t key_at(const unsigned char *k, size_t stride, size_t i)
{
	uint64_t v;

	memcpy(&v, k + i * stride, sizeof(v));
	return v;
}

int vg_bucket_build(struct vg_bucket *b, const void *keys, size_t stride,
		    size_t n, unsigned per_bucket)
{
	uint64_t span, want;
	unsigned shift = 0;
	size_t i = 0;

	memset(b, 0, sizeof(*b));
	if (n == 0 || n >= UINT32_MAX)
		return 0;
	b->base = key_at(keys, stride, 0);
	span = key_at(keys, stride, n - 1) - b->base;
	want = n / (per_bucket ? per_bucket : 1) + 1;
	/* The narrowest power of two that keeps the buckets to ~want.
	 * (span >> shift) + 1 would wrap to 0 for a span of 2^64 - 1 (a
	 * hostile symbol table: fuzz_elf found it). */
	while (shift < 63 && (span >> shift) >= want)
		shift++;
	b->shift = shift;
	b->n_buckets = (uint32_t)((span >> shift) + 1);
	b->first = malloc(((size_t)b->n_buckets + 1) * sizeof(*b->first));
	if (!b->first) {
		memset(b, 0, sizeof(*b));
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < b->n_buckets; d++) {
		uint64_t start = b->base + ((uint64_t)d << shift);

		while (i < n && key_at(keys, stride, i) < start)
			i++;
		b->first[d] = (uint32_t)i;
	}
	b->first[b->n_buckets] = (uint32_t)n;
	b->n = (uint32_t)n;
	return 0;
}

void vg_bucket_free(struct vg_bucket *b)
{
	free(b->first);
	memset(b, 0, sizeof(*b));
}
