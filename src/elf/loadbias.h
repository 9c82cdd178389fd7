/* loadbias.h - where the kernel (or ld.so) placed an ELF file, from its
 * PT_LOAD headers and the mappings of it in /proc/PID/maps.
 *
 * Exact relation the kernel's elf_map() uses for every PT_LOAD:
 *   start  == bias + PAGESTART(p_vaddr)
 *   offset == p_offset - PAGEOFFSET(p_vaddr)
 * A mapping that satisfies the second equation for some PT_LOAD gives a
 * candidate bias by the first; the bias is exact when candidates agree.
 * Only when no mapping matches any PT_LOAD (e.g. all split or remapped) is the
 * lowest-vaddr heuristic used, and it says so.  Pure: no I/O. */
#ifndef VG_LOADBIAS_H
#define VG_LOADBIAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vg_load {          /* one PT_LOAD */
	uint64_t vaddr, offset, filesz, memsz, align;
	uint32_t flags;       /* PF_R | PF_W | PF_X */
};

struct vg_mapping {       /* one region of the file in the target */
	uint64_t start, end, offset;
};

enum vg_bias_method {
	VG_BIAS_NONE = 0,     /* could not be derived */
	VG_BIAS_EXACT,        /* "exact": kernel relation matched */
	VG_BIAS_HEURISTIC,    /* "heuristic": lowest mapping - lowest vaddr */
};

/* Returns 0 with *bias and *method set, or -ENOENT if neither way works
 * (no loads or no mappings).  page_size is the target's (4096 on x86-64). */
int vg_loadbias_compute(const struct vg_load *loads, size_t n_loads,
			const struct vg_mapping *maps, size_t n_maps,
			uint64_t page_size, uint64_t *bias,
			enum vg_bias_method *method);

const char *vg_bias_method_name(enum vg_bias_method m);

/* Is mapping m a piece (whole, or split off by mprotect) of one of the loads
 * when the file is loaded at bias?  Lets callers ignore mappings of the same
 * file that the loader did not make (a program mmap()ing its own binary). */
bool vg_loadbias_explains(const struct vg_load *loads, size_t n_loads,
			  const struct vg_mapping *m, uint64_t page_size,
			  uint64_t bias);

/* The fallback alone: lowest mapping start - PAGESTART(lowest p_vaddr).
 * Returns 0, or -ENOENT as vg_loadbias_compute.  For tests and reports that
 * show how far a guess would have been off. */
int vg_loadbias_heuristic(const struct vg_load *loads, size_t n_loads,
			  const struct vg_mapping *maps, size_t n_maps,
			  uint64_t page_size, uint64_t *bias);

#endif
