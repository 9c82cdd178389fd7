/* loadbias.c - the load bias of an ELF file from its PT_LOADs and the
 * mappings of it that /proc/PID/maps shows.
 *
 * The kernel (elf_map()) and ld.so (_dl_map_segments()) map every PT_LOAD L
 * with mmap(bias + PAGESTART(L.vaddr), ..., PAGESTART(L.offset)), where
 * PAGESTART(L.offset) == L.offset - PAGEOFFSET(L.vaddr).  Later mprotect()
 * calls (RELRO, PROT_NONE holes) split such a VMA; every piece keeps the
 * relation start - offset == bias + PAGESTART(L.vaddr) - PAGESTART(L.offset)
 * with its offset inside L's file pages.  So:
 *   1. every (mapping, load) pair whose offset lies in the load's file pages
 *      proposes a bias; a pair whose offset is exactly the load's first file
 *      page is a "direct" match (the first equation of loadbias.h);
 *   2. each proposed bias is scored by how many mappings it explains as a
 *      piece of some load, then by how many of those are direct;
 *   3. a single best bias is exact.  Several equally good ones (a tiny file
 *      whose loads share one page, seen through one mapping) or no proposal
 *      at all fall back to the lowest-vaddr heuristic, which says so.
 * Mappings that no load explains (the program mmap()ing its own file, the
 * PROT_NONE gaps ld.so leaves between segments) never outvote the loader's.
 * Pure arithmetic: no I/O, no allocation beyond the candidate list. */
#include "elf/loadbias.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static uint64_t page_start(uint64_t v, uint64_t ps)
{
	return v & ~(ps - 1);
}

static uint64_t page_align(uint64_t v, uint64_t ps)
{
	if (v > UINT64_MAX - (ps - 1))
		return page_start(UINT64_MAX, ps);
	return (v + ps - 1) & ~(ps - 1);
}

/* File offset the loader passes to mmap() for this load. */
static uint64_t load_map_offset(const struct vg_load *l, uint64_t ps)
{
	return l->offset - (l->vaddr & (ps - 1));
}

/* Does offset lie in the file pages of load l?  A load with filesz 0 has
 * no file pages but ld.so still maps its first page from the file. */
static bool offset_in_load(const struct vg_load *l, uint64_t off, uint64_t ps)
{
	uint64_t first = load_map_offset(l, ps);
	uint64_t end;

	if (l->offset < (l->vaddr & (ps - 1)))
		return false; /* offset and vaddr not congruent: not loadable */
	if (l->filesz > UINT64_MAX - l->offset)
		return false;
	end = page_align(l->offset + l->filesz, ps);
	if (end == first)
		end = first + ps;
	return off >= first && off < end;
}

/* Bias under which mapping m is a piece of load l (assumes offset_in_load). */
static uint64_t bias_for(const struct vg_mapping *m, const struct vg_load *l,
			 uint64_t ps)
{
	return m->start - (m->offset - load_map_offset(l, ps)) -
	       page_start(l->vaddr, ps);
}

bool vg_loadbias_explains(const struct vg_load *loads, size_t n_loads,
			  const struct vg_mapping *m, uint64_t page_size,
			  uint64_t bias)
{
	for (size_t i = 0; i < n_loads; i++) {
		if (offset_in_load(&loads[i], m->offset, page_size) &&
		    bias_for(m, &loads[i], page_size) == bias)
			return true;
	}
	return false;
}

struct candidate {
	uint64_t bias;
	size_t support, direct;
};

static void score(struct candidate *c, const struct vg_load *loads,
		  size_t n_loads, const struct vg_mapping *maps, size_t n_maps,
		  uint64_t ps)
{
	c->support = 0;
	c->direct = 0;
	for (size_t j = 0; j < n_maps; j++) {
		bool explained = false, direct = false;

		for (size_t i = 0; i < n_loads; i++) {
			const struct vg_load *l = &loads[i];

			if (!offset_in_load(l, maps[j].offset, ps) ||
			    bias_for(&maps[j], l, ps) != c->bias)
				continue;
			explained = true;
			if (maps[j].offset == load_map_offset(l, ps))
				direct = true;
		}
		c->support += explained;
		c->direct += direct;
	}
}

static uint64_t heuristic(const struct vg_load *loads, size_t n_loads,
			  const struct vg_mapping *maps, size_t n_maps,
			  uint64_t ps)
{
	uint64_t lo_start = UINT64_MAX, lo_vaddr = UINT64_MAX;

	for (size_t j = 0; j < n_maps; j++)
		if (maps[j].start < lo_start)
			lo_start = maps[j].start;
	for (size_t i = 0; i < n_loads; i++)
		if (loads[i].vaddr < lo_vaddr)
			lo_vaddr = loads[i].vaddr;
	return lo_start - page_start(lo_vaddr, ps);
}

int vg_loadbias_heuristic(const struct vg_load *loads, size_t n_loads,
			  const struct vg_mapping *maps, size_t n_maps,
			  uint64_t page_size, uint64_t *bias)
{
	if (!n_loads || !n_maps || !page_size ||
	    (page_size & (page_size - 1)))
		return -ENOENT;
	*bias = heuristic(loads, n_loads, maps, n_maps, page_size);
	return 0;
}

int vg_loadbias_compute(const struct vg_load *loads, size_t n_loads,
			const struct vg_mapping *maps, size_t n_maps,
			uint64_t page_size, uint64_t *bias,
			enum vg_bias_method *method)
{
	struct candidate *cand, *best = NULL;
	size_t n_cand = 0, n_pairs;
	bool tie = false;
	uint64_t h;

	*method = VG_BIAS_NONE;
	if (!n_loads || !n_maps || !page_size ||
	    (page_size & (page_size - 1)))
		return -ENOENT;
	if (__builtin_mul_overflow(n_loads, n_maps, &n_pairs) ||
	    n_pairs > SIZE_MAX / sizeof(*cand))
		return -ENOMEM;
	cand = malloc(n_pairs * sizeof(*cand));
	if (!cand)
		return -ENOMEM;

	for (size_t j = 0; j < n_maps; j++) {
		for (size_t i = 0; i < n_loads; i++) {
			uint64_t b;
			size_t k;

			if (!offset_in_load(&loads[i], maps[j].offset, page_size))
				continue;
			b = bias_for(&maps[j], &loads[i], page_size);
			for (k = 0; k < n_cand; k++)
				if (cand[k].bias == b)
					break;
			if (k == n_cand)
				cand[n_cand++].bias = b;
		}
	}

	for (size_t k = 0; k < n_cand; k++) {
		score(&cand[k], loads, n_loads, maps, n_maps, page_size);
		if (!best || cand[k].support > best->support ||
		    (cand[k].support == best->support &&
		     cand[k].direct > best->direct)) {
			best = &cand[k];
			tie = false;
		} else if (cand[k].support == best->support &&
			   cand[k].direct == best->direct) {
			tie = true;
		}
	}

	h = heuristic(loads, n_loads, maps, n_maps, page_size);
	if (best && !tie) {
		*bias = best->bias;
		*method = VG_BIAS_EXACT;
	} else {
		/* Nothing matched, or the matches cannot tell two biases
		 * apart: a guess, and labelled as one. */
		*bias = h;
		*method = VG_BIAS_HEURISTIC;
	}
	free(cand);
	return 0;
}

const char *vg_bias_method_name(enum vg_bias_method m)
{
	switch (m) {
	case VG_BIAS_EXACT:
		return "exact";
	case VG_BIAS_HEURISTIC:
		return "heuristic";
	case VG_BIAS_NONE:
		break;
	}
	return "none";
}
