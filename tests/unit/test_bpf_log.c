/* test_bpf_log.c - the verifier's reason picked out of a log
 * (perf/bpf_log.h): the last line that says something, past the closing
 * statistics and libbpf's framing, in a buffer the kernel filled itself
 * (a light skeleton's load), which may end without a NUL or carry old
 * bytes after the NUL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perf/bpf_log.h"

static void reason_of(const char *log, size_t len, const char *want)
{
	char out[128];

	memset(out, 'x', sizeof(out));
	vg_bpf_log_reason_of(log, len, out, sizeof(out));
	if (strcmp(out, want) != 0)
		fail_msg("log %.*s: reason '%s', want '%s'", (int)len, log, out, want);
}

static void test_last_meaningful_line(void **state)
{
	static const char log[] =
		"0: R1=ctx() R10=fp0\n"
		"61: (79) r1 = *(u64 *)(r7 +24)\n"
		"access beyond the end of member __state (mend:28) in struct task_struct\n"
		"processed 60 insns (limit 1000000) max_states_per_insn 0\n"
		"verification time 12 usec\n"
		"stack depth 240\n"
		"\n";

	(void)state;
	reason_of(log, sizeof(log),
		  "access beyond the end of member __state (mend:28) in struct task_struct");
}

static void test_old_bytes_after_the_nul(void **state)
{
	/* A second load wrote a shorter log over a longer one. */
	static const char log[] = "R2 invalid mem access 'scalar'\n\0old line from the loader\n";

	(void)state;
	reason_of(log, sizeof(log) - 1, "R2 invalid mem access 'scalar'");
}

static void test_no_nul_and_short_lines(void **state)
{
	/* The buffer ends without a NUL, with lines shorter than the
	 * prefixes that are skipped: nothing past len is read (ASan). */
	char log[8];

	(void)state;
	memcpy(log, "ok\nab\nc", 7);
	reason_of(log, 7, "c");
	memcpy(log, "-- END", 6);
	reason_of(log, 6, "");
	reason_of(log, 0, "");
	reason_of("\n\n \n", 4, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_meaningful_line),
		cmocka_unit_test(test_old_bytes_after_the_nul),
		cmocka_unit_test(test_no_nul_and_short_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
