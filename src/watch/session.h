/* session.h - the watch session's private state, shared by watch.c
 * (arming, running, results), sites.c (what each trap becomes) and
 * follow.c (pointers followed and re-bound).  Not part of the library's
 * interface: watch.h is. */
#ifndef VG_WATCH_SESSION_H
#define VG_WATCH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asm/perf_regs.h>

#include "perf/event.h"
#include "unwind/unwind.h"
#include "watch/watch.h"

/* 1 MiB per CPU: at the ~450,000 trapped writes/s a process can make, a
 * sample is ~100 bytes, so the ring holds ~20 ms of work. */
#define RING_PAGES 256
#define STACK_DUMP 512                  /* bytes of user stack per sample: one CFI step */
#define STACK_DUMP_STACKS 8192          /* --stacks: what a whole unwind needs (as profile) */
#define MAX_CALLCHAIN 64                /* frames kept per sample (--stacks) */
#define PARK_ADDR 0x1000ull             /* an unbound leaf breakpoint waits here: never mapped */
#define MAX_REASONS 12
#define MAX_EMULATED 64               /* uprobe sites of VIGIL_WATCH_EMULATE_TRAPS */

/* GPRs and flags by perf index: AX..FLAGS (0-9), R8..R15 (16-23). */
#define REGS_ALL (((1ull << 10) - 1) | (0xffull << 16))
#define REGS_STRING ((1ull << PERF_REG_X86_IP) | (1ull << PERF_REG_X86_CX) | \
		     (1ull << PERF_REG_X86_DI) | (1ull << PERF_REG_X86_SI) | (1ull << PERF_REG_X86_FLAGS))

enum role { ROLE_PLAIN, ROLE_ROOT, ROLE_MID, ROLE_LEAF };

struct slot_map {
	size_t watch;
	enum role role;
	unsigned hop;                  /* ROLE_MID: which of the watch's mid hops */
};

struct vg_watch_session {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	const struct vg_maps *maps;
	struct vg_mem *mem;
	struct vg_watch_options opt;
	struct vg_watch *w;
	size_t n;
	unsigned slots_used;

	struct vg_perf_set *set;
	struct slot_map *map;          /* per perf slot */
	size_t n_map, cap_map;
	bool emulated, kernel_visible, armed;
	uint64_t start_ns, end_ns;
	uint64_t accepted_total;
	enum vg_stop stop;

	/* A kernel write's call site and --stacks: created on first use,
	 * following the symbolizer's image set. */
	struct vg_unwinder *unwinder;
	const struct vg_images *unwinder_images;

	char *reasons[MAX_REASONS + 1];
	size_t n_reasons;

	size_t n_events;               /* perf events open: threads x CPUs x slots */
	int ncpus;
	char *paths[MAX_EMULATED];     /* emulation: uprobe file paths */
	size_t n_paths;

	/* opt.thread_pointer's answers, per thread (fs 0: none). */
	struct thread_fs { pid_t tid; uint64_t fs; } *fs_cache;
	size_t n_fs, cap_fs;

	/* Kept when the events are closed (disarm), for the report. */
	struct vg_perf_stats set_stats;
	struct vg_cover_tid *threads;
	size_t n_threads;
};

/* ---- follow.c ---- */

/* Read len (<= 8) bytes of the target into out (zero-filled first);
 * false when unreadable. */
bool watch_read_value(struct vg_mem *mem, uint64_t addr, unsigned len, unsigned char *out);
/* A little-endian integer of len bytes. */
uint64_t watch_le_value(const unsigned char *p, unsigned len);
/* Append a generation (binding) to a follow; -ENOMEM. */
int watch_add_generation(struct vg_watch *w, uint64_t pointer, enum vg_binding state,
			 uint64_t written_ns);
/* Where the leaf is, following the root slot (known: its value when a
 * sample said it, else NULL to read it) through the chain's mid hops
 * (their slots into mid_addr, PARK_ADDR past a break), or why it cannot
 * be bound. */
enum vg_binding watch_resolve_leaf(struct vg_watch_session *s, struct vg_watch *w,
				   const uint64_t *known, uint64_t *pointer, uint64_t *mid_addr);
/* A pointer of the chain was written at written_ns: move every hop
 * after it and the leaf (a new generation). */
void watch_rebind(struct vg_watch_session *s, struct vg_watch *w, uint64_t written_ns,
		  const uint64_t *known);
/* The generation a leaf write at time t to addr belongs to. */
struct vg_watch_generation *watch_generation_of(struct vg_watch *w, uint64_t t, uint64_t addr,
						bool emulated);

/* ---- sites.c ---- */

/* One accepted trap of a log's breakpoint on [watch_addr, +len): its
 * write attributed (attribute.h), its site found or made and symbolized,
 * writes and traps counted, the timeline extended. */
void watch_record(struct vg_watch_session *s, struct vg_watch_log *log,
		  const struct vg_perf_sample *smp, uint64_t watch_addr, unsigned len,
		  unsigned generation);

#endif
