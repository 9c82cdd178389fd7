/* thread_info.c - one thread's facts from /proc/PID/task/TID, no ptrace.
 *
 * Files read, all under /proc/PID/task/TID: stat (state, CPU time:
 * vg_proc_stat_parse, shared with target.c), comm, syscall, status
 * (context switches) and stack.  The syscall file needs the same access as ptrace-read (PTRACE_MODE_ATTACH
 * _FSCREDS) and stack needs CAP_SYS_ADMIN too; when one is refused the
 * field says why and the rest is still reported.  The text parsers here
 * take a buffer and a length and never trust either: the content comes
 * from the kernel, but the fuzzers feed them anything. */
#include "stack/thread_info.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copy of buf[0..len) into a NUL-ended scratch buffer the parsers can use
 * strto* on; texts longer than the scratch are cut (the kernel's never
 * are: syscall is < 200 bytes, status < 2 KiB). */
static size_t to_cstr(char *dst, size_t size, const char *buf, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, buf, len);
	dst[len] = '\0';
	/* An embedded NUL would end the text early: treat it as the end. */
	return strlen(dst);
}

/* A hex number "0x..." (the kernel prints them so) or a decimal one. */
static bool parse_u64(const char **p, uint64_t *v)
{
	char *end;
	const char *s = *p;

	while (*s == ' ')
		s++;
	if (*s == '-' || *s == '+' || *s == '\0' || *s == '\n')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (end == s || errno)
		return false;
	*p = end;
	return true;
}

int vg_thread_syscall_parse(const char *buf, size_t len, struct vg_thread_syscall *out)
{
	char text[256];
	const char *p = text;
	char *end;
	long nr;

	memset(out, 0, sizeof(*out));
	out->nr = -1;
	if (!buf)
		return -EINVAL;
	len = to_cstr(text, sizeof(text), buf, len);
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (strcmp(text, "running") == 0) {
		out->state = VG_SYSCALL_RUNNING;
		return 0;
	}
	errno = 0;
	nr = strtol(p, &end, 10);
	if (end == p || errno || nr < -1)
		goto bad;
	p = end;
	if (nr >= 0) {
		for (int i = 0; i < 6; i++)
			if (*p != ' ' || !parse_u64(&p, &out->args[i]))
				goto bad;
	}
	if (*p != ' ' || !parse_u64(&p, &out->sp) || *p != ' ' || !parse_u64(&p, &out->pc) ||
	    *p != '\0')
		goto bad;
	out->nr = nr;
	out->state = nr < 0 ? VG_SYSCALL_NONE : VG_SYSCALL_IN;
	return 0;
bad:
	memset(out, 0, sizeof(*out));
	out->nr = -1;
	return -EINVAL;
}

/* The value of "key:" at the start of a line of text, or NULL. */
static const char *status_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			return line + n + 1;
	}
	return NULL;
}

int vg_thread_status_parse(const char *buf, size_t len, struct vg_thread_status *out)
{
	char text[4096];
	const char *v;
	uint64_t vol, nonvol;
	bool has_vol, has_nonvol;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -EINVAL;
	to_cstr(text, sizeof(text), buf, len);
	if (!strchr(text, ':'))
		return -EINVAL;
	v = status_value(text, "State");
	if (v) {
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v && *v != '\n')
			out->state = *v;
	}
	v = status_value(text, "voluntary_ctxt_switches");
	has_vol = v && (v += strspn(v, " \t"), parse_u64(&v, &vol));
	v = status_value(text, "nonvoluntary_ctxt_switches");
	has_nonvol = v && (v += strspn(v, " \t"), parse_u64(&v, &nonvol));
	if (has_vol && has_nonvol) {
		out->voluntary_ctxt = vol;
		out->nonvoluntary_ctxt = nonvol;
		out->has_ctxt = true;
	}
	return 0;
}

/* One "[<ADDR>] FUNC+0xOFF/0xSIZE [module]" line (NUL-ended, no '\n'). */
static bool kernel_frame_parse(const char *line, struct vg_kernel_frame *f)
{
	const char *p = line, *name, *plus, *end;
	char *e;
	size_t n;

	memset(f, 0, sizeof(*f));
	if (p[0] != '[' || p[1] != '<')
		return false;
	p += 2;
	errno = 0;
	f->addr = strtoull(p, &e, 16);
	if (e == p || errno || e[0] != '>' || e[1] != ']' || e[2] != ' ')
		return false;
	name = e + 3;
	end = name + strlen(name);
	plus = strchr(name, '+');
	n = (size_t)((plus ? plus : end) - name);
	if (n == 0)
		return false;
	if (plus) {
		const char *q = plus + 1;

		if (!parse_u64(&q, &f->offset) || *q != '/' || (q++, !parse_u64(&q, &f->size)))
			return false;
		/* A module's functions carry " [module]" after the offsets. */
		if (*q == ' ' && n + strlen(q) < sizeof(f->function)) {
			memcpy(f->function, name, n);
			strcpy(f->function + n, q);
			return true;
		}
		if (*q != '\0')
			return false;
	}
	if (n >= sizeof(f->function))
		n = sizeof(f->function) - 1;
	memcpy(f->function, name, n);
	f->function[n] = '\0';
	return true;
}

size_t vg_kernel_stack_parse(const char *buf, size_t len, struct vg_kernel_frame *frames,
			     size_t max)
{
	size_t count = 0, pos = 0;

	if (!buf || !frames)
		return 0;
	while (pos < len && count < max) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		char line[256];
		size_t n;

		if (!nl)
			break;  /* a line without its newline was cut short */
		n = (size_t)(nl - (buf + pos));
		if (n < sizeof(line) && !memchr(buf + pos, '\0', n)) {
			memcpy(line, buf + pos, n);
			line[n] = '\0';
			if (kernel_frame_parse(line, &frames[count]))
				count++;
		}
		pos += n + 1;
	}
	return count;
}

/* Read a small /proc file whole.  Returns the length or -errno. */
static ssize_t read_proc(const char *path, char *buf, size_t size)
{
	size_t total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (total < size - 1) {
		ssize_t n = read(fd, buf + total, size - 1 - total);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	close(fd);
	buf[total] = '\0';
	return (ssize_t)total;
}

static ssize_t read_task_file(const struct vg_target *t, pid_t tid, const char *file,
			      char *buf, size_t size)
{
	char rest[64], path[96];

	snprintf(rest, sizeof(rest), "task/%d/%s", (int)tid, file);
	return read_proc(vg_target_proc_path(t, path, sizeof(path), rest), buf, size);
}

int vg_thread_status_read(const struct vg_target *t, pid_t tid, struct vg_thread_status *out)
{
	char buf[4096];
	ssize_t n = read_task_file(t, tid, "status", buf, sizeof(buf));

	memset(out, 0, sizeof(*out));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return vg_thread_status_parse(buf, (size_t)n, out);
}

static void read_kernel_stack(const struct vg_target *t, pid_t tid, struct vg_thread_info *out)
{
	char buf[8192];
	ssize_t n = read_task_file(t, tid, "stack", buf, sizeof(buf));

	if (n < 0) {
		out->kernel_error = (int)n;
		if (n == -EACCES || n == -EPERM)
			snprintf(out->kernel_why, sizeof(out->kernel_why),
				 "/proc/TID/stack needs CAP_SYS_ADMIN");
		else if (n == -ENOENT)
			snprintf(out->kernel_why, sizeof(out->kernel_why),
				 "kernel without CONFIG_STACKTRACE (no /proc/TID/stack)");
		else
			snprintf(out->kernel_why, sizeof(out->kernel_why),
				 "/proc/TID/stack: %s", strerror((int)-n));
		return;
	}
	out->n_kernel = vg_kernel_stack_parse(buf, (size_t)n, out->kernel, VG_KERNEL_STACK_MAX);
}

int vg_thread_info_read(const struct vg_target *t, pid_t tid, bool with_kernel_stack,
			struct vg_thread_info *out, struct vg_error *err)
{
	struct vg_proc_stat st;
	char buf[4096];
	ssize_t n;
	long hz = sysconf(_SC_CLK_TCK);
	int rc;

	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->syscall.nr = -1;
	/* task/TID/stat, not /proc/TID/stat: the latter is the thread-group
	 * view, whose CPU times are the whole process's. */
	n = read_task_file(t, tid, "stat", buf, sizeof(buf));
	if (n < 0)
		return vg_error_proc(err, (int)-n, tid, "/proc/PID/task/TID/stat");
	if (n == 0)  /* released between open and read */
		return vg_error_proc(err, ESRCH, tid, "/proc/PID/task/TID/stat");
	rc = vg_proc_stat_parse(buf, &st);
	if (rc < 0)
		return vg_error_set(err, rc, "cannot parse /proc/%d/task/%d/stat", (int)t->pid, (int)tid);
	out->state = st.state;
	if (hz <= 0)
		hz = 100;
	out->user_ns = st.utime * (1000000000ULL / (unsigned long long)hz);
	out->system_ns = st.stime * (1000000000ULL / (unsigned long long)hz);

	/* comm in stat is cut at 64 bytes and shares the line with ')':
	 * the comm file is the name as set (pthread_setname_np). */
	n = read_task_file(t, tid, "comm", buf, sizeof(buf));
	if (n < 0)
		return vg_error_proc(err, (int)-n, tid, "/proc/TID/comm");
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	memcpy(out->name, buf, (size_t)n < sizeof(out->name) ? (size_t)n + 1 : sizeof(out->name));
	out->name[sizeof(out->name) - 1] = '\0';

	n = read_task_file(t, tid, "status", buf, sizeof(buf));
	if (n < 0)
		return vg_error_proc(err, (int)-n, tid, "/proc/TID/status");
	vg_thread_status_parse(buf, (size_t)n, &out->status);

	n = read_task_file(t, tid, "syscall", buf, sizeof(buf));
	if (n < 0)
		out->syscall_error = (int)n;
	else if (vg_thread_syscall_parse(buf, (size_t)n, &out->syscall) < 0)
		out->syscall_error = -EINVAL;

	if (with_kernel_stack) {
		read_kernel_stack(t, tid, out);
	} else {
		out->kernel_error = -ENODATA;
		snprintf(out->kernel_why, sizeof(out->kernel_why), "not asked for");
	}
	return 0;
}

const char *vg_thread_state_name(char state)
{
	/* fs/proc/array.c task_state_array, plus the letters of older kernels */
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'X': return "dead";
	case 'Z': return "zombie";
	case 'P': return "parked";
	case 'I': return "idle";
	case 'W': return "waking";
	case 'K': return "wakekill";
	default: return "unknown";
	}
}

bool vg_thread_info_moved(const struct vg_thread_info *before,
			  const struct vg_thread_info *after)
{
	const struct vg_thread_syscall *a = &before->syscall, *b = &after->syscall;

	if (before->tid != after->tid)
		return true;
	if (before->state == 'R' || after->state == 'R' || a->state == VG_SYSCALL_RUNNING ||
	    b->state == VG_SYSCALL_RUNNING)
		return true;
	if (!before->status.has_ctxt || !after->status.has_ctxt ||
	    before->status.voluntary_ctxt != after->status.voluntary_ctxt ||
	    before->status.nonvoluntary_ctxt != after->status.nonvoluntary_ctxt)
		return true;
	if (before->user_ns != after->user_ns || before->system_ns != after->system_ns)
		return true;
	return a->state != b->state || a->nr != b->nr || a->sp != b->sp || a->pc != b->pc ||
	       memcmp(a->args, b->args, sizeof(a->args)) != 0;
}
