/* sparse.h - zeroed tables of which a run touches only a few entries. */
#ifndef VG_SPARSE_H
#define VG_SPARSE_H

#include <stddef.h>

/* n zeroed elements of size bytes, or NULL (out of memory or overflow).
 * Unlike calloc, a large table costs nothing until an entry is written:
 * glibc's calloc clears a heap block below its mmap threshold (128 KiB)
 * byte by byte, which faults in every page of it, and a page fault is
 * the dearest thing a short run does (~15 us on a VM with shadow page
 * tables).  Free with vg_sparse_free and the same n and size. */
void *vg_sparse_calloc(size_t n, size_t size);
void vg_sparse_free(void *p, size_t n, size_t size);

#endif
