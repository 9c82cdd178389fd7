/* test_waits.c - what a thread waits for and who holds it, over a fake
 * target memory laid out as glibc 2.36 lays out its objects: mutexes with
 * an owner, a PI mutex, a write-locked rwlock, a condition variable named
 * by its symbol, a join; then chains of owners: 2- and 3-thread
 * deadlocks, a chain ending at a running thread, a dead owner, a thread
 * waiting on a mutex it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <linux/futex.h>

#include "stack/waits.h"

/* A fake address space: 256 bytes at BASE. */
#define BASE 0x10000ULL
static unsigned char memory[256];

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr + len > BASE + sizeof memory)
		return -14;  /* -EFAULT */
	memcpy(buf, memory + (addr - BASE), len);
	return 0;
}

/* Symbols: g_lock at BASE (40 bytes), g_rw at BASE+64 (56), g_cond at
 * BASE+128 (48). */
static bool fake_name(void *ctx, uint64_t addr, char *buf, size_t size, uint64_t *start)
{
	static const struct { const char *name; uint64_t at, size; } syms[] = {
		{ "g_lock", BASE, 40 }, { "g_rw", BASE + 64, 56 }, { "g_cond", BASE + 128, 48 },
	};
	(void)ctx;
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		if (addr >= syms[i].at && addr < syms[i].at + syms[i].size) {
			if (addr == syms[i].at)
				snprintf(buf, size, "%s", syms[i].name);
			else
				snprintf(buf, size, "%s+%llu", syms[i].name,
					 (unsigned long long)(addr - syms[i].at));
			if (start)
				*start = syms[i].at;
			return true;
		}
	}
	return false;
}

static const struct vg_decode_env env = { .read = fake_read, .name_data = fake_name };

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(memory + (addr - BASE), &v, 4);
}

static struct vg_wait_input futex_input(pid_t tid, uint64_t uaddr, uint64_t op, uint64_t val,
					const char *const *frames, size_t n)
{
	struct vg_wait_input in = { .tid = tid, .frames = frames, .n_frames = n };

	in.syscall.state = VG_SYSCALL_IN;
	in.syscall.nr = 202;  /* futex */
	in.syscall.args[0] = uaddr;
	in.syscall.args[1] = op;
	in.syscall.args[2] = val;
	return in;
}

static void test_mutex(void **state)
{
	/* What eu-stack shows for a waiter (symbol names vary by tool) */
	static const char *const frames[] = { "futex_wait", "__GI___lll_lock_wait",
					      "lll_mutex_lock_optimized", "___pthread_mutex_lock",
					      "waiter_main" };
	struct vg_wait_input in = futex_input(101, BASE, FUTEX_WAIT_PRIVATE, 2, frames, 5);
	struct vg_wait w;

	(void)state;
	memset(memory, 0, sizeof memory);
	put32(BASE, 2);          /* __lock: locked, waiters */
	put32(BASE + 8, 4242);   /* __owner */
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_MUTEX);
	assert_string_equal(vg_wait_kind_name(w.kind), "mutex");
	assert_int_equal(w.tid, 101);
	assert_int_equal(w.object, BASE);
	assert_string_equal(w.object_name, "g_lock");
	assert_int_equal(w.owner, 4242);
	assert_string_equal(w.detail, "futex(0x10000=g_lock, WAIT_PRIVATE, 2)");

	/* The versioned public alias alone is enough */
	static const char *const versioned[] = { "syscall", "pthread_mutex_lock@@GLIBC_2.2.5" };
	in.frames = versioned;
	in.n_frames = 2;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_MUTEX);

	/* The innermost frame alone, under glibc's hidden alias (DWARF's name) */
	static const char *const gi[] = { "futex_wait", "__GI___lll_lock_wait" };
	in.frames = gi;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_MUTEX);

	/* A PI mutex: the futex word is the owner's TID with FUTEX_WAITERS */
	static const char *const pi[] = { "__pthread_mutex_lock_full", "main" };
	put32(BASE, FUTEX_WAITERS | 777);
	in = futex_input(101, BASE, FUTEX_LOCK_PI_PRIVATE, 0, pi, 2);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_MUTEX);
	assert_int_equal(w.owner, 777);

	/* glibc's internal lock (stdio, malloc): no owner recorded */
	static const char *const internal[] = { "__lll_lock_wait_private", "_IO_puts" };
	in = futex_input(101, BASE, FUTEX_WAIT_PRIVATE, 2, internal, 2);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_LOCK);
	assert_int_equal(w.owner, 0);

	/* No frames that explain it: an unknown futex, named by its word */
	in = futex_input(101, BASE + 4, FUTEX_WAIT, 0, NULL, 0);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_FUTEX);
	assert_string_equal(w.object_name, "g_lock+4");
	assert_int_equal(w.owner, 0);

	/* Unreadable memory: kind known, owner not */
	in = futex_input(101, 0x999000, FUTEX_WAIT_PRIVATE, 2, frames, 5);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_MUTEX);
	assert_int_equal(w.owner, 0);
	assert_string_equal(w.object_name, "");
}

static void test_rwlock_cond_join(void **state)
{
	struct vg_wait_input in;
	struct vg_wait w;

	(void)state;
	memset(memory, 0, sizeof memory);
	/* A writer waits on __writers_futex (+12) of a write-locked rwlock */
	static const char *const wr[] = { "__futex_abstimed_wait_common64",
					  "__pthread_rwlock_wrlock_full64", "pthread_rwlock_wrlock" };
	put32(BASE + 64 + 24, 555);  /* __cur_writer */
	in = futex_input(7, BASE + 64 + 12, FUTEX_WAIT_BITSET_PRIVATE, 1, wr, 3);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_RWLOCK);
	assert_int_equal(w.object, BASE + 64);
	assert_string_equal(w.object_name, "g_rw");
	assert_int_equal(w.owner, 555);
	assert_true(w.write_locked);

	/* Held by two readers: no owner, a count (__readers >> 3) */
	put32(BASE + 64 + 24, 0);
	put32(BASE + 64, 2 << 3 | 1);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.owner, 0);
	assert_false(w.write_locked);
	assert_int_equal(w.readers, 2);
	put32(BASE + 64 + 24, 555);

	/* Without a symbol, the word's alignment says which field it is */
	in = futex_input(7, BASE + 64 + 12, FUTEX_WAIT_BITSET_PRIVATE, 1, wr, 3);
	vg_wait_classify(&in, &(struct vg_decode_env){ .read = fake_read }, &w);
	assert_int_equal(w.object, BASE + 64);
	assert_int_equal(w.owner, 555);

	/* A condition variable: the futex word is inside g_cond */
	static const char *const cond[] = { "__futex_abstimed_wait_common64",
					    "__futex_abstimed_wait_common",
					    "__pthread_cond_wait_common", "___pthread_cond_wait",
					    "condwait_main" };
	in = futex_input(8, BASE + 128 + 40, FUTEX_WAIT_BITSET_PRIVATE, 0, cond, 5);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_COND);
	assert_int_equal(w.object, BASE + 128);
	assert_string_equal(w.object_name, "g_cond");
	assert_int_equal(w.owner, 0);

	/* pthread_join: the expected value is the joined thread's TID */
	static const char *const join[] = { "__futex_abstimed_wait_common64",
					    "__futex_abstimed_wait_common",
					    "__pthread_clockjoin_ex", "joiner_main" };
	in = futex_input(9, 0x7f0000001000ULL, FUTEX_WAIT_BITSET, 6406, join, 4);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_JOIN);
	assert_int_equal(w.owner, 6406);

	/* sem_wait */
	static const char *const sem[] = { "__futex_abstimed_wait_common",
					   "__new_sem_wait_slow64", "sem_wait" };
	in = futex_input(9, BASE + 200, FUTEX_WAIT_BITSET, 0, sem, 3);
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_SEMAPHORE);
	assert_int_equal(w.object, BASE + 200);
}

static void test_syscalls(void **state)
{
	struct vg_wait_input in = { .tid = 5 };
	struct vg_wait w;

	(void)state;
	in.syscall.state = VG_SYSCALL_RUNNING;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_RUNNING);
	assert_int_equal(w.fd, -1);

	in.syscall.state = VG_SYSCALL_NONE;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_USER);

	in.syscall.state = VG_SYSCALL_UNKNOWN;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_UNKNOWN);

	static const struct { long nr; enum vg_wait_kind kind; int fd; } cases[] = {
		{ 0, VG_WAIT_IO, 3 },          /* read */
		{ 45, VG_WAIT_IO, 3 },         /* recvfrom */
		{ 43, VG_WAIT_IO, 3 },         /* accept */
		{ 7, VG_WAIT_POLL, -1 },       /* poll */
		{ 232, VG_WAIT_POLL, 3 },      /* epoll_wait */
		{ 35, VG_WAIT_SLEEP, -1 },     /* nanosleep */
		{ 230, VG_WAIT_SLEEP, -1 },    /* clock_nanosleep */
		{ 34, VG_WAIT_SIGNAL, -1 },    /* pause */
		{ 130, VG_WAIT_SIGNAL, -1 },   /* rt_sigsuspend */
		{ 61, VG_WAIT_CHILD, -1 },     /* wait4 */
		{ 426, VG_WAIT_IO_URING, 3 },  /* io_uring_enter */
		{ 24, VG_WAIT_YIELD, -1 },     /* sched_yield */
		{ 257, VG_WAIT_SYSCALL, -1 },  /* openat */
		{ 9999, VG_WAIT_SYSCALL, -1 }, /* unknown number */
	};
	/* A sleep resumed after a stop: the frames say it is a sleep */
	static const char *const resumed[] = { "clock_nanosleep@GLIBC_2.2.5", "__nanosleep",
					       "holder_main" };
	in.syscall.state = VG_SYSCALL_IN;
	in.syscall.nr = 219;  /* restart_syscall */
	in.frames = resumed;
	in.n_frames = 3;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_SLEEP);
	assert_string_equal(w.detail, "restart_syscall()");
	in.n_frames = 0;
	vg_wait_classify(&in, &env, &w);
	assert_int_equal(w.kind, VG_WAIT_SYSCALL);
	in.frames = NULL;

	in.syscall.args[0] = 3;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		in.syscall.nr = cases[i].nr;
		vg_wait_classify(&in, &env, &w);
		if (w.kind != cases[i].kind || w.fd != cases[i].fd)
			fail_msg("nr %ld: kind %s fd %d, want %s fd %d", cases[i].nr,
				 vg_wait_kind_name(w.kind), w.fd, vg_wait_kind_name(cases[i].kind),
				 cases[i].fd);
		assert_true(w.detail[0] != '\0');
	}
}

static struct vg_wait waiting(pid_t tid, uint64_t object, const char *name, pid_t owner)
{
	struct vg_wait w = { .tid = tid, .kind = VG_WAIT_MUTEX, .object = object, .owner = owner,
			     .fd = -1 };

	snprintf(w.object_name, sizeof w.object_name, "%s", name);
	return w;
}

static struct vg_wait not_waiting(pid_t tid, enum vg_wait_kind kind)
{
	return (struct vg_wait){ .tid = tid, .kind = kind, .fd = -1 };
}

static const struct vg_wait_chain *chain_of(const struct vg_wait_graph *g, pid_t tid)
{
	for (size_t i = 0; i < g->n_chains; i++)
		if (g->chains[i].links[0].tid == tid)
			return &g->chains[i];
	fail_msg("no chain starts at %d", (int)tid);
	return NULL;
}

static void test_two_thread_deadlock(void **state)
{
	/* the target's dl_a holds g_m1 wants g_m2, dl_b the reverse; a third
	 * thread waits on dl_a's g_m1 and leads into the cycle */
	struct vg_wait w[] = {
		not_waiting(10, VG_WAIT_SIGNAL),
		waiting(12, 0x2000, "g_m2", 11),
		waiting(11, 0x1000, "g_m1", 12),
		waiting(13, 0x1000, "g_m1", 12),
	};
	struct vg_wait_graph g;
	const struct vg_wait_chain *c;

	(void)state;
	assert_int_equal(vg_wait_chains(w, 4, &g), 0);
	assert_int_equal(g.n_chains, 3);
	assert_int_equal(g.n_deadlocks, 1);
	assert_int_equal(g.deadlocks[0].n, 2);
	assert_int_equal(g.deadlocks[0].links[0].tid, 11);  /* from the lowest TID */
	assert_int_equal(g.deadlocks[0].links[0].object, 0x1000);
	assert_string_equal(g.deadlocks[0].links[0].object_name, "g_m1");
	assert_int_equal(g.deadlocks[0].links[0].owner, 12);
	assert_int_equal(g.deadlocks[0].links[1].tid, 12);
	assert_string_equal(g.deadlocks[0].links[1].object_name, "g_m2");
	assert_int_equal(g.deadlocks[0].links[1].owner, 11);

	c = chain_of(&g, 13);
	assert_int_equal(c->end, VG_CHAIN_DEADLOCK);
	assert_int_equal(c->n, 3);  /* 13 -> 12 -> 11 -> (12 again) */
	assert_int_equal(c->links[1].tid, 12);
	assert_int_equal(c->links[2].tid, 11);
	assert_int_equal(c->end_tid, 12);
	vg_wait_graph_release(&g);
	assert_null(g.chains);
}

static void test_three_thread_deadlock(void **state)
{
	struct vg_wait w[] = {
		waiting(30, 0xa, "A", 31),
		waiting(31, 0xb, "B", 32),
		waiting(32, 0xc, "C", 30),
	};
	struct vg_wait_graph g;

	(void)state;
	assert_int_equal(vg_wait_chains(w, 3, &g), 0);
	assert_int_equal(g.n_chains, 3);
	assert_int_equal(g.n_deadlocks, 1);  /* one cycle, found three times */
	assert_int_equal(g.deadlocks[0].n, 3);
	assert_int_equal(g.deadlocks[0].links[0].tid, 30);
	assert_int_equal(g.deadlocks[0].links[1].tid, 31);
	assert_int_equal(g.deadlocks[0].links[2].tid, 32);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(g.chains[i].end, VG_CHAIN_DEADLOCK);
	vg_wait_graph_release(&g);

	/* A thread waiting on a mutex it holds itself: a cycle of one */
	struct vg_wait self[] = { waiting(40, 0xd, "D", 40) };
	assert_int_equal(vg_wait_chains(self, 1, &g), 0);
	assert_int_equal(g.n_deadlocks, 1);
	assert_int_equal(g.deadlocks[0].n, 1);
	assert_int_equal(g.deadlocks[0].links[0].owner, 40);
	vg_wait_graph_release(&g);
}

static void test_chain_to_running_and_dead_owner(void **state)
{
	struct vg_wait w[] = {
		waiting(50, 0x1, "g_lock", 51),      /* 50 -> 51 -> 52 (running) */
		waiting(51, 0x2, "g_other", 52),
		not_waiting(52, VG_WAIT_RUNNING),
		waiting(53, 0x3, "g_orphan", 9999),  /* 9999 is not a thread */
		not_waiting(54, VG_WAIT_SLEEP),
	};
	struct vg_wait_graph g;
	const struct vg_wait_chain *c;

	(void)state;
	assert_int_equal(vg_wait_chains(w, 5, &g), 0);
	assert_int_equal(g.n_deadlocks, 0);
	assert_int_equal(g.n_chains, 3);
	c = chain_of(&g, 50);
	assert_int_equal(c->end, VG_CHAIN_AT_THREAD);
	assert_int_equal(c->end_tid, 52);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->links[1].tid, 51);
	assert_string_equal(c->links[1].object_name, "g_other");
	c = chain_of(&g, 53);
	assert_int_equal(c->end, VG_CHAIN_DEAD_OWNER);
	assert_int_equal(c->end_tid, 9999);
	assert_int_equal(c->n, 1);
	vg_wait_graph_release(&g);

	assert_int_equal(vg_wait_chains(w, 0, &g), 0);
	assert_int_equal(g.n_chains, 0);
	vg_wait_graph_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex),
		cmocka_unit_test(test_rwlock_cond_join),
		cmocka_unit_test(test_syscalls),
		cmocka_unit_test(test_two_thread_deadlock),
		cmocka_unit_test(test_three_thread_deadlock),
		cmocka_unit_test(test_chain_to_running_and_dead_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
