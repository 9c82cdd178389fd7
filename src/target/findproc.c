/* findproc.c - processes by name: one pass over /proc reading comm, the
 * exe link and cmdline of each.  Processes that vanish meanwhile or whose
 * files are unreadable are simply judged on what could be read. */
#include "target/findproc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base_name(const char *path, size_t len, size_t *blen)
{
	const char *b = path;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	*blen = (size_t)(path + len - b);
	return b;
}

static bool same(const char *name, size_t nlen, const char *s, size_t slen)
{
	return nlen == slen && memcmp(name, s, nlen) == 0;
}

bool vg_proc_name_matches(const char *name, const char *comm, const char *exe,
			  const char *cmdline, size_t len)
{
	size_t nlen = strlen(name), blen, a0;
	const char *b;

	if (!nlen)
		return false;
	if (comm && strcmp(comm, name) == 0)
		return true;
	if (exe) {
		b = base_name(exe, strlen(exe), &blen);
		if (same(name, nlen, b, blen))
			return true;
	}
	if (cmdline && len) {
		a0 = strnlen(cmdline, len);
		if (same(name, nlen, cmdline, a0))
			return true;
		b = base_name(cmdline, a0, &blen);
		if (same(name, nlen, b, blen))
			return true;
	}
	return false;
}

/* Read a small /proc file; returns bytes read (0 on any failure). */
static size_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return 0;
	while ((size_t)got < size - 1 && (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return (size_t)got;
}

static void join_cmdline(char *dst, size_t size, const char *src, size_t len)
{
	size_t j = 0;

	while (len && src[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len && j + 1 < size; i++)
		dst[j++] = src[i] ? src[i] : ' ';
	dst[j] = '\0';
}

static int by_pid(const void *a, const void *b)
{
	const struct vg_proc_match *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int vg_proc_find_by_name(const char *name, struct vg_proc_match **out, size_t *n,
			 struct vg_error *err)
{
	struct vg_proc_match *v = NULL, *grown;
	size_t cap = 0, count = 0;
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!d)
		return vg_error_set(err, -errno, "cannot list /proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[64], comm[64], exe[PATH_MAX], cmdline[4096];
		size_t clen, cmd_len;
		ssize_t elen;
		long pid;
		char *end;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		/* A zombie has a name but nothing left to observe. */
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_small(path, cmdline, sizeof(cmdline)) && (end = strrchr(cmdline, ')')) &&
		    (end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X')))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		clen = read_small(path, comm, sizeof(comm));
		if (clen && comm[clen - 1] == '\n')
			comm[clen - 1] = '\0';
		snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
		elen = readlink(path, exe, sizeof(exe) - 1);
		if (elen >= 0)
			exe[elen] = '\0';
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		cmd_len = read_small(path, cmdline, sizeof(cmdline));
		if (!vg_proc_name_matches(name, clen ? comm : NULL, elen >= 0 ? exe : NULL,
					  cmdline, cmd_len))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				closedir(d);
				return vg_error_set(err, -ENOMEM, "out of memory listing processes");
			}
			v = grown;
		}
		v[count].pid = (pid_t)pid;
		snprintf(v[count].comm, sizeof(v[count].comm), "%s", clen ? comm : "?");
		join_cmdline(v[count].cmdline, sizeof(v[count].cmdline), cmdline, cmd_len);
		count++;
	}
	closedir(d);
	if (count)
		qsort(v, count, sizeof(*v), by_pid);
	*out = v;
	*n = count;
	return 0;
}
