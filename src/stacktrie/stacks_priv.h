/* stacks_priv.h - the stack trie's tables, shared by stacks.c (the trie
 * keyed by address) and function_view.c (the views by function); not part
 * of the API (stacks.h). */
#ifndef VG_STACKS_PRIV_H
#define VG_STACKS_PRIV_H

#include "stacktrie/stacks.h"

struct id_slot {
	uint64_t hash;
	uint32_t id_plus1; /* 0: empty */
};

struct id_hash {
	struct id_slot *slots;
	size_t cap; /* power of two, or 0 */
	size_t used;
};

/* The path of a thread's previous sample: consecutive samples of a
 * thread mostly share a long prefix (the same loop under the same
 * callers), which is then followed without one hash lookup per frame. */
struct last_path {
	uint32_t *frames, *nodes;
	size_t n, cap_frames, cap_nodes;
};

struct vg_stacks;
typedef bool (*id_eq_fn)(const struct vg_stacks *s, uint32_t id, const void *key);

struct vg_stacks {
	char **strings;
	size_t n_strings, cap_strings;
	struct vg_stack_image *images;
	size_t n_images, cap_images;
	struct vg_stack_frame *frames;
	size_t n_frames, cap_frames;
	struct vg_stack_node *nodes;
	size_t n_nodes, cap_nodes;
	struct vg_stack_thread *threads;
	size_t n_threads, cap_threads;
	struct last_path *last;      /* per thread, for the next sample */
	size_t cap_last;
	uint64_t total;
	/* Totals are summed from self counts when read (nodes come after
	 * their parent, so one backward sweep does it): adding a sample then
	 * touches only the leaf, not every node up to the root. */
	bool totals_stale;

	struct id_hash string_ids;   /* string bytes -> string id */
	struct id_hash image_ids;    /* (path, start) -> image id */
	struct id_hash address_ids;  /* (address, kernel) -> depth-0 frame */
	struct id_hash function_ids; /* (name, file, inlined, kernel) -> frame,
				      * function views only */
	struct id_hash child_ids;    /* (parent, frame) -> node */
	struct id_hash thread_ids;   /* tid -> thread index */
};

/* Two keys as one hash (the tables mix it when they place it). */
uint64_t stacks_hash2(uint64_t a, uint64_t b);
/* The id whose key equals key, or VG_STACKS_NONE. */
uint32_t stacks_id_find(const struct vg_stacks *s, const struct id_hash *h,
			uint64_t hash, id_eq_fn eq, const void *key);
/* Insert an id known to be absent.  0 or -ENOMEM. */
int stacks_id_insert(struct id_hash *h, uint64_t hash, uint32_t id);
/* Fill in the nodes' totals from their self counts if a sample came since. */
void stacks_ensure_totals(const struct vg_stacks *s);

#endif
