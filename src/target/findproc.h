/* findproc.h - a process named by the user ("vigil profile redis-server",
 * --name NAME) rather than by PID: the processes of /proc whose comm,
 * executable file name or argv[0] is that name, as pgrep -x and py-spy
 * match it.  The caller decides what none or several mean. */
#ifndef VG_FINDPROC_H
#define VG_FINDPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

struct vg_proc_match {
	pid_t pid;
	char comm[64];
	char cmdline[128];   /* arguments joined by spaces, cut to fit */
};

/* Does a process with this comm (no newline), executable path (readlink
 * of /proc/PID/exe; NULL when unreadable) and raw cmdline (NUL-separated,
 * len bytes, possibly without a final NUL) go by name?  Equal to comm, to
 * the executable's file name, or to argv[0] or its file name.  comm is
 * cut to 15 bytes by the kernel, so a longer name matches a comm equal
 * to its first 15 bytes only through exe or argv[0]. */
bool vg_proc_name_matches(const char *name, const char *comm, const char *exe,
			  const char *cmdline, size_t len);

/* Every process of /proc (but vigil itself and zombies) that goes by name, sorted by
 * PID: *out is malloc'ed, *n its length.  0, or -ENOMEM / -errno of
 * /proc with a sentence. */
int vg_proc_find_by_name(const char *name, struct vg_proc_match **out, size_t *n,
			 struct vg_error *err);

#endif
