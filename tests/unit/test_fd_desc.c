/* test_fd_desc.c - /proc/net parsers on recorded lines (IPv4, IPv6, UDP,
 * unix with and without a path, malformed lines), link classification,
 * and live descriptions of this process's own fds: a loopback TCP
 * connection (both ports), a listening socket, a pipe's two ends, an
 * eventfd, an epoll fd, a file, and an fd that does not exist. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stack/fd_desc.h"

#define P(s) s, sizeof(s) - 1

static const char tcp[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4711 1 0000000000000000 100 0 0 10 0\n"
	"   1: 0100007F:18EB 0100007F:C822 01 00000000:00000000 00:00000000 00000000     0        0 4712 1 0000000000000000 20 4 30 10 -1\n"
	"   2: garbage\n"
	"   3: 0100007F:18EB 0100007F:C8 01 00000000:00000000 00:00000000 00000000     0        0 4713 1\n";

static const char tcp6[] =
	"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5001 1 0000000000000000 100 0 0 10 0\n";

static const char unix_text[] =
	"Num       RefCount Protocol Flags    Type St Inode Path\n"
	"0000000000000000: 00000002 00000000 00010000 0001 01 6001 /run/my sock\n"
	"0000000000000000: 00000003 00000000 00000000 0001 03 6002\n"
	"0000000000000000: 00000002 00000000 00000000 0002 01 6003 @abstract\n";

static void test_inet(void **state)
{
	struct vg_inet_sock s;

	(void)state;
	assert_int_equal(vg_net_inet_find(P(tcp), false, 4711, &s), 1);
	assert_string_equal(s.local, "127.0.0.1:6379");
	assert_string_equal(s.remote, "0.0.0.0:0");
	assert_int_equal(s.state, 10);
	assert_string_equal(vg_tcp_state_name(s.state), "LISTEN");
	assert_int_equal(vg_net_inet_find(P(tcp), false, 4712, &s), 1);
	assert_string_equal(s.remote, "127.0.0.1:51234");
	assert_string_equal(vg_tcp_state_name(s.state), "ESTABLISHED");
	assert_int_equal(vg_net_inet_find(P(tcp), false, 4713, &s), 0);  /* bad port */
	assert_int_equal(vg_net_inet_find(P(tcp), false, 9999, &s), 0);
	assert_int_equal(vg_net_inet_find(P(tcp), true, 4711, &s), 0);   /* not IPv6 text */
	assert_int_equal(vg_net_inet_find(P(tcp6), true, 5001, &s), 1);
	assert_string_equal(s.local, "[::1]:8080");
	assert_string_equal(vg_tcp_state_name(99), "?");
}

static void test_unix(void **state)
{
	struct vg_unix_sock u;

	(void)state;
	assert_int_equal(vg_net_unix_find(P(unix_text), 6001, &u), 1);
	assert_string_equal(u.path, "/run/my sock");
	assert_int_equal(u.type, 1);
	assert_int_equal(vg_net_unix_find(P(unix_text), 6002, &u), 1);
	assert_string_equal(u.path, "");
	assert_int_equal(u.state, 3);
	assert_int_equal(vg_net_unix_find(P(unix_text), 6003, &u), 1);
	assert_string_equal(u.path, "@abstract");
	assert_int_equal(vg_net_unix_find(P(unix_text), 1, &u), 0);
}

static void test_link_kind(void **state)
{
	uint64_t ino;

	(void)state;
	assert_int_equal(vg_fd_link_kind("socket:[123]", &ino), VG_FD_SOCKET);
	assert_int_equal(ino, 123);
	assert_int_equal(vg_fd_link_kind("pipe:[77]", &ino), VG_FD_PIPE);
	assert_int_equal(ino, 77);
	assert_int_equal(vg_fd_link_kind("anon_inode:[eventfd]", &ino), VG_FD_EVENTFD);
	assert_int_equal(vg_fd_link_kind("anon_inode:[eventpoll]", &ino), VG_FD_EPOLL);
	assert_int_equal(vg_fd_link_kind("anon_inode:inotify", &ino), VG_FD_ANON);
	assert_int_equal(vg_fd_link_kind("/var/log/x", &ino), VG_FD_FILE);
	assert_int_equal(ino, 0);
	assert_int_equal(vg_fd_link_kind("socket:[12", &ino), VG_FD_FILE);
	assert_int_equal(vg_fd_link_kind("", &ino), VG_FD_UNKNOWN);
	assert_string_equal(vg_fd_kind_name(VG_FD_PIPE), "pipe");
}

static void describe(struct vg_fd_describer *d, int fd, struct vg_fd_desc *out)
{
	struct vg_error err = { 0 };

	if (vg_fd_describe(d, fd, out, &err) != 0)
		fail_msg("fd %d: %s", fd, err.msg);
}

static void test_live(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	struct vg_target *t = NULL;
	struct vg_fd_describer *d;
	struct vg_fd_desc desc;
	struct vg_error err = { 0 };
	int lfd, cfd, sfd, pfd[2], efd, epfd, ffd;
	char want[200], buf[400];
	unsigned lport, cport;

	(void)state;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	lport = ntohs(a.sin_port);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof a), 0);
	sfd = accept(lfd, NULL, NULL);
	assert_true(sfd >= 0);
	len = sizeof a;
	assert_int_equal(getsockname(cfd, (struct sockaddr *)&a, &len), 0);
	cport = ntohs(a.sin_port);
	assert_int_equal(pipe(pfd), 0);
	efd = eventfd(0, 0);
	epfd = epoll_create1(0);
	ffd = open("/proc/self/exe", O_RDONLY);
	assert_true(efd >= 0 && epfd >= 0 && ffd >= 0);

	assert_int_equal(vg_target_open(getpid(), &t, NULL), 0);
	d = vg_fd_describer_new(t);
	assert_non_null(d);

	describe(d, sfd, &desc);
	assert_int_equal(desc.kind, VG_FD_TCP);
	snprintf(want, sizeof want, "tcp 127.0.0.1:%u -> 127.0.0.1:%u (ESTABLISHED)", lport, cport);
	assert_string_equal(desc.text, want);
	describe(d, lfd, &desc);
	snprintf(want, sizeof want, "tcp 127.0.0.1:%u (LISTEN)", lport);
	assert_string_equal(desc.text, want);

	describe(d, pfd[0], &desc);
	assert_int_equal(desc.kind, VG_FD_PIPE);
	snprintf(want, sizeof want, "pipe:[%llu] read end, write end is fd %d",
		 (unsigned long long)desc.inode, pfd[1]);
	assert_string_equal(desc.text, want);
	describe(d, pfd[1], &desc);
	snprintf(want, sizeof want, "pipe:[%llu] write end, read end is fd %d",
		 (unsigned long long)desc.inode, pfd[0]);
	assert_string_equal(desc.text, want);

	describe(d, efd, &desc);
	assert_string_equal(desc.text, "eventfd");
	describe(d, epfd, &desc);
	assert_string_equal(desc.text, "epoll");
	describe(d, ffd, &desc);
	assert_int_equal(desc.kind, VG_FD_FILE);
	assert_true(desc.text[0] == '/');

	assert_true(vg_fd_describer_text(d, efd, buf, sizeof buf));
	assert_string_equal(buf, "eventfd");
	assert_int_equal(vg_fd_describe(d, 987654, &desc, &err), -EBADF);
	assert_true(strstr(err.msg, "987654") != NULL);
	assert_false(vg_fd_describer_text(d, 987654, buf, sizeof buf));

	/* after the pipe's write end is closed, the read end is alone */
	close(pfd[1]);
	describe(d, pfd[0], &desc);
	assert_true(strstr(desc.text, "write end not in this process") != NULL);

	vg_fd_describer_free(d);
	vg_target_free(t);
	close(lfd), close(cfd), close(sfd), close(pfd[0]), close(efd), close(epfd), close(ffd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inet),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_link_kind),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
