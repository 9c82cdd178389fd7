/* uprobe.c - uprobe events through the uprobe PMU: see uprobe.h.
 *
 * perf_event_open(2) on /sys/bus/event_source/devices/uprobe (config1 =
 * path, config2 = file offset, the retprobe bit from format/retprobe); no
 * tracefs, no perf probe.  Shared by vigil probe (one event per site on
 * the process, with its eBPF program attached) and watch's uprobe
 * emulation (which reads the PMU's type here too). */
#include "perf/uprobe.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/perf_event.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

/* Is cap in vigil's effective set?  capget(2) directly: libcap is not a
 * dependency for two bits. */
static bool cap_effective(unsigned cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 || cap / 32 >= _LINUX_CAPABILITY_U32S_3)
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}


static int read_sysfs_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok ? 0 : -EIO;
}

int vg_uprobe_pmu(int *type, int *retprobe_bit, struct vg_error *err)
{
	static const char dir[] = "/sys/bus/event_source/devices/uprobe";
	char buf[64];
	int r = read_sysfs_line("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf));

	if (r == -ENOENT)
		return vg_error_set(err, -EOPNOTSUPP, "this kernel has no uprobe PMU (%s): vigil "
				    "probe needs a kernel built with CONFIG_UPROBE_EVENTS", dir);
	if (r < 0 || sscanf(buf, "%d", type) != 1)
		return vg_error_set(err, r < 0 ? r : -EIO, "cannot read the uprobe PMU's type "
				    "(%s/type)", dir);
	r = read_sysfs_line("/sys/bus/event_source/devices/uprobe/format/retprobe", buf,
			    sizeof(buf));
	if (r < 0 || sscanf(buf, "config:%d", retprobe_bit) != 1 || *retprobe_bit < 0 ||
	    *retprobe_bit > 63)
		return vg_error_set(err, -EOPNOTSUPP, "this kernel's uprobe PMU has no return "
				    "probes (%s/format/retprobe is not \"config:N\")", dir);
	return 0;
}

/* The kernel accepts any offset inside the file and then simply never
 * fires when no executable mapping covers it: refuse that here, for an
 * ELF file (anything else is left to the kernel). */
static int check_exec_offset(const char *path, uint64_t off, struct vg_error *err)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = -EINVAL;

	if (fd < 0) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR)
			return vg_error_set(err, -ENOENT, "cannot probe '%s': no such file", path);
		return vg_error_set(err, -e, "cannot open '%s' to probe it: %s", path,
				    strerror(e));
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			r = 0;
			break;
		}
	}
	close(fd);
	if (r < 0)
		return vg_error_set(err, -EINVAL, "cannot probe '%s' at file offset 0x%llx: it is "
				    "not in an executable segment of the file", path,
				    (unsigned long long)off);
	return 0;
}

/* The kernel's ENOTSUPP (524, not in userspace headers): the instruction
 * at the offset cannot be single-stepped or emulated. */
#define KERNEL_ENOTSUPP 524

static int uprobe_open_error(int e, const char *path, uint64_t off, pid_t pid,
			     struct vg_error *err)
{
	unsigned long long o = (unsigned long long)off;

	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return vg_error_set(err, -ENOENT, "cannot probe '%s': no such file", path);
	case EINVAL:
		return vg_error_set(err, -EINVAL, "the kernel refused a uprobe on '%s' at file "
				    "offset 0x%llx: past the end of the file, or not an "
				    "instruction it can probe", path, o);
	case KERNEL_ENOTSUPP:
	case EOPNOTSUPP:
		/* vigil's resolver already checked the instruction boundary:
		 * what is left are instructions the kernel will not step out
		 * of line (lock-prefixed, int3, some privileged ones). */
		return vg_error_set(err, -EINVAL, "the kernel cannot probe the instruction at "
				    "file offset 0x%llx of '%s': uprobes refuse some instructions "
				    "(lock-prefixed, int3, ...); probe the next instruction "
				    "(SYMBOL+OFF) instead", o, path);
	case EACCES:
	case EPERM:
		/* perf_uprobe_event_init() checks capable(CAP_SYS_ADMIN) since
		 * "perf: Require CAP_SYS_ADMIN for uprobes" (2025, in stable
		 * kernels too): a uprobe on a data word mistaken for code
		 * corrupts it, so CAP_PERFMON (enough from 5.8 until then) no
		 * longer is; perf_event_paranoid plays no part. */
		if (!cap_effective(CAP_SYS_ADMIN))
			return vg_error_set(err, -e, "creating a uprobe on pid %d was refused: "
					    "the kernel's uprobe PMU requires CAP_SYS_ADMIN%s (CAP_PERFMON "
					    "was enough before the 2025 change 'perf: Require CAP_SYS_ADMIN "
					    "for uprobes'); run vigil probe as root or with CAP_SYS_ADMIN", (int)pid,
					    cap_effective(CAP_PERFMON) ? ", and vigil has CAP_PERFMON only" : "");
		return vg_error_set(err, -e, "creating a uprobe on pid %d was refused although "
				    "vigil has CAP_SYS_ADMIN: a security module (SELinux, AppArmor, "
				    "lockdown) refused it", (int)pid);
	case ESRCH:
		/* A leader that called pthread_exit is a zombie: the process
		 * lives on in its other threads. */
		if (kill(pid, 0) == 0)
			return vg_error_set(err, -ESRCH, "cannot probe through thread %d: it has "
					    "exited (open the probe on a live thread of the "
					    "process)", (int)pid);
		return vg_error_set(err, -ESRCH, "cannot probe pid %d: the process is gone",
				    (int)pid);
	default:
		return vg_error_set(err, -e, "cannot create a uprobe on '%s' at file offset "
				    "0x%llx in pid %d: %s", path, o, (int)pid, strerror(e));
	}
}

int vg_uprobe_open(const char *path, uint64_t file_offset, uint64_t ref_ctr_offset, bool retprobe,
		   pid_t pid, int prog_fd, int *fd, struct vg_error *err)
{
	struct perf_event_attr a;
	int type, ret_bit, r;
	long ev;

	*fd = -1;
	r = vg_uprobe_pmu(&type, &ret_bit, err);
	if (r < 0)
		return r;
	r = check_exec_offset(path, file_offset, err);
	if (r < 0)
		return r;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = retprobe ? 1ull << ret_bit : 0;
	/* format/ref_ctr_offset is config:32-63 since the field exists. */
	a.config |= ref_ctr_offset << 32;
	/* Read by the kernel during this call, in our mount namespace. */
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = file_offset;
	a.sample_period = 1;
	a.disabled = 1;
	/* inherit stays 0: an inherited uprobe event re-reads config1 in the
	 * cloning target's memory and its clone() fails.  The program covers
	 * every thread anyway (the uprobe filter matches the mm). */
	ev = syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev < 0)
		return uprobe_open_error(errno, path, file_offset, pid, err);
	if (ioctl((int)ev, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
		int e = errno;

		close((int)ev);
		return vg_error_set(err, -e, "cannot attach the probe program to the uprobe on "
				    "'%s' at file offset 0x%llx: %s", path,
				    (unsigned long long)file_offset, strerror(e));
	}
	*fd = (int)ev;
	return 0;
}

int vg_uprobe_enable(int fd, bool on)
{
	return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}
