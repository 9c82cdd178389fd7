/* function_view.c - the stack trie seen by function: the merged trie the
 * folded, speedscope, SVG and table writers draw (vg_stacks_by_function),
 * and each function's self and total samples (vg_stacks_functions).  The
 * trie itself (stacks.c) is keyed by address, as pprof needs. */
#include "stacktrie/stacks_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* ---- the function view ------------------------------------------------ */

static bool function_eq(const struct vg_stacks *s, uint32_t id, const void *key)
{
	const struct vg_stack_frame *a = &s->frames[id], *b = key;

	return a->name == b->name && a->file == b->file &&
	       a->inlined == b->inlined && a->kernel == b->kernel;
}

static uint64_t function_hash(const struct vg_stack_frame *f)
{
	return stacks_hash2(stacks_hash2(f->name, f->file), (uint64_t)f->inlined << 1 | f->kernel);
}

/* The function frame of v standing for frame id of s (same string ids:
 * v's string table starts as a copy of s's). */
static int function_frame(struct vg_stacks *v, const struct vg_stacks *s,
			  uint32_t id, uint32_t *out)
{
	const struct vg_stack_frame *f = &s->frames[id];
	struct vg_stack_frame key = {
		.name = f->name, .file = f->file, .has_function = f->has_function,
		.inlined = f->inlined, .kernel = f->kernel,
		.group = (uint32_t)v->n_frames, .group_size = 1,
		.image = f->has_function ? VG_STACKS_NONE : f->image,
	};
	uint64_t h = function_hash(&key);
	uint32_t found = stacks_id_find(v, &v->function_ids, h, function_eq, &key);

	if (found != VG_STACKS_NONE) {
		*out = found;
		return 0;
	}
	if (v->n_frames >= UINT32_MAX - 1 ||
	    VG_GROW(v->frames, v->cap_frames, v->n_frames + 1) < 0 ||
	    stacks_id_insert(&v->function_ids, h, (uint32_t)v->n_frames) < 0)
		return -ENOMEM;
	v->frames[v->n_frames] = key;
	*out = (uint32_t)v->n_frames++;
	return 0;
}

static int copy_tables(struct vg_stacks *v, const struct vg_stacks *s)
{
	for (size_t i = 1; i < s->n_strings; i++) {
		uint32_t id;

		if (vg_stacks_intern_string(v, s->strings[i], &id) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_images; i++) {
		if (VG_GROW(v->images, v->cap_images, v->n_images + 1) < 0)
			return -ENOMEM;
		v->images[v->n_images++] = s->images[i];
	}
	return 0;
}

int vg_stacks_by_function(const struct vg_stacks *s, bool merge_threads,
			  struct vg_stacks **out, struct vg_error *err)
{
	struct vg_stacks *v = vg_stacks_new();
	uint32_t *map = NULL, *path = NULL;
	int32_t *root_tid = NULL; /* by node id, set on roots only */
	size_t cap_path = 0;

	*out = NULL;
	if (!v || copy_tables(v, s) < 0)
		goto nomem;
	if (s->n_frames && !(map = malloc(s->n_frames * sizeof(*map))))
		goto nomem;
	for (size_t i = 0; i < s->n_frames; i++) {
		map[i] = VG_STACKS_NONE;
		if (!s->frames[i].retired && function_frame(v, s, (uint32_t)i, &map[i]) < 0)
			goto nomem;
	}
	if (s->n_nodes && !(root_tid = malloc(s->n_nodes * sizeof(*root_tid))))
		goto nomem;
	for (size_t t = 0; t < s->n_threads; t++)
		root_tid[s->threads[t].root] = merge_threads ? -1 : s->threads[t].tid;
	if (merge_threads) {
		if (vg_stacks_set_thread_name(v, -1, "all threads", NULL) < 0)
			goto nomem;
	} else {
		for (size_t t = 0; t < s->n_threads; t++)
			if (vg_stacks_set_thread_name(v, s->threads[t].tid,
						      s->strings[s->threads[t].name], NULL) < 0)
				goto nomem;
	}
	/* Every node with self samples is the leaf of one distinct path. */
	for (size_t id = 0; id < s->n_nodes; id++) {
		const struct vg_stack_node *leaf = &s->nodes[id];
		size_t depth = leaf->depth, k = depth;
		uint32_t node = (uint32_t)id;

		if (!leaf->self || leaf->frame == VG_STACKS_NONE)
			continue;
		if (VG_GROW(path, cap_path, depth) < 0)
			goto nomem;
		for (; s->nodes[node].parent != VG_STACKS_NONE; node = s->nodes[node].parent)
			path[--k] = map[s->nodes[node].frame];
		if (vg_stacks_add(v, root_tid[node], path, depth, leaf->self, NULL) < 0)
			goto nomem;
	}
	free(map);
	free(path);
	free(root_tid);
	*out = v;
	return 0;
nomem:
	free(map);
	free(path);
	free(root_tid);
	vg_stacks_free(v);
	return vg_error_set(err, -ENOMEM, "cannot merge the stacks by function: "
			    "out of memory");
}

/* ---- per-function totals ---------------------------------------------- */

struct visit {
	uint32_t node;
	bool leave;
};

static int by_share(const void *pa, const void *pb, void *ctx)
{
	const struct vg_stack_function *a = pa, *b = pb;
	const struct vg_stacks *s = ctx;

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return strcmp(s->strings[a->name], s->strings[b->name]);
}

int vg_stacks_functions(const struct vg_stacks *s,
			struct vg_stack_function **out, size_t *n,
			struct vg_error *err)
{
	/* slot[string id] = index in fns + 1; on_stack[index] counts the
	 * occurrences of that function on the current path, so a recursive
	 * function's total counts each sample once (the outermost call). */
	uint32_t *slot = calloc(s->n_strings, sizeof(*slot));
	uint32_t *on_stack = NULL;
	struct visit *visit = NULL;
	struct vg_stack_function *fns = NULL;
	size_t n_fns = 0, cap_fns = 0;

	stacks_ensure_totals(s);
	*out = NULL;
	*n = 0;
	if (!slot)
		goto nomem;
	for (size_t i = 0; i < s->n_frames; i++) {
		const struct vg_stack_frame *f = &s->frames[i];

		if (f->retired)
			continue;
		if (slot[f->name]) {
			fns[slot[f->name] - 1].inlined |= f->inlined;
			continue;
		}
		if (VG_GROW(fns, cap_fns, n_fns + 1) < 0)
			goto nomem;
		fns[n_fns] = (struct vg_stack_function){
			.name = f->name, .file = f->file, .inlined = f->inlined,
			.kernel = f->kernel,
		};
		slot[f->name] = (uint32_t)++n_fns;
	}
	if (n_fns && !(on_stack = calloc(n_fns, sizeof(*on_stack))))
		goto nomem;
	/* Iterative depth-first walk; a "leave" step after a node's subtree
	 * pops its function. */
	if (s->n_nodes && !(visit = malloc(2 * s->n_nodes * sizeof(*visit))))
		goto nomem;
	for (size_t t = 0; t < s->n_threads; t++) {
		size_t top = 0;

		visit[top++] = (struct visit){s->threads[t].root, false};
		while (top) {
			struct visit step = visit[--top];
			const struct vg_stack_node *node = &s->nodes[step.node];
			size_t fn = node->frame == VG_STACKS_NONE ? SIZE_MAX
				    : slot[s->frames[node->frame].name] - 1;

			if (step.leave) {
				on_stack[fn]--;
				continue;
			}
			if (fn != SIZE_MAX) {
				if (!on_stack[fn]++)
					fns[fn].total += node->total;
				fns[fn].self += node->self;
				visit[top++] = (struct visit){step.node, true};
			}
			for (uint32_t c = node->first_child; c != VG_STACKS_NONE;
			     c = s->nodes[c].next_sibling)
				visit[top++] = (struct visit){c, false};
		}
	}
	if (n_fns)
		qsort_r(fns, n_fns, sizeof(*fns), by_share, (void *)s);
	free(slot);
	free(on_stack);
	free(visit);
	*out = fns;
	*n = n_fns;
	return 0;
nomem:
	free(slot);
	free(on_stack);
	free(visit);
	free(fns);
	return vg_error_set(err, -ENOMEM, "cannot total the functions: out of memory");
}
