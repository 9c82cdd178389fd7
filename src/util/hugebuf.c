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
	int saved;

	if (!len || len > SIZE_MAX - VG_HUGEBUF_MIN) {
		errno = ENOMEM;
		return NULL;
	}
	/* Over-map by one huge page, then trim to an aligned span: mmap
	 * aligns to 4 KiB only, and a huge page needs a 2 MiB-aligned 2 MiB
	 * of the mapping. */
	/* Not MAP_NORESERVE: a size the kernel will not commit is refused
	 * here (ENOMEM, said as out of memory), not killed at first touch. */
	map = mmap(NULL, len + VG_HUGEBUF_MIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	saved = errno;
	base = (uintptr_t)map;
	aligned = (base + VG_HUGEBUF_MIN - 1) & ~(uintptr_t)(VG_HUGEBUF_MIN - 1);
	if (aligned > base)
		(void)munmap(map, aligned - base);
	if (aligned + len < base + len + VG_HUGEBUF_MIN)
		(void)munmap((void *)(aligned + len), base + len + VG_HUGEBUF_MIN - (aligned + len));
	/* Advice: a kernel without THP refuses it (EINVAL), one with it
	 * off ignores it; either way the memory is there, and errno is
	 * left as it was (a later message may print it). */
	(void)madvise((void *)aligned, len, MADV_HUGEPAGE);
	errno = saved;
	return (void *)aligned;
}

void vg_hugebuf_free(void *p, size_t size)
{
	int saved = errno;

	if (p)
		(void)munmap(p, vg_hugebuf_size(size));
	errno = saved;
}
