/* sparse.c - zeroed tables backed by their own anonymous mapping once
 * they span a few pages, so that only the pages a run writes are ever
 * faulted in (see sparse.h). */
#include "util/sparse.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Below this a table is a few pages at most: calloc's clearing costs
 * less than the mapping's system calls. */
#define SPARSE_MIN (16u << 10)

void *vg_sparse_calloc(size_t n, size_t size)
{
	size_t len;
	void *p;

	if (__builtin_mul_overflow(n ? n : 1, size ? size : 1, &len))
		return NULL;
	if (len < SPARSE_MIN)
		return calloc(1, len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void vg_sparse_free(void *p, size_t n, size_t size)
{
	size_t len = (n ? n : 1) * (size ? size : 1);

	if (!p)
		return;
	if (len < SPARSE_MIN)
		free(p);
	else
		munmap(p, len);
}
