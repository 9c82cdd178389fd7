/* hugebuf.c - large scratch buffers in 2 MiB pages (util/hugebuf.h). */
#include "util/hugebuf.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

size_t vg_hugebuf_size(size_t size)
{
	size_t n = size ? size : 1;

	if (n > SIZE_MAX - (VG_HUGEBUF_MIN - 1))
		return 0;
	return (n + VG_HUGEBUF_MIN - 1) & ~(VG_HUGEBUF_MIN - 1);
}

void *vg_hugebuf_alloc(size_t size)
{
	size_t len = vg_hugebuf_size(size);
	uintptr_t base, aligned;
	char *map;

	if (!len || len > SIZE_MAX - VG_HUGEBUF_MIN) {
		errno = ENOMEM;
		return NULL;
	}
	/* Over-map by one huge page, then trim to an aligned span: mmap
	 * aligns to 4 KiB only, and a huge page needs a 2 MiB-aligned 2 MiB
	 * of the mapping. */
	map = mmap(NULL, len + VG_HUGEBUF_MIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	base = (uintptr_t)map;
	aligned = (base + VG_HUGEBUF_MIN - 1) & ~(uintptr_t)(VG_HUGEBUF_MIN - 1);
	if (aligned > base)
		(void)munmap(map, aligned - base);
	if (aligned + len < base + len + VG_HUGEBUF_MIN)
		(void)munmap((void *)(aligned + len), base + len + VG_HUGEBUF_MIN - (aligned + len));
	/* Advice: a kernel without THP, or with it off, ignores it. */
	(void)madvise((void *)aligned, len, MADV_HUGEPAGE);
	return (void *)aligned;
}

void vg_hugebuf_free(void *p, size_t size)
{
	if (p)
		(void)munmap(p, vg_hugebuf_size(size));
}
