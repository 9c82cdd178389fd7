/* probe.h - vigil probe: how often, how long and with what arguments code
 * runs in a live process.
 *
 * A session resolves its LOCATIONs to sites (resolve.h), puts one uprobe
 * with a counting eBPF program on each (bpf.h: every thread of the
 * process, later ones included, exact counts read from a map), and, for
 * --latency, --args or --stacks, has the programs record each hit into
 * per-CPU rings, which the session drains in time order into the pairing,
 * value and stack tables (stats.h).
 *
 * A program runs from the moment it is attached to its event (enabled or
 * not: the kernel calls it from the uprobe handler), and attaching or
 * detaching one takes tens of milliseconds, so the programs are gated
 * (vg_bpf_counters_gate, _gate_returns): closed while the probes are
 * opened, opened at one instant (armed_ns).  Return probes are opened
 * before entry probes, so every call recorded at its entry has its return
 * recorded (a call in flight at the start returns with no entry: counted
 * as unmatched, reported as begun before arming).  Disarming: the entry
 * gate closes (the counts are final at that instant); for up to 200 ms,
 * while calls entered before it are open, their returns are drained (one
 * of a call entered after the stop is dropped); the return gate closes
 * (what is open is in flight); then the events are closed, entries first
 * (~50 ms each; the kernel restores the original instruction bytes as
 * each closes), the rings drained, and the bytes at every site read back
 * from the
 * target and compared with the file (code_restored).  Every path out of a
 * session (stop, target exit, error, vg_probe_free) closes the events. */
#ifndef VG_PROBE_H
#define VG_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/observe.h"
#include "probe/bpf.h"
#include "sym/params.h"
#include "probe/resolve.h"
#include "probe/stats.h"
#include "stacktrie/stacks.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "unwind/unwind.h"
#include "util/error.h"

#define VG_PROBE_MAX_LOCATIONS 64
#define VG_PROBE_MAX_SITES 256
#define VG_PROBE_MAX_ARGS 6

struct vg_probe_opts {
	uint64_t duration_ms;        /* 0: until stopped */
	uint64_t interval_ms;        /* 0: no interval callback */
	bool latency;
	bool retval;                 /* the return value (rax) of each call */
	const char *filter;          /* --filter EXPR (probe/filter.c), or NULL */
	unsigned n_args;             /* 0..6 */
	bool stacks;
	bool per_thread;
	uint32_t stack_bytes;        /* --stacks: user stack copied per hit (default 8192) */
	size_t ring_pages;           /* per CPU (default 256, 1024 with stacks) */
};


/* A call stack that reached a location, innermost first (ips[0] is the
 * probed address). */
struct vg_probe_stack {
	uint64_t *ips;
	bool *exact;                 /* ips[i] is exact (else a return address) */
	size_t n;
	uint64_t count;
};

struct vg_probe_site_result {
	uint64_t calls;
	bool has_return;             /* latency measured (a function entry) */
};

struct vg_probe_arg {
	struct vg_sym_param param;
	/* usdt: the register its spec names ("rax"; the record's pt_regs
	 * word per site is in the session), "" otherwise. */
	char usdt_reg[8];
	/* usdt: the memory operand it is read from ("-20(%rbp)", at its
	 * first site; the base register is usdt_reg), "" for a register. */
	char usdt_mem[24];
	struct vg_values *values;
};

struct vg_probe_location_result {
	struct vg_probe_location loc;
	size_t first_site;           /* index of loc.sites[0] in the session */
	uint64_t calls;              /* with --filter: the calls that matched */
	/* --filter: the comparisons every site's entry program makes, and
	 * the calls seen in all (matched or not). */
	struct vg_bpf_filter_term filter[VG_BPF_FILTER_MAX_TERMS];
	size_t n_filter;
	uint64_t calls_seen;
	/* --latency: entry+return at every site of this location (NULL
	 * latency_why), else why not. */
	const char *latency_why;
	struct vg_pairing_site_stats pairing;
	/* --retval: rax at each paired return, typed from the function's
	 * DWARF return type (values NULL: not asked; a location that is
	 * no function entry is refused with --retval). */
	struct vg_probe_arg retval;
	/* --args */
	struct vg_probe_arg args[VG_PROBE_MAX_ARGS];
	size_t n_args;
	const char *args_why;        /* not at a function entry: registers, not arguments */
	/* --stacks: distinct stacks, by count descending */
	struct vg_probe_stack *stacks;
	size_t n_stacks;
	uint64_t stack_records;
	/* Stacks not in the table (past 65536 distinct ones, or no memory):
	 * counted in stack_records, in no stack's count. */
	uint64_t stacks_dropped;
	uint64_t unwind_stop[8];
};

struct vg_probe_stats {
	uint64_t records;            /* ring records handed out */
	uint64_t records_lost;
	uint64_t records_malformed;  /* undecodable, of an unknown site or kind, or not queued */
	bool leader_exited;          /* the thread the probes are opened on exited */
	unsigned rearms;             /* times the probes moved to another thread */
	pid_t rearmed_on;            /* the last thread they moved to */
	/* Times the probe task exited while other threads of the process
	 * were still listed and none could take the probes (all exiting):
	 * their calls before they stopped may be missing. */
	unsigned rearm_failures;
	char rearm_why[256];         /* why the last move failed, or "" */
	bool code_restored;          /* every site's bytes read back equal the file's */
	size_t code_checked;         /* sites whose bytes were read back */
	size_t code_foreign_int3;    /* sites still holding another uprobe's int3
				      * (the rest equal to the file): restored */
	char code_why[256];          /* why not restored/checked, or "" */
	/* The process tree (a software dummy event with task/comm_exec on
	 * every thread, perf/event.h): the exec that stopped the probe (its
	 * time, 0: none; the new comm; when the entry gate closed after it)
	 * and the child processes created meanwhile, which the probes do
	 * not count (they filter on the process's mm). */
	bool tree_watched;           /* false: the dummy event was refused */
	uint64_t exec_ns, exec_gate_ns;
	char exec_comm[16];
	/* The exec gate (bpf.h, vg_bpf_exec_gate_open): armed, whether it
	 * closed the gates at the exec itself (exec_gate_ns is then the
	 * kernel's time of it, and no call of the new program was counted),
	 * and, when it is not armed or did not close them, why: vigil then
	 * closed them itself when it read the exec, exec_gate_ns - exec_ns
	 * later, and calls of the new program in between are counted. */
	bool exec_gate_armed;
	bool exec_gate_kernel;
	char exec_gate_why[256];
	uint64_t children;
	pid_t child_pids[8];         /* the first few */
	size_t n_child_pids;
};

struct vg_probe_session;

/* Resolve every spec (errors are the resolver's: -EINVAL, -ENOENT,
 * -ENOEXEC, -EFAULT, -ENODATA, with the spec named in the sentence). */
int vg_probe_new(struct vg_target *t, struct vg_symbolizer *sym, const char *const *specs,
		 size_t n_specs, const struct vg_probe_opts *o, struct vg_probe_session **out,
		 struct vg_error *err);
/* Disarms if still armed. */
struct vg_probe_session *vg_probe_free(struct vg_probe_session *s);

/* Load the programs and open, attach and enable every event.  On error
 * nothing stays armed.  -EPERM/-EACCES (CAP_BPF, CAP_PERFMON),
 * -EOPNOTSUPP (no uprobe PMU), -ESRCH (target gone). */
int vg_probe_arm(struct vg_probe_session *s, struct vg_error *err);

/* Run until duration, a readable stop_fd (signalfd of Ctrl-C; -1: none)
 * or the target's exit, calling interval(s, arg) every interval_ms.  Then
 * disarms (see above) and computes the results. */
typedef void (*vg_probe_interval_fn)(struct vg_probe_session *s, uint64_t elapsed_ns, void *arg);
int vg_probe_run(struct vg_probe_session *s, int stop_fd, vg_probe_interval_fn interval, void *arg,
		 struct vg_error *err);

/* Close every event now (idempotent); vg_probe_run does it itself. */
void vg_probe_disarm(struct vg_probe_session *s);

/* Live counts for the interval callback: calls of location i so far. */
uint64_t vg_probe_live_calls(struct vg_probe_session *s, size_t loc);

size_t vg_probe_n_locations(const struct vg_probe_session *s);
size_t vg_probe_n_sites(const struct vg_probe_session *s);
struct vg_probe_location_result *vg_probe_location(struct vg_probe_session *s, size_t i);
const struct vg_probe_site_result *vg_probe_site(const struct vg_probe_session *s, size_t i);
/* --latency: the location's durations (borrowed; summarize them), or
 * NULL when it has none (latency_why). */
struct vg_latency *vg_probe_latency(struct vg_probe_session *s, size_t loc);
/* --per-thread: (site, tid, calls) sorted by site then tid; *dropped
 * hits not attributed (hash full). */
const struct vg_bpf_thread_count *vg_probe_thread_counts(const struct vg_probe_session *s,
							 size_t *n, uint64_t *dropped);
const struct vg_probe_stats *vg_probe_stats(const struct vg_probe_session *s);
enum vg_stop vg_probe_stop_reason(const struct vg_probe_session *s);
/* When the probes started counting (the gates opened; CLOCK_MONOTONIC ns). */
uint64_t vg_probe_armed_ns(const struct vg_probe_session *s);
uint64_t vg_probe_duration_ns(const struct vg_probe_session *s);
const struct vg_probe_opts *vg_probe_opts(const struct vg_probe_session *s);

/* --stacks, after the run: every location's distinct stacks as one stack
 * trie (stacktrie/stacks.h), which every stack format writes (report/
 * stack_format.h).  Each stack is a path from its outermost caller (the
 * root: main, a thread's start) to the probed address (the leaf, with its
 * inline frames), counted once per hit, under one root for all threads
 * (tid -1: the hits are not kept per thread).  That is the shape a flame
 * graph reader expects: callers at the bottom, the code that ran at the
 * top, as in a CPU profile whose leaf is where the time went; several
 * locations share their common callers and are told apart by their
 * leaves.  Addresses are symbolized with the session's symbolizer.
 * *out is the caller's to free.  0, -EINVAL (no --stacks), -ENOMEM. */
int vg_probe_stacks(struct vg_probe_session *s, struct vg_stacks **out, struct vg_error *err);

#endif
