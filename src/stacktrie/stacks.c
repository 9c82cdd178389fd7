/* stacks.c - the stack trie: interned strings, images, frames and nodes.
 *
 * Every lookup table is one open-addressing hash of ids (struct id_hash):
 * the slot holds the key's 64-bit hash and the id, and equality is checked
 * against the item the id names, so no key is stored twice.  Children are
 * found through one hash keyed by (parent, frame) rather than per-node
 * arrays: a profile of a deep C++ server has millions of nodes, most with
 * one child, and a per-node table would cost more than the node.
 *
 * The trie is keyed by address (pprof needs one Location per address);
 * vg_stacks_by_function (function_view.c) re-adds every path through
 * function-level frames for the writers that show functions.  See stacks.h for the model. */
#include "stacktrie/stacks_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* ---- hashing ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer: consecutive ids and addresses spread over
	 * the whole table. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_str(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	while (*p) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ULL;
	}
	return h;   /* the tables mix it when they place it */
}

/* Two keys as one hash (the tables mix it when they place it). */
uint64_t stacks_hash2(uint64_t a, uint64_t b)
{
	return a * 0x9e3779b97f4a7c15ULL ^ mix64(b);
}

static void id_hash_release(struct id_hash *h)
{
	free(h->slots);
	*h = (struct id_hash){0};
}

/* The id whose key equals key, or VG_STACKS_NONE. */
uint32_t stacks_id_find(const struct vg_stacks *s, const struct id_hash *h,
			     uint64_t hash, id_eq_fn eq, const void *key)
{
	if (!h->cap)
		return VG_STACKS_NONE;
	for (size_t i = mix64(hash) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		const struct id_slot *slot = &h->slots[i];

		if (!slot->id_plus1)
			return VG_STACKS_NONE;
		if (slot->hash == hash && eq(s, slot->id_plus1 - 1, key))
			return slot->id_plus1 - 1;
	}
}

static void id_hash_put(struct id_hash *h, uint64_t hash, uint32_t id)
{
	size_t i = mix64(hash) & (h->cap - 1);

	while (h->slots[i].id_plus1)
		i = (i + 1) & (h->cap - 1);
	h->slots[i] = (struct id_slot){hash, id + 1};
	h->used++;
}

/* Insert an id known to be absent; the table stays at most half full.
 * Slots are placed by mix64(hash), so a caller may pass a raw key as the
 * hash when the key fits in 64 bits (see child()). */
int stacks_id_insert(struct id_hash *h, uint64_t hash, uint32_t id)
{
	if (2 * (h->used + 1) > h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct id_hash bigger = {calloc(cap, sizeof(struct id_slot)), cap, 0};

		if (!bigger.slots)
			return -ENOMEM;
		for (size_t i = 0; i < h->cap; i++)
			if (h->slots[i].id_plus1)
				id_hash_put(&bigger, h->slots[i].hash,
					    h->slots[i].id_plus1 - 1);
		free(h->slots);
		*h = bigger;
	}
	id_hash_put(h, hash, id);
	return 0;
}

/* ---- lifecycle -------------------------------------------------------- */

struct vg_stacks *vg_stacks_new(void)
{
	struct vg_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* String id 0 is "" so that "unknown" is 0 everywhere, as in pprof. */
	s->strings = calloc(16, sizeof(char *));
	s->cap_strings = 16;
	if (!s->strings || !(s->strings[0] = strdup(""))) {
		vg_stacks_free(s);
		return NULL;
	}
	s->n_strings = 1;
	return s;
}

void vg_stacks_free(struct vg_stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->images);
	free(s->frames);
	free(s->nodes);
	free(s->threads);
	for (size_t i = 0; i < s->n_threads && s->last; i++) {
		free(s->last[i].frames);
		free(s->last[i].nodes);
	}
	free(s->last);
	id_hash_release(&s->string_ids);
	id_hash_release(&s->image_ids);
	id_hash_release(&s->address_ids);
	id_hash_release(&s->function_ids);
	id_hash_release(&s->child_ids);
	id_hash_release(&s->thread_ids);
	free(s);
}

/* ---- strings ---------------------------------------------------------- */

static bool string_eq(const struct vg_stacks *s, uint32_t id, const void *key)
{
	return strcmp(s->strings[id], key) == 0;
}

int vg_stacks_intern_string(struct vg_stacks *s, const char *str, uint32_t *id)
{
	uint64_t h;
	uint32_t found;
	char *copy;

	if (!str || !*str) {
		*id = 0;
		return 0;
	}
	h = hash_str(str);
	found = stacks_id_find(s, &s->string_ids, h, string_eq, str);
	if (found != VG_STACKS_NONE) {
		*id = found;
		return 0;
	}
	if (s->n_strings >= UINT32_MAX - 1 ||
	    VG_GROW(s->strings, s->cap_strings, s->n_strings + 1) < 0 ||
	    !(copy = strdup(str)))
		return -ENOMEM;
	if (stacks_id_insert(&s->string_ids, h, (uint32_t)s->n_strings) < 0) {
		free(copy);
		return -ENOMEM;
	}
	s->strings[s->n_strings] = copy;
	*id = (uint32_t)s->n_strings++;
	return 0;
}

/* ---- images ----------------------------------------------------------- */

struct image_key {
	uint32_t path;
	uint64_t start;
};

static bool image_eq(const struct vg_stacks *s, uint32_t id, const void *key)
{
	const struct image_key *k = key;

	return s->images[id].path == k->path && s->images[id].start == k->start;
}

int vg_stacks_intern_image(struct vg_stacks *s, const char *path,
			   const char *build_id_hex, uint64_t start,
			   uint64_t limit, uint64_t file_offset, bool kernel,
			   uint32_t *id, struct vg_error *err)
{
	struct image_key key = {0, start};
	uint32_t build_id, found;
	uint64_t h;

	if (vg_stacks_intern_string(s, path ? path : "[unknown]", &key.path) < 0 ||
	    vg_stacks_intern_string(s, build_id_hex, &build_id) < 0)
		goto nomem;
	h = stacks_hash2(key.path, start);
	found = stacks_id_find(s, &s->image_ids, h, image_eq, &key);
	if (found != VG_STACKS_NONE) {
		*id = found;
		return 0;
	}
	if (VG_GROW(s->images, s->cap_images, s->n_images + 1) < 0 ||
	    stacks_id_insert(&s->image_ids, h, (uint32_t)s->n_images) < 0)
		goto nomem;
	s->images[s->n_images] = (struct vg_stack_image){
		.path = key.path, .build_id = build_id, .start = start,
		.limit = limit, .file_offset = file_offset, .kernel = kernel,
	};
	*id = (uint32_t)s->n_images++;
	return 0;
nomem:
	return vg_error_set(err, -ENOMEM, "cannot record image '%s': out of memory",
			    path ? path : "[unknown]");
}

/* ---- frames ----------------------------------------------------------- */

struct address_key {
	uint64_t address;
	bool kernel;
};

static bool address_eq(const struct vg_stacks *s, uint32_t id, const void *key)
{
	const struct address_key *k = key;

	return s->frames[id].address == k->address && s->frames[id].kernel == k->kernel;
}

static uint64_t address_hash(uint64_t address, bool kernel)
{
	return stacks_hash2(address, kernel);
}

bool vg_stacks_find_address(const struct vg_stacks *s, uint64_t address,
			    bool kernel, uint32_t *first, uint32_t *n)
{
	struct address_key key = {address, kernel};
	uint32_t id = stacks_id_find(s, &s->address_ids, address_hash(address, kernel),
				   address_eq, &key);

	if (id == VG_STACKS_NONE)
		return false;
	*first = id;
	*n = s->frames[id].group_size;
	return true;
}

/* The name of a frame without a function: "libc.so.6+0x1234" says where to
 * look; a bare address is the last resort. */
static int unknown_name(struct vg_stacks *s, const struct vg_stack_site *site,
			uint32_t *id)
{
	char buf[128];

	if (site->image != VG_STACKS_NONE) {
		const char *path = s->strings[s->images[site->image].path];
		const char *base = strrchr(path, '/');

		snprintf(buf, sizeof(buf), "%.80s+0x%" PRIx64, base ? base + 1 : path,
			 site->static_address ? site->static_address : site->address);
	} else {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, site->address);
	}
	return vg_stacks_intern_string(s, buf, id);
}

void vg_stacks_set_columns(struct vg_stacks *s, uint32_t first, uint32_t n,
			   const uint32_t *columns)
{
	/* Stored outermost first: frame first + k is columns[n - 1 - k]. */
	for (uint32_t k = 0; k < n && first + k < s->n_frames; k++)
		s->frames[first + k].column = columns[n - 1 - k];
}

/* Write the n_out frames of one address at ids base.. (room reserved). */
static int fill_group(struct vg_stacks *s, size_t base, const struct vg_stack_site *site,
		      const struct vg_stack_frame_in *frames, size_t n, size_t n_out)
{
	for (size_t k = 0; k < n_out; k++) {
		/* k counts from the outermost frame, which is frames[n-1]. */
		const struct vg_stack_frame_in *in = n ? &frames[n - 1 - k] : NULL;
		struct vg_stack_frame *f = &s->frames[base + k];
		int rc;

		*f = (struct vg_stack_frame){
			.line = in ? in->line : 0,
			.has_function = in && in->function && *in->function,
			.inlined = k > 0,
			.kernel = site->kernel,
			.depth = (uint16_t)k,
			.group = (uint32_t)base,
			.group_size = k == 0 ? (uint32_t)n_out : 0,
			.image = site->image,
			.address = site->address,
			.static_address = site->static_address,
		};
		rc = f->has_function ? vg_stacks_intern_string(s, in->function, &f->name)
				     : unknown_name(s, site, &f->name);
		if (rc < 0 || vg_stacks_intern_string(s, in ? in->file : NULL, &f->file) < 0)
			return -ENOMEM;
	}
	return 0;
}

int vg_stacks_intern_address(struct vg_stacks *s,
			     const struct vg_stack_site *site,
			     const struct vg_stack_frame_in *frames, size_t n,
			     uint32_t *first, uint32_t *n_ids,
			     struct vg_error *err)
{
	size_t n_out = n ? n : 1, base = s->n_frames;
	uint16_t max_depth = UINT16_MAX;

	if (vg_stacks_find_address(s, site->address, site->kernel, first, n_ids))
		return 0;
	if (site->image != VG_STACKS_NONE && site->image >= s->n_images)
		return vg_error_set(err, -EINVAL, "frame at 0x%" PRIx64
				    " names image %" PRIu32 " of %zu",
				    site->address, site->image, s->n_images);
	if (n_out > max_depth)
		n_out = max_depth; /* deeper inline chains do not exist */
	if (base + n_out >= UINT32_MAX)
		return vg_error_set(err, -E2BIG, "too many distinct frames");
	if (VG_GROW(s->frames, s->cap_frames, base + n_out) < 0)
		goto nomem;
	if (fill_group(s, base, site, frames, n, n_out) < 0)
		goto nomem;
	if (stacks_id_insert(&s->address_ids, address_hash(site->address, site->kernel),
			   (uint32_t)base) < 0)
		goto nomem;
	s->n_frames = base + n_out;
	*first = (uint32_t)base;
	*n_ids = (uint32_t)n_out;
	return 0;
nomem:
	return vg_error_set(err, -ENOMEM, "cannot record the frames of 0x%" PRIx64
			    ": out of memory", site->address);
}

/* ---- threads and nodes ------------------------------------------------ */

static bool thread_eq(const struct vg_stacks *s, uint32_t id, const void *key)
{
	return s->threads[id].tid == *(const int32_t *)key;
}

static int new_node(struct vg_stacks *s, uint32_t parent, uint32_t frame,
		    uint32_t *id)
{
	struct vg_stack_node *p;

	if (s->n_nodes >= UINT32_MAX - 1 ||
	    VG_GROW(s->nodes, s->cap_nodes, s->n_nodes + 1) < 0)
		return -ENOMEM;
	s->nodes[s->n_nodes] = (struct vg_stack_node){
		.frame = frame, .parent = parent, .first_child = VG_STACKS_NONE,
		.next_sibling = VG_STACKS_NONE,
	};
	if (parent != VG_STACKS_NONE) {
		p = &s->nodes[parent];
		s->nodes[s->n_nodes].depth = p->depth + 1;
		/* Prepended; vg_stacks_children sorts for the writers. */
		s->nodes[s->n_nodes].next_sibling = p->first_child;
		p->first_child = (uint32_t)s->n_nodes;
	}
	*id = (uint32_t)s->n_nodes++;
	return 0;
}

/* The index of thread tid, created with its root node if new. */
static int thread_index(struct vg_stacks *s, int32_t tid, uint32_t *index)
{
	uint64_t h = (uint32_t)tid;
	uint32_t found = stacks_id_find(s, &s->thread_ids, h, thread_eq, &tid);
	uint32_t root;

	if (found != VG_STACKS_NONE) {
		*index = found;
		return 0;
	}
	if (VG_GROW(s->threads, s->cap_threads, s->n_threads + 1) < 0 ||
	    VG_GROW(s->last, s->cap_last, s->n_threads + 1) < 0 ||
	    new_node(s, VG_STACKS_NONE, VG_STACKS_NONE, &root) < 0 ||
	    stacks_id_insert(&s->thread_ids, h, (uint32_t)s->n_threads) < 0)
		return -ENOMEM;
	s->threads[s->n_threads] = (struct vg_stack_thread){tid, 0, root};
	s->last[s->n_threads] = (struct last_path){0};
	*index = (uint32_t)s->n_threads++;
	return 0;
}

int vg_stacks_set_thread_name(struct vg_stacks *s, int32_t tid,
			      const char *name, struct vg_error *err)
{
	uint32_t index, sid;

	if (thread_index(s, tid, &index) < 0 ||
	    vg_stacks_intern_string(s, name, &sid) < 0)
		return vg_error_set(err, -ENOMEM, "cannot record thread %" PRId32
				    ": out of memory", tid);
	s->threads[index].name = sid;
	return 0;
}

/* (parent, frame) fits in the 64 bits a slot keeps, so the key itself is
 * the "hash": a lookup never reads the node it finds, one cache miss
 * fewer per frame of every sample. */
static bool same_key(const struct vg_stacks *s, uint32_t id, const void *key)
{
	return true;
}

static int child(struct vg_stacks *s, uint32_t parent, uint32_t frame,
		 uint32_t *id)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	uint32_t found = stacks_id_find(s, &s->child_ids, key, same_key, NULL);

	if (found != VG_STACKS_NONE) {
		*id = found;
		return 0;
	}
	if (new_node(s, parent, frame, id) < 0)
		return -ENOMEM;
	if (stacks_id_insert(&s->child_ids, key, *id) < 0) {
		/* The node stays linked but unreachable by lookup: harmless,
		 * its counts stay 0 and the whole add fails anyway. */
		return -ENOMEM;
	}
	return 0;
}

int vg_stacks_add(struct vg_stacks *s, int32_t tid, const uint32_t *ids,
		  size_t n, uint64_t count, struct vg_error *err)
{
	struct last_path *last;
	uint32_t index, node;
	size_t i;

	if (n == 0)
		return vg_error_set(err, -EINVAL, "a sample of thread %" PRId32
				    " has an empty stack", tid);
	for (i = 0; i < n; i++)
		if (ids[i] >= s->n_frames)
			return vg_error_set(err, -EINVAL, "a sample of thread %" PRId32
					    " names frame %" PRIu32 " of %zu",
					    tid, ids[i], s->n_frames);
	if (thread_index(s, tid, &index) < 0)
		goto nomem;
	last = &s->last[index];
	if (VG_GROW(last->frames, last->cap_frames, n) < 0 ||
	    VG_GROW(last->nodes, last->cap_nodes, n) < 0)
		goto nomem;
	node = s->threads[index].root;
	/* The prefix shared with the thread's previous sample is known; the
	 * rest is found or created.  The whole path exists before anything
	 * is counted, so a failed add leaves every count as it was. */
	for (i = 0; i < n && i < last->n && last->frames[i] == ids[i]; i++)
		node = last->nodes[i];
	last->n = i;
	for (; i < n; i++) {
		if (child(s, node, ids[i], &node) < 0)
			goto nomem;
		last->frames[i] = ids[i];
		last->nodes[i] = node;
		last->n = i + 1;
	}
	s->nodes[node].self += count;
	s->total += count;
	s->totals_stale = true;
	return 0;
nomem:
	return vg_error_set(err, -ENOMEM, "cannot record a sample: out of memory");
}

/* ---- resolving an address again --------------------------------------- */

int vg_stacks_unresolved(const struct vg_stacks *s, uint64_t **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < s->n_frames; i++) {
		const struct vg_stack_frame *f = &s->frames[i];

		if (f->depth || f->retired || f->kernel || f->image != VG_STACKS_NONE)
			continue;
		if (VG_GROW(*out, cap, *n + 1) < 0) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -ENOMEM;
		}
		(*out)[(*n)++] = f->address;
	}
	return 0;
}

/* Point the address's hash entry at its new first frame. */
static void repoint_address(struct vg_stacks *s, uint64_t hash, uint32_t old_id,
			    uint32_t new_id)
{
	struct id_hash *h = &s->address_ids;

	for (size_t i = mix64(hash) & (h->cap - 1); h->slots[i].id_plus1;
	     i = (i + 1) & (h->cap - 1))
		if (h->slots[i].id_plus1 == old_id + 1) {
			h->slots[i].id_plus1 = new_id + 1;
			return;
		}
}

/* Re-add every sample with the frames of group old (size k) replaced by
 * those of group base (size m).  A maximal run of consecutive ids of the
 * old group is one occurrence of the address (a recursion repeats the
 * run, starting again at its first id).  On failure the old nodes are
 * put back. */
static int rebuild_paths(struct vg_stacks *s, uint32_t old, uint32_t k,
			 uint32_t base, uint32_t m)
{
	struct vg_stack_node *nodes = s->nodes;
	size_t n_nodes = s->n_nodes, cap_nodes = s->cap_nodes, cap_path = 0;
	struct id_hash child_ids = s->child_ids;
	uint32_t *roots = malloc((s->n_threads ? s->n_threads : 1) * sizeof(*roots));
	int32_t *tid_of_root = malloc((n_nodes ? n_nodes : 1) * sizeof(*tid_of_root));
	uint32_t *src = NULL, *path = NULL;
	uint64_t total = s->total;
	int rc = -ENOMEM;

	if (!roots || !tid_of_root || !(src = malloc((n_nodes + 1) * sizeof(*src))))
		goto out;
	for (size_t t = 0; t < s->n_threads; t++) {
		roots[t] = s->threads[t].root;
		tid_of_root[roots[t]] = s->threads[t].tid;
		s->last[t].n = 0;
	}
	s->nodes = NULL;
	s->n_nodes = s->cap_nodes = 0;
	s->child_ids = (struct id_hash){0};
	s->total = 0;
	for (size_t t = 0; t < s->n_threads; t++)
		if (new_node(s, VG_STACKS_NONE, VG_STACKS_NONE, &s->threads[t].root) < 0)
			goto fail;
	for (size_t id = 0; id < n_nodes; id++) {
		size_t depth = 0, len = 0;
		uint32_t node = (uint32_t)id;

		if (!nodes[id].self || nodes[id].frame == VG_STACKS_NONE)
			continue;
		for (; nodes[node].parent != VG_STACKS_NONE; node = nodes[node].parent)
			src[depth++] = nodes[node].frame;  /* leaf first */
		/* Every source frame emits at most m frames (m >= 1): a path
		 * with several cut chains of the address stays in bounds. */
		if (VG_GROW(path, cap_path, depth * m) < 0)
			goto fail;
		for (size_t i = depth; i-- > 0;) {
			uint32_t f = src[i];
			bool in_old = f >= old && f < old + k;
			bool continues = i + 1 < depth && src[i + 1] + 1 == f &&
					 src[i + 1] >= old && src[i + 1] < old + k;

			if (!in_old)
				path[len++] = f;
			else if (!continues || f == old)
				for (uint32_t j = 0; j < m; j++)
					path[len++] = base + j;
		}
		if (vg_stacks_add(s, tid_of_root[node], path, len, nodes[id].self, NULL) < 0)
			goto fail;
	}
	free(nodes);
	id_hash_release(&child_ids);
	rc = 0;
	goto out;
fail:
	free(s->nodes);
	id_hash_release(&s->child_ids);
	s->nodes = nodes;
	s->n_nodes = n_nodes;
	s->cap_nodes = cap_nodes;
	s->child_ids = child_ids;
	s->total = total;
	for (size_t t = 0; t < s->n_threads; t++) {
		s->threads[t].root = roots[t];
		s->last[t].n = 0;
	}
out:
	free(roots);
	free(tid_of_root);
	free(src);
	free(path);
	return rc;
}

int vg_stacks_reintern_address(struct vg_stacks *s,
			       const struct vg_stack_site *site,
			       const struct vg_stack_frame_in *frames, size_t n,
			       struct vg_error *err)
{
	size_t n_out = n ? n : 1, base = s->n_frames;
	uint32_t old, k;

	if (!vg_stacks_find_address(s, site->address, site->kernel, &old, &k))
		return vg_error_set(err, -ENOENT, "address 0x%" PRIx64 " was never "
				    "interned", site->address);
	if (site->image != VG_STACKS_NONE && site->image >= s->n_images)
		return vg_error_set(err, -EINVAL, "frame at 0x%" PRIx64
				    " names image %" PRIu32 " of %zu",
				    site->address, site->image, s->n_images);
	if (n_out > UINT16_MAX)
		n_out = UINT16_MAX;
	if (base + n_out >= UINT32_MAX)
		return vg_error_set(err, -E2BIG, "too many distinct frames");
	/* Written past the table first, so a failure changes nothing. */
	if (VG_GROW(s->frames, s->cap_frames, base + n_out) < 0 ||
	    fill_group(s, base, site, frames, n, n_out) < 0)
		goto nomem;
	if (n_out == k) {
		for (uint32_t j = 0; j < k; j++) {
			s->frames[base + j].group = old;
			s->frames[old + j] = s->frames[base + j];
		}
		return 0;
	}
	s->n_frames = base + n_out;
	if (rebuild_paths(s, old, k, (uint32_t)base, (uint32_t)n_out) < 0) {
		s->n_frames = base;
		goto nomem;
	}
	for (uint32_t j = 0; j < k; j++)
		s->frames[old + j].retired = true;
	repoint_address(s, address_hash(site->address, site->kernel), old, (uint32_t)base);
	return 0;
nomem:
	return vg_error_set(err, -ENOMEM, "cannot record the frames of 0x%" PRIx64
			    ": out of memory", site->address);
}

/* ---- read access ------------------------------------------------------ */

/* Writers read through a const pointer; the sums are a cache of the self
 * counts, so filling them in is not a change anyone can observe. */
void stacks_ensure_totals(const struct vg_stacks *cs)
{
	struct vg_stacks *s = (struct vg_stacks *)cs;

	if (!s->totals_stale)
		return;
	for (size_t i = 0; i < s->n_nodes; i++)
		s->nodes[i].total = s->nodes[i].self;
	for (size_t i = s->n_nodes; i-- > 0;)
		if (s->nodes[i].parent != VG_STACKS_NONE)
			s->nodes[s->nodes[i].parent].total += s->nodes[i].total;
	s->totals_stale = false;
}

uint64_t vg_stacks_total(const struct vg_stacks *s) { return s->total; }
size_t vg_stacks_n_strings(const struct vg_stacks *s) { return s->n_strings; }
size_t vg_stacks_n_images(const struct vg_stacks *s) { return s->n_images; }
size_t vg_stacks_n_frames(const struct vg_stacks *s) { return s->n_frames; }
size_t vg_stacks_n_nodes(const struct vg_stacks *s) { return s->n_nodes; }
size_t vg_stacks_n_threads(const struct vg_stacks *s) { return s->n_threads; }

const char *vg_stacks_string(const struct vg_stacks *s, uint32_t id)
{
	return id < s->n_strings ? s->strings[id] : "";
}

const struct vg_stack_image *vg_stacks_image(const struct vg_stacks *s, uint32_t id)
{
	return id < s->n_images ? &s->images[id] : NULL;
}

const struct vg_stack_frame *vg_stacks_frame(const struct vg_stacks *s, uint32_t id)
{
	return id < s->n_frames ? &s->frames[id] : NULL;
}

const struct vg_stack_node *vg_stacks_node(const struct vg_stacks *s, uint32_t id)
{
	stacks_ensure_totals(s);
	return id < s->n_nodes ? &s->nodes[id] : NULL;
}

const struct vg_stack_thread *vg_stacks_thread(const struct vg_stacks *s, size_t i)
{
	return i < s->n_threads ? &s->threads[i] : NULL;
}

static int by_frame_name(const void *a, const void *b, void *ctx)
{
	const struct vg_stacks *s = ctx;
	uint32_t fa = s->nodes[*(const uint32_t *)a].frame;
	uint32_t fb = s->nodes[*(const uint32_t *)b].frame;
	int c = strcmp(s->strings[s->frames[fa].name], s->strings[s->frames[fb].name]);

	return c ? c : (fa > fb) - (fa < fb);
}

int vg_stacks_children(const struct vg_stacks *s, uint32_t node,
		       uint32_t **out, size_t *n)
{
	size_t count = 0;
	uint32_t *ids;

	*out = NULL;
	*n = 0;
	for (uint32_t c = s->nodes[node].first_child; c != VG_STACKS_NONE;
	     c = s->nodes[c].next_sibling)
		count++;
	if (!count)
		return 0;
	if (!(ids = malloc(count * sizeof(*ids))))
		return -ENOMEM;
	count = 0;
	for (uint32_t c = s->nodes[node].first_child; c != VG_STACKS_NONE;
	     c = s->nodes[c].next_sibling)
		ids[count++] = c;
	qsort_r(ids, count, sizeof(*ids), by_frame_name, (void *)s);
	*out = ids;
	*n = count;
	return 0;
}
