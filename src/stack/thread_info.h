/* thread_info.h - what /proc says of one thread, read without stopping it.
 *
 * Name (comm), scheduler state, CPU time, the system call the thread is in
 * (/proc/TID/syscall), its kernel stack (/proc/TID/stack, root only) and
 * its context-switch counts, which change whenever the thread ran: two
 * reads with equal counts bracket a time the thread did not move.  The
 * parsers are pure functions over a buffer (fuzzed by
 * tests/fuzz/fuzz_thread_info.c); vg_thread_info_read does the I/O. */
#ifndef VG_STACK_THREAD_INFO_H
#define VG_STACK_THREAD_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/target.h"
#include "util/error.h"

/* /proc/TID/syscall: one of three shapes. */
enum vg_syscall_state {
	VG_SYSCALL_UNKNOWN = 0, /* not read (or unreadable: see the error) */
	VG_SYSCALL_RUNNING,     /* "running": on a CPU, no registers */
	VG_SYSCALL_NONE,        /* "-1 SP PC": blocked outside a system call
	                         * (page fault, stopped, preempted in user) */
	VG_SYSCALL_IN,          /* "NR A0..A5 SP PC": inside system call NR */
};

struct vg_thread_syscall {
	enum vg_syscall_state state;
	long nr;                /* VG_SYSCALL_IN: the number; else -1 */
	uint64_t args[6];       /* VG_SYSCALL_IN only */
	uint64_t sp, pc;        /* VG_SYSCALL_NONE and VG_SYSCALL_IN */
};

/* Parse the text of /proc/TID/syscall (len bytes, need not be NUL-ended).
 * Returns 0 or -EINVAL for anything else (out is then UNKNOWN). */
int vg_thread_syscall_parse(const char *buf, size_t len, struct vg_thread_syscall *out);

/* The lines of /proc/TID/status a caller needs. */
struct vg_thread_status {
	char state;                 /* "State:" letter, '\0' if absent */
	uint64_t voluntary_ctxt;    /* voluntary_ctxt_switches */
	uint64_t nonvoluntary_ctxt; /* nonvoluntary_ctxt_switches */
	bool has_ctxt;              /* both counts were present */
};

/* Parse /proc/TID/status text.  Returns 0 (missing lines leave their
 * fields zero) or -EINVAL if no line at all has the "Key:" shape. */
int vg_thread_status_parse(const char *buf, size_t len, struct vg_thread_status *out);

/* Read and parse /proc/PID/task/TID/status of t's thread tid.  Returns
 * 0, or -errno (-ENOENT/-ESRCH: gone). */
int vg_thread_status_read(const struct vg_target *t, pid_t tid, struct vg_thread_status *out);

/* One line of /proc/TID/stack: "[<0>] futex_wait_queue+0x6a/0xb0".  The
 * address is zero unless the reader may see kernel pointers; the function
 * and offset are what matters. */
struct vg_kernel_frame {
	uint64_t addr;
	char function[128];         /* "futex_wait_queue", may carry " [module]" */
	uint64_t offset, size;      /* +0x6a/0xb0; both 0 when absent */
};

/* Parse /proc/TID/stack text into at most max frames (innermost first).
 * Returns the number parsed (lines that do not parse are skipped; a
 * truncated last line is dropped), never an error. */
size_t vg_kernel_stack_parse(const char *buf, size_t len, struct vg_kernel_frame *frames,
			     size_t max);

#define VG_KERNEL_STACK_MAX 64

struct vg_thread_info {
	pid_t tid;
	char name[64];              /* /proc/TID/comm without the newline */
	char state;                 /* R S D T t Z X I P (stat field 3) */
	uint64_t user_ns, system_ns;/* CPU time (clock ticks converted) */
	struct vg_thread_syscall syscall;
	int syscall_error;          /* 0, or -errno reading /proc/TID/syscall */
	struct vg_thread_status status;

	/* Kernel stack, innermost first: n_kernel frames when kernel_error is
	 * 0.  Otherwise kernel_error is -errno and kernel_why the sentence
	 * ("needs CAP_SYS_ADMIN", "not asked for").  A thread on a CPU has an
	 * empty kernel stack: the kernel only walks a task that is off-CPU. */
	struct vg_kernel_frame kernel[VG_KERNEL_STACK_MAX];
	size_t n_kernel;
	int kernel_error;
	char kernel_why[96];
};

/* Read everything above for thread tid of t.  with_kernel_stack false
 * skips /proc/TID/stack (kernel_error -ENODATA, "not asked for").
 * Returns 0; -ESRCH when the thread is gone (err says so); -EACCES/-EPERM
 * when its stat or status is unreadable.  A missing syscall file or
 * kernel stack is not an error: the field says why. */
int vg_thread_info_read(const struct vg_target *t, pid_t tid, bool with_kernel_stack,
			struct vg_thread_info *out, struct vg_error *err);

/* "running", "sleeping", "disk sleep", "stopped", "tracing stop",
 * "zombie", "dead", "idle", "parked", "waking", "wakekill"; "unknown"
 * for any other letter. */
const char *vg_thread_state_name(char state);

/* Whether the thread ran between two reads of it: its context-switch
 * counts, CPU time or system call differ, or either read saw it running.
 * A caller that copied the stack between the two reads keeps the copy
 * only when this is false. */
bool vg_thread_info_moved(const struct vg_thread_info *before,
			  const struct vg_thread_info *after);

#endif
