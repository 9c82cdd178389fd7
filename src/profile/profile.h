/* profile.h - where a live process spends its time: a sampling clock on
 * every thread (the perf layer's no-window coverage), each sample's user
 * and kernel stack symbolized with inline frames and aggregated in a stack
 * trie (stacks.h) while sampling, so the report is ready at the stop.
 *
 * User stacks: by frame pointers (the kernel's callchain, --unwind fp) or
 * by CFI (--unwind dwarf: the sampled registers and a copy of the top of
 * the stack, unwound in vigil by unwind.c and then dropped: nothing of the
 * copy is stored).  Kernel stacks come from the kernel's callchain.
 *
 * Every distinct address is symbolized once, when first seen: an address
 * of a library that is dlclose'd later still has its name.  An exec
 * MMAP2 record of the target (a dlopen) refreshes the symbolizer's images
 * at once, so the first samples in a new library are named. */
#ifndef VG_PROFILE_H
#define VG_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/event.h"
#include "perf/observe.h"
#include "stacktrie/stacks.h"
#include "sym/symbolizer.h"
#include "target/target.h"
#include "util/error.h"

enum vg_unwind_mode {
	VG_UNWIND_MODE_FP,      /* "fp" */
	VG_UNWIND_MODE_DWARF,   /* "dwarf" */
};

#define VG_PROFILE_MAX_TIDS 64

struct vg_profile_opts {
	const char *event;            /* "cpu-clock" (default), "task-clock", "cycles", "instructions" */
	uint64_t freq;                /* samples per second per thread (default 999) */
	uint64_t duration_ms;         /* 0: until stopped */
	enum vg_unwind_mode unwind;
	bool no_kernel;               /* no kernel frames */
	uint32_t stack_bytes;         /* dwarf: user stack bytes copied (default 8192) */
	pid_t tids[VG_PROFILE_MAX_TIDS];  /* --tid: only these threads (0 entries: all) */
	size_t n_tids;
};


/* How user stacks ended, per sample (dwarf), and other facts a reader
 * needs to judge the stacks. */
struct vg_profile_stats {
	uint64_t samples;             /* added to the trie */
	uint64_t samples_other_tid;   /* of threads not asked for (--tid) */
	uint64_t samples_after_stop;  /* taken after --duration ended (a slow drain): left out */
	uint64_t samples_before_start; /* taken during setup, before every thread was covered: left out */
	uint64_t samples_kernel_only; /* no user stack (a kernel thread's sample) */
	uint64_t unwind_stop[8];      /* dwarf: by enum vg_unwind_stop */
	uint64_t addresses;           /* distinct addresses symbolized */
	uint64_t refreshes;           /* symbolizer refreshes after an exec mmap */
	uint64_t max_frames_hit;      /* kernel callchains (and fp user ones) cut at the frame limit */
};

struct vg_profile;

/* t and sym are borrowed and must outlive p.  Validates opts (-EINVAL
 * with a sentence); opens nothing yet. */
int vg_profile_new(struct vg_target *t, struct vg_symbolizer *sym,
		   const struct vg_profile_opts *opts, struct vg_profile **out,
		   struct vg_error *err);
struct vg_profile *vg_profile_free(struct vg_profile *p);

/* Open the sampling events on every thread (and threads created later).
 * -ENOENT: the event does not exist here (no hardware PMU for cycles);
 * -EACCES/-EPERM with the perf_event_paranoid advice; -ESRCH. */
int vg_profile_start(struct vg_profile *p, struct vg_error *err);

/* Sample until the duration, a readable stop_fd (a signalfd: consumed),
 * or the target's exit; progress (may be NULL) about once a second. */
int vg_profile_run(struct vg_profile *p, int stop_fd,
		   void (*progress)(const struct vg_profile *p, void *arg),
		   void *arg, struct vg_error *err);

/* Several processes in one run (profile -p A,B), each profile started:
 * one loop drains every profile's rings; a process that exits (or
 * exec's) ends its own profile there (its stop reason and end time; its
 * events closed, as vg_profile_stop), the others go on.  The run stops
 * at the duration (counted from the latest start: every process covered),
 * a readable stop_fd, or when the last process ended; each profile still
 * running then gets that stop.  Not with periods.  progress (may be
 * NULL) about once a second.  vg_profile_stop each afterwards. */
int vg_profile_run_all(struct vg_profile **ps, size_t n, int stop_fd,
		       void (*progress)(void *arg), void *arg, struct vg_error *err);

/* Continuous mode, set before run: every period_ns of sampling (from the
 * start), fn gets the trie of the period [start_ns, end_ns) that ended
 * (vg_perf_now's clock), complete and symbolized, and the profile goes on
 * into a new trie without closing its events, so nothing between two
 * periods is missed.  A sample belongs to the period of its own
 * timestamp as far as the rings' order allows (a sample read from
 * another CPU's ring after the boundary goes to the next period).  s is
 * borrowed for the call and freed after it.  The last, partial period is
 * vg_profile_stacks after vg_profile_stop, from
 * vg_profile_period_start_ns to vg_profile_end_ns. */
typedef void vg_profile_period_fn(struct vg_profile *p, struct vg_stacks *s,
				  uint64_t start_ns, uint64_t end_ns, void *arg);
void vg_profile_set_period(struct vg_profile *p, uint64_t period_ns,
			   vg_profile_period_fn *fn, void *arg);
/* Start of the current period (of the profile without one). */
uint64_t vg_profile_period_start_ns(const struct vg_profile *p);

/* After run: events closed, the trie complete. */
void vg_profile_stop(struct vg_profile *p);

struct vg_stacks *vg_profile_stacks(const struct vg_profile *p);
const struct vg_profile_stats *vg_profile_stats(const struct vg_profile *p);
const struct vg_perf_stats *vg_profile_perf_stats(const struct vg_profile *p);
const struct vg_cover_tid *vg_profile_threads(const struct vg_profile *p, size_t *n);
enum vg_stop vg_profile_stop_reason(const struct vg_profile *p);
const char *vg_unwind_mode_name(enum vg_unwind_mode m);
/* Wall time sampled, ns (start of sampling to stop). */
uint64_t vg_profile_duration_ns(const struct vg_profile *p);
uint64_t vg_profile_start_ns(const struct vg_profile *p);
/* The stop time (same clock as vg_perf_now). */
uint64_t vg_profile_end_ns(const struct vg_profile *p);
/* Whether kernel frames are in the stacks; if not, why (one sentence). */
bool vg_profile_kernel_shown(const struct vg_profile *p, const char **why);
/* The event actually used and the sample period in ns one sample stands
 * for (cpu-clock/task-clock at freq: 1e9 / freq; 0 for counting events). */
const char *vg_profile_event(const struct vg_profile *p);
uint64_t vg_profile_freq(const struct vg_profile *p);
enum vg_unwind_mode vg_profile_unwind(const struct vg_profile *p);

#endif
