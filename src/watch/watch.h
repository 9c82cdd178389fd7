/* watch.h - who writes a location of a live process: hardware data
 * breakpoints through perf_event_open, the writer instruction behind each
 * trap, the value written, and pointers followed and re-bound.
 *
 * One session: vg_watch_new validates every location (mapped, writable for
 * a write watch, aligned to its length, at most 4 debug registers in all),
 * reads the initial values, and tests that breakpoints really fire on this
 * machine; vg_watch_arm opens the events on every thread (perf/event.h);
 * vg_watch_run drains samples until a stop reason; vg_watch_free closes the
 * events, which removes every breakpoint from the target.  The session
 * never writes into the target.
 *
 * Writers: every trap is attributed to the write that caused it by
 * attribute.h (a rep string instruction at the trap IP, else the
 * instruction that ends there, a call, or the kernel's system call),
 * "exact" only when the destination evaluated with the sampled registers
 * overlaps the watched bytes.  The registers are always sampled (and the
 * kernel's at a kernel trap, where allowed).  A site is one writer; it
 * counts writes (executions: the iterations of one rep, the per-byte
 * traps of one kernel copy count once) and traps.  A kernel write's call
 * site is frame 1 of the unwinder (unwind/unwind.h): one CFI step out of
 * the libc wrapper.  With stacks, each write's user stack is unwound by
 * CFI from the sampled registers and an 8 KiB stack copy.
 *
 * Test emulation: where the kernel accepts breakpoints but the machine never
 * delivers them (a VM without debug registers), the option emulate_traps
 * (the CLI takes it from the environment variable
 * VIGIL_WATCH_EMULATE_TRAPS) = "FILE:OFFSET[,FILE:OFFSET...][;...]" (one
 * ';'-separated group per watch, in order) replaces each watch's
 * breakpoint by uprobes on the given instructions: a uprobe on the
 * instruction right after a store fires exactly when a breakpoint on that
 * store would, with the same IP and registers.  Everything after the trap
 * (rings, coverage, decoding, values, re-binding bookkeeping) is the real
 * path.  Reports say backend "uprobe_emulation" so this is never mistaken
 * for a real watch.  no_selftest (VIGIL_WATCH_NO_SELFTEST=1) skips the self-test, so
 * tests can arm real breakpoints where they never fire and check what the
 * kernel refuses (no free debug register). */
#ifndef VG_WATCH_H
#define VG_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/event.h"
#include "perf/observe.h"
#include "sym/symbolizer.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "util/error.h"
#include "watch/attribute.h"
#include "watch/writer.h"

#define VG_WATCH_MAX_SLOTS 4       /* DR0-DR3 */
#define VG_WATCH_MAX_FRAMES 8      /* inline chain kept per site */


enum vg_binding {
	VG_BIND_BOUND = 0,         /* "bound" */
	VG_BIND_NULL,              /* "null_pointer" */
	VG_BIND_UNMAPPED,          /* "unmapped" */
	VG_BIND_UNREADABLE,        /* "unreadable": the pointer slot could not be read */
	VG_BIND_MISALIGNED,        /* "misaligned": *slot + offset not aligned to the length */
	VG_BIND_FAILED,            /* "rebind_failed": the kernel refused to move the breakpoint */
};

/* One watch request as the user gave it. */
struct vg_watch_request {
	const char *input;         /* as typed */
	uint64_t addr;             /* runtime address (follow: the pointer slot) */
	const char *symbol;        /* resolved symbol or NULL (borrowed) */
	uint64_t symbol_offset;
	bool follow;
	uint64_t leaf_offset;      /* follow: leaf = *(last hop) + leaf_offset */
	/* A chain (an expression a->b->c.d): more pointer slots between the
	 * root and the leaf.  Hop k (1..n_mid) is the 8-byte slot at
	 * *(hop k-1) + mid_offsets[k-1]; each is watched and a write to any
	 * hop re-binds everything after it.  --follow is the chain with none. */
	size_t n_mid;
	uint64_t mid_offsets[VG_WATCH_MAX_SLOTS - 2];
	const char *mid_inputs[VG_WATCH_MAX_SLOTS - 2];  /* "cfg->next" or NULL (borrowed) */
	unsigned len;              /* of the location or leaf; 0: the options' len
	                            * (an expression's comes from its type) */
	const char *expr;          /* an expression watch: the text (borrowed), else NULL */
	const char *type_name;     /* its type, "enum mode" (borrowed) */
	/* The value written as its type says (enum name, signed, bool,
	 * pointer <symbol>): a malloc'ed string or NULL.  The watch knows no
	 * types; reports call it for the leaf's values.  NULL: hex only. */
	char *(*format)(void *arg, const unsigned char *bytes, unsigned len);
	void *format_arg;
};

struct vg_watch_options {
	unsigned len;              /* 1, 2, 4, 8 */
	bool rw;                   /* access rw, else w */
	uint64_t duration_ms;      /* 0: until interrupted, max_events or exit */
	uint64_t max_events;       /* 0: no limit */
	size_t max_samples;        /* timeline bound per watch (and per dependent) */
	bool regs, stacks;
	/* Tests only (see above): uprobe emulation groups, or NULL; skip the
	 * self-test.  Borrowed for the session's life. */
	const char *emulate_traps;
	bool no_selftest;
	/* A thread's fs base (its thread pointer), which perf does not
	 * sample: with it, a store through fs: (the executable's own
	 * thread-locals) is verified like any other; without it (NULL, or <0
	 * returned) such a writer stays heuristic.  Asked once per thread. */
	int (*thread_pointer)(void *ctx, pid_t tid, uint64_t *fs_base);
	void *thread_pointer_ctx;
};

struct vg_watch_site {
	uint64_t trap_ip;          /* sampled IP (kernel IP for a kernel write) */
	uint64_t trap_static_ip;
	struct vg_writer writer;   /* writer.ip is the runtime writer IP */
	uint64_t writer_static_ip;
	const char *image;         /* of the writer, borrowed; NULL unknown */
	const char *function;      /* innermost function (inline frame) */
	const char *symbol;        /* ELF symbol containing the writer */
	uint64_t symbol_offset;
	const char *file;
	uint32_t line, column;
	struct vg_sym_frame frames[VG_WATCH_MAX_FRAMES];  /* innermost first; strings borrowed from the symbolizer */
	size_t n_frames;
	/* Kernel write: the system call, the user IP after `syscall`, and the
	 * wrapper's call site (file/line above are the call site's). */
	bool kernel;
	char syscall[32];          /* "" unknown */
	int syscall_nr;            /* -1 unknown */
	uint64_t user_ip;
	uint64_t call_site_ip;     /* 0 unknown */
	const char *kernel_function;
	uint64_t writes;           /* executions of the writer (one rep, one system call: 1) */
	uint64_t traps;            /* breakpoint hits attributed to it */
	uint64_t unverified;       /* traps whose destination could not be verified */
	const char *unverified_why;/* the first reason (static) */
	char caveat[256];          /* "" none */
};

struct vg_watch_value {
	enum vg_value_kind kind;
	char register_name[8];     /* "" unless a register store (a copy: sites move as they grow) */
	unsigned width;
	uint64_t value;
	const char *why;           /* kind UNKNOWN */
};

struct vg_watch_sample {
	uint64_t time_ns;          /* CLOCK_MONOTONIC */
	pid_t tid;
	size_t site;               /* index into sites */
	unsigned generation;       /* dependent watches */
	uint64_t traps;            /* breakpoint hits of this write */
	struct vg_watch_value value;
	uint64_t *callchain;       /* --stacks: user IPs by CFI, innermost first
	                            * (the IP, then return addresses); owned */
	size_t n_callchain;
};

/* What one breakpoint collected: a plain watch, the leaf of a follow. */
struct vg_watch_log {
	uint64_t accepted_hits;    /* traps after setup ended, until the stop */
	uint64_t writes;           /* the writes those traps belong to */
	uint64_t unattributed;     /* traps not attributed (out of memory): writes short */
	uint64_t setup_hits;       /* during setup (not in accepted_hits) */
	uint64_t after_stop;       /* past --max-events: seen, not counted */
	struct vg_watch_site *sites;
	size_t n_sites, cap_sites;
	struct vg_watch_sample *samples;
	size_t n_samples, cap_samples;
	bool samples_truncated;
	bool has_last_value;
	struct vg_watch_value last_value;
	struct vg_attributor *attr; /* owned: decoding caches and each thread's last write */
};

/* A pointer slot between the root and the leaf of a chain. */
struct vg_watch_hop {
	int slot;
	uint64_t addr;             /* where the slot is now; PARK (0x1000) while unbound */
	bool bound;
	struct vg_watch_log log;   /* the pointer's writes */
};

struct vg_watch_generation {
	unsigned index;            /* 0 = the binding at start */
	uint64_t pointer;          /* value of the slot */
	uint64_t leaf_addr;        /* pointer + offset */
	uint64_t mid_addr[VG_WATCH_MAX_SLOTS - 2]; /* chain: each hop's slot (0: unbound) */
	enum vg_binding state;
	uint64_t bound_ns;         /* when the breakpoint moved (or setup) */
	uint64_t pointer_written_ns; /* the root sample that caused it (0 for gen 0) */
	uint64_t hits;
};

struct vg_watch {
	struct vg_watch_request req;
	struct vg_region region;   /* copy; path owned */
	unsigned len;
	bool rw;
	uint64_t static_va;        /* runtime - bias of its image, or 0 with has_static false */
	bool has_static;
	const char *image;         /* borrowed */
	unsigned char initial[8];
	bool initial_ok;
	unsigned char latest[8];
	bool latest_ok;

	int slot;                  /* plain: leaf slot; follow: root slot */
	struct vg_watch_log log;   /* plain: its writes; follow: the pointer slot's */

	/* follow */
	int leaf_slot;
	enum vg_binding binding;
	uint64_t pointer;
	struct vg_watch_generation *gens;
	size_t n_gens, cap_gens;
	struct vg_watch_log leaf;
	struct vg_watch_hop mid[VG_WATCH_MAX_SLOTS - 2];  /* chain: req.n_mid of them */
	unsigned rebind_failures;
	char rebind_error[768];
};

struct vg_watch_session;

/* Validate and prepare; err says which request failed and why.  The
 * session borrows t, sym, maps and mem. */
int vg_watch_new(struct vg_target *t, struct vg_symbolizer *sym,
		 const struct vg_maps *maps, struct vg_mem *mem,
		 const struct vg_watch_request *reqs, size_t n,
		 const struct vg_watch_options *opt,
		 struct vg_watch_session **out, struct vg_error *err);
struct vg_watch_session *vg_watch_free(struct vg_watch_session *s);

/* Open the events on every thread (setup).  After it returns 0 every
 * thread of the target is covered. */
int vg_watch_arm(struct vg_watch_session *s, struct vg_error *err);

/* Drain until a stop reason.  stop_fd: a signalfd (or -1) whose readiness
 * means interrupted.  progress (may be NULL) is called about once a
 * second with the hits so far. */
int vg_watch_run(struct vg_watch_session *s, int stop_fd,
		 void (*progress)(const struct vg_watch_session *s, void *arg), void *arg,
		 struct vg_error *err);

/* Close every event (no breakpoint left in the target), read the latest
 * values.  Idempotent; vg_watch_free calls it. */
void vg_watch_disarm(struct vg_watch_session *s);

/* Results. */
struct vg_watch *vg_watch_at(const struct vg_watch_session *s, size_t i);
size_t vg_watch_count(const struct vg_watch_session *s);
enum vg_stop vg_watch_stop_reason(const struct vg_watch_session *s);
uint64_t vg_watch_elapsed_ms(const struct vg_watch_session *s);
const struct vg_perf_stats *vg_watch_perf_stats(const struct vg_watch_session *s);
const struct vg_cover_tid *vg_watch_threads(const struct vg_watch_session *s, size_t *n);
bool vg_watch_emulated(const struct vg_watch_session *s);
bool vg_watch_kernel_visible(const struct vg_watch_session *s);
/* Reasons the counts are a lower bound (NULL-terminated, static or owned). */
const char *const *vg_watch_lower_bound_reasons(const struct vg_watch_session *s);
uint64_t vg_watch_start_ns(const struct vg_watch_session *s);
unsigned vg_watch_slots_used(const struct vg_watch_session *s);
/* Events opened at arming (threads x CPUs x slots) and CPUs (rings). */
size_t vg_watch_perf_events(const struct vg_watch_session *s, int *ncpus);

/* Names for reports. */
const char *vg_binding_name(enum vg_binding b);

/* Whether hardware breakpoints fire here: opens a write breakpoint on a
 * variable of vigil's own, writes it, and reads the count.  0: they fire;
 * -EOPNOTSUPP with the sentence when the kernel accepted it and nothing
 * fired; other errors as perf_event_open gave them. */
int vg_watch_selftest(struct vg_error *err);

#endif
