/* stack_trie.c - a probe session's stacks as the stack trie every stack
 * format writes (vg_probe_stacks, probe.h says the shape and why). */
#include "probe/probe_priv.h"

#include <errno.h>
#include <stdlib.h>

#include "stacktrie/symbolized.h"

/* Add one distinct stack (ips innermost first) with its count: each
 * address symbolized once for the whole trie, a return address looked up
 * minus one (inside its call, as the JSON report does). */
static int add_stack(struct vg_stacks *v, struct vg_symbolizer *sym, const struct vg_probe_stack *st,
		     uint32_t **ids, size_t *cap, struct vg_error *err)
{
	size_t n = 0;

	for (size_t i = st->n; i-- > 0;) {
		uint64_t look = st->exact[i] ? st->ips[i] : st->ips[i] - 1;
		uint32_t first, k;
		int r = vg_stacks_symbolize_address(v, sym, look, &first, &k, err);

		if (r < 0)
			return r;
		if (n + k > *cap) {
			size_t nc = (n + k) * 2;
			uint32_t *g = realloc(*ids, nc * sizeof(**ids));

			if (!g)
				return vg_error_set(err, -ENOMEM, "out of memory");
			*ids = g;
			*cap = nc;
		}
		for (uint32_t j = 0; j < k; j++)
			(*ids)[n++] = first + j;
	}
	return n ? vg_stacks_add(v, -1, *ids, n, st->count, err) : 0;
}

int vg_probe_stacks(struct vg_probe_session *s, struct vg_stacks **out, struct vg_error *err)
{
	struct vg_stacks *v;
	uint32_t *ids = NULL;
	size_t cap = 0;
	int r = 0;

	*out = NULL;
	if (!s->o.stacks)
		return vg_error_set(err, -EINVAL, "the probe recorded no stacks (--stacks)");
	v = vg_stacks_new();
	if (!v)
		return vg_error_set(err, -ENOMEM, "out of memory");
	r = vg_stacks_set_thread_name(v, -1, "all threads", err);
	for (size_t i = 0; r >= 0 && i < s->n_locs; i++)
		for (size_t k = 0; r >= 0 && k < s->locs[i].n_stacks; k++)
			r = add_stack(v, s->sym, &s->locs[i].stacks[k], &ids, &cap, err);
	free(ids);
	if (r < 0) {
		vg_stacks_free(v);
		return r;
	}
	*out = v;
	return 0;
}
