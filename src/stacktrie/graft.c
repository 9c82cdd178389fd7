/* graft.c - several tries as one: vigil profile -p A,B samples each
 * process into its own trie (its own addresses: the same address means
 * different code in two processes), and the outputs then take one trie in
 * which every stack of a process starts at a root frame naming it, as
 * perf's folded output starts each stack with "comm-pid".
 *
 * The frames of src are copied as they are, without the address index of
 * dst: two processes' frames at one address stay two (pprof then makes
 * two Locations, each in its own process's mapping).  dst is for writing,
 * not for adding samples by address afterwards. */
#include "stacktrie/stacks.h"

#include <errno.h>
#include <stdlib.h>

#include "stacktrie/stacks_priv.h"
#include "util/vec.h"

/* One frame of dst with no address: the root frame of a process. */
static int label_frame(struct vg_stacks *dst, const char *label, uint32_t *id)
{
	size_t base = dst->n_frames;

	if (base + 1 >= UINT32_MAX || VG_GROW(dst->frames, dst->cap_frames, base + 1) < 0)
		return -ENOMEM;
	dst->frames[base] = (struct vg_stack_frame){
		.has_function = true, .group = (uint32_t)base, .group_size = 1,
		.image = VG_STACKS_NONE,
	};
	if (vg_stacks_intern_string(dst, label, &dst->frames[base].name) < 0)
		return -ENOMEM;
	dst->n_frames = base + 1;
	*id = (uint32_t)base;
	return 0;
}

/* src's frames appended to dst; *base: the id of src's frame 0 in dst. */
static int copy_frames(struct vg_stacks *dst, const struct vg_stacks *src, uint32_t *base)
{
	size_t n = src->n_frames, at = dst->n_frames;
	uint32_t *image_map = NULL;
	int r = -ENOMEM;

	if (at + n >= UINT32_MAX)
		return -E2BIG;
	if (src->n_images && !(image_map = calloc(src->n_images, sizeof(*image_map))))
		return -ENOMEM;
	for (size_t i = 0; i < src->n_images; i++) {
		const struct vg_stack_image *im = &src->images[i];

		if (vg_stacks_intern_image(dst, src->strings[im->path],
					   im->build_id ? src->strings[im->build_id] : NULL, im->start,
					   im->limit, im->file_offset, im->kernel, &image_map[i], NULL) < 0)
			goto out;
	}
	if (n && VG_GROW(dst->frames, dst->cap_frames, at + n) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct vg_stack_frame f = src->frames[i];

		f.group += (uint32_t)at;
		if (f.image != VG_STACKS_NONE)
			f.image = image_map[f.image];
		if (vg_stacks_intern_string(dst, src->strings[f.name], &f.name) < 0 ||
		    vg_stacks_intern_string(dst, src->strings[f.file], &f.file) < 0)
			goto out;
		dst->frames[at + i] = f;
		dst->n_frames = at + i + 1;
	}
	*base = (uint32_t)at;
	r = 0;
out:
	free(image_map);
	return r;
}

struct graft {
	struct vg_stacks *dst;
	const struct vg_stacks *src;
	int32_t tid;
	uint32_t *path;         /* dst ids, the label first */
	size_t depth, cap;
	uint32_t base;
};

/* Depth first: every node with samples is one stack of dst. */
static int graft_node(struct graft *g, uint32_t node)
{
	const struct vg_stack_node *nd = &g->src->nodes[node];
	int r = 0;

	if (nd->frame != VG_STACKS_NONE) {
		if (VG_GROW(g->path, g->cap, g->depth + 1) < 0)
			return -ENOMEM;
		g->path[g->depth++] = g->base + nd->frame;
	}
	if (nd->self)
		r = vg_stacks_add(g->dst, g->tid, g->path, g->depth, nd->self, NULL);
	for (uint32_t c = nd->first_child; r == 0 && c != VG_STACKS_NONE;
	     c = g->src->nodes[c].next_sibling)
		r = graft_node(g, c);
	if (nd->frame != VG_STACKS_NONE)
		g->depth--;
	return r;
}

int vg_stacks_graft(struct vg_stacks *dst, const struct vg_stacks *src, const char *label,
		    struct vg_error *err)
{
	struct graft g = { .dst = dst, .src = src };
	uint32_t root;
	int r;

	r = label_frame(dst, label, &root);
	if (r == 0)
		r = copy_frames(dst, src, &g.base);
	if (r == 0 && VG_GROW(g.path, g.cap, 16) < 0)
		r = -ENOMEM;
	if (r == 0)
		g.path[g.depth++] = root;
	for (size_t i = 0; r == 0 && i < src->n_threads; i++) {
		const struct vg_stack_thread *th = &src->threads[i];

		g.tid = th->tid;
		r = vg_stacks_set_thread_name(dst, th->tid, src->strings[th->name], NULL);
		if (r == 0)
			r = graft_node(&g, th->root);
	}
	free(g.path);
	if (r < 0)
		return vg_error_set(err, r, "cannot merge the stacks of '%s': %s", label,
				    r == -E2BIG ? "too many distinct frames" : "out of memory");
	return 0;
}
