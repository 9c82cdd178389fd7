/* fuzz_proc_net.c - libFuzzer harness for the /proc/PID/net parsers of
 * stack/fd_desc.c (tcp, tcp6, udp, udp6, unix).
 *
 * The first byte picks IPv4, IPv6 or unix, the next eight the inode to
 * look for; the rest is the table's text.  Promises checked: a found
 * socket has NUL-ended addresses with a ':' before the port (a non-empty
 * local address), a unix path is NUL-ended; nothing is read past the
 * text.  Built by tests/fuzz/run.sh, not by Meson. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stack/fd_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t inode;
	const char *text;
	size_t len;

	if (size < 9)
		return 0;
	memcpy(&inode, data + 1, 8);
	/* small inodes too, so that fuzzed text finds them */
	if (data[0] & 0x80)
		inode &= 0xffff;
	text = (const char *)data + 9;
	len = size - 9;
	if (data[0] % 3 == 2) {
		struct vg_unix_sock u;

		if (vg_net_unix_find(text, len, inode, &u) == 1 &&
		    !memchr(u.path, '\0', sizeof u.path))
			abort();
	} else {
		struct vg_inet_sock s;

		if (vg_net_inet_find(text, len, data[0] % 3 == 1, inode, &s) == 1) {
			if (!memchr(s.local, '\0', sizeof s.local) || !strchr(s.local, ':') ||
			    !memchr(s.remote, '\0', sizeof s.remote) || !strchr(s.remote, ':'))
				abort();
			(void)vg_tcp_state_name(s.state);
		}
	}
	return 0;
}
