/* mem.c - read the target's memory without stopping it; say who served what.
 *
 * Sources, in order:
 *  1. process_vm_readv(2): no fd, no bounce buffer; one call moves up to
 *     IOV_MAX remote iovecs of 1 MiB (1 GiB) straight into the caller's
 *     buffer.  The kernel stops at the first page it cannot pin and returns
 *     the bytes moved so far, which tells us where the hole starts.
 *  2. /proc/PID/mem with pread(2), opened lazily and read-only: it walks the
 *     target's pages with FOLL_FORCE, so it also serves PROT_NONE mappings.
 *     When source 1 is on, it is only asked up to the end of the region that
 *     stopped source 1, then source 1 takes over again.
 *  3. The mapped file, for a file-backed mapping whose smaps block says
 *     Anonymous: 0 kB and Swap: 0 kB (no page was copied-on-write, so every
 *     page is the file's), opened through /proc/PID/map_files/START-END or,
 *     failing that, /proc/PID/root/PATH checked against the mapping's device
 *     and inode.
 * Nothing is zero-filled: a read stops at the first byte no source serves.
 * A pidfd taken at open detects a pid that died (and maybe got reused) during
 * a read; /proc/PID/mem, once open, is bound to the original mm anyway.
 * Read-only by construction: no O_RDWR, no process_vm_writev. */
#include "target/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 20)                  /* one remote iovec */
#define BATCH_MAX ((size_t)IOV_MAX * CHUNK)       /* bytes per syscall, < MAX_RW_COUNT */
#define PREAD_MAX ((size_t)1 << 30)
#define PAGE ((uint64_t)4096)

struct vg_mem {
	const struct vg_target *t;    /* borrowed */
	const struct vg_maps *maps;   /* borrowed, may be NULL */
	pid_t pid;                    /* task holding the mm: target mm_pid */
	unsigned sources;
	bool proc_only;               /* /proc is another pid namespace: no pid syscalls */
	int pidfd;                    /* -1 if the kernel has none */
	int mem_fd;                   /* /proc/PID/mem, -1 until first needed */
	int mem_err;                  /* sticky negative errno of a failed open */
	int file_fd;                  /* file of the last file-fallback region */
	uint64_t file_start, file_end, file_offset;
	/* Scratch, never cleared (vg_mem_open): keep them last. */
	struct iovec liov[IOV_MAX];
	struct iovec riov[IOV_MAX];
};

const char *vg_mem_source_name(enum vg_mem_source s)
{
	switch (s) {
	case VG_MEM_VM_READV:
		return "process_vm_readv";
	case VG_MEM_PROC_MEM:
		return "proc_pid_mem";
	case VG_MEM_FILE:
		return "image_file";
	default:
		return "none";
	}
}

int vg_mem_open(const struct vg_target *t, const struct vg_maps *maps,
		struct vg_mem **out, struct vg_error *err)
{
	struct vg_mem *m;

	*out = NULL;
	/* The iovec arrays (32 KiB) are scratch, filled before each use:
	 * not cleared, so that a run that never reads in bulk never faults
	 * their pages in. */
	m = malloc(sizeof(*m));
	if (m)
		memset(m, 0, offsetof(struct vg_mem, liov));
	if (!m)
		return vg_error_set(err, -ENOMEM, "cannot read memory of pid %d: out of memory",
				    t ? (int)t->pid : 0);
	m->t = t;
	m->maps = maps;
	/* Reads go through the task that holds the process's mm (the leader,
	 * or a live thread once the leader has exited); the pidfd stays on
	 * the process, which it reports as exited only when all threads are. */
	m->pid = t->mm_pid ? t->mm_pid : t->pid;
	m->sources = VG_MEM_SRC_ALL;
	m->mem_fd = -1;
	m->file_fd = -1;
	m->pidfd = -1;
	if (!vg_proc_is_own_pidns()) {
		/* The pid is /proc's; in vigil's own namespace the same number
		 * may be another process, which process_vm_readv would read
		 * without a word.  /proc/PID/mem names the right one. */
		m->sources &= ~VG_MEM_SRC_VM_READV;
		m->proc_only = true;
	} else {
		/* pidfd_open() fds are always close-on-exec. */
		m->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
		if (m->pidfd < 0)
			m->pidfd = -1;
	}
	*out = m;
	return 0;
}

static void file_cache_drop(struct vg_mem *m)
{
	if (m->file_fd >= 0)
		close(m->file_fd);
	m->file_fd = -1;
}

struct vg_mem *vg_mem_free(struct vg_mem *m)
{
	if (!m)
		return NULL;
	if (m->mem_fd >= 0)
		close(m->mem_fd);
	if (m->pidfd >= 0)
		close(m->pidfd);
	file_cache_drop(m);
	free(m);
	return NULL;
}

void vg_mem_set_maps(struct vg_mem *m, const struct vg_maps *maps)
{
	if (!m)
		return;
	m->maps = maps;
	file_cache_drop(m);
}

void vg_mem_set_sources(struct vg_mem *m, unsigned mask)
{
	if (!m)
		return;
	mask &= VG_MEM_SRC_ALL;
	if (!mask)
		mask = VG_MEM_SRC_ALL;
	if (m->proc_only)
		mask &= ~VG_MEM_SRC_VM_READV;
	m->sources = mask;
}

static void add_seg(struct vg_mem_result *res, uint64_t addr, size_t len,
		    enum vg_mem_source src)
{
	struct vg_mem_segment *last = res->n_seg ? &res->seg[res->n_seg - 1] : NULL;

	res->bytes_read += len;
	if (last && ((last->source == src && last->addr + last->len == addr) ||
		     res->n_seg == VG_MEM_MAX_SEGMENTS)) {
		last->len += len;
		return;
	}
	res->seg[res->n_seg].addr = addr;
	res->seg[res->n_seg].len = len;
	res->seg[res->n_seg].source = src;
	res->n_seg++;
}

/* Has the target exited or been replaced (*changed, if non-NULL: the pid
 * now belongs to another process)?  Cheap when a pidfd exists: a poll that
 * says "still running" proves the pid was not reused. */
static bool target_gone(struct vg_mem *m, bool *changed)
{
	bool alive, c = false;

	if (m->pidfd >= 0) {
		struct pollfd p = { .fd = m->pidfd, .events = POLLIN };

		if (poll(&p, 1, 0) == 0) {
			if (changed)
				*changed = false;
			return false;
		}
	}
	vg_target_recheck(m->t, &alive, &c);
	if (changed)
		*changed = c;
	return !alive || c;
}

/* After a complete read: bytes read before an exit are the target's; after
 * a pid reuse they may not be. */
static bool target_replaced(struct vg_mem *m)
{
	bool changed;

	return target_gone(m, &changed) && changed;
}

/* Source 1.  Returns bytes moved (may be short) or negative errno; *want is
 * what was asked. */
static ssize_t vm_read(struct vg_mem *m, uint64_t addr, uint8_t *buf, size_t left,
		       size_t *want)
{
	size_t n = left < BATCH_MAX ? left : BATCH_MAX;
	size_t k = 0, off;
	ssize_t rc;

	for (off = 0; off < n; off += CHUNK, k++) {
		m->riov[k].iov_base = (void *)(uintptr_t)(addr + off);
		m->riov[k].iov_len = n - off < CHUNK ? n - off : CHUNK;
	}
	m->liov[0].iov_base = buf;
	m->liov[0].iov_len = n;
	*want = n;
	do
		rc = process_vm_readv(m->pid, m->liov, 1, m->riov, k, 0);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : rc;
}

static int mem_fd_get(struct vg_mem *m)
{
	char path[64];

	if (m->mem_fd >= 0)
		return m->mem_fd;
	if (m->mem_err)
		return m->mem_err;
	vg_target_proc_path(m->t, path, sizeof(path), "mem");
	m->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->mem_fd < 0) {
		int e = errno;

		m->mem_err = (e == ENOENT || e == ESRCH) ? -ESRCH : -e;
		return m->mem_err;
	}
	/* The fd is bound to whatever mm the pid had at open time: make sure
	 * that was still our process. */
	if (target_gone(m, NULL)) {
		close(m->mem_fd);
		m->mem_fd = -1;
		m->mem_err = -ESRCH;
		return m->mem_err;
	}
	return m->mem_fd;
}

/* Source 2.  Returns bytes read (> 0) or negative errno. */
static ssize_t procmem_read(struct vg_mem *m, uint64_t addr, uint8_t *buf, size_t len)
{
	size_t got = 0;
	int fd;

	if (addr > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - addr)
		return -EFAULT;
	fd = mem_fd_get(m);
	if (fd < 0)
		return fd;
	while (got < len) {
		size_t ask = len - got < PREAD_MAX ? len - got : PREAD_MAX;
		ssize_t r = pread(fd, buf + got, ask, (off_t)(addr + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && got == 0)
			return errno == EIO ? -EFAULT : -errno;
		if (r <= 0)  /* 0: the mm is gone; the caller re-checks */
			break;
		got += (size_t)r;
	}
	return got ? (ssize_t)got : -EFAULT;
}

/* Anonymous + Swap of the smaps block of the region starting at start, in
 * kB; -1 if the block was not found. */
static long long region_private_kb(pid_t pid, uint64_t start)
{
	char path[64], *line = NULL;
	long long kb = -1;
	size_t cap = 0;
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		uint64_t s, e;
		long long v;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &s, &e) == 2) {
			if (in)
				break;
			in = s == start;
			if (in)
				kb = 0;
			continue;
		}
		if (in && (sscanf(line, "Anonymous: %lld kB", &v) == 1 ||
			   sscanf(line, "Swap: %lld kB", &v) == 1))
			kb += v;
	}
	free(line);
	fclose(f);
	return kb;
}

static int open_region_file(struct vg_mem *m, const struct vg_region *r)
{
	char path[PATH_MAX + 64];
	int fd;

	/* Through vg_proc_open_file even here: a mapped device (a GPU, a
	 * frame buffer) must not be opened for real, only regular files. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)m->pid, r->start, r->end);
	fd = vg_proc_open_file(path, r->dev_major, r->dev_minor, r->inode);
	if (fd >= 0 || fd == -ESTALE)
		return fd;
	if (!r->path || r->path[0] != '/' || r->deleted)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)m->pid, r->path);
	return vg_proc_open_file(path, r->dev_major, r->dev_minor, r->inode);
}

/* Source 3.  Returns bytes read (> 0) or negative errno. */
static ssize_t file_read(struct vg_mem *m, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct vg_region *r;
	size_t got = 0;
	uint64_t off;

	if (!m->maps)
		return -ENOENT;
	r = vg_maps_find(m->maps, addr);
	if (!r || r->inode == 0 || (r->kind != VG_REGION_FILE && r->kind != VG_REGION_MEMFD))
		return -ENOENT;
	/* Checked on every call: the target may have written since. */
	if (region_private_kb(m->pid, r->start) != 0)
		return -ENOENT;
	if (m->file_fd < 0 || m->file_start != r->start || m->file_end != r->end ||
	    m->file_offset != r->offset) {
		int fd;

		file_cache_drop(m);
		fd = open_region_file(m, r);
		if (fd < 0)
			return fd;
		m->file_fd = fd;
		m->file_start = r->start;
		m->file_end = r->end;
		m->file_offset = r->offset;
	}
	if (len > r->end - addr)
		len = (size_t)(r->end - addr);
	off = r->offset + (addr - r->start);
	while (got < len) {
		ssize_t n = pread(m->file_fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)  /* past EOF the target would get SIGBUS: not its bytes */
			break;
		got += (size_t)n;
	}
	return got ? (ssize_t)got : -ENOENT;
}

/* How far a slow source is asked when process_vm_readv is available to take
 * over again: to the end of the region (or page, without maps). */
static size_t slow_bound(const struct vg_mem *m, uint64_t addr, size_t left)
{
	const struct vg_region *r = m->maps ? vg_maps_find(m->maps, addr) : NULL;
	uint64_t end = r ? r->end : (addr | (PAGE - 1)) + 1;

	if (end > addr && end - addr < left)
		return (size_t)(end - addr);
	return left;
}

/* Read [addr, addr+len) through the enabled sources, appending to res.
 * vm_failed: process_vm_readv already failed at addr.  Returns 0 when
 * complete, -EFAULT when stopped, -ESRCH, -EPERM or -EACCES. */
static int read_range(struct vg_mem *m, uint64_t addr, uint8_t *buf, size_t len,
		      bool vm_failed, struct vg_mem_result *res)
{
	bool vm_on = m->sources & VG_MEM_SRC_VM_READV;
	size_t pos = 0;
	int denied = 0;

	while (pos < len) {
		ssize_t n;

		if (vm_on && !vm_failed) {
			size_t want;

			n = vm_read(m, addr + pos, buf + pos, len - pos, &want);
			if (n == -ESRCH && target_gone(m, NULL))
				return -ESRCH;
			if (n == -ESRCH) {
				/* Alive in /proc but unknown to the syscall: the
				 * pid is not in vigil's PID namespace (vigil runs in
				 * a child namespace with the host's /proc).  The
				 * /proc/PID/mem file still works. */
				m->sources &= ~VG_MEM_SRC_VM_READV;
				vm_on = false;
				n = 0;
				want = 1;
			}
			if (n > 0) {
				add_seg(res, addr + pos, (size_t)n, VG_MEM_VM_READV);
				pos += (size_t)n;
			}
			if (n == (ssize_t)want)
				continue;
			if (n < 0 && n != -EFAULT) {
				/* EPERM, ENOSYS (seccomp, as in a default Docker
				 * profile), ENOMEM: not a hole at this address.
				 * Stop asking, for this read and the next ones. */
				if (n == -EPERM)
					denied = -EPERM;
				if (n == -EPERM || n == -ENOSYS)
					m->sources &= ~VG_MEM_SRC_VM_READV;
				vm_on = false;
			}
			if (pos == len)
				break;
		}
		vm_failed = false;
		if (m->sources & VG_MEM_SRC_PROC_MEM) {
			n = procmem_read(m, addr + pos, buf + pos,
					 vm_on ? slow_bound(m, addr + pos, len - pos) : len - pos);
			if (n == -ESRCH)
				return -ESRCH;
			if (n == -EACCES || n == -EPERM)
				denied = (int)n;
			if (n > 0) {
				add_seg(res, addr + pos, (size_t)n, VG_MEM_PROC_MEM);
				pos += (size_t)n;
				denied = 0;  /* another source could: not a permission stop */
				continue;
			}
		}
		if (m->sources & VG_MEM_SRC_FILE) {
			n = file_read(m, addr + pos, buf + pos, len - pos);
			if (n > 0) {
				add_seg(res, addr + pos, (size_t)n, VG_MEM_FILE);
				pos += (size_t)n;
				denied = 0;
				continue;
			}
		}
		return denied ? denied : -EFAULT;
	}
	return 0;
}

/* The sentence for a read stopped at addr+done.  Uses fresh maps when they
 * can be read: the cached table may be older than the hole. */
static int stop_error(struct vg_mem *m, uint64_t addr, size_t len, size_t done,
		      int code, struct vg_error *err)
{
	uint64_t at = addr + done;
	struct vg_maps *fresh = NULL;
	const struct vg_maps *maps;
	const struct vg_region *r;
	bool changed;
	int rc;

	/* No byte counts here: a caller reading in chunks knows the totals. */
	if (target_gone(m, &changed) || code == -ESRCH) {
		if (changed)
			return vg_error_set(err, -ESRCH, "pid %d now belongs to another process: the target exited while being read",
					    (int)m->t->pid);
		return vg_error_set(err, -ESRCH, "pid %d exited while being read", (int)m->t->pid);
	}
	if (code == -EPERM || code == -EACCES)
		return vg_error_denied(err, code, m->t->pid, "memory");
	if (!err)
		return -EFAULT;
	maps = vg_maps_read(m->pid, &fresh, NULL) == 0 ? fresh : m->maps;
	r = maps ? vg_maps_find(maps, at) : NULL;
	if (!r)
		rc = vg_error_set(err, -EFAULT, "cannot read at 0x%" PRIx64 ": address not mapped in pid %d",
				  at, (int)m->t->pid);
	else if (!r->readable)
		rc = vg_error_set(err, -EFAULT, "cannot read at 0x%" PRIx64 ": region 0x%" PRIx64 "-0x%" PRIx64 " is not readable (%s) in pid %d",
				  at, r->start, r->end, r->perms, (int)m->t->pid);
	else if (r->kind == VG_REGION_VVAR || r->kind == VG_REGION_VSYSCALL ||
		 r->kind == VG_REGION_SPECIAL)
		rc = vg_error_set(err, -EFAULT, "cannot read at 0x%" PRIx64 ": the kernel does not let another process read %s (0x%" PRIx64 "-0x%" PRIx64 " in pid %d)",
				  at, r->path[0] ? r->path : vg_region_kind_name(r->kind),
				  r->start, r->end, (int)m->t->pid);
	else
		rc = vg_error_set(err, -EFAULT, "cannot read at 0x%" PRIx64 ": no %ssource could read region 0x%" PRIx64 "-0x%" PRIx64 " (%s %s) in pid %d",
				  at, m->sources == VG_MEM_SRC_ALL ? "" : "enabled ",
				  r->start, r->end, r->perms, vg_region_kind_name(r->kind),
				  (int)m->t->pid);
	vg_maps_free(fresh);
	return rc;
}

int vg_mem_read(struct vg_mem *m, uint64_t addr, void *buf, size_t len,
		struct vg_mem_result *res, struct vg_error *err)
{
	int rc;

	memset(res, 0, sizeof(*res));
	if (len > UINT64_MAX - addr)
		return res->error = vg_error_set(err, -EINVAL, "cannot read %zu bytes at 0x%" PRIx64 ": the range wraps around the address space",
						 len, addr);
	if (len == 0)
		return 0;
	rc = read_range(m, addr, buf, len, false, res);
	if (rc == 0 && target_replaced(m))
		rc = -ESRCH;
	if (rc == 0)
		return 0;
	res->error = stop_error(m, addr, len, res->bytes_read, rc, err);
	return res->error;
}

/* One request through the slow path (and process_vm_readv again after a
 * hole).  Returns 0, -EFAULT (request stopped), or a fatal error. */
static int readv_one(struct vg_mem *m, struct vg_mem_req *q, size_t done, bool vm_failed)
{
	struct vg_mem_result res = { 0 };
	int rc;

	rc = read_range(m, q->addr + done, (uint8_t *)q->buf + done, q->len - done,
			vm_failed, &res);
	if (done == 0 && res.n_seg)
		q->source = res.seg[0].source;
	q->bytes_read = done + res.bytes_read;
	return rc;
}

int vg_mem_readv(struct vg_mem *m, struct vg_mem_req *reqs, size_t n,
		 struct vg_error *err)
{
	bool vm_on = m->sources & VG_MEM_SRC_VM_READV;
	size_t i = 0, j;
	int rc = 0;

	for (j = 0; j < n; j++) {
		reqs[j].bytes_read = 0;
		reqs[j].source = VG_MEM_NONE;
	}
	while (i < n && rc == 0) {
		size_t idx[IOV_MAX], k = 0, total = 0, left;
		ssize_t got;

		if (!vm_on) {
			if (reqs[i].len && reqs[i].len <= UINT64_MAX - reqs[i].addr)
				rc = readv_one(m, &reqs[i], 0, false);
			i++;
			rc = rc == -EFAULT ? 0 : rc;
			continue;
		}
		/* A batch: up to IOV_MAX non-empty requests, < MAX_RW_COUNT bytes. */
		for (; i < n && k < IOV_MAX; i++) {
			struct vg_mem_req *q = &reqs[i];

			if (q->len == 0 || q->len > UINT64_MAX - q->addr)
				continue;
			if (k && total + q->len > BATCH_MAX)
				break;
			m->liov[k].iov_base = q->buf;
			m->liov[k].iov_len = q->len;
			m->riov[k].iov_base = (void *)(uintptr_t)q->addr;
			m->riov[k].iov_len = q->len;
			idx[k++] = i;
			total += q->len;
		}
		if (k == 0)
			break;
		do
			got = process_vm_readv(m->pid, m->liov, k, m->riov, k, 0);
		while (got < 0 && errno == EINTR);
		if (got < 0 && errno != EFAULT) {
			if (errno == ESRCH) {
				rc = -ESRCH;
				break;
			}
			/* EPERM, ENOSYS, ENOMEM: redo this batch without it. */
			vm_on = false;
			i = idx[0];
			continue;
		}
		left = got < 0 ? 0 : (size_t)got;
		for (j = 0; j < k; j++) {
			struct vg_mem_req *q = &reqs[idx[j]];

			if (left >= q->len) {
				q->bytes_read = q->len;
				q->source = VG_MEM_VM_READV;
				left -= q->len;
				continue;
			}
			/* The kernel stopped inside q: finish q alone, then
			 * batch again from the request after it. */
			if (left)
				q->source = VG_MEM_VM_READV;
			rc = readv_one(m, q, left, true);
			rc = rc == -EFAULT ? 0 : rc;
			i = idx[j] + 1;
			break;
		}
	}
	if (rc == 0 && target_replaced(m))
		rc = -ESRCH;
	if (rc == -ESRCH)
		return vg_error_set(err, -ESRCH, "pid %d exited while being read (%zu requests)",
				    (int)m->t->pid, n);
	if (rc == -EPERM || rc == -EACCES)
		return vg_error_denied(err, rc, m->t->pid, "memory");
	return rc;
}
