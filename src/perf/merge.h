/* merge.h - records taken out of several per-CPU rings, handed out in time
 * order across them: the one merge behind the perf event sets
 * (vg_perf_set_drain_ordered, watch) and the probe's BPF ring buffers
 * (vg_bpf_output_drain).
 *
 * Each CPU's ring is in time order on its own, but a thread that moved
 * between CPUs has records in two rings; merging them by time gives it
 * its own order back.  A record newer than the cut waits for the next
 * take: a ring drained early may still receive older records than one
 * drained late, so the caller cuts at a time taken before draining. */
#ifndef VG_PERF_MERGE_H
#define VG_PERF_MERGE_H

#include <stddef.h>
#include <stdint.h>

struct vg_merge_rec {
	uint64_t time;
	uint64_t seq;              /* add order: ties keep it */
	size_t off;                /* in the arena, 8-aligned */
	size_t len;
	int tag;                   /* the caller's (the CPU index) */
};

/* Embedded in its owner: vg_merge_init, then vg_merge_release. */
struct vg_merge {
	unsigned char *arena, *spare;   /* spare: where the kept ones go */
	size_t arena_len, arena_cap, spare_cap;
	struct vg_merge_rec *q;
	size_t n, cap;
	uint64_t seq;
};

void vg_merge_init(struct vg_merge *m);
void vg_merge_release(struct vg_merge *m);

/* Copy len bytes of data in, to be handed out at time with tag.
 * -ENOMEM: not queued (the caller counts it). */
int vg_merge_add(struct vg_merge *m, uint64_t time, int tag, const void *data, size_t len);

/* Hand every queued record with time <= until to fn, in time order (ties
 * in add order), and keep the newer ones for the next call.  data is
 * 8-aligned and valid during the call only; fn must not add or take.
 * Returns how many were handed out; *dropped (may be NULL) gets the
 * number of kept records lost for lack of memory. */
typedef void (*vg_merge_fn)(const void *data, size_t len, int tag, void *arg);
size_t vg_merge_take(struct vg_merge *m, uint64_t until, vg_merge_fn fn, void *arg,
		     uint64_t *dropped);

#endif
