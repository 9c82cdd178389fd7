/* vec.h - growing an array by doubling, the one pattern every table
 * builder here shares. */
#ifndef VG_VEC_H
#define VG_VEC_H

#include <stddef.h>

/* Make room for need elements of elem bytes in *arr (capacity *cap,
 * doubled from 16).  0, or -ENOMEM with *arr and *cap unchanged. */
int vg_grow(void **arr, size_t *cap, size_t need, size_t elem);

#define VG_GROW(arr, cap, need) \
	vg_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
