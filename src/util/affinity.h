/* affinity.h - may a second thread run beside this one? */
#ifndef VG_AFFINITY_H
#define VG_AFFINITY_H

#include <sched.h>
#include <stdbool.h>

/* Does this thread's CPU affinity allow two CPUs or more?  True when it
 * cannot be read.  Restricted to one CPU (taskset), a helper thread only
 * costs: the batch's second lookup thread, the debug sections' second
 * inflater. */
static inline bool vg_affinity_two_cpus(void)
{
	cpu_set_t cpus;

	return sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) >= 2;
}

#endif
