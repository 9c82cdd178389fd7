/* bpf.h - the small eBPF programs that count and record the hits of vigil
 * probe's uprobes (perf/uprobe.h), their maps and their output rings.
 * The programs are C (probe.bpf.c, exec_gate.bpf.c) loaded through libbpf
 * skeletons (progs.c); the maps are counters.c's, the rings output.c's.
 *
 * Why eBPF and not a plain uprobe perf event per thread: a uprobe PMU event
 * counts only the task it is opened on, and cannot be inherited when opened
 * on another process (the child re-reads config1, the path pointer, in the
 * target's address space, and the target's clone() fails with EFAULT).  A
 * program attached with PERF_EVENT_IOC_SET_BPF instead runs for every hit
 * whose mm is the probed task's mm (the kernel's uprobe filter): every
 * thread of the process, those created later included, from their first
 * instruction, and no other process.  So one event per site, opened with
 * pid = the process, cpu = -1, inherit = 0, covers the process with no
 * window, and the counts are exact.
 *
 * The kernel inserts the breakpoint (int3, or a 5-byte call where the
 * kernel optimizes uprobes) into its copy of the page when the event is
 * created and restores the original bytes when the last event on the site
 * is closed: vigil never writes to the target.
 *
 * Counting: the program adds 1 to counts[site] (an ARRAY map, atomic add),
 * and with per_thread to a HASH keyed by (site, tid).  Reading a count is
 * one map lookup; no ring is involved.
 *
 * Recording (latency, arguments, stacks): the program reserves one
 * struct vg_probe_record per hit in its CPU's BPF ring buffer
 * (BPF_MAP_TYPE_RINGBUF, one per online CPU), writes it there and submits
 * it.  A full ring loses records (counted exactly, in a map); counts stay
 * exact because they are counted in maps.
 *
 * Privilege: creating a uprobe PMU event needs CAP_SYS_ADMIN
 * (perf/uprobe.h); loading a kprobe-type program needs CAP_BPF +
 * CAP_PERFMON.  Refusals come back as -EPERM/-EACCES with the sentence
 * that says which. */
#ifndef VG_PROBE_BPF_H
#define VG_PROBE_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/uprobe.h"
#include "util/error.h"

/* The x86-64 user registers at the probe, in struct pt_regs order (the
 * kernel's layout for the uprobe's ctx). */
enum vg_probe_reg {
	VG_PR_R15 = 0, VG_PR_R14, VG_PR_R13, VG_PR_R12, VG_PR_BP, VG_PR_BX,
	VG_PR_R11, VG_PR_R10, VG_PR_R9, VG_PR_R8, VG_PR_AX, VG_PR_CX,
	VG_PR_DX, VG_PR_SI, VG_PR_DI, VG_PR_ORIG_AX, VG_PR_IP, VG_PR_CS,
	VG_PR_FLAGS, VG_PR_SP, VG_PR_SS,
	VG_PR_COUNT
};

enum vg_probe_record_kind {
	VG_PROBE_REC_ENTRY = 1,    /* the probed address was reached */
	VG_PROBE_REC_RETURN = 2,   /* the function of a return probe returned */
};

/* What a program writes (one ring buffer record; probe.bpf.c has the same
 * layout as struct record).  Its length is offsetof(stack) plus the
 * stack bytes the program found readable, so it may exceed
 * offsetof(stack) + stack_len when a piece could not be read after all. */
#define VG_BPF_MAX_MEM_ARGS 6

/* A usdt argument in memory: size bytes (1, 2, 4, 8; 0: not in memory)
 * at pt_regs word reg + disp. */
struct vg_bpf_mem_arg {
	uint32_t size;
	uint32_t reg;
	int64_t disp;
};

struct vg_probe_record {
	uint32_t kind;             /* enum vg_probe_record_kind */
	uint32_t site;             /* the site the program was built for */
	uint64_t pid_tgid;         /* tgid << 32 | tid (initial PID namespace) */
	uint64_t time_ns;          /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	uint64_t regs[VG_PR_COUNT];
	/* usdt arguments in memory: read at the hit (vg_bpf_mem_arg), 0 for
	 * the others or when the read failed. */
	uint64_t mem[VG_BPF_MAX_MEM_ARGS];
	uint32_t stack_len;        /* bytes of user stack copied at regs[SP] */
	uint32_t flags;            /* VG_PROBE_REC_DROPPED */
	uint8_t stack[];
};

/* An entry the filter dropped (flags): recorded only so that its return
 * pairs with it (--filter with --latency/--retval); never counted. */
#define VG_PROBE_REC_DROPPED 1u

/* libbpf's messages: perf/bpf_log.h (vg_bpf_libbpf_quiet). */

/* Maps shared by every program of one probe session. */
struct vg_bpf_counters;

/* n_sites counters; per_thread adds the (site, tid) hash, which holds at
 * most max_thread_entries pairs (hits of pairs beyond it are counted in
 * vg_bpf_counters_threads' *dropped, never lost from the site's total). */
int vg_bpf_counters_new(size_t n_sites, bool per_thread, size_t max_thread_entries,
			struct vg_bpf_counters **out, struct vg_error *err);
struct vg_bpf_counters *vg_bpf_counters_free(struct vg_bpf_counters *c);
/* Hits of site so far (exact). */
int vg_bpf_counters_read(const struct vg_bpf_counters *c, size_t site, uint64_t *calls,
			 struct vg_error *err);

/* Open or close the gate of every entry program built on c: closed (the
 * initial state) they neither count nor record.  Opening it after every
 * probe is attached, and closing it before any is detached, makes the
 * probes start and stop at one instant. */
int vg_bpf_counters_gate(const struct vg_bpf_counters *c, bool open, struct vg_error *err);
/* The same for return programs built with counters (their own gate, so
 * that returns of calls entered before the stop can still be recorded
 * after it, for a while). */
int vg_bpf_counters_gate_returns(const struct vg_bpf_counters *c, bool open, struct vg_error *err);

/* The exec gate: a raw tracepoint program (BPF_RAW_TRACEPOINT_OPEN) on
 * sched_process_exec that, when the exec is process tgid's, closes
 * both gates of c and stores the time (bpf_ktime_get_ns) in c: no entry
 * program counts a call of the new program, since the tracepoint fires in
 * the kernel's exec before the new program runs an instruction, and after
 * every other thread of the old one is gone.
 *
 * A raw tracepoint is attached to the tracepoint itself and runs for
 * every exec on every CPU; the program keeps the target's own execs,
 * comparing the tgid in vigil's PID namespace
 * (bpf_get_ns_current_pid_tgid, Linux 5.7) with tgid.  It needs CAP_BPF
 * and CAP_PERFMON, which the uprobes already need, and no tracefs.  Close
 * *fd to detach the program.
 *
 * Errors (the sentence says which): -EPERM/-EACCES (refused), -EINVAL
 * etc. (a verifier or kernel without the helper). */
int vg_bpf_exec_gate_open(const struct vg_bpf_counters *c, pid_t tgid, int *fd,
			  struct vg_error *err);
/* When the exec gate closed the gates (CLOCK_MONOTONIC ns), 0: not yet. */
int vg_bpf_counters_exec_ns(const struct vg_bpf_counters *c, uint64_t *ns, struct vg_error *err);

struct vg_bpf_thread_count {
	uint32_t site;
	uint32_t tid;              /* initial PID namespace */
	uint64_t calls;
};
/* Every (site, tid) pair counted so far, sorted by site then tid; *out is
 * malloc'ed (free it).  *dropped: hits not in any pair because the hash
 * was full (0 without per_thread). */
int vg_bpf_counters_threads(const struct vg_bpf_counters *c,
			    struct vg_bpf_thread_count **out, size_t *n,
			    uint64_t *dropped, struct vg_error *err);

/* The per-CPU output rings of the recording programs. */
struct vg_bpf_output;

/* One BPF ring buffer of data_pages (a power of two) per online CPU,
 * registered in an ARRAY_OF_MAPS by CPU number, and the lost-record
 * counter.  Sizing: a record is 208 bytes in the ring without stack
 * bytes, 1232 with 1024 (8 of ring header); at ~40000 hits/s, 256 pages
 * drained every 20 ms lose about a quarter of the 1024-stack records
 * (seen with the perf rings of the same size): poll the fds, or give
 * stacks more pages. */
int vg_bpf_output_new(size_t data_pages, struct vg_bpf_output **out, struct vg_error *err);
struct vg_bpf_output *vg_bpf_output_free(struct vg_bpf_output *o);

/* One fd per ring for poll(2): POLLIN once the ring is a quarter full
 * (an epoll fd holding the ring edge-triggered: a ring buffer's own fd
 * polls readable whenever it holds a byte). */
const int *vg_bpf_output_fds(const struct vg_bpf_output *o, size_t *n);

/* Hand every record with time_ns <= until to fn in time order across all
 * CPUs (so a thread that moved between CPUs is seen in its own order);
 * newer records wait for the next call (a CPU drained early may still get
 * older ones than a CPU drained late): pass the CLOCK_MONOTONIC time taken
 * before the call, or UINT64_MAX at the end.  len is the payload size;
 * records shorter than offsetof(struct vg_probe_record, stack), or whose
 * stack_len does not fit in len, are counted as malformed, not handed out.
 * r is 8-aligned and valid during the call only; fn must not drain o.
 * Returns the number handed out. */
typedef void (*vg_bpf_record_fn)(const struct vg_probe_record *r, size_t len, void *arg);
size_t vg_bpf_output_drain(struct vg_bpf_output *o, uint64_t until, vg_bpf_record_fn fn,
			   void *arg);

struct vg_bpf_output_stats {
	uint64_t records;          /* handed out */
	/* Records the programs could not write (ring full), all CPUs,
	 * counted by the programs in a map: exact at any time. */
	uint64_t lost;
	uint64_t malformed;
	uint64_t dropped_nomem;    /* could not be queued for ordering */
};
void vg_bpf_output_stats(const struct vg_bpf_output *o, struct vg_bpf_output_stats *st);

/* One program: counts the hit (counts[site], and the per-thread hash when
 * the counters have it; c may be NULL when spec->count is false) and,
 * when output is non-NULL, writes a record of
 * kind with the registers and up to stack_bytes of user stack (0, or a
 * multiple of 512 up to 16384; copied in 512-byte pieces, stopping at the
 * first piece that cannot be read, so a stack top closer than stack_bytes
 * gives a shorter copy).  A return program (kind RETURN) only records (the
 * entry counted the call).  *prog_fd: close it after attaching.
 * -EPERM: not allowed to load (the sentence says CAP_BPF);
 * -EINVAL etc.: the verifier refused (its log's last line in the
 * sentence; a verifier EACCES, a bad memory access, becomes -EPROTO so
 * that it is not mistaken for a missing privilege). */
/* One comparison of --filter, as the entry program evaluates it: the
 * argument register reg (0-5: rdi rsi rdx rcx r8 r9), truncated to bits (sign-extended when is_signed),
 * op value.  The layout of probe.bpf.c's struct filter_term. */
enum vg_filter_op { VG_FILTER_EQ, VG_FILTER_NE, VG_FILTER_LT, VG_FILTER_LE, VG_FILTER_GT, VG_FILTER_GE };
#define VG_BPF_FILTER_MAX_TERMS 4
struct vg_bpf_filter_term {
	uint32_t reg;
	uint32_t bits;
	uint32_t is_signed;
	uint32_t op;
	uint64_t value;
};

struct vg_bpf_prog_spec {
	uint32_t site;
	enum vg_probe_record_kind kind;
	bool count;                /* false for RETURN */
	uint32_t stack_bytes;
	/* Entry programs with a filter: every call adds 1 to counts[all_slot],
	 * only those the terms hold for go on. */
	const struct vg_bpf_filter_term *terms;
	uint32_t n_terms;
	uint32_t all_slot;
	/* Record the calls the terms drop too, marked VG_PROBE_REC_DROPPED
	 * (a return probe pairs with them). */
	bool record_dropped;
	/* usdt: the arguments read from memory at each hit (record's mem). */
	struct vg_bpf_mem_arg mem[VG_BPF_MAX_MEM_ARGS];
};
int vg_bpf_prog_load(const struct vg_bpf_prog_spec *spec, const struct vg_bpf_counters *c,
		     const struct vg_bpf_output *output, int *prog_fd, struct vg_error *err);

#endif
