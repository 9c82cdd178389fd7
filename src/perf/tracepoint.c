/* tracepoint.c - tracepoint ids from tracefs: see tracepoint.h.
 *
 * Tried in order: /sys/kernel/tracing (tracefs' own mount point since
 * Linux 4.1), /sys/kernel/debug/tracing (where a debugfs mount shows it),
 * then tracefs mounted at /sys/kernel/tracing by a child process that
 * first unshares its mount namespace and makes every mount in it private,
 * so that the mount neither propagates back nor outlives the child.  The
 * child makes only system calls between fork() and _exit(): vigil may
 * have other threads.
 *
 * Not done: a tracefs mounted elsewhere (/proc/self/mounts is not read);
 * the private mount covers that case too when vigil may mount. */
#include "perf/tracepoint.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_IN_DEBUGFS "/sys/kernel/debug/tracing"

static int parse_id(const char *buf, int *id)
{
	char *end;
	long v = strtol(buf, &end, 10);

	if (end == buf || (*end && *end != '\n') || v < 0 || v > 0x7fffffff)
		return -EIO;
	*id = (int)v;
	return 0;
}

static int read_id(const char *path, int *id)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	return parse_id(buf, id);
}

/* The child: the error number is its exit status (0: the id's text went
 * down the pipe). */
static _Noreturn void private_mount_child(const char *path, int out)
{
	char buf[32];
	ssize_t n;
	int fd;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tracefs", TRACEFS, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		_exit(errno & 0xff);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(errno & 0xff);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		_exit(n < 0 ? errno & 0xff : EIO);
	_exit(write(out, buf, (size_t)n) == n ? 0 : EIO);
}

static int read_id_private_mount(const char *path, int *id)
{
	char buf[32];
	size_t got = 0;
	int p[2], st = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		private_mount_child(path, p[1]);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], buf + got, sizeof(buf) - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf) - 1)
			break;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st))
		return -EIO;
	if (WEXITSTATUS(st))
		return -WEXITSTATUS(st);
	buf[got] = '\0';
	return parse_id(buf, id);
}

int vg_tracepoint_id(const char *system, const char *event, int *id, struct vg_error *err)
{
	char path[256], rel[192];
	int r;

	snprintf(rel, sizeof(rel), "events/%s/%s/id", system, event);
	snprintf(path, sizeof(path), TRACEFS "/%s", rel);
	r = read_id(path, id);
	if (r == 0)
		return 0;
	snprintf(path, sizeof(path), TRACEFS_IN_DEBUGFS "/%s", rel);
	if (read_id(path, id) == 0)
		return 0;
	if (r != -ENOENT)
		return vg_error_set(err, r, "cannot read the id of tracepoint %s:%s (" TRACEFS
				    "/%s): %s", system, event, rel, strerror(-r));
	/* Not mounted (or no such tracepoint: the private mount tells). */
	snprintf(path, sizeof(path), TRACEFS "/%s", rel);
	r = read_id_private_mount(path, id);
	if (r == 0)
		return 0;
	if (r == -EPERM || r == -EACCES)
		return vg_error_set(err, r, "tracefs is not mounted (" TRACEFS ") and vigil may not "
				    "mount it (CAP_SYS_ADMIN) to read the id of tracepoint %s:%s",
				    system, event);
	if (r == -ENOENT)
		return vg_error_set(err, r, "no tracepoint %s:%s in tracefs (or no tracefs in this "
				    "kernel)", system, event);
	return vg_error_set(err, r, "cannot read the id of tracepoint %s:%s from a private "
			    "tracefs mount: %s", system, event, strerror(-r));
}
