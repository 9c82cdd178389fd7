/* fd_desc.c - a target fd in one line, from /proc/PID/fd and /proc/PID/net.
 *
 * The /proc/net tables are those of the target's network namespace (read
 * through /proc/PID/net, not /proc/net), read whole once per describer and
 * searched by inode.  Their addresses are printed by the kernel as 32-bit
 * words in host byte order (%08X of a __be32), hence the byte swaps below
 * on this little-endian architecture. */
#include "stack/fd_desc.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum net_table { NET_TCP, NET_TCP6, NET_UDP, NET_UDP6, NET_UNIX, NET_N };

static const char *const net_files[NET_N] = { "net/tcp", "net/tcp6", "net/udp", "net/udp6",
					      "net/unix" };

struct vg_fd_describer {
	const struct vg_target *t;
	char *net[NET_N];       /* NULL: not read yet */
	size_t net_len[NET_N];
	bool net_tried[NET_N];
};

const char *vg_fd_kind_name(enum vg_fd_kind kind)
{
	static const char *const names[] = {
		[VG_FD_UNKNOWN] = "unknown", [VG_FD_FILE] = "file", [VG_FD_TCP] = "tcp",
		[VG_FD_UDP] = "udp", [VG_FD_UNIX] = "unix", [VG_FD_SOCKET] = "socket",
		[VG_FD_PIPE] = "pipe", [VG_FD_EVENTFD] = "eventfd", [VG_FD_EPOLL] = "epoll",
		[VG_FD_TIMERFD] = "timerfd", [VG_FD_SIGNALFD] = "signalfd", [VG_FD_ANON] = "anon",
	};
	return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *vg_tcp_state_name(unsigned state)
{
	static const char *const names[] = {
		NULL, "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
		"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
		"NEW_SYN_RECV",
	};
	return state < sizeof names / sizeof names[0] && names[state] ? names[state] : "?";
}

/* Next line of text[*pos..len) into line (NUL-ended, cut to size); false
 * at the end.  A last line without '\n' still counts. */
static bool next_line(const char *text, size_t len, size_t *pos, char *line, size_t size)
{
	const char *nl;
	size_t n;

	if (*pos >= len)
		return false;
	nl = memchr(text + *pos, '\n', len - *pos);
	n = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
	memcpy(line, text + *pos, n < size ? n : size - 1);
	line[n < size ? n : size - 1] = '\0';
	*pos += n + 1;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* n hex digits at s into *v; false on anything else. */
static bool hex_n(const char *s, size_t n, uint32_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		int h = hexval(s[i]);

		if (h < 0)
			return false;
		*v = *v << 4 | (uint32_t)h;
	}
	return true;
}

/* "0100007F:1F90" (or 32 hex digits for IPv6) -> "127.0.0.1:8080". */
static bool inet_addr_text(const char *s, size_t n, bool ipv6, char *out, size_t size)
{
	size_t hexlen = ipv6 ? 32 : 8;
	unsigned char bytes[16];
	char addr[INET6_ADDRSTRLEN];
	uint32_t port, word;

	if (n != hexlen + 5 || s[hexlen] != ':' || !hex_n(s + hexlen + 1, 4, &port))
		return false;
	for (size_t w = 0; w < hexlen / 8; w++) {
		if (!hex_n(s + w * 8, 8, &word))
			return false;
		/* the kernel printed a network-order word as a host integer */
		memcpy(bytes + w * 4, &word, 4);
	}
	if (!inet_ntop(ipv6 ? AF_INET6 : AF_INET, bytes, addr, sizeof addr))
		return false;
	snprintf(out, size, ipv6 ? "[%s]:%u" : "%s:%u", addr, (unsigned)port);
	return true;
}

/* The whitespace-separated field i (0-based) of line: pointer and length. */
static bool field(const char *line, int i, const char **start, size_t *n)
{
	const char *p = line;

	for (int k = 0;; k++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return false;
		const char *b = p;

		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (k == i) {
			*start = b;
			*n = (size_t)(p - b);
			return true;
		}
	}
}

static bool field_u64(const char *line, int i, int base, uint64_t *v)
{
	const char *s;
	size_t n;
	char buf[32], *end;

	if (!field(line, i, &s, &n) || n == 0 || n >= sizeof buf || s[0] == '-' || s[0] == '+')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, base);
	return *end == '\0' && !errno;
}

int vg_net_inet_find(const char *text, size_t len, bool ipv6, uint64_t inode,
		     struct vg_inet_sock *out)
{
	char line[512];
	size_t pos = 0;

	if (!text || !out)
		return 0;
	/* "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ..." */
	while (next_line(text, len, &pos, line, sizeof line)) {
		const char *loc, *rem, *st;
		size_t nl, nr, ns;
		uint64_t ino;
		uint32_t state;

		if (!field_u64(line, 9, 10, &ino) || ino != inode)
			continue;
		if (!field(line, 1, &loc, &nl) || !field(line, 2, &rem, &nr) ||
		    !field(line, 3, &st, &ns) || ns != 2 || !hex_n(st, 2, &state))
			continue;
		memset(out, 0, sizeof(*out));
		if (!inet_addr_text(loc, nl, ipv6, out->local, sizeof out->local) ||
		    !inet_addr_text(rem, nr, ipv6, out->remote, sizeof out->remote))
			continue;
		out->state = state;
		return 1;
	}
	return 0;
}

int vg_net_unix_find(const char *text, size_t len, uint64_t inode, struct vg_unix_sock *out)
{
	char line[512];
	size_t pos = 0;

	if (!text || !out)
		return 0;
	/* "Num: RefCount Protocol Flags Type St Inode [Path]" */
	while (next_line(text, len, &pos, line, sizeof line)) {
		uint64_t ino, type, st;
		const char *path;
		size_t n;

		if (!field_u64(line, 6, 10, &ino) || ino != inode || !field_u64(line, 4, 16, &type) ||
		    !field_u64(line, 5, 16, &st))
			continue;
		memset(out, 0, sizeof(*out));
		out->type = (unsigned)type;
		out->state = (unsigned)st;
		/* The path is the rest of the line: it may contain spaces. */
		if (field(line, 7, &path, &n))
			snprintf(out->path, sizeof out->path, "%s", path);
		return 1;
	}
	return 0;
}

enum vg_fd_kind vg_fd_link_kind(const char *link, uint64_t *inode)
{
	static const struct { const char *name; enum vg_fd_kind kind; } anon[] = {
		{ "[eventfd]", VG_FD_EVENTFD }, { "[eventpoll]", VG_FD_EPOLL },
		{ "[timerfd]", VG_FD_TIMERFD }, { "[signalfd]", VG_FD_SIGNALFD },
	};
	unsigned long long ino;
	char end;

	*inode = 0;
	if (!link || !*link)
		return VG_FD_UNKNOWN;
	if (sscanf(link, "socket:[%llu%c", &ino, &end) == 2 && end == ']') {
		*inode = ino;
		return VG_FD_SOCKET;
	}
	if (sscanf(link, "pipe:[%llu%c", &ino, &end) == 2 && end == ']') {
		*inode = ino;
		return VG_FD_PIPE;
	}
	if (strncmp(link, "anon_inode:", 11) == 0) {
		for (size_t i = 0; i < sizeof anon / sizeof anon[0]; i++)
			if (strcmp(link + 11, anon[i].name) == 0)
				return anon[i].kind;
		return VG_FD_ANON;
	}
	return VG_FD_FILE;
}

struct vg_fd_describer *vg_fd_describer_new(const struct vg_target *t)
{
	struct vg_fd_describer *d = calloc(1, sizeof(*d));

	if (d)
		d->t = t;
	return d;
}

void vg_fd_describer_reset(struct vg_fd_describer *d)
{
	if (!d)
		return;
	for (int i = 0; i < NET_N; i++) {
		free(d->net[i]);
		d->net[i] = NULL;
		d->net_len[i] = 0;
		d->net_tried[i] = false;
	}
}

struct vg_fd_describer *vg_fd_describer_free(struct vg_fd_describer *d)
{
	vg_fd_describer_reset(d);
	free(d);
	return NULL;
}

/* Read a whole /proc file of any size; NULL on failure. */
static char *slurp(const char *path, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0)
		goto fail;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);

			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static const char *net_table(struct vg_fd_describer *d, enum net_table which, size_t *len)
{
	char path[64];

	if (!d->net_tried[which]) {
		d->net_tried[which] = true;
		d->net[which] = slurp(vg_target_proc_path(d->t, path, sizeof path, net_files[which]),
				      &d->net_len[which]);
	}
	*len = d->net_len[which];
	return d->net[which];
}

static bool describe_socket(struct vg_fd_describer *d, struct vg_fd_desc *out)
{
	static const struct { enum net_table table; bool ipv6; enum vg_fd_kind kind; } inet[] = {
		{ NET_TCP, false, VG_FD_TCP }, { NET_TCP6, true, VG_FD_TCP },
		{ NET_UDP, false, VG_FD_UDP }, { NET_UDP6, true, VG_FD_UDP },
	};
	static const char *const unix_types[] = { NULL, "stream", "dgram", NULL, NULL, "seqpacket" };
	struct vg_inet_sock s;
	struct vg_unix_sock u;
	const char *text;
	size_t len;

	for (size_t i = 0; i < sizeof inet / sizeof inet[0]; i++) {
		text = net_table(d, inet[i].table, &len);
		if (!text || vg_net_inet_find(text, len, inet[i].ipv6, out->inode, &s) != 1)
			continue;
		out->kind = inet[i].kind;
		if (inet[i].kind == VG_FD_TCP && s.state == 10 /* LISTEN */)
			snprintf(out->text, sizeof out->text, "tcp %s (LISTEN)", s.local);
		else if (inet[i].kind == VG_FD_TCP)
			snprintf(out->text, sizeof out->text, "tcp %s -> %s (%s)", s.local,
				 s.remote, vg_tcp_state_name(s.state));
		else if (s.state == 1 /* connected */)
			snprintf(out->text, sizeof out->text, "udp %s -> %s", s.local, s.remote);
		else
			snprintf(out->text, sizeof out->text, "udp %s", s.local);
		return true;
	}
	text = net_table(d, NET_UNIX, &len);
	if (text && vg_net_unix_find(text, len, out->inode, &u) == 1) {
		const char *type = u.type < 6 && unix_types[u.type] ? unix_types[u.type] : "?";

		out->kind = VG_FD_UNIX;
		snprintf(out->text, sizeof out->text, "unix %s %s", type,
			 u.path[0] ? u.path : "(unnamed)");
		return true;
	}
	return false;
}

/* O_ACCMODE of fd from /proc/PID/fdinfo/FD ("flags:\t0100000" octal). */
static int fd_accmode(const struct vg_target *t, int fd)
{
	char rest[48], path[96], buf[512];
	const char *p;
	ssize_t n;
	int f;

	snprintf(rest, sizeof rest, "fdinfo/%d", fd);
	f = open(vg_target_proc_path(t, path, sizeof path, rest), O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof buf - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "flags:");
	return p ? (int)(strtoul(p + 6, NULL, 8) & O_ACCMODE) : -1;
}

/* Another fd of the same process on the same pipe with the other access
 * mode; -1 when none. */
static int pipe_other_end(const struct vg_target *t, int fd, const char *link, int mode)
{
	char path[64], lpath[96], other[64];
	struct dirent *e;
	DIR *dir = opendir(vg_target_proc_path(t, path, sizeof path, "fd"));
	int found = -1;

	if (!dir)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		char *end;
		long n = strtol(e->d_name, &end, 10);
		ssize_t len;

		if (*end || end == e->d_name || n == fd)
			continue;
		snprintf(lpath, sizeof lpath, "%s/%ld", path, n);
		len = readlink(lpath, other, sizeof other - 1);
		if (len < 0)
			continue;
		other[len] = '\0';
		if (strcmp(other, link) == 0 && fd_accmode(t, (int)n) != mode) {
			found = (int)n;
			break;
		}
	}
	closedir(dir);
	return found;
}

int vg_fd_describe(struct vg_fd_describer *d, int fd, struct vg_fd_desc *out,
		   struct vg_error *err)
{
	char rest[32], path[96], link[320];
	ssize_t n;

	memset(out, 0, sizeof(*out));
	if (!d || fd < 0)
		return vg_error_set(err, -EBADF, "fd %d: not a file descriptor", fd);
	snprintf(rest, sizeof rest, "fd/%d", fd);
	n = readlink(vg_target_proc_path(d->t, path, sizeof path, rest), link, sizeof link - 1);
	if (n < 0) {
		int e = errno;

		if (e == ENOENT) {
			bool alive, changed;

			vg_target_recheck(d->t, &alive, &changed);
			if (alive && !changed)
				return vg_error_set(err, -EBADF, "pid %d has no fd %d",
						    (int)d->t->pid, fd);
		}
		return vg_error_proc(err, e, d->t->pid, "/proc/PID/fd");
	}
	link[n] = '\0';
	out->kind = vg_fd_link_kind(link, &out->inode);
	switch (out->kind) {
	case VG_FD_SOCKET:
		if (!describe_socket(d, out))
			snprintf(out->text, sizeof out->text, "%s", link);
		break;
	case VG_FD_PIPE: {
		int mode = fd_accmode(d->t, fd);
		int other = mode < 0 ? -1 : pipe_other_end(d->t, fd, link, mode);
		const char *end = mode == O_RDONLY ? "read" : mode == O_WRONLY ? "write" : NULL;
		const char *other_end = mode == O_RDONLY ? "write" : "read";

		if (!end)
			snprintf(out->text, sizeof out->text, "%s", link);
		else if (other >= 0)
			snprintf(out->text, sizeof out->text, "%s %s end, %s end is fd %d", link,
				 end, other_end, other);
		else
			snprintf(out->text, sizeof out->text, "%s %s end, %s end not in this process",
				 link, end, other_end);
		break;
	}
	case VG_FD_EVENTFD:
	case VG_FD_EPOLL:
	case VG_FD_TIMERFD:
	case VG_FD_SIGNALFD:
		snprintf(out->text, sizeof out->text, "%s", vg_fd_kind_name(out->kind));
		break;
	default:
		snprintf(out->text, sizeof out->text, "%s", link);
	}
	return 0;
}

bool vg_fd_describer_text(void *describer, int fd, char *buf, size_t size)
{
	struct vg_fd_desc desc;

	if (vg_fd_describe(describer, fd, &desc, NULL) < 0)
		return false;
	snprintf(buf, size, "%s", desc.text);
	return true;
}
