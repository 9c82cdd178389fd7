/* fuzz_findproc.c - libFuzzer harness for matching a process name against
 * what /proc says of a process (comm, exe link, raw cmdline: all chosen by
 * the target).  Input: name NUL comm NUL exe NUL cmdline-bytes.  Must not
 * read past the cmdline's length (no final NUL needed), and a match must
 * be one of the documented equalities.  Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/findproc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *fields[3];
	size_t left = size;
	char *cmd;
	bool m;

	for (int i = 0; i < 3; i++) {
		const char *z = memchr(p, '\0', left);

		if (!z)
			return 0;
		fields[i] = p;
		left -= (size_t)(z - p) + 1;
		p = z + 1;
	}
	/* An exact-size copy: ASan catches a read past the cmdline. */
	cmd = malloc(left ? left : 1);
	if (!cmd)
		return 0;
	memcpy(cmd, p, left);
	m = vg_proc_name_matches(fields[0], fields[1], fields[2][0] ? fields[2] : NULL, cmd, left);
	if (m && !fields[0][0])
		abort();   /* the empty name matches nothing */
	if (m && strcmp(fields[0], fields[1]) != 0 && !strstr(fields[2], fields[0]) &&
	    !memmem(cmd, left, fields[0], strlen(fields[0])))
		abort();   /* a match must come from one of the three */
	free(cmd);
	return 0;
}
