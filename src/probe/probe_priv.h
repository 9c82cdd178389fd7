/* probe_priv.h - the state of a probe session, shared by the modules that
 * make it up (not part of the API, see probe.h):
 *
 *   probe.c  the session: locations and sites, what --latency and --args
 *            can give at each, freeing, accessors
 *   arm.c    the probes' life: programs loaded, uprobes opened on a live
 *            thread, gates opened at one instant, re-arming when that
 *            thread exits, disarming, the code read back
 *   exec.c   the process tree: the target's exec (the exec gate, its COMM
 *            record) and the children it creates
 *   hits.c   what each recorded hit becomes: pairing, argument values,
 *            an unwound stack in the per-location table
 *   run.c    the session in the observation loop (perf/observe.h) */
#ifndef VG_PROBE_PRIV_H
#define VG_PROBE_PRIV_H

#include "probe/probe.h"

/* Distinct stacks of one location, open addressing on a hash of the ips. */
struct stack_entry {
	uint64_t hash;
	struct vg_probe_stack st;
};
struct stack_table {
	struct stack_entry *slots;
	size_t cap, used;
	uint64_t dropped;            /* stacks beyond STACKS_MAX_DISTINCT */
};

struct site_state {
	struct vg_probe_site *site;  /* borrowed from its location */
	size_t location;
	int entry_fd, return_fd;
	int entry_prog, return_prog;   /* kept for a re-arm */
	/* usdt: the pt_regs word of each --args argument at this site (its
	 * note's spec), -1: not a register (memory, constant), never read. */
	int usdt_pt[VG_PROBE_MAX_ARGS];
	/* usdt: the arguments in memory at this site ("-4@-20(%rbp)"): read
	 * by the entry program into the record's mem[] (size 0: a register). */
	struct vg_bpf_mem_arg usdt_mem[VG_PROBE_MAX_ARGS];
	struct vg_probe_site_result result;
};

struct vg_probe_session {
	struct vg_target *t;
	struct vg_symbolizer *sym;
	struct vg_probe_opts o;
	struct vg_probe_location_result *locs;
	size_t n_locs;
	struct site_state *sites;
	size_t n_sites;
	struct vg_bpf_counters *counters;
	struct vg_bpf_output *output;
	struct vg_pairing *pairing;  /* by location index */
	struct stack_table *stacks;  /* per location */
	struct vg_unwinder *unwinder;
	struct vg_bpf_thread_count *threads;
	size_t n_threads;
	uint64_t threads_dropped;
	struct vg_probe_stats stats;
	enum vg_stop stop;
	uint64_t armed_ns, stopped_ns;
	bool armed;
	pid_t probe_task;            /* the task the events are opened on */
	struct vg_perf_set *tree;    /* exec and fork records (NULL: none) */
	int exec_gate_fd;            /* the exec gate's raw tracepoint, or -1 */
	/* An exec came while the probes were armed, before the gates
	 * opened: opening them undid the exec gate's closing, and vigil
	 * closed them again at this time. */
	uint64_t exec_reclosed_ns;
};

static inline bool probe_recording(const struct vg_probe_opts *o)
{
	return o->latency || o->retval || o->n_args || o->stacks;
}

/* arm.c */
bool probe_task_exited(pid_t tid);
int probe_move_to_live_thread(struct vg_probe_session *s, struct vg_error *err);
int probe_rearm(struct vg_probe_session *s, struct vg_error *err);

/* exec.c */
void probe_watch_tree(struct vg_probe_session *s);
void probe_arm_exec_gate(struct vg_probe_session *s);
void probe_recheck_exec_gate(struct vg_probe_session *s);
void probe_poll_exec_gate(struct vg_probe_session *s);
void probe_drain_tree(struct vg_probe_session *s);

/* hits.c */
void probe_drain(struct vg_probe_session *s, uint64_t until);
void probe_collect_stacks(struct vg_probe_session *s);
void probe_stack_table_clear(struct stack_table *t);

#endif
