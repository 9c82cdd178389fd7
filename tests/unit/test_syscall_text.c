/* test_syscall_text.c - system calls as a person reads them: futex ops and
 * flags, timeouts read from a fake target memory (relative and absolute,
 * against a fixed clock), fds described by a callback, poll arrays, fd
 * sets, signal masks, and the raw form for the rest and for what cannot
 * be read.  Also the cut of a text that does not fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <linux/futex.h>
#include <poll.h>
#include <signal.h>

#include "stack/syscall_text.h"

#define BASE 0x1000ULL
static unsigned char memory[256];

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr + len > BASE + sizeof memory)
		return -14;
	memcpy(buf, memory + (addr - BASE), len);
	return 0;
}

static bool fake_name(void *ctx, uint64_t addr, char *buf, size_t size, uint64_t *start)
{
	(void)ctx;
	if (addr != 0x5000)
		return false;
	snprintf(buf, size, "g_lock");
	if (start)
		*start = addr;
	return true;
}

static bool fake_fd(void *ctx, int fd, char *buf, size_t size)
{
	(void)ctx;
	if (fd != 5)
		return false;
	snprintf(buf, size, "tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED)");
	return true;
}

/* Now is 1000 s on every clock. */
static int fake_clock(void *ctx, clockid_t id, struct timespec *now)
{
	(void)ctx;
	(void)id;
	*now = (struct timespec){ 1000, 0 };
	return 0;
}

static const struct vg_decode_env env = { .read = fake_read, .name_data = fake_name,
					  .describe_fd = fake_fd, .clock = fake_clock };

static void put_ts(uint64_t at, long sec, long nsec)
{
	struct timespec ts = { sec, nsec };

	memcpy(memory + (at - BASE), &ts, sizeof ts);
}

static const char *text(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
			uint64_t a5)
{
	static char buf[512];
	const uint64_t args[6] = { a0, a1, a2, a3, a4, a5 };

	return vg_syscall_text(nr, args, &env, buf, sizeof buf);
}

static void test_durations(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(vg_duration_text(1500000000ULL, b, sizeof b), "1.5 s");
	assert_string_equal(vg_duration_text(2000000000ULL, b, sizeof b), "2 s");
	assert_string_equal(vg_duration_text(1234000000ULL, b, sizeof b), "1.234 s");
	assert_string_equal(vg_duration_text(250000000ULL, b, sizeof b), "250 ms");
	assert_string_equal(vg_duration_text(12000ULL, b, sizeof b), "12 us");
	assert_string_equal(vg_duration_text(800ULL, b, sizeof b), "800 ns");
	assert_string_equal(vg_duration_text(0, b, sizeof b), "0 ns");
}

static void test_futex(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(vg_futex_op_text(FUTEX_WAIT_PRIVATE, b, sizeof b), "WAIT_PRIVATE");
	assert_string_equal(vg_futex_op_text(FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, b, sizeof b),
			    "WAIT_BITSET|CLOCK_REALTIME");
	assert_string_equal(vg_futex_op_text(FUTEX_LOCK_PI_PRIVATE, b, sizeof b), "LOCK_PI_PRIVATE");
	assert_string_equal(vg_futex_op_text(42, b, sizeof b), "op_42");

	assert_string_equal(text(202, 0x5000, FUTEX_WAIT_PRIVATE, 2, 0, 0, 0),
			    "futex(0x5000=g_lock, WAIT_PRIVATE, 2)");
	put_ts(BASE, 1, 500000000);
	assert_string_equal(text(202, 0x6000, FUTEX_WAIT, 0, BASE, 0, 0),
			    "futex(0x6000, WAIT, 0, 1.5 s)");
	/* WAIT_BITSET's timeout is absolute: 1002.5 s against now 1000 s */
	put_ts(BASE, 1002, 500000000);
	assert_string_equal(text(202, 0x5000, FUTEX_WAIT_BITSET_PRIVATE, 0, BASE, 0,
				 FUTEX_BITSET_MATCH_ANY),
			    "futex(0x5000=g_lock, WAIT_BITSET_PRIVATE, 0, in 2.5 s)");
	put_ts(BASE, 999, 0);
	assert_string_equal(text(202, 0x5000, FUTEX_WAIT_BITSET_PRIVATE, 0, BASE, 0, 1),
			    "futex(0x5000=g_lock, WAIT_BITSET_PRIVATE, 0, 1 s ago, bitset 0x1)");
	/* an unreadable timeout stays a pointer */
	assert_string_equal(text(202, 0x5000, FUTEX_WAIT, 0, 0xdead0000, 0, 0),
			    "futex(0x5000=g_lock, WAIT, 0, 0xdead0000)");
}

static void test_io_and_poll(void **state)
{
	struct pollfd fds[2] = { { .fd = 5, .events = POLLIN }, { .fd = 7, .events = POLLOUT } };

	(void)state;
	assert_string_equal(text(0, 5, 0x1234, 4096, 0, 0, 0),
			    "read(5 = tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED), 4096)");
	assert_string_equal(text(45, 9, 0x1234, 1, 0, 0, 0), "recvfrom(9, 1)");
	assert_string_equal(text(43, 3, 0, 0, 0, 0, 0), "accept(3)");
	memcpy(memory, fds, sizeof fds);
	assert_string_equal(text(7, BASE, 2, 1000, 0, 0, 0),
			    "poll([5 = tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED) in, 7 out], 2, 1 s)");
	assert_string_equal(text(7, 0xdead0000, 2, (uint64_t)-1, 0, 0, 0),
			    "poll(0xdead0000, 2, no timeout)");
	assert_string_equal(text(232, 4, 0x1234, 64, (uint32_t)-1, 0, 0),
			    "epoll_wait(4, maxevents 64, no timeout)");
	assert_string_equal(text(281, 4, 0x1234, 16, 250, 0, 0),
			    "epoll_pwait(4, maxevents 16, 250 ms)");
	/* select(8, {3, 5}, NULL, NULL, {2 s, 0}) */
	uint64_t set = (1u << 3) | (1u << 5);
	int64_t tv[2] = { 2, 0 };
	memcpy(memory, &set, 8);
	memcpy(memory + 64, tv, sizeof tv);
	assert_string_equal(text(23, 8, BASE, 0, 0, BASE + 64, 0),
			    "select(8, [3 5], NULL, NULL, 2 s)");
}

static void test_sleeps_and_signals(void **state)
{
	uint64_t mask = (1ULL << (SIGUSR1 - 1)) | (1ULL << (SIGTERM - 1));

	(void)state;
	put_ts(BASE, 1, 500000000);
	assert_string_equal(text(35, BASE, 0, 0, 0, 0, 0), "nanosleep(1.5 s)");
	assert_string_equal(text(230, CLOCK_MONOTONIC, 0, BASE, 0, 0, 0),
			    "clock_nanosleep(MONOTONIC, 1.5 s)");
	put_ts(BASE, 1003, 0);
	assert_string_equal(text(230, CLOCK_REALTIME, TIMER_ABSTIME, BASE, 0, 0, 0),
			    "clock_nanosleep(REALTIME, in 3 s)");
	assert_string_equal(text(34, 0, 0, 0, 0, 0, 0), "pause()");
	assert_string_equal(text(24, 0, 0, 0, 0, 0, 0), "sched_yield()");
	memcpy(memory + 128, &mask, 8);
	assert_string_equal(text(130, BASE + 128, 8, 0, 0, 0, 0),
			    "rt_sigsuspend(blocking [SIGUSR1 SIGTERM])");
	assert_string_equal(text(128, BASE + 128, 0, 0, 8, 0, 0),
			    "rt_sigtimedwait([SIGUSR1 SIGTERM], no timeout)");
	assert_string_equal(text(61, (uint64_t)-1, 0, 0, 0, 0, 0), "wait4(any child)");
	assert_string_equal(text(61, 42, 0, 1, 0, 0, 0), "wait4(pid 42, options 0x1)");
	assert_string_equal(text(247, 1, 42, 0, 4, 0, 0), "waitid(pid 42, options 0x4)");
	assert_string_equal(text(426, 5, 0, 1, 1, 0, 0),
			    "io_uring_enter(5 = tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED), submit 0, wait for 1, flags 0x1)");
}

static void test_raw_and_limits(void **state)
{
	char small[16];
	const uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };

	(void)state;
	assert_string_equal(text(257, 0xffffff9c, 0x7ffc0000, 0, 0, 0, 0),
			    "openat(0xffffff9c, 0x7ffc0000, 0x0, 0x0, 0x0, 0x0)");
	assert_string_equal(text(9999, 1, 2, 3, 4, 5, 6),
			    "syscall_9999(0x1, 0x2, 0x3, 0x4, 0x5, 0x6)");
	assert_string_equal(text(-1, 0, 0, 0, 0, 0, 0), "no system call");
	/* without an env, pointers stay pointers */
	vg_syscall_text(35, args, NULL, small, sizeof small);
	assert_string_equal(small, "nanosleep(0x1)");
	/* a text that does not fit is cut with "…" and stays NUL-ended */
	vg_syscall_text(257, args, NULL, small, sizeof small);
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_string_equal(small + sizeof small - 4, "\xe2\x80\xa6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_futex),
		cmocka_unit_test(test_io_and_poll),
		cmocka_unit_test(test_sleeps_and_signals),
		cmocka_unit_test(test_raw_and_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
