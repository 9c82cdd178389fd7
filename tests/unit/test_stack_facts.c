/* test_stack_facts.c - the wall-clock profile's leaf frames
 * (vg_stack_wait_leaf): each wait kind gives the text the profile shows,
 * objects by name or address, an I/O wait by call and fd description
 * (or the bare fd), a thread preempted in its own code as [running] only
 * when it is runnable, and a long description cut, never overrun. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stack/facts.h"

static void leaf_is(const struct vg_wait *w, const struct vg_stack_facts *f, const char *want)
{
	char buf[512];

	assert_string_equal(vg_stack_wait_leaf(w, f, buf, sizeof(buf)), want);
}

static struct vg_stack_facts in_call(long nr)
{
	struct vg_stack_facts f;

	memset(&f, 0, sizeof(f));
	f.info.state = 'S';
	f.info.syscall.state = VG_SYSCALL_IN;
	f.info.syscall.nr = nr;
	return f;
}

static void test_locks(void **state)
{
	struct vg_stack_facts f = in_call(202);
	struct vg_wait w = { .kind = VG_WAIT_MUTEX, .object = 0x5000, .fd = -1 };

	(void)state;
	strcpy(w.object_name, "g_lock");
	leaf_is(&w, &f, "[mutex g_lock]");
	w.object_name[0] = '\0';
	leaf_is(&w, &f, "[mutex 0x5000]");
	w.kind = VG_WAIT_COND;
	w.object = 0;
	leaf_is(&w, &f, "[cond]");
	w.kind = VG_WAIT_JOIN;
	w.owner = 4242;
	leaf_is(&w, &f, "[join 4242]");
}

static void test_io(void **state)
{
	struct vg_stack_facts f = in_call(0);   /* read */
	struct vg_wait w = { .kind = VG_WAIT_IO, .fd = 5 };

	(void)state;
	leaf_is(&w, &f, "[read fd 5]");
	strcpy(f.fd_text, "tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED)");
	leaf_is(&w, &f, "[read tcp 127.0.0.1:6379 -> 127.0.0.1:51234 (ESTABLISHED)]");
	w.kind = VG_WAIT_POLL;
	w.fd = -1;
	f = in_call(7);   /* poll */
	leaf_is(&w, &f, "[poll]");
}

static void test_states(void **state)
{
	struct vg_stack_facts f = in_call(230);
	struct vg_wait w = { .kind = VG_WAIT_SLEEP, .fd = -1 };

	(void)state;
	leaf_is(&w, &f, "[sleep]");
	w.kind = VG_WAIT_RUNNING;
	leaf_is(&w, NULL, "[running]");
	w.kind = VG_WAIT_USER;
	f.info.state = 'R';
	leaf_is(&w, &f, "[running]");
	f.info.state = 'S';
	leaf_is(&w, &f, "[off cpu in user code]");
	w.kind = VG_WAIT_UNKNOWN;
	f.info.state = 'D';
	leaf_is(&w, &f, "[disk sleep]");
	w.kind = VG_WAIT_SIGNAL;
	f = in_call(34);   /* pause */
	leaf_is(&w, &f, "[signal pause]");
}

static void test_cut(void **state)
{
	struct vg_stack_facts f = in_call(0);
	struct vg_wait w = { .kind = VG_WAIT_IO, .fd = 3 };
	char buf[16];

	(void)state;
	memset(f.fd_text, 'x', sizeof(f.fd_text) - 1);
	vg_stack_wait_leaf(&w, &f, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "[read xxxxxxxxx", 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locks),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
