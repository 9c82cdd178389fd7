/* perfmap.c - /tmp/perf-PID.map: parsing (untrusted, bounded), the
 * latest-line-wins lookup, and reading the target's file through its root
 * as it grows.  Never prints. */
#include "sym/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ranges.h"
#include "util/vec.h"

#define CHUNK_SIZE (64u * 1024)

/* Name storage: blocks that never move, so answers may keep pointers. */
struct vg_perfmap_chunk {
	struct vg_perfmap_chunk *next;
	size_t used, size;
	char data[];
};

static const char *store_name(struct vg_perfmap *m, const char *s, size_t n)
{
	struct vg_perfmap_chunk *c = m->chunks;
	char *p;

	if (!c || c->size - c->used < n + 1) {
		size_t size = n + 1 > CHUNK_SIZE ? n + 1 : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = m->chunks;
		m->chunks = c;
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = '\0';
	c->used += n + 1;
	return p;
}

/* A hex number of 1-16 digits, "0x" allowed (some writers add it). */
static bool parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static void parse_line(struct vg_perfmap *m, const char *p, const char *end)
{
	uint64_t start, size;
	const char *name;

	if (end > p && end[-1] == '\r')
		end--;
	if (p == end)
		return;  /* a blank line is no error */
	if (!parse_hex(&p, end, &start) || p == end || *p != ' ')
		goto bad;
	while (p < end && *p == ' ')
		p++;
	if (!parse_hex(&p, end, &size) || p == end || *p != ' ')
		goto bad;
	name = p + 1;
	if (size == 0 || start + size < start || name == end || memchr(name, '\0', (size_t)(end - name)))
		goto bad;
	if (m->n == VG_PERFMAP_MAX_ENTRIES) {
		m->full = true;
		return;
	}
	if (VG_GROW(m->entries, m->cap, m->n + 1))
		return;
	m->entries[m->n] = (struct vg_perfmap_entry){
		.start = start, .end = start + size, .seq = m->next_seq++,
		.name = store_name(m, name, (size_t)(end - name)),
	};
	if (!m->entries[m->n].name)
		return;
	m->n++;
	m->sorted = false;
	return;
bad:
	m->bad_lines++;
}

size_t vg_perfmap_feed(struct vg_perfmap *m, const char *buf, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line = nl ? (size_t)(nl - (buf + pos)) : len - pos;

		if (m->skipping) {
			/* the rest of an over-long line */
			pos += nl ? line + 1 : line;
			m->skipping = !nl;
			continue;
		}
		if (line > VG_PERFMAP_MAX_LINE) {
			m->bad_lines++;
			pos += nl ? line + 1 : line;
			m->skipping = !nl;
			continue;
		}
		if (!nl)
			break;  /* incomplete: the writer is mid-line */
		parse_line(m, buf + pos, nl);
		pos += line + 1;
	}
	return pos;
}

static int by_start_then_seq(const void *a, const void *b)
{
	const struct vg_perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_index(struct vg_perfmap *m)
{
	uint64_t *max_end = realloc(m->max_end, (m->n ? m->n : 1) * sizeof(*max_end));

	if (!max_end)
		return -ENOMEM;
	m->max_end = max_end;
	qsort(m->entries, m->n, sizeof(*m->entries), by_start_then_seq);
	vg_ranges_max_hi(max_end, m->entries, sizeof(*m->entries), m->n);
	m->sorted = true;
	return 0;
}

const struct vg_perfmap_entry *vg_perfmap_lookup(struct vg_perfmap *m, uint64_t addr)
{
	const struct vg_perfmap_entry *best = NULL;

	if (!m->sorted && build_index(m) < 0)
		return NULL;
	/* Every entry containing addr, not only the innermost: the latest
	 * line wins.  Overlaps are rare (reused code space), so this is a
	 * step or two. */
	for (size_t i = vg_ranges_find(m->entries, sizeof(*m->entries), m->n, m->max_end, addr);
	     i != SIZE_MAX;
	     i = vg_ranges_prev_containing(m->entries, sizeof(*m->entries), m->max_end, i, addr))
		if (!best || m->entries[i].seq > best->seq)
			best = &m->entries[i];
	return best;
}

/* The pid of the process in its own PID namespace: the last NSpid field
 * (the file is named by what getpid() returned there). */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;

			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				if (v > 0)
					ns = (pid_t)v;
				p = end;
			}
			break;
		}
	}
	fclose(f);
	return ns;
}

int vg_perfmap_open_target(struct vg_perfmap *m, pid_t pid, pid_t mm_pid,
			   struct vg_error *err)
{
	char proc[32];
	struct stat st;
	pid_t ns = ns_pid(pid);

	memset(m, 0, sizeof(*m));
	m->sorted = true;
	snprintf(m->path, sizeof(m->path), "/proc/%d/root/tmp/perf-%d.map",
		 (int)(mm_pid ? mm_pid : pid), (int)ns);
	snprintf(m->label, sizeof(m->label), "[perf-%d.map]", (int)ns);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &st) < 0)
		return vg_error_set(err, -errno, "cannot stat %s: %s", proc, strerror(errno));
	m->owner = st.st_uid;
	return 0;
}

/* Forget the entries (names stay: earlier answers borrowed them). */
static void reset_entries(struct vg_perfmap *m)
{
	m->n = 0;
	m->sorted = true;
	m->skipping = false;
	m->consumed = 0;
}

int vg_perfmap_update(struct vg_perfmap *m, uint64_t now_ns, uint64_t min_interval_ns,
		      struct vg_error *err)
{
	char fdpath[40];
	struct stat st;
	char *buf = NULL;
	int pfd, fd, rc = 0;

	if (m->checked_ns && now_ns - m->checked_ns < min_interval_ns)
		return m->exists ? 0 : -ENOENT;
	m->checked_ns = now_ns ? now_ns : 1;
	/* O_PATH first: whatever the target put there (a FIFO, a device, a
	 * symlink) is judged before it is opened for real. */
	pfd = open(m->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		m->exists = false;
		return vg_error_set(err, -errno, "%s: %s", m->path, strerror(errno));
	}
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		m->exists = false;
		return vg_error_set(err, -EINVAL, "%s is not a regular file: ignored", m->path);
	}
	/* In a shared /tmp anyone may create perf-PID.map for another's
	 * process: only the target's user (or root) names its code, as perf
	 * insists too. */
	if (st.st_uid != m->owner && st.st_uid != 0) {
		close(pfd);
		m->exists = false;
		return vg_error_set(err, -EPERM, "%s belongs to uid %u, not to the process's user (%u): ignored",
				    m->path, (unsigned)st.st_uid, (unsigned)m->owner);
	}
	m->exists = true;
	if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->inode ||
	    (uint64_t)st.st_size < m->consumed) {
		reset_entries(m);
		m->dev = st.st_dev;
		m->inode = st.st_ino;
	}
	if ((uint64_t)st.st_size == m->consumed) {
		close(pfd);
		return 0;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", pfd);
	fd = open(fdpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	close(pfd);
	if (fd < 0)
		return vg_error_set(err, -errno, "%s: %s", m->path, strerror(errno));
	buf = malloc(1u << 20);
	if (!buf) {
		close(fd);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	for (;;) {
		ssize_t got = pread(fd, buf, 1u << 20, (off_t)m->consumed);
		size_t used;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			rc = vg_error_set(err, -errno, "%s: %s", m->path, strerror(errno));
			break;
		}
		if (got == 0 || m->full)
			break;
		used = vg_perfmap_feed(m, buf, (size_t)got);
		if (used == 0)
			break;  /* an incomplete last line: read again later */
		m->consumed += used;
	}
	free(buf);
	close(fd);
	return rc;
}

void vg_perfmap_free(struct vg_perfmap *m)
{
	struct vg_perfmap_chunk *c = m->chunks;

	while (c) {
		struct vg_perfmap_chunk *next = c->next;

		free(c);
		c = next;
	}
	free(m->entries);
	free(m->max_end);
	memset(m, 0, sizeof(*m));
}
