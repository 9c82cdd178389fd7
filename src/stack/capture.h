/* capture.h - the user stack of every thread of a live process, without
 * stopping any: registers and a copy of the top of the stack per thread,
 * unwound by the shared unwinder (unwind/unwind.h, CFI).
 *
 * How each thread's registers are obtained (enum vg_stack_how):
 *
 *   task_iter     a thread off the CPU (blocked in a system call, or
 *                 preempted): a sleepable BPF task iterator
 *                 (task_regs.bpf.c) reads the user registers the kernel
 *                 saved at its last kernel entry (bpf_task_pt_regs) and
 *                 copies the top of its stack in the same pass; the
 *                 thread's on-CPU flag and context-switch counts, read
 *                 before and after, prove it did not run meanwhile.
 *   perf_sample   a thread running on a CPU: one sampled perf event
 *                 (task clock, user registers + stack copy) opened on it,
 *                 its first sample taken, closed.  The sample is one
 *                 observation, taken by the kernel in an interrupt.
 *   proc_syscall  neither BPF nor perf allowed: pc and sp from
 *                 /proc/TID/syscall, the stack by process_vm_readv.  A
 *                 frame whose CFA needs rbp cannot be unwound from that:
 *                 the walk may stop early (missing_register).
 *   none          nothing could be read; why says what.
 *
 * moved: the thread ran between its registers and its stack copy (or the
 * state check after them); it is read once more, and flagged only if it
 * moved again.  Nothing here writes to the target or stops it: no ptrace,
 * no signal. */
#ifndef VG_STACK_CAPTURE_H
#define VG_STACK_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "stack/thread_info.h"
#include "target/maps.h"
#include "target/target.h"
#include "unwind/cfi.h"
#include "unwind/regs.h"
#include "util/error.h"

enum vg_stack_how {
	VG_STACK_NONE = 0,        /* "none" */
	VG_STACK_TASK_ITER,       /* "task_iter" */
	VG_STACK_PERF_SAMPLE,     /* "perf_sample" */
	VG_STACK_PROC_SYSCALL,    /* "proc_syscall" */
};

#define VG_STACK_MAX_FRAMES 128
/* The most bytes of stack unwound per thread. */
#define VG_STACK_MAX_COPY 65536u
/* How long a running thread is given to produce its perf sample. */
#define VG_STACK_PERF_WAIT_MS 20

struct vg_thread_stack {
	pid_t tid;
	enum vg_stack_how how;
	/* how NONE: why nothing was read; otherwise why the walk is
	 * incomplete, or "" */
	char why[256];
	struct vg_regs regs;          /* as obtained (mask: which are known) */
	size_t stack_bytes;           /* bytes of stack copied at SP */
	/* The copy ended at the size limit, not at the end of the stack's
	 * mapping (a walk that needs more stops as stack_end). */
	bool stack_truncated;
	uint64_t ips[VG_STACK_MAX_FRAMES];
	bool exact[VG_STACK_MAX_FRAMES];   /* look ips[i] up at ips[i], not ips[i] - 1 */
	size_t n;
	enum vg_unwind_stop stop;
	bool complete;                /* the walk reached the outermost frame */
	/* The state at the read: R (on a CPU or runnable), S, D, T, t, I,
	 * from the kernel's task state (task_iter), R for a perf sample, the
	 * /proc/TID/status letter (proc_syscall); 0 unknown. */
	char state;
	bool reread;                  /* moved once, read again */
	bool moved;                   /* moved again on the second read: flagged */
	/* The system call at the moment of the registers, so that what a
	 * thread waits for and its frames agree: task_iter from the saved
	 * orig_ax and argument registers (orig_ax -1: not in one, as
	 * /proc/TID/syscall decides), perf_sample RUNNING, proc_syscall the
	 * line read; UNKNOWN when nothing was read. */
	struct vg_thread_syscall syscall;
};

/* Which ways may be used: all by default; VIGIL_STACK_METHODS (a comma
 * list of task_iter, perf_sample, proc_syscall) restricts them, so tests
 * can exercise each. */
#define VG_STACK_USE_ITER (1u << 0)
#define VG_STACK_USE_PERF (1u << 1)
#define VG_STACK_USE_PROC (1u << 2)
#define VG_STACK_USE_ALL (VG_STACK_USE_ITER | VG_STACK_USE_PERF | VG_STACK_USE_PROC)

struct vg_stack_capture;

/* t, maps and images are borrowed and must outlive the capture (maps
 * name the end of each stack mapping; images are the unwinder's).  Loads
 * the task iterator here (a refusal is not an error: it is noted, see
 * vg_stack_capture_notes, and those threads fall back).  Returns 0,
 * -ENOMEM, or -EINVAL for a bad VIGIL_STACK_METHODS. */
int vg_stack_capture_new(struct vg_target *t, const struct vg_maps *maps,
			 const struct vg_images *images, struct vg_stack_capture **out,
			 struct vg_error *err);
struct vg_stack_capture *vg_stack_capture_free(struct vg_stack_capture *c);

/* One snapshot of the n threads tids (out has n entries, filled in the
 * same order).  A thread that is gone is how NONE with why "exited".
 * Returns 0, -ESRCH (the process is gone), -ENOMEM. */
int vg_stack_capture_take(struct vg_stack_capture *c, const pid_t *tids, size_t n,
			  struct vg_thread_stack *out, struct vg_error *err);

/* Why a way was not available (the task iterator refused, perf refused),
 * one sentence each, NULL-terminated, borrowed. */
const char *const *vg_stack_capture_notes(const struct vg_stack_capture *c);

/* "task_iter", ...  */
const char *vg_stack_how_name(enum vg_stack_how how);

#endif
