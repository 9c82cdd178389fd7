/* uprobe.h - uprobe events through the uprobe PMU
 * (/sys/bus/event_source/devices/uprobe), with perf_event_open(2) alone:
 * no tracefs.  vigil probe attaches an eBPF program to each (probe/bpf.h);
 * watch's uprobe emulation reads the PMU's type.
 *
 * Privilege: creating a uprobe PMU event needs CAP_SYS_ADMIN since the
 * 2025 change "perf: Require CAP_SYS_ADMIN for uprobes" (CAP_PERFMON
 * before); refusals come back as -EPERM/-EACCES with the sentence that
 * says which capability vigil lacks. */
#ifndef VG_PERF_UPROBE_H
#define VG_PERF_UPROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/* The uprobe PMU (/sys/bus/event_source/devices/uprobe): its type and the
 * retprobe bit (format/retprobe).  -EOPNOTSUPP with the sentence when the
 * kernel has none (CONFIG_UPROBE_EVENTS). */
int vg_uprobe_pmu(int *type, int *retprobe_bit, struct vg_error *err);

/* Open a disabled uprobe event on path (a path vigil can resolve: the
 * kernel resolves it in vigil's mount namespace, at this call) at
 * file_offset, on process pid (cpu -1, no inherit), attach prog_fd
 * (PERF_EVENT_IOC_SET_BPF; the event holds its own reference: prog_fd
 * may be closed right after).  Enable with vg_uprobe_enable.  *fd: close
 * it to remove the probe (the kernel restores the original bytes when the
 * last event on the site is closed).
 *
 * pid may be any thread of the process: the kernel's filter compares the
 * hit's mm with that thread's mm, so every thread of the process is
 * covered, but only while that thread lives.  When it exits (a main
 * thread that calls pthread_exit, a worker), the event stops firing for
 * the whole process and its fd polls POLLHUP: watch for that (counts are
 * then a lower bound) or open on a thread that will live.  A zombie
 * leader gives -ESRCH with a sentence that says so.
 *
 * Errors: -ENOENT (path), -EINVAL (offset not in an executable segment of
 * an ELF file, past its end, or an instruction the kernel cannot probe:
 * its sentence says which; an offset in the middle of an instruction that
 * happens to decode is NOT detected here), -EPERM/-EACCES, -ESRCH. */
/* ref_ctr_offset: the file offset of a USDT semaphore the kernel
 * increments while the uprobe is armed (uprobe ref_ctr_offset, 4.20), 0:
 * none; the kernel writes it, never vigil. */
int vg_uprobe_open(const char *path, uint64_t file_offset, uint64_t ref_ctr_offset, bool retprobe,
		   pid_t pid, int prog_fd, int *fd, struct vg_error *err);
int vg_uprobe_enable(int fd, bool on);

#endif
