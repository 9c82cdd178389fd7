/* target.h - one attached process, identified by PID + start time.
 *
 * Attaching never stops the target: it reads /proc/PID/stat and status only.
 * The identity (pid, starttime field 22 of /proc/PID/stat) is re-checked by
 * vg_target_recheck() so that a PID reused by another process is reported as
 * changed, never silently observed.  Paths of the target are resolved in its
 * mount namespace through /proc/PID/root. */
#ifndef VG_TARGET_H
#define VG_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define VG_TARGET_MAX_WARNINGS 16

struct vg_target {
	pid_t pid;                    /* thread-group id actually observed */
	/* The task whose memory map is the process's: pid itself, or a live
	 * thread when the main thread has exited (pthread_exit in main): the
	 * leader then has no mm, so /proc/PID/mem, process_vm_readv(PID) and
	 * /proc/PID/root fail while /proc/TID/... still work. */
	pid_t mm_pid;
	pid_t requested;              /* what the user gave (a TID resolves to its pid) */
	unsigned long long starttime; /* field 22 of /proc/PID/stat, clock ticks */
	char comm[64];
	/* An observer saw the process call exec(): same pid and start time,
	 * another program.  The report's process_changed is then true. */
	bool exec_seen;
	/* Warnings collected while observing, reported in every JSON header. */
	char *warnings[VG_TARGET_MAX_WARNINGS];
	size_t n_warnings;
};

/* Attach to pid (or to the process of thread pid).  Returns 0, or
 * -ESRCH (no such process), -EACCES/-EPERM, -EINVAL (pid <= 0).
 * On success *out is owned by the caller: vg_target_free(). */
int vg_target_open(pid_t pid, struct vg_target **out, struct vg_error *err);
struct vg_target *vg_target_free(struct vg_target *t);

/* Re-check the identity: *alive is false if the pid no longer exists (or is a
 * zombie), *changed is true if the pid now belongs to another process. */
void vg_target_recheck(const struct vg_target *t, bool *alive, bool *changed);

/* After a failed operation: return -ESRCH with a sentence if the target has
 * exited or changed meanwhile, otherwise return code unchanged.  Lets callers
 * turn a late EFAULT/ENOENT into the real reason ("pid 42 exited"). */
int vg_target_explain(const struct vg_target *t, int code, struct vg_error *err);

/* A pidfd of the target (readable when it exits), or -1 when the kernel
 * has none or /proc is not vigil's PID namespace (the pid would name
 * another process).  Callers then poll vg_target_recheck instead. */
int vg_target_pidfd(const struct vg_target *t);

/* Thread ids from /proc/PID/task, sorted ascending.  *tids is malloc'ed. */
int vg_target_threads(const struct vg_target *t, pid_t **tids, size_t *n,
		      struct vg_error *err);

/* Append a warning (formatted).  Past VG_TARGET_MAX_WARNINGS - 1, the last
 * slot says that more were dropped, and later ones are dropped. */
void vg_target_warn(struct vg_target *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Whether /proc shows vigil's own PID namespace.  When it does not (vigil
 * in a child namespace with the host's /proc mounted), pids read from /proc
 * mean other processes to pid-taking syscalls (process_vm_readv,
 * pidfd_open): only /proc files may be used then. */
bool vg_proc_is_own_pidns(void);

/* The sentence for EPERM/EACCES on `what` ("memory", "/proc/PID/maps") of
 * pid, with the remedy that fits who we are: as root, the missing piece is
 * CAP_SYS_PTRACE over the target; otherwise root, the target's user, and
 * the yama ptrace_scope when set.  Returns code (-EPERM or -EACCES). */
int vg_error_denied(struct vg_error *err, int code, pid_t pid, const char *what);

/* The sentence for a failed open or read of a /proc file of pid (`what`,
 * e.g. "/proc/PID/maps") with errno e (positive): ENOENT/ESRCH -> -ESRCH
 * "does not exist or has exited", EACCES/EPERM -> vg_error_denied, anything
 * else -> -e.  One voice for maps.c, procmap.c and target.c. */
int vg_error_proc(struct vg_error *err, int e, pid_t pid, const char *what);

/* "/proc/MM_PID/<rest>" into buf (the task holding the memory map, see
 * mm_pid: /proc/TID/ offers the same files as /proc/PID/); returns buf. */
char *vg_target_proc_path(const struct vg_target *t, char *buf, size_t size,
			  const char *rest);

/* Open path (a file of the target: /proc/PID/root/..., map_files/...,
 * exe) read-only, but only if it is the mapped file: a regular file on
 * device dev_major:dev_minor with that inode.  It is first reached with
 * O_PATH, so whatever the target put at the path (a FIFO, a symlink to a
 * device) is never opened for real.  Returns the fd (O_CLOEXEC), -errno of
 * open(), or -ESTALE if the path names another file (replaced on upgrade). */
int vg_proc_open_file(const char *path, uint32_t dev_major, uint32_t dev_minor,
		      uint64_t inode);

/* What /proc/PID/stat says of one task. */
struct vg_proc_stat {
	char comm[64];
	char state;                   /* field 3: R S D Z X ... */
	unsigned long flags;          /* field 9: PF_* task flags */
	unsigned long long utime;     /* field 14: user CPU time, clock ticks */
	unsigned long long stime;     /* field 15: system CPU time, clock ticks */
	unsigned long long starttime; /* field 22, clock ticks since boot */
};

#define VG_PF_EXITING 0x00000004UL  /* include/linux/sched.h */
#define VG_PF_KTHREAD 0x00200000UL

/* Parse a /proc/PID/stat line (comm may contain spaces and ')').  Returns
 * 0 or -EINVAL.  Exposed for unit tests. */
int vg_proc_stat_parse(const char *line, struct vg_proc_stat *st);
/* Read and parse /proc/PID/stat: 0, -ESRCH (gone), -EACCES, -EINVAL. */
int vg_proc_stat_read(pid_t pid, struct vg_proc_stat *st);

/* Whose memory map answers for process pid (stateless; maps.c, procmap.c
 * and target.c share it). */
enum vg_mm_holder {
	VG_MM_LEADER,    /* the main thread: use pid */
	VG_MM_THREAD,    /* the main thread exited: *tid is a live thread */
	VG_MM_KTHREAD,   /* a kernel thread: no user memory at all */
	VG_MM_GONE,      /* exited, or exiting (all threads PF_EXITING) */
};
enum vg_mm_holder vg_proc_mm_holder(pid_t pid, pid_t *tid);

#endif
