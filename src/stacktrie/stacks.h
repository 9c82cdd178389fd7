/* stacks.h - the stack trie: every sample's (profile) or hit's (probe
 * --stacks) call stack, aggregated, each distinct address symbolized once.
 *
 * Four tables, all append-only and addressed by 32-bit ids:
 *
 *   strings  interned, id 0 is "" (so a pprof string table can reuse ids)
 *   images   the mapped files frames belong to (pprof Mappings)
 *   frames   one per (address, inline depth): an address whose symbolizer
 *            answer has n frames (n-1 of them inlined) gets n consecutive
 *            ids, the OUTERMOST (the function the code really is in) first,
 *            so a root-first path is simply "first .. first+n-1" per address
 *   nodes    the trie: one node per distinct path from a thread's root;
 *            self = samples whose leaf is this node, total = samples
 *            passing through it (self of the whole subtree)
 *
 * The profiler symbolizes an address only when vg_stacks_find_address
 * misses, then interns the answer with vg_stacks_intern_address and adds
 * each sample (root-first frame ids) with vg_stacks_add.  The trie is keyed
 * by address, which is what pprof wants (one Location per address, inline
 * chain as its Lines); the function-level writers (folded, speedscope, svg,
 * table) first merge it by function with vg_stacks_by_function, so one
 * function called from two call sites of its caller is one node, not two.
 *
 * Adding a sample costs one hash lookup per frame not shared with the
 * thread's previous sample, and touches only the leaf's count: totals are
 * summed when first read.  Measured (-O2): 1,000,000 samples of ~36 frames
 * over 124,000 nodes, 2.3 s; over 1.2 million nodes (every stack
 * different), 12 s, one cache miss per frame.
 *
 * Nothing here prints; writers live in src/report/.  Not thread-safe, not
 * even for two readers (the first read fills the totals): one thread adds
 * (the profiler's drain), and writers run one at a time after it stopped. */
#ifndef VG_STACKS_H
#define VG_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define VG_STACKS_NONE UINT32_MAX /* no image / no parent / no child */

/* A mapped file.  start/limit/file_offset may be 0 when unknown: pprof
 * then uses the range of the addresses seen in it. */
struct vg_stack_image {
	uint32_t path;       /* string id: path or "[kernel.kallsyms]" */
	uint32_t build_id;   /* string id: lower-case hex, 0 unknown */
	uint64_t start, limit, file_offset;
	bool kernel;
};

struct vg_stack_frame {
	uint32_t name;       /* string id, never 0: the function, else
			      * "IMAGE+0xSTATIC" (file name only) or "0xADDR" */
	uint32_t file;       /* string id, 0 unknown */
	uint32_t line;       /* 0 unknown */
	uint32_t column;     /* 0 unknown: vg_stacks_set_columns */
	bool has_function;   /* name is a function name (not made up) */
	bool inlined;        /* depth > 0: inlined into the frame before it */
	bool kernel;
	uint16_t depth;      /* 0: the function the address is in; k: k-th
			      * inlined call inside it */
	uint32_t group;      /* id of the depth-0 frame of the same address */
	uint32_t group_size; /* frames of that address (set on the depth-0) */
	uint32_t image;      /* image id or VG_STACKS_NONE */
	bool retired;        /* replaced by vg_stacks_reintern_address: no
			      * path names it, writers skip it */
	uint64_t address;        /* 0 in the function view */
	uint64_t static_address; /* address - load bias, 0 unknown */
};

struct vg_stack_node {
	uint32_t frame;        /* VG_STACKS_NONE for a thread's root */
	uint32_t parent;       /* VG_STACKS_NONE for a root */
	uint32_t first_child;  /* insertion order; see vg_stacks_children */
	uint32_t next_sibling;
	uint32_t depth;        /* 0 for a root */
	uint64_t self, total;
};

struct vg_stack_thread {
	int32_t tid;         /* -1 in a view that merged all threads */
	uint32_t name;       /* string id (comm), 0 unknown */
	uint32_t root;       /* node id */
};

/* One symbolizer frame, given innermost first as vg_sym_lookup answers. */
struct vg_stack_frame_in {
	const char *function; /* NULL: unknown */
	const char *file;     /* NULL: unknown */
	uint32_t line;
};

/* Where an address is: the arguments of vg_stacks_intern_address. */
struct vg_stack_site {
	uint64_t address;
	uint64_t static_address; /* 0 unknown */
	uint32_t image;          /* vg_stacks_intern_image id or VG_STACKS_NONE */
	bool kernel;
};

/* What the writers say about the run; 0 / NULL for unknown. */
struct vg_stacks_meta {
	const char *event;        /* "cpu-clock", "cycles", ... */
	uint64_t period;          /* events per sample when fixed */
	uint64_t frequency_hz;    /* samples per second when by frequency */
	uint64_t sample_ns;       /* nanoseconds one sample stands for (pprof
				   * "cpu"/"nanoseconds" value, speedscope
				   * unit); 0: only counts */
	uint64_t start_time_ns;   /* wall clock (epoch) of the first sample */
	uint64_t duration_ns;
	uint64_t lost, throttled; /* samples lost, throttle records */
	int32_t pid;
	const char *comm;         /* pid 0 with comm: several processes, comm
				   * names them ("pids 4242 (redis), 4243 (nginx)") */
	const char *tool_version; /* "0.1.0"; NULL: VG_VERSION */
	uint64_t stacks_cut;      /* samples whose stack ended before its
				   * outermost frame (callers missing) */
	const char *stacks_cut_why; /* "stack_end 12, no_cfi 3"; NULL: none */
	/* One more line for the table's header ("by state: running 6,
	 * sleeping 40; by wait: mutex 12, ..." of vigil stack --every);
	 * NULL: none */
	const char *totals;
	const char *main_path;    /* the main executable's image path: pprof
				   * makes its mapping the first, which pprof
				   * reads as the profiled program; NULL unknown */
};

struct vg_stacks;

/* New empty trie; NULL on ENOMEM.  vg_stacks_free(NULL) is a no-op. */
struct vg_stacks *vg_stacks_new(void);
void vg_stacks_free(struct vg_stacks *s);

/* Intern a string (copied); 0 for NULL or "".  -ENOMEM. */
int vg_stacks_intern_string(struct vg_stacks *s, const char *str, uint32_t *id);

/* Intern a mapped file, deduplicated by (path, start); strings are copied.
 * 0 or -ENOMEM. */
int vg_stacks_intern_image(struct vg_stacks *s, const char *path,
			   const char *build_id_hex, uint64_t start,
			   uint64_t limit, uint64_t file_offset, bool kernel,
			   uint32_t *id, struct vg_error *err);

/* The frames of an address already interned: true with *first (the
 * outermost) and *n set; false when it still has to be symbolized. */
bool vg_stacks_find_address(const struct vg_stacks *s, uint64_t address,
			    bool kernel, uint32_t *first, uint32_t *n);

/* Intern the symbolizer's answer for one address: frames innermost first
 * (frames[n-1] is the function the address is in, the rest are inlined
 * into it), n = 0 when nothing is known.  Strings are copied.  *first and
 * *n_ids receive the ids, outermost first.  An address already interned
 * returns its existing ids.  0, -EINVAL (bad image id), -ENOMEM, -E2BIG
 * (more than 2^32 frames). */
int vg_stacks_intern_address(struct vg_stacks *s,
			     const struct vg_stack_site *site,
			     const struct vg_stack_frame_in *frames, size_t n,
			     uint32_t *first, uint32_t *n_ids,
			     struct vg_error *err);

/* The source columns of the n frames of one address interned at first
 * (columns innermost first, as the frames were given), written by pprof
 * as Line.column; 0 is unknown.  Apart from vg_stack_frame_in so that
 * its three-field initializers stay complete. */
void vg_stacks_set_columns(struct vg_stacks *s, uint32_t first, uint32_t n,
			   const uint32_t *columns);

/* User-space addresses interned without an image (site.image NONE): a
 * library mapped after its first sample was symbolized, since the MMAP2
 * record of a dlopen can be read after samples in it from another CPU's
 * ring.  *out is malloc'ed (NULL when there are none), the caller frees
 * it.  0 or -ENOMEM. */
int vg_stacks_unresolved(const struct vg_stacks *s, uint64_t **out, size_t *n);

/* Replace the frames of an address already interned, typically one of
 * vg_stacks_unresolved symbolized again after a refresh; arguments as for
 * vg_stacks_intern_address.  Every path through the address keeps its
 * counts.  An inline chain of the same length is rewritten in place;
 * another length re-adds every path (O(nodes)), so call it after
 * sampling, before writing.  The old frames stay, marked retired.
 * 0, -ENOENT (address never interned), -EINVAL (bad image), -ENOMEM (the
 * trie is then unchanged). */
int vg_stacks_reintern_address(struct vg_stacks *s,
			       const struct vg_stack_site *site,
			       const struct vg_stack_frame_in *frames, size_t n,
			       struct vg_error *err);

/* Name a thread (copied); the thread is created if needed.  -ENOMEM. */
int vg_stacks_set_thread_name(struct vg_stacks *s, int32_t tid,
			      const char *name, struct vg_error *err);

/* Add count samples of thread tid whose stack is ids[0..n) ROOT FIRST
 * (ids[n-1] is the leaf).  Every address must appear with all its frames
 * in order (first .. first+n-1).  0, -EINVAL (n = 0 or an unknown frame
 * id), -ENOMEM. */
int vg_stacks_add(struct vg_stacks *s, int32_t tid, const uint32_t *ids,
		  size_t n, uint64_t count, struct vg_error *err);

/* Copy every stack of src into dst under one more root frame named label
 * (vigil profile -p A,B: "comm-pid"), keeping src's threads (tids are
 * distinct across processes), images, frames and counts.  src's frames
 * are added as new frames, outside dst's address index: the same
 * address in two grafted tries stays two frames, as it is two places in
 * two processes.  Call it on a dst that only receives grafts.  0,
 * -ENOMEM, -E2BIG (more than 2^32 frames), with err filled. */
int vg_stacks_graft(struct vg_stacks *dst, const struct vg_stacks *src,
		    const char *label, struct vg_error *err);

/* A view merged by function: frames are (name, file, inlined, kernel) with
 * address, line and image dropped, and nodes with equal frames under the
 * same parent are one.  merge_threads: one root (tid -1, "all threads")
 * instead of one per thread.  *out is a new trie the caller frees.
 * 0 or -ENOMEM. */
int vg_stacks_by_function(const struct vg_stacks *s, bool merge_threads,
			  struct vg_stacks **out, struct vg_error *err);

/* Read access for writers.  Pointers are borrowed and valid until the
 * next change to s. */
uint64_t vg_stacks_total(const struct vg_stacks *s);
size_t vg_stacks_n_strings(const struct vg_stacks *s);
const char *vg_stacks_string(const struct vg_stacks *s, uint32_t id);
size_t vg_stacks_n_images(const struct vg_stacks *s);
const struct vg_stack_image *vg_stacks_image(const struct vg_stacks *s,
					     uint32_t id);
size_t vg_stacks_n_frames(const struct vg_stacks *s);
const struct vg_stack_frame *vg_stacks_frame(const struct vg_stacks *s,
					     uint32_t id);
size_t vg_stacks_n_nodes(const struct vg_stacks *s);
const struct vg_stack_node *vg_stacks_node(const struct vg_stacks *s,
					   uint32_t id);
/* Threads in the order they were first seen. */
size_t vg_stacks_n_threads(const struct vg_stacks *s);
const struct vg_stack_thread *vg_stacks_thread(const struct vg_stacks *s,
					       size_t i);

/* The children of a node sorted by frame name (then frame id), so every
 * writer's output is deterministic: *out is malloc'ed (NULL when there are
 * none), the caller frees it.  0 or -ENOMEM. */
int vg_stacks_children(const struct vg_stacks *s, uint32_t node,
		       uint32_t **out, size_t *n);

/* Per function (by name): samples where it is the leaf (self) and samples
 * where it is anywhere on the stack, counted once under recursion
 * (total).  This is what the table and the JSON report show. */
struct vg_stack_function {
	uint32_t name;   /* string id */
	uint32_t file;   /* string id of the first frame seen, 0 unknown */
	bool inlined;    /* some occurrence was inlined */
	bool kernel;
	uint64_t self, total;
};

/* Every function of s, sorted by self, then total, descending, then by
 * name; *out is malloc'ed, the caller frees it.  0 or -ENOMEM. */
int vg_stacks_functions(const struct vg_stacks *s,
			struct vg_stack_function **out, size_t *n,
			struct vg_error *err);

#endif
