/* test_thread_info.c - the /proc/TID text parsers (syscall, status, stack)
 * on real and malformed lines, and a live read of this process: a thread
 * of ours blocked in read() on a pipe must show read(fd), its name, state
 * S, and not have moved between two reads; the calling thread itself is
 * running (inside the read of its own syscall file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "stack/thread_info.h"

#define P(s) s, sizeof(s) - 1

static void test_syscall_parse(void **state)
{
	struct vg_thread_syscall sc;

	(void)state;
	assert_int_equal(vg_thread_syscall_parse(P("running\n"), &sc), 0);
	assert_int_equal(sc.state, VG_SYSCALL_RUNNING);
	assert_int_equal(sc.nr, -1);

	assert_int_equal(vg_thread_syscall_parse(P("-1 0x7ffd4a3c1e28 0x55d0c0e011a9\n"), &sc), 0);
	assert_int_equal(sc.state, VG_SYSCALL_NONE);
	assert_int_equal(sc.sp, 0x7ffd4a3c1e28ULL);
	assert_int_equal(sc.pc, 0x55d0c0e011a9ULL);

	assert_int_equal(vg_thread_syscall_parse(
		P("202 0x55c07c9b0040 0x80 0x2 0x0 0x0 0x0 0x7f5637ffed38 0x7f5638da012b\n"), &sc), 0);
	assert_int_equal(sc.state, VG_SYSCALL_IN);
	assert_int_equal(sc.nr, 202);
	assert_int_equal(sc.args[0], 0x55c07c9b0040ULL);
	assert_int_equal(sc.args[1], 0x80);
	assert_int_equal(sc.args[2], 2);
	assert_int_equal(sc.sp, 0x7f5637ffed38ULL);
	assert_int_equal(sc.pc, 0x7f5638da012bULL);

	static const char *const bad[] = {
		"", "\n", "runnin", "202 0x1 0x2\n", "-2 0x1 0x2\n", "x 0x1 0x2",
		"-1 0x1\n", "-1 0x1 0x2 0x3\n", "0 0x0 0x0 0x0 0x0 0x0 0x0 0x1 -0x2",
		"-1 0x1 0x2junk", "99999999999999999999 0x1 0x2",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (vg_thread_syscall_parse(bad[i], strlen(bad[i]), &sc) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
		assert_int_equal(sc.state, VG_SYSCALL_UNKNOWN);
	}
	/* the length is honoured: what follows is not read */
	assert_int_equal(vg_thread_syscall_parse("running-and-more", 7, &sc), 0);
	assert_int_equal(sc.state, VG_SYSCALL_RUNNING);
}

static void test_status_parse(void **state)
{
	static const char status[] =
		"Name:\tholder\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t6395\n"
		"voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
	struct vg_thread_status st;

	(void)state;
	assert_int_equal(vg_thread_status_parse(P(status), &st), 0);
	assert_int_equal(st.state, 'S');
	assert_true(st.has_ctxt);
	assert_int_equal(st.voluntary_ctxt, 12);
	assert_int_equal(st.nonvoluntary_ctxt, 3);

	assert_int_equal(vg_thread_status_parse(P("State:\tR (running)\n"), &st), 0);
	assert_int_equal(st.state, 'R');
	assert_false(st.has_ctxt);
	/* a key in the middle of a value is no key */
	assert_int_equal(vg_thread_status_parse(P("Name:\tvoluntary_ctxt_switches: 5\n"), &st), 0);
	assert_false(st.has_ctxt);
	assert_int_equal(vg_thread_status_parse(P("no keys here\n"), &st), -EINVAL);
}

static void test_kernel_stack_parse(void **state)
{
	static const char stack[] =
		"[<0>] futex_wait_queue+0x6a/0xb0\n"
		"[<ffffffff81234567>] futex_wait+0x170/0x260\n"
		"[<0>] nfs_wait_bit_killable+0x1f/0x80 [nfs]\n"
		"garbage line\n"
		"[<0>] do_syscall_64+0x82/0x190\n"
		"[<0>] entry_SYSCALL_64_after_hwframe+0x76/0x7e\n"
		"[<0>] cut_short+0x1";
	struct vg_kernel_frame f[8];
	size_t n;

	(void)state;
	n = vg_kernel_stack_parse(P(stack), f, 8);
	assert_int_equal(n, 5);
	assert_string_equal(f[0].function, "futex_wait_queue");
	assert_int_equal(f[0].offset, 0x6a);
	assert_int_equal(f[0].size, 0xb0);
	assert_int_equal(f[1].addr, 0xffffffff81234567ULL);
	assert_string_equal(f[2].function, "nfs_wait_bit_killable [nfs]");
	assert_string_equal(f[4].function, "entry_SYSCALL_64_after_hwframe");
	assert_int_equal(vg_kernel_stack_parse(P(stack), f, 2), 2);
	assert_int_equal(vg_kernel_stack_parse(P(""), f, 8), 0);
}

static void test_state_names(void **state)
{
	(void)state;
	assert_string_equal(vg_thread_state_name('R'), "running");
	assert_string_equal(vg_thread_state_name('S'), "sleeping");
	assert_string_equal(vg_thread_state_name('D'), "disk sleep");
	assert_string_equal(vg_thread_state_name('t'), "tracing stop");
	assert_string_equal(vg_thread_state_name('Z'), "zombie");
	assert_string_equal(vg_thread_state_name('?'), "unknown");
}

static int pipe_fds[2];
static volatile pid_t reader_tid;

static void *reader(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "vg-reader");
	reader_tid = gettid();
	(void)!read(pipe_fds[0], &c, 1);
	return NULL;
}

/* Wait (2 s max) until tid is inside system call nr. */
static bool wait_in_syscall(const struct vg_target *t, pid_t tid, long nr)
{
	for (int i = 0; i < 2000; i++) {
		struct vg_thread_info ti;

		if (vg_thread_info_read(t, tid, false, &ti, NULL) == 0 &&
		    ti.syscall.state == VG_SYSCALL_IN && ti.syscall.nr == nr)
			return true;
		usleep(1000);
	}
	return false;
}

static void test_live(void **state)
{
	struct vg_target *t = NULL;
	struct vg_thread_info a, b, self;
	struct vg_error err = { 0 };
	pthread_t th;

	(void)state;
	assert_int_equal(pipe(pipe_fds), 0);
	assert_int_equal(vg_target_open(getpid(), &t, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, reader, NULL), 0);
	while (!reader_tid)
		usleep(1000);
	assert_true(wait_in_syscall(t, reader_tid, 0 /* read */));

	assert_int_equal(vg_thread_info_read(t, reader_tid, true, &a, &err), 0);
	assert_string_equal(a.name, "vg-reader");
	assert_int_equal(a.state, 'S');
	assert_int_equal(a.syscall.args[0], (uint64_t)pipe_fds[0]);
	assert_true(a.status.has_ctxt);
	if (geteuid() == 0) {
		/* root: the kernel stack is readable and ends in the read path */
		assert_int_equal(a.kernel_error, 0);
		assert_true(a.n_kernel > 0);
	} else {
		assert_true(a.kernel_error < 0 && a.kernel_why[0]);
	}
	assert_int_equal(vg_thread_info_read(t, reader_tid, false, &b, &err), 0);
	assert_int_equal(b.kernel_error, -ENODATA);
	assert_false(vg_thread_info_moved(&a, &b));
	b.status.voluntary_ctxt++;
	assert_true(vg_thread_info_moved(&a, &b));

	/* CPU time is the thread's own, not the process's: this thread
	 * burns 100 ms, the blocked reader stays near zero. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
	assert_int_equal(vg_thread_info_read(t, gettid(), false, &self, &err), 0);
	assert_int_equal(vg_thread_info_read(t, reader_tid, false, &b, &err), 0);
	assert_true(self.user_ns + self.system_ns >= 50000000ULL);
	assert_true(b.user_ns + b.system_ns < 50000000ULL);

	/* This thread is on a CPU while it reads itself, inside the read()
	 * of its own syscall file. */
	assert_int_equal(vg_thread_info_read(t, gettid(), false, &self, &err), 0);
	assert_int_equal(self.state, 'R');
	assert_int_equal(self.syscall.state, VG_SYSCALL_IN);
	assert_int_equal(self.syscall.nr, 0);
	assert_true(vg_thread_info_moved(&self, &self));

	/* A thread that does not exist: -ESRCH with a sentence */
	assert_int_equal(vg_thread_info_read(t, 0x3ffffff0, false, &b, &err), -ESRCH);
	assert_true(err.msg[0] != '\0');

	assert_int_equal(write(pipe_fds[1], "x", 1), 1);
	pthread_join(th, NULL);
	vg_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscall_parse),
		cmocka_unit_test(test_status_parse),
		cmocka_unit_test(test_kernel_stack_parse),
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
