/* symbolized.c - a symbolizer's answer as the stack trie takes it (see
 * symbolized.h). */
#include "stacktrie/symbolized.h"

size_t vg_stacks_sym_frames(struct vg_stacks *s, const struct vg_sym_result *res, bool kernel,
			    struct vg_stack_frame_in *in, size_t max, struct vg_stack_site *site)
{
	size_t k = 0;

	for (size_t i = 0; i < res->n_frames && k < max; i++)
		in[k++] = (struct vg_stack_frame_in){ res->frames[i].function, res->frames[i].file,
						      res->frames[i].line };
	if (k == 0 && max && res->has_symbol)
		in[k++] = (struct vg_stack_frame_in){ res->symbol, res->file, res->line };
	site->image = VG_STACKS_NONE;
	if (kernel) {
		/* Interned by (path, start): the same id every time. */
		if (vg_stacks_intern_image(s, "[kernel.kallsyms]", NULL, 0, 0, 0, true, &site->image,
					   NULL) < 0)
			site->image = VG_STACKS_NONE;
	} else if (!res->image && res->source == VG_SYMSRC_PERF_MAP) {
		/* JIT code: one mapping for the perf map's names, no file */
		site->static_address = res->address;
		if (vg_stacks_intern_image(s, res->image_path, NULL, 0, 0, 0, false, &site->image,
					   NULL) < 0)
			site->image = VG_STACKS_NONE;
	} else if (res->image) {
		char bid[160];

		site->static_address = res->static_address;
		vg_image_build_id_hex(res->image, bid, sizeof(bid));
		if (vg_stacks_intern_image(s, res->image->path, bid[0] ? bid : NULL, res->image->lo,
					   res->image->hi, 0, false, &site->image, NULL) < 0)
			site->image = VG_STACKS_NONE;
	}
	return k;
}

int vg_stacks_symbolize_address(struct vg_stacks *s, struct vg_symbolizer *sym, uint64_t address,
				uint32_t *first, uint32_t *n, struct vg_error *err)
{
	struct vg_sym_result res;
	struct vg_stack_frame_in in[VG_DW_MAX_FRAMES];
	struct vg_stack_site site = { address, 0, VG_STACKS_NONE, false };
	size_t k;
	int r;

	if (vg_stacks_find_address(s, address, false, first, n))
		return 0;
	vg_sym_lookup(sym, address, &res, NULL);
	k = vg_stacks_sym_frames(s, &res, false, in, VG_DW_MAX_FRAMES, &site);
	r = vg_stacks_intern_address(s, &site, in, k, first, n, err);
	if (r == 0 && k && *n == k) {
		/* Columns where DWARF has them (pprof Line.column), as profile. */
		uint32_t cols[VG_DW_MAX_FRAMES];

		for (size_t i = 0; i < k; i++)
			cols[i] = res.n_frames ? res.frames[i].column : res.column;
		vg_stacks_set_columns(s, *first, *n, cols);
	}
	return r;
}
