/* vmread.h - what a failed process_vm_readv means to the scan modules
 * (first scan, narrowing, snapshots, pointer scan), in one place: a page
 * gone or unreadable is skipped and counted; anything else ends the
 * operation with the one sentence all of them give. */
#ifndef VG_SCAN_VMREAD_H
#define VG_SCAN_VMREAD_H

#include <sys/types.h>

#include "util/error.h"

/* errno of a failed process_vm_readv -> 0 (skip: this page is unreadable:
 * EFAULT, EIO, ENOMEM) or the fatal negative errno (-ESRCH gone, -EPERM
 * denied, -EINVAL, -ENOSYS seccomp or an old kernel). */
int vg_vmread_errno_class(int e);

/* The sentence for a fatal code of the above (or -ENOMEM) reading pid's
 * memory; returns code. */
int vg_vmread_fail(struct vg_error *err, int code, pid_t pid);

#endif
