/* tracepoint.h - the id of a kernel tracepoint, which perf_event_open(2)
 * takes as the config of a PERF_TYPE_TRACEPOINT event.
 *
 * The kernel publishes it only in tracefs (events/SYSTEM/EVENT/id).  Where
 * tracefs is not mounted (a container, a minimal system), the id is read
 * from a tracefs mounted in a private mount namespace of a short-lived
 * child process: nothing stays mounted, and nothing is visible to the rest
 * of the machine.  That needs CAP_SYS_ADMIN; without it the lookup fails
 * and says so. */
#ifndef VG_TRACEPOINT_H
#define VG_TRACEPOINT_H

#include "util/error.h"

/* *id of SYSTEM:EVENT (e.g. "sched", "sched_process_exec").
 * Errors: -ENOENT (no tracefs, or no such tracepoint), -EPERM (tracefs not
 * mounted and vigil may not mount it), others as the kernel says; the
 * sentence names what was tried. */
int vg_tracepoint_id(const char *system, const char *event, int *id, struct vg_error *err);

#endif
