/* hugebuf.h - large scratch buffers in 2 MiB pages where the kernel
 * gives them (transparent huge pages on request: MADV_HUGEPAGE).
 *
 * Why: a batch's answers, keys and output are megabytes written once per
 * process.  On a VM that shadows the guest's page tables, the first write
 * to each fresh 4 KiB page cost ~12 us (1 MB: 3 ms, measured with a
 * memset of fresh anonymous memory); one 2 MiB page cost 80-115 us for
 * all of it.  The first batch of a 100,000-address run took ~500 such
 * faults.  On bare metal the gain is smaller but the cost is nil.
 *
 * A buffer is VG_HUGEBUF_MIN bytes or a multiple of it, aligned to it, so
 * that the kernel can back it whole by huge pages; where it cannot (THP
 * off, no free 2 MiB block), the same memory comes in ordinary pages.
 * Memory is zero-filled on first touch, as with mmap. */
#ifndef VIGIL_UTIL_HUGEBUF_H
#define VIGIL_UTIL_HUGEBUF_H

#include <stddef.h>

#define VG_HUGEBUF_MIN ((size_t)2 << 20)

/* size rounded up to a multiple of VG_HUGEBUF_MIN (0 on overflow). */
size_t vg_hugebuf_size(size_t size);

/* A buffer of vg_hugebuf_size(size) bytes, or NULL (errno set). */
void *vg_hugebuf_alloc(size_t size);

/* Frees p (from vg_hugebuf_alloc(size), or NULL). */
void vg_hugebuf_free(void *p, size_t size);

#endif
