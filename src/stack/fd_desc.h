/* fd_desc.h - what a file descriptor of the target is, in one line.
 *
 * readlink /proc/PID/fd/N says "socket:[INODE]", "pipe:[INODE]",
 * "anon_inode:[eventfd]" or a path.  A socket's inode is looked up in the
 * target's network namespace (/proc/PID/net/{tcp,tcp6,udp,udp6,unix}):
 * "tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED)", "unix /run/x.sock".
 * A pipe says which end it is (fdinfo flags) and which fd of the same
 * process holds the other end, when one does (looking in other processes
 * would mean reading the fd table of every process: not cheap, not done).  The
 * /proc/net parsers are pure (fuzzed by tests/fuzz/fuzz_proc_net.c); the
 * describer reads each net table at most once. */
#ifndef VG_STACK_FD_DESC_H
#define VG_STACK_FD_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"
#include "util/error.h"

enum vg_fd_kind {
	VG_FD_UNKNOWN = 0,
	VG_FD_FILE,         /* a path (regular file, device, directory...) */
	VG_FD_TCP,          /* IPv4 or IPv6 */
	VG_FD_UDP,
	VG_FD_UNIX,
	VG_FD_SOCKET,       /* another family, or not found in /proc/net */
	VG_FD_PIPE,
	VG_FD_EVENTFD,
	VG_FD_EPOLL,
	VG_FD_TIMERFD,
	VG_FD_SIGNALFD,
	VG_FD_ANON,         /* another anon_inode: inotify, io_uring, pidfd... */
};

/* "file", "tcp", "udp", "unix", "socket", "pipe", "eventfd", "epoll",
 * "timerfd", "signalfd", "anon", "unknown". */
const char *vg_fd_kind_name(enum vg_fd_kind kind);

/* One socket of /proc/net/tcp, tcp6, udp or udp6. */
struct vg_inet_sock {
	char local[64];     /* "127.0.0.1:6379", "[::1]:6379" */
	char remote[64];    /* "0.0.0.0:0" when not connected */
	unsigned state;     /* TCP_ESTABLISHED (1) .. TCP_NEW_SYN_RECV (12) */
};

/* Find inode in the text of /proc/net/tcp (ipv6 false) or tcp6 (true);
 * udp and udp6 share the format.  Returns 1 and fills out when found, 0
 * when not; malformed lines are skipped. */
int vg_net_inet_find(const char *text, size_t len, bool ipv6, uint64_t inode,
		     struct vg_inet_sock *out);

/* "ESTABLISHED", "LISTEN", ... (include/net/tcp_states.h); "?" else. */
const char *vg_tcp_state_name(unsigned state);

/* One socket of /proc/net/unix. */
struct vg_unix_sock {
	char path[256];     /* "" when unnamed; abstract names start with '@' */
	unsigned type;      /* SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5 */
	unsigned state;     /* SS_UNCONNECTED 1, SS_CONNECTED 3 ... */
};

/* Find inode in the text of /proc/net/unix: 1 and out filled, or 0. */
int vg_net_unix_find(const char *text, size_t len, uint64_t inode, struct vg_unix_sock *out);

struct vg_fd_desc {
	enum vg_fd_kind kind;
	uint64_t inode;     /* sockets and pipes, else 0 */
	char text[400];     /* the line a person reads */
};

struct vg_fd_describer;  /* opaque: target (borrowed), cached net tables */

/* t is borrowed and must outlive d.  Returns NULL only on allocation
 * failure. */
struct vg_fd_describer *vg_fd_describer_new(const struct vg_target *t);
struct vg_fd_describer *vg_fd_describer_free(struct vg_fd_describer *d);
/* Forget the cached /proc/net tables (a later snapshot). */
void vg_fd_describer_reset(struct vg_fd_describer *d);

/* Describe fd of the target.  Returns 0; -EBADF when the target has no
 * such fd; -ESRCH when it is gone; -EACCES/-EPERM when /proc/PID/fd is
 * refused (err says so).  A socket not found in /proc/net is still 0:
 * kind VG_FD_SOCKET and "socket:[INODE]". */
int vg_fd_describe(struct vg_fd_describer *d, int fd, struct vg_fd_desc *out,
		   struct vg_error *err);

/* The describe_fd callback of struct vg_decode_env (syscall_text.h) over
 * a describer (ctx): true and the text when described. */
bool vg_fd_describer_text(void *describer, int fd, char *buf, size_t size);

/* Classify a /proc/PID/fd link target alone (no /proc/net lookup): the
 * kind and, for "socket:[N]" and "pipe:[N]", the inode.  Pure. */
enum vg_fd_kind vg_fd_link_kind(const char *link, uint64_t *inode);

#endif
