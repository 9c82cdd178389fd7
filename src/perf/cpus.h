/* cpus.h - the CPU lists of sysfs ("0-3,5,7-8"), which every per-CPU
 * perf user (the event sets, the probe's output rings) needs. */
#ifndef VG_CPUS_H
#define VG_CPUS_H

#include <stddef.h>

#include "util/error.h"

/* Parse the CPU list file at path into ascending CPU numbers (*out
 * malloc'ed).  -ENOENT when unreadable or empty, -ENOMEM. */
int vg_cpu_list_read(const char *path, int **out, size_t *n);

/* The online CPUs (/sys/devices/system/cpu/online; without sysfs, 0 to
 * sysconf(_SC_NPROCESSORS_ONLN) - 1). */
int vg_cpus_online(int **out, size_t *n, struct vg_error *err);

#endif
