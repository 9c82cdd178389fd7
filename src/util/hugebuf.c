/* hugebuf.c - large scratch buffers in 2 MiB pages (util/hugebuf.h). */
#include "util/hugebuf.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

void vg_heap_huge(size_t reserve)
{
	void *(*volatile grow)(size_t) = malloc;
	int saved = errno, pad = reserve > (1u << 30) ? 1 << 30 : (int)reserve;
	long page = sysconf(_SC_PAGESIZE);
	void *top, *p;
	uintptr_t lo, hi;

	/* One arena: a thread's own is a heap glibc maps apart (64 MiB
	 * each), which would grow in 4 KiB pages.  On a cold libc batch,
	 * with glibc's tunables, huge pages alone gave -12 %, with one arena
	 * -26 %: the two threads share the pages. */
	(void)mallopt(M_ARENA_MAX, 1);
	/* Blocks up to 32 MiB come from the heap too, not each its own
	 * mapping in 4 KiB pages: those between 1 and 4 MiB (arrays grown
	 * by realloc) were most of the gain, and most of its price in peak
	 * memory (a cold libc batch 49 -> 63 MB, the generated binary's
	 * 60 -> 103 MB; with the threshold at 1 MiB neither moves). */
	(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
	/* Freed memory at the top stays: given back and taken again, it
	 * would return in 4 KiB pages. */
	(void)mallopt(M_TRIM_THRESHOLD, pad);
	/* The heap's next growth reserves this much at once, advised
	 * below; growth past it is in ordinary pages. */
	(void)mallopt(M_TOP_PAD, pad);
	top = sbrk(0);
	/* Past the top: the heap grows now.  Called through a volatile
	 * pointer, or the compiler drops a malloc whose block is unused. */
	p = grow(1u << 20);
	free(p);
	hi = (uintptr_t)sbrk(0);
	if (top != (void *)-1 && page > 0) {
		lo = ((uintptr_t)top + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
		if (hi > lo)
			(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
	errno = saved;
}
