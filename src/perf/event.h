/* event.h - perf events on every thread of one process, one ring per CPU,
 * and no window for threads created later.
 *
 * Layout (what `perf record -p` does): each logical event (a "slot": one
 * watched address, one sampling clock) is opened once per (thread, CPU)
 * with inherit=1, and every event of a CPU writes into that CPU's ring
 * through PERF_EVENT_IOC_SET_OUTPUT.  Per-task events opened with cpu=-1
 * cannot be inherited and mmapped at once (EINVAL), hence per CPU.
 *
 * Coverage: inherit=1 covers every thread created *after* the event exists
 * on its creator, from its first instruction.  A thread created during
 * setup by a thread not yet attached is not; so after the seed threads
 * (/proc/PID/task) are attached, the task list is read again until a scan
 * finds no thread that is neither attached nor announced by a
 * PERF_RECORD_FORK of an attached one (those inherited: attaching them
 * again would count each write twice).  Setup ends with that stable scan;
 * from then on every thread of the process is covered.  The window left:
 * a thread created during setup by an unattached thread runs unobserved
 * until its rescan (it is reported, "attached_on_rescan").  Samples taken
 * before setup ended are delivered with before_start set.
 *
 * inherit_thread=1: a fork()ed child process does not inherit (its
 * writes are to its own copy of memory); samples whose pid is not the
 * target's are still checked and counted as excluded.
 *
 * A thread created by a thread whose events were still being opened (one
 * CPU's done, the next not yet) inherited only some of them: its FORK is
 * no proof of coverage.  It counts as inherited only when its creator was
 * fully attached at the fork's time; otherwise the rescan attaches it.
 *
 * The process tree: slot 0 also asks for PERF_RECORD_COMM with the exec
 * flag (comm_exec) and its FORK records name every child process the
 * process creates (pid != the target's, ppid == it).  An exec replaces the
 * program under every event: the set records it (stats.exec_ns), and
 * samples taken after it are not delivered (stats.after_exec): they are
 * of another program, at addresses the consumer's images do not describe.
 * With the ordered drain that cut is exact; the per-ring drain may deliver
 * samples of the new program read from a ring before the COMM record.
 * Child processes are counted (stats.children), never observed.
 *
 * Duplicate guard: if one thread is covered by two sources on one CPU
 * anyway (a partial inheritance, or a FORK record that raced with the
 * rescan), only the first source's samples count for that (thread, slot,
 * CPU); the others are counted as duplicates. */
#ifndef VG_EVENT_H
#define VG_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "perf/records.h"
#include "target/target.h"
#include "util/error.h"

enum vg_cover_how {
	VG_COVER_SEEDED = 0,       /* "seeded": in /proc/PID/task at the start */
	VG_COVER_INHERITED,        /* "inherited": created by a covered thread (FORK record) */
	VG_COVER_RESCAN,           /* "attached_on_rescan": found by a rescan during setup */
	VG_COVER_NONE,             /* "not_covered": created after setup, events not inherited */
};

struct vg_cover_tid {
	pid_t tid;
	enum vg_cover_how how;
	pid_t parent;              /* INHERITED: the creating thread */
	bool exited;               /* an EXIT record or ESRCH during setup */
	/* From when every event of every slot exists on it (0: not yet):
	 * a thread created by it earlier inherited only some of them. */
	uint64_t full_ns;
};

#define VG_PERF_MAX_CHILDREN 64

struct vg_perf_stats {
	uint64_t samples;          /* delivered to the consumer */
	uint64_t before_start;     /* of those, taken before setup ended */
	uint64_t lost;             /* PERF_RECORD_LOST sums */
	uint64_t lost_records;     /* how many LOST records */
	uint64_t throttled;        /* THROTTLE records */
	uint64_t undecodable;      /* records that did not parse, or unknown ids */
	uint64_t other_process;    /* samples of another pid: excluded */
	uint64_t duplicates;       /* duplicate-guard drops */
	unsigned rescans;          /* task-list scans during setup */
	unsigned exited_during_setup;
	/* The first exec() of the process (PERF_RECORD_COMM, exec flag):
	 * its time (0: none), the new program's comm, and the samples taken
	 * after it, which are not delivered. */
	uint64_t exec_ns;
	char exec_comm[16];
	uint64_t after_exec;
	/* Child processes it created (FORK records with another pid),
	 * distinct pids, not observed; the first VG_PERF_MAX_CHILDREN. */
	uint64_t children;
	pid_t child_pids[VG_PERF_MAX_CHILDREN];
};

/* One delivered sample, with what the set knows about its event. */
struct vg_perf_hit {
	const struct vg_perf_sample *sample;
	unsigned slot;
	int cpu;
	bool before_start;
};

/* The consumer: samples, and FORK/EXIT for its own bookkeeping.  other
 * (may be NULL) gets every record the set does not handle itself (MMAP2,
 * COMM, ...), raw, with the pid filter left to the consumer. */
struct vg_perf_consumer {
	void (*sample)(const struct vg_perf_hit *hit, void *arg);
	void (*task)(const struct perf_event_header *h, const struct vg_perf_task *t, void *arg);
	void *arg;
	void (*other)(const struct perf_event_header *h, void *arg);
};

struct vg_perf_set;

/* pid: the process (tgid).  data_pages per CPU ring (power of two). */
int vg_perf_set_new(const struct vg_target *t, size_t data_pages,
		    struct vg_perf_set **out, struct vg_error *err);
/* Closes every event (the kernel removes breakpoints and probes), unmaps. */
struct vg_perf_set *vg_perf_set_free(struct vg_perf_set *s);

/* Add a logical event; the set fills in inherit, inherit_thread,
 * sample_id_all, use_clockid (CLOCK_MONOTONIC) and the IDENTIFIER|TID|TIME
 * sample bits, and task=1 on slot 0 (FORK/EXIT records).  Returns the
 * slot index (>= 0) or a negative errno (-EINVAL: a sample bit the
 * decoder does not know).  Before vg_perf_set_attach only. */
int vg_perf_set_add(struct vg_perf_set *s, const struct perf_event_attr *attr,
		    struct vg_error *err);

/* Events added from now on are not inherited: threads created after setup
 * are then NOT covered (FORK records list them as "not_covered").  Only
 * for events whose inheritance the kernel mishandles: a uprobe PMU event
 * opened on another process re-reads its config1 path pointer when it is
 * inherited, in the cloning target's address space, so the target's
 * clone() fails with EFAULT (seen here on 6.18: pthread_create returns
 * "Bad address").  Watch's uprobe emulation attaches existing threads only. */
void vg_perf_set_no_inherit(struct vg_perf_set *s);

/* Open every slot on every thread x CPU and rescan until coverage is
 * stable, delivering records that arrive meanwhile to c.  Failures:
 * -ENOSPC (debug registers exhausted: the sentence says how many slots
 * this thread already uses), -EACCES/-EPERM (with perf_event_paranoid
 * advice), -ESRCH (the process exited), or the first open error when not
 * a single event opened.  Threads that exit during setup are not errors. */
int vg_perf_set_attach(struct vg_perf_set *s, const struct vg_perf_consumer *c,
		       struct vg_error *err);

/* Wait until a ring has data (watermark or wakeup), one of the n_extra
 * (<= 8) extra fds is ready (their revents are filled in), or timeout_ms.
 * Returns >0 if something is ready, 0 on timeout, -EINTR when a signal
 * interrupted. */
struct pollfd;
int vg_perf_set_wait(struct vg_perf_set *s, struct pollfd *extra, size_t n_extra,
		     int timeout_ms);

/* Drain every ring into c, ring after ring: within a ring records come in
 * time order, across rings not.  Returns records handled. */
size_t vg_perf_set_drain(struct vg_perf_set *s, const struct vg_perf_consumer *c);
/* The same in time order across all rings (records copied out and sorted):
 * for consumers whose answer depends on order, e.g. "the first N hits"
 * when a thread moved between CPUs.  Records newer than until (taken
 * before the call: a CPU drained early may still get older ones than a
 * CPU drained late) wait for the next call; UINT64_MAX hands out all.
 * Costs a copy of every record, except when one ring alone has records
 * and none wait from an earlier call (one busy thread): handed out in
 * place. */
size_t vg_perf_set_drain_ordered(struct vg_perf_set *s, const struct vg_perf_consumer *c,
				 uint64_t until);

/* Change slot's attr (bp_addr, bp_len, bp_type) on every event of it,
 * children included: PERF_EVENT_IOC_MODIFY_ATTRIBUTES.  -EOPNOTSUPP etc.
 * when the kernel refuses (the caller may then close and reopen). */
int vg_perf_set_modify(struct vg_perf_set *s, unsigned slot,
		       const struct perf_event_attr *attr, struct vg_error *err);

/* Enable or disable every event (children too). */
int vg_perf_set_enable(struct vg_perf_set *s, bool on);

const struct vg_perf_stats *vg_perf_set_stats(const struct vg_perf_set *s);
/* The ring fds (one per CPU, -1 where none), for a caller that polls
 * them in its own loop; *n is the number of CPUs. */
const int *vg_perf_set_ring_fds(const struct vg_perf_set *s, size_t *n);

/* The child processes counted in stats.children (the first
 * VG_PERF_MAX_CHILDREN of them, stats.child_pids), in the order their
 * FORK was read. */
const pid_t *vg_perf_set_children(const struct vg_perf_set *s, size_t *n);
/* Coverage so far: every thread seen, in the order first covered. */
const struct vg_cover_tid *vg_perf_set_threads(const struct vg_perf_set *s, size_t *n);
/* The time (same clock as samples) setup ended, and CPUs in use. */
uint64_t vg_perf_set_start_time(const struct vg_perf_set *s);
int vg_perf_set_ncpus(const struct vg_perf_set *s);
/* How many fds are open (threads x CPUs x slots). */
size_t vg_perf_set_nevents(const struct vg_perf_set *s);

const char *vg_cover_how_name(enum vg_cover_how h);

/* CLOCK_MONOTONIC now, in ns: the clock of every sample. */
uint64_t vg_perf_now(void);

#endif
