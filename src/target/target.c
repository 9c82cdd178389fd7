/* target.c - one observed process: pid, start time, comm, warnings.
 *
 * Uses only /proc/PID/stat (comm, state, starttime), /proc/PID/status (Tgid)
 * and /proc/PID/task: attaching never stops or signals the target.  The pair
 * (pid, starttime) is the identity; vg_target_recheck() compares it again so
 * a reused pid is reported as changed.  A zombie thread-group leader whose
 * other threads still run is alive (the process is); a zombie whose threads
 * are all gone has exited.  Deliberately no ptrace and no pidfd here: mem.c
 * holds the pidfd it needs for its own race check.  vg_proc_open_file() is
 * the one check, for images.c and mem.c, that a path opened through /proc
 * is still the mapped file. */
#include "target/target.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Read a small /proc file into buf (NUL-terminated).  Returns length or
 * negative errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < size) {
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

int vg_proc_stat_parse(const char *line, struct vg_proc_stat *st)
{
	const char *open, *close_paren, *p;
	unsigned long long v;
	char *end;
	size_t n;
	int field;

	if (!line || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	open = strchr(line, '(');
	close_paren = strrchr(line, ')');
	if (!open || !close_paren || close_paren < open)
		return -EINVAL;
	/* field 1: the pid, digits only */
	for (p = line; p < open && *p == ' '; p++)
		;
	if (p == open || !isdigit((unsigned char)*p))
		return -EINVAL;
	n = (size_t)(close_paren - open - 1);
	if (n >= sizeof(st->comm))
		n = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';
	/* field 3: state, a single character after ") " */
	p = close_paren + 1;
	if (p[0] != ' ' || p[1] == '\0' || p[1] == ' ' || (p[2] != ' ' && p[2] != '\0'))
		return -EINVAL;
	st->state = p[1];
	p += 2;
	/* fields 4..22: 9 is flags, 14 and 15 utime and stime, 22 starttime */
	for (field = 4; field <= 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p++;
		errno = 0;
		if (*p == '-') {  /* some fields are signed (priority, nice) */
			(void)strtoll(p, &end, 10);
			v = 0;
		} else {
			v = strtoull(p, &end, 10);
		}
		if (end == p || errno)
			return -EINVAL;
		p = end;
		if (field == 9)
			st->flags = (unsigned long)v;
		else if (field == 14)
			st->utime = v;
		else if (field == 15)
			st->stime = v;
		else if (field == 22)
			st->starttime = v;
	}
	if (*p != ' ' && *p != '\n' && *p != '\0')
		return -EINVAL;
	return 0;
}

char *vg_target_proc_path(const struct vg_target *t, char *buf, size_t size,
			  const char *rest)
{
	/* The mm holder: after the main thread exited, /proc/PID/root, exe and
	 * map_files of the leader fail while the thread's /proc/TID/ work. */
	snprintf(buf, size, "/proc/%d/%s", t ? (int)(t->mm_pid ? t->mm_pid : t->pid) : 0,
		 rest ? rest : "");
	return buf;
}

int vg_proc_open_file(const char *path, uint32_t dev_major, uint32_t dev_minor,
		      uint64_t inode)
{
	char self[64];
	struct stat st;
	int pfd, fd;

	/* The target controls what the path names (a symlink to a device in
	 * place of a deleted library): O_PATH reaches it without running any
	 * driver's open, and only the mapped regular file is then opened for
	 * reading, through the O_PATH fd itself. */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || major(st.st_dev) != dev_major ||
	    minor(st.st_dev) != dev_minor || (uint64_t)st.st_ino != inode) {
		close(pfd);
		return -ESTALE;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	fd = fd < 0 ? -errno : fd;
	close(pfd);
	return fd;
}

int vg_proc_stat_read(pid_t pid, struct vg_proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0)  /* the task was released between open and read */
		return -ESRCH;
	return vg_proc_stat_parse(buf, st);
}

/* Tgid: from /proc/PID/status; 0 if not found. */
static int read_tgid(pid_t pid, pid_t *tgid)
{
	char path[64], buf[4096];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -ESRCH;
	*tgid = (pid_t)strtol(p + 6, NULL, 10);
	return *tgid > 0 ? 0 : -ESRCH;
}

static bool task_has_mm(const struct vg_proc_stat *st)
{
	return st->state != 'Z' && st->state != 'X' && st->state != 'x' &&
	       !(st->flags & VG_PF_EXITING);
}

/* A live thread of pid other than the leader, or 0. */
static pid_t live_thread(pid_t pid)
{
	char path[64];
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		struct vg_proc_stat si;
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || tid == pid)
			continue;
		if (vg_proc_stat_read((pid_t)tid, &si) == 0 && task_has_mm(&si))
			found = (pid_t)tid;
	}
	closedir(d);
	return found;
}

static enum vg_mm_holder holder_from_stat(pid_t pid, const struct vg_proc_stat *si,
					  pid_t *tid)
{
	*tid = 0;
	if (si->flags & VG_PF_KTHREAD)
		return VG_MM_KTHREAD;
	if (task_has_mm(si))
		return VG_MM_LEADER;
	/* The leader exited (state Z, or PF_EXITING on its way there): the
	 * process lives on while another thread does. */
	*tid = live_thread(pid);
	return *tid ? VG_MM_THREAD : VG_MM_GONE;
}

enum vg_mm_holder vg_proc_mm_holder(pid_t pid, pid_t *tid)
{
	struct vg_proc_stat si;

	*tid = 0;
	if (vg_proc_stat_read(pid, &si) < 0)
		return VG_MM_GONE;
	return holder_from_stat(pid, &si, tid);
}

static int stat_error(pid_t pid, int rc, struct vg_error *err)
{
	if (rc == -ENOENT || rc == -ESRCH)
		return vg_error_set(err, -ESRCH, "no process with pid %d; check the pid with 'ps -p %d'",
				    (int)pid, (int)pid);
	if (rc == -EACCES || rc == -EPERM)
		return vg_error_denied(err, rc, pid, "/proc/PID/stat");
	if (rc == -EINVAL)
		return vg_error_set(err, -EIO, "cannot parse /proc/%d/stat: unexpected format; report this kernel version as a bug",
				    (int)pid);
	return vg_error_set(err, rc, "cannot read /proc/%d/stat: %s", (int)pid, strerror(-rc));
}

int vg_target_open(pid_t pid, struct vg_target **out, struct vg_error *err)
{
	struct vg_target *t;
	struct vg_proc_stat si;
	enum vg_mm_holder holder;
	pid_t tgid = 0, mm_tid;
	int rc;

	*out = NULL;
	if (pid <= 0)
		return vg_error_set(err, -EINVAL, "invalid pid %d: a pid is a positive number", (int)pid);
	/* The requested id first: it may be a thread id, which /proc serves
	 * (unlisted) as /proc/TID. */
	rc = vg_proc_stat_read(pid, &si);
	if (rc < 0)
		return stat_error(pid, rc, err);
	rc = read_tgid(pid, &tgid);
	if (rc < 0)
		return stat_error(pid, rc, err);
	if (tgid != pid) {
		rc = vg_proc_stat_read(tgid, &si);
		if (rc < 0)
			return stat_error(tgid, rc, err);
	}
	holder = holder_from_stat(tgid, &si, &mm_tid);
	if (holder == VG_MM_GONE)
		return vg_error_set(err, -ESRCH, "pid %d has exited%s; nothing left to observe",
				    (int)tgid, si.state == 'Z' ? " (zombie)" : "");

	t = calloc(1, sizeof(*t));
	if (!t)
		return vg_error_set(err, -ENOMEM, "cannot attach to pid %d: out of memory", (int)pid);
	t->pid = tgid;
	t->requested = pid;
	t->mm_pid = holder == VG_MM_THREAD ? mm_tid : tgid;
	t->starttime = si.starttime;
	snprintf(t->comm, sizeof(t->comm), "%s", si.comm);
	if (tgid != pid)
		vg_target_warn(t, "pid %d is a thread of process %d; observing process %d",
			       (int)pid, (int)tgid, (int)tgid);
	if (holder == VG_MM_THREAD)
		vg_target_warn(t, "the main thread of pid %d has exited; its memory is read through thread %d",
			       (int)tgid, (int)mm_tid);
	*out = t;
	return 0;
}

struct vg_target *vg_target_free(struct vg_target *t)
{
	size_t i;

	if (!t)
		return NULL;
	for (i = 0; i < t->n_warnings; i++)
		free(t->warnings[i]);
	free(t);
	return NULL;
}

void vg_target_recheck(const struct vg_target *t, bool *alive, bool *changed)
{
	struct vg_proc_stat si;
	bool a = false, c = false;
	pid_t mm_tid;

	if (t && vg_proc_stat_read(t->pid, &si) == 0) {
		c = si.starttime != t->starttime;
		a = !c && holder_from_stat(t->pid, &si, &mm_tid) != VG_MM_GONE;
	}
	if (alive)
		*alive = a;
	if (changed)
		*changed = c;
}

int vg_target_explain(const struct vg_target *t, int code, struct vg_error *err)
{
	bool alive, changed;

	if (!t)
		return code;
	vg_target_recheck(t, &alive, &changed);
	if (changed)
		return vg_error_reset(err, -ESRCH, "pid %d now belongs to another process (start time changed): the observed process '%s' has exited",
				      (int)t->pid, t->comm);
	if (!alive)
		return vg_error_reset(err, -ESRCH, "pid %d ('%s') has exited", (int)t->pid, t->comm);
	return code;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int vg_target_threads(const struct vg_target *t, pid_t **tids, size_t *n,
		      struct vg_error *err)
{
	pid_t *v = NULL;
	size_t len = 0, cap = 0;
	struct dirent *de;
	char path[64];
	DIR *d;
	int rc;

	*tids = NULL;
	*n = 0;
	vg_target_proc_path(t, path, sizeof(path), "task");
	d = opendir(path);  /* glibc opens with O_CLOEXEC */
	if (!d) {
		rc = -errno;
		if (rc == -ENOENT)
			return vg_error_set(err, -ESRCH, "cannot list threads of pid %d: the process has exited",
					    (int)t->pid);
		if (rc == -EACCES || rc == -EPERM)
			return vg_error_set(err, rc, "cannot list threads of pid %d: permission denied; run as root or as the target's user",
					    (int)t->pid);
		return vg_error_set(err, rc, "cannot list threads of pid %d: %s", (int)t->pid, strerror(-rc));
	}
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 16, bytes;
			pid_t *nv;

			if (__builtin_mul_overflow(ncap, sizeof(*v), &bytes) ||
			    !(nv = realloc(v, bytes))) {
				free(v);
				closedir(d);
				return vg_error_set(err, -ENOMEM, "cannot list threads of pid %d: out of memory",
						    (int)t->pid);
			}
			v = nv;
			cap = ncap;
		}
		v[len++] = (pid_t)tid;
	}
	closedir(d);
	if (len == 0) {
		free(v);
		return vg_error_set(err, -ESRCH, "cannot list threads of pid %d: the process has exited",
				    (int)t->pid);
	}
	qsort(v, len, sizeof(*v), cmp_pid);
	*tids = v;
	*n = len;
	return 0;
}

void vg_target_warn(struct vg_target *t, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!t || t->n_warnings >= VG_TARGET_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	/* Said once: a refresh that reloads the images repeats its
	 * findings (an image no route opens). */
	for (size_t i = 0; i < t->n_warnings; i++) {
		if (strcmp(t->warnings[i], s) == 0) {
			free(s);
			return;
		}
	}
	if (t->n_warnings == VG_TARGET_MAX_WARNINGS - 1) {
		/* The last slot says the list is cut, so it never looks whole. */
		free(s);
		s = strdup("more warnings were dropped (only the first ones are kept)");
		if (!s)
			return;
	}
	t->warnings[t->n_warnings++] = s;
}

/* A process of our own user whose /proc/PID/maps belongs to root: the
 * kernel does that for a process that is not dumpable (task_dump_owner;
 * the directory itself keeps its owner on 6.x), and
 * ptrace access then needs CAP_SYS_PTRACE even for its own user. */
static bool own_but_not_dumpable(pid_t pid)
{
	char path[64], buf[2048], *uid;
	struct stat st;
	unsigned long real;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	buf[n] = '\0';
	uid = strstr(buf, "\nUid:");
	if (!uid || sscanf(uid + 5, "%lu", &real) != 1 || real != (unsigned long)getuid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == 0 && getuid() != 0;
}

int vg_error_denied(struct vg_error *err, int code, pid_t pid, const char *what)
{
	char scope[16] = "";
	ssize_t n;

	if (geteuid() != 0 && own_but_not_dumpable(pid))
		return vg_error_set(err, code, "cannot read %s of pid %d: permission denied: the process runs as your user but is not dumpable (it called prctl(PR_SET_DUMPABLE, 0), or runs a setuid, setgid or file-capability program), so only root or CAP_SYS_PTRACE may observe it",
				    what, (int)pid);
	if (geteuid() == 0)
		return vg_error_set(err, code, "cannot read %s of pid %d: permission denied although vigil runs as root: it lacks CAP_SYS_PTRACE over the target (another user namespace, or a reduced capability set)",
				    what, (int)pid);
	n = read_small("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
	scope[n > 0 ? strcspn(scope, "\n") : 0] = '\0';
	if (scope[0] && strcmp(scope, "0") != 0)
		return vg_error_set(err, code, "cannot read %s of pid %d: permission denied; run as root or as the target's user (kernel.yama.ptrace_scope=%s restricts even that)",
				    what, (int)pid, scope);
	return vg_error_set(err, code, "cannot read %s of pid %d: permission denied; run as root or as the target's user",
			    what, (int)pid);
}

int vg_error_proc(struct vg_error *err, int e, pid_t pid, const char *what)
{
	if (e == ENOENT || e == ESRCH)
		return vg_error_set(err, -ESRCH, "pid %d does not exist or has exited", (int)pid);
	if (e == EACCES || e == EPERM)
		return vg_error_denied(err, -EACCES, pid, what);
	return vg_error_set(err, -e, "cannot read %s of pid %d: %s", what, (int)pid, strerror(e));
}

bool vg_proc_is_own_pidns(void)
{
	static int cached = -1;  /* a process does not change its pid namespace */
	char buf[32];
	ssize_t n;

	if (cached < 0) {
		n = readlink("/proc/self", buf, sizeof(buf) - 1);
		if (n <= 0) {
			cached = 0;  /* no /proc/self: not ours */
		} else {
			buf[n] = '\0';
			cached = strtol(buf, NULL, 10) == (long)getpid();
		}
	}
	return cached;
}

int vg_target_pidfd(const struct vg_target *t)
{
#ifdef SYS_pidfd_open
	if (!vg_proc_is_own_pidns())
		return -1;
	return (int)syscall(SYS_pidfd_open, t->pid, 0);
#else
	(void)t;
	return -1;
#endif
}
