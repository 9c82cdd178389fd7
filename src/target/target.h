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
	pid_t requested;              /* what the user gave (a TID resolves to its pid) */
	unsigned long long starttime; /* field 22 of /proc/PID/stat, clock ticks */
	char comm[64];
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

/* Thread ids from /proc/PID/task, sorted ascending.  *tids is malloc'ed. */
int vg_target_threads(const struct vg_target *t, pid_t **tids, size_t *n,
		      struct vg_error *err);

/* Append a warning (formatted); silently drops past VG_TARGET_MAX_WARNINGS. */
void vg_target_warn(struct vg_target *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "/proc/PID/<rest>" into buf; returns buf. */
char *vg_target_proc_path(const struct vg_target *t, char *buf, size_t size,
			  const char *rest);

/* Parse the stat line of /proc/PID/stat: comm (may contain spaces and ')'),
 * field 4 (ppid) unused, field 22 starttime.  Exposed for unit tests. */
int vg_parse_stat_line(const char *line, char *comm, size_t comm_size,
		       char *state, unsigned long long *starttime);

#endif
