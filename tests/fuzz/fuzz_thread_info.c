/* fuzz_thread_info.c - libFuzzer harness for the /proc/TID text parsers of
 * stack/thread_info.c: syscall, status and stack.
 *
 * The first byte picks the parser; the rest is the file's text, not
 * NUL-ended (the parsers take a length).  Promises checked: a refused
 * syscall line leaves the UNKNOWN state and nr -1, an accepted one is
 * one of the three shapes; a kernel stack gives at most max frames, each
 * a NUL-ended function name.  Built by tests/fuzz/run.sh, not by Meson. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stack/thread_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;

	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		struct vg_thread_syscall sc;
		int r = vg_thread_syscall_parse(text, len, &sc);

		if (r == 0 && sc.state != VG_SYSCALL_RUNNING && sc.state != VG_SYSCALL_NONE &&
		    sc.state != VG_SYSCALL_IN)
			abort();
		if (r == 0 && (sc.state == VG_SYSCALL_IN) != (sc.nr >= 0))
			abort();
		if (r != 0 && (r != -EINVAL || sc.state != VG_SYSCALL_UNKNOWN || sc.nr != -1))
			abort();
		break;
	}
	case 1: {
		struct vg_thread_status st;
		int r = vg_thread_status_parse(text, len, &st);

		if (r != 0 && r != -EINVAL)
			abort();
		break;
	}
	default: {
		struct vg_kernel_frame f[8];
		size_t n = vg_kernel_stack_parse(text, len, f, 8);

		if (n > 8)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!memchr(f[i].function, '\0', sizeof f[i].function) || !f[i].function[0])
				abort();
	}
	}
	return 0;
}
