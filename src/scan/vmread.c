/* vmread.c - see vmread.h. */
#include "scan/vmread.h"

#include <errno.h>
#include <string.h>

#include "target/target.h"

static int gone_error(struct vg_error *err, pid_t pid)
{
	return vg_error_set(err, -ESRCH, "cannot read memory of pid %d: the process has exited",
			    (int)pid);
}

/* errno of a failed process_vm_readv -> 0 (skip: the page is unreadable)
 * or the fatal negative errno. */
int vg_vmread_errno_class(int e)
{
	switch (e) {
	case ESRCH:
		return -ESRCH;
	case EPERM:
	case EACCES:
		return -EPERM;
	case EINVAL:
	case ENOSYS:
		return -e;
	default:
		return 0;     /* EFAULT, EIO, ENOMEM: this page only */
	}
}

int vg_vmread_fail(struct vg_error *err, int code, pid_t pid)
{
	if (code == -ESRCH)
		return gone_error(err, pid);
	if (code == -EPERM || code == -EACCES)
		return vg_error_denied(err, code, pid, "memory");
	if (code == -ENOMEM)
		return vg_error_set(err, -ENOMEM, "cannot read memory of pid %d: out of memory", (int)pid);
	if (code == -ENOSYS)
		return vg_error_set(err, -ENOSYS, "cannot read memory of pid %d: process_vm_readv is not available (seccomp or an old kernel)",
				    (int)pid);
	return vg_error_set(err, code, "cannot read memory of pid %d: %s", (int)pid,
			    strerror(-code));
}
