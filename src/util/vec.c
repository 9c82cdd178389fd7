/* vec.c - see vec.h. */
#include "util/vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int vg_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16, bytes;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (__builtin_mul_overflow(n, elem, &bytes))
		return -ENOMEM;
	p = realloc(*arr, bytes);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}
