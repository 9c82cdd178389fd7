/* bpf_int.h - what the pieces of the probe's eBPF layer share and nothing
 * outside src/probe/{counters,output,progs}.c may use: the maps' fds, the
 * counts map's extra slots, and the refusal sentence.  The public API is
 * bpf.h. */
#ifndef VG_PROBE_BPF_INT_H
#define VG_PROBE_BPF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/bpf.h"
#include "util/error.h"

/* The counts map's slots after the sites' (slot n_sites + SLOT_...). */
enum {
	SLOT_DROPPED = 0,          /* per-thread hits not in the full hash */
	SLOT_ENTRY_GATE,           /* entry programs run while it is not 0 */
	SLOT_RETURN_GATE,          /* return programs likewise */
	SLOT_EXEC_NS,              /* when the exec gate closed both (0: not yet) */
	N_EXTRA_SLOTS
};

struct vg_bpf_counters {
	size_t n_sites;
	int counts_fd;             /* ARRAY u32 -> u64: n_sites, then N_EXTRA_SLOTS */
	int threads_fd;            /* HASH {u32 site, u32 tid} -> u64, or -1 */
};

/* The map programs look up their CPU's ring in (ARRAY_OF_MAPS of
 * RINGBUF), and the one-slot ARRAY they count lost records in. */
int vg_bpf_output_rings_fd(const struct vg_bpf_output *o);
int vg_bpf_output_lost_fd(const struct vg_bpf_output *o);

/* -EPERM with the sentence that says which privilege is missing. */
int vg_bpf_refused(struct vg_error *err, const char *what);

#endif
