/* test_target_env.c - the wait classifier against real glibc, live, in
 * this process: a mutex held by this thread and a waiter, a two-thread
 * deadlock, and a mutex whose holder exited.  Each thread's system call
 * comes from /proc (thread_info), its innermost frames from the
 * symbolizer at the syscall's pc, the owner from the mutex read through
 * process_vm_readv: this is what proves the glibc offsets of waits.c on
 * the installed glibc, where test_waits only has a fake memory.  Skipped
 * when libc has no symbol for __lll_lock_wait (no libc6-dbg).  Then
 * rwlock (read and write waiters), condition variable, semaphore and
 * join, with the API frame given by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include "stack/target_env.h"
#include "stack/thread_info.h"
#include "stack/waits.h"
#include "sym/symbolizer.h"
#include "target/mem.h"

pthread_mutex_t g_env_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_env_m1 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_env_m2 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_env_orphan = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t g_env_rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_rwlock_t g_env_rw_read = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t g_env_cond_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_env_cond = PTHREAD_COND_INITIALIZER;
sem_t g_env_sem;

static pthread_barrier_t dl_barrier;
static volatile pid_t waiter_tid, dl_a_tid, dl_b_tid, orphan_waiter_tid, ghost_tid;

static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = gettid();
	pthread_mutex_lock(&g_env_lock);
	return NULL;
}

static void *dl_a(void *arg)
{
	(void)arg;
	dl_a_tid = gettid();
	pthread_mutex_lock(&g_env_m1);
	pthread_barrier_wait(&dl_barrier);
	pthread_mutex_lock(&g_env_m2);
	return NULL;
}

static void *dl_b(void *arg)
{
	(void)arg;
	dl_b_tid = gettid();
	pthread_mutex_lock(&g_env_m2);
	pthread_barrier_wait(&dl_barrier);
	pthread_mutex_lock(&g_env_m1);
	return NULL;
}

/* Takes the lock and exits holding it (a normal mutex keeps __owner). */
static void *ghost(void *arg)
{
	(void)arg;
	ghost_tid = gettid();
	pthread_mutex_lock(&g_env_orphan);
	return NULL;
}

static void *orphan_waiter(void *arg)
{
	(void)arg;
	orphan_waiter_tid = gettid();
	pthread_mutex_lock(&g_env_orphan);
	return NULL;
}

static volatile pid_t reader_tid, writer_tid, read_held_writer_tid, cond_tid, sem_tid, sleeper_tid, joiner_tid;
static pthread_t sleeper_thread;

static void *reader(void *arg)
{
	(void)arg;
	reader_tid = gettid();
	pthread_rwlock_rdlock(&g_env_rw);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	writer_tid = gettid();
	pthread_rwlock_wrlock(&g_env_rw);
	return NULL;
}

/* Wants g_env_rw_read, which this test's thread holds to read. */
static void *read_held_writer(void *arg)
{
	(void)arg;
	read_held_writer_tid = gettid();
	pthread_rwlock_wrlock(&g_env_rw_read);
	return NULL;
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	cond_tid = gettid();
	pthread_mutex_lock(&g_env_cond_mutex);
	for (;;)
		pthread_cond_wait(&g_env_cond, &g_env_cond_mutex);
	return NULL;
}

static void *sem_waiter(void *arg)
{
	(void)arg;
	sem_tid = gettid();
	sem_wait(&g_env_sem);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleeper_tid = gettid();
	pause();
	return NULL;
}

static void *joiner(void *arg)
{
	(void)arg;
	joiner_tid = gettid();
	pthread_join(sleeper_thread, NULL);
	return NULL;
}

/* Wait (2 s max) until tid is in futex(). */
static void wait_futex(const struct vg_target *t, pid_t tid)
{
	for (int i = 0; i < 2000; i++) {
		struct vg_thread_info ti;

		if (vg_thread_info_read(t, tid, false, &ti, NULL) == 0 &&
		    ti.syscall.state == VG_SYSCALL_IN && ti.syscall.nr == 202)
			return;
		usleep(1000);
	}
	fail_msg("thread %d never blocked in futex", (int)tid);
}

static void test_live_waits(void **state)
{
	struct vg_target *t = NULL;
	struct vg_mem *mem = NULL;
	struct vg_symbolizer *sym = NULL;
	struct vg_error err = { 0 };
	struct vg_target_env te;
	struct vg_decode_env env;
	pid_t tids[4];
	struct vg_wait w[4];
	struct vg_wait_graph g;
	pthread_t th;
	char name[64];
	uint64_t start;

	(void)state;
	pthread_mutex_lock(&g_env_lock);
	pthread_barrier_init(&dl_barrier, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, ghost, NULL), 0);
	pthread_join(th, NULL);
	assert_int_equal(pthread_create(&th, NULL, waiter, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, dl_a, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, dl_b, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, orphan_waiter, NULL), 0);
	while (!waiter_tid || !dl_a_tid || !dl_b_tid || !orphan_waiter_tid)
		usleep(1000);

	assert_int_equal(vg_target_open(getpid(), &t, &err), 0);
	assert_int_equal(vg_mem_open(t, NULL, &mem, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, VG_SYM_NO_DEBUGINFOD, &sym, &err), 0);
	te = (struct vg_target_env){ .mem = mem, .sym = sym };
	env = vg_target_env_decode(&te);

	/* data symbols: exact, and inside */
	assert_true(vg_target_env_name_data(sym, (uint64_t)(uintptr_t)&g_env_lock, name,
					    sizeof name, &start));
	assert_string_equal(name, "g_env_lock");
	assert_int_equal(start, (uint64_t)(uintptr_t)&g_env_lock);
	assert_true(vg_target_env_name_data(sym, (uint64_t)(uintptr_t)&g_env_lock + 8, name,
					    sizeof name, NULL));
	assert_string_equal(name, "g_env_lock+8");

	tids[0] = waiter_tid, tids[1] = dl_a_tid, tids[2] = dl_b_tid, tids[3] = orphan_waiter_tid;
	for (int i = 0; i < 4; i++) {
		struct vg_thread_info ti;
		struct vg_sym_result res;
		const char *frames[VG_DW_MAX_FRAMES + 1];
		struct vg_wait_input in = { .tid = tids[i] };
		size_t n = 0;

		wait_futex(t, tids[i]);
		assert_int_equal(vg_thread_info_read(t, tids[i], false, &ti, &err), 0);
		assert_int_equal(vg_sym_lookup(sym, ti.syscall.pc, &res, &err), 0);
		for (size_t k = 0; k < res.n_frames; k++)
			if (res.frames[k].function)
				frames[n++] = res.frames[k].function;
		if (n == 0 && res.has_symbol)
			frames[n++] = res.symbol;
		if (n == 0 || !strstr(frames[n - 1], "lll_lock_wait"))
			skip();  /* no libc symbols for its internal functions */
		in.syscall = ti.syscall;
		in.frames = frames;
		in.n_frames = n;
		vg_wait_classify(&in, &env, &w[i]);
		assert_int_equal(w[i].kind, VG_WAIT_MUTEX);
	}
	assert_int_equal(w[0].object, (uint64_t)(uintptr_t)&g_env_lock);
	assert_string_equal(w[0].object_name, "g_env_lock");
	assert_int_equal(w[0].owner, gettid());
	assert_string_equal(w[1].object_name, "g_env_m2");
	assert_int_equal(w[1].owner, dl_b_tid);
	assert_string_equal(w[2].object_name, "g_env_m1");
	assert_int_equal(w[2].owner, dl_a_tid);
	assert_string_equal(w[3].object_name, "g_env_orphan");
	assert_int_equal(w[3].owner, ghost_tid);

	/* This thread (running) closes the graph: the waiter's chain ends
	 * here; the orphan's owner is gone. */
	struct vg_wait all[5];
	memcpy(all, w, sizeof w);
	all[4] = (struct vg_wait){ .tid = gettid(), .kind = VG_WAIT_RUNNING, .fd = -1 };
	assert_int_equal(vg_wait_chains(all, 5, &g), 0);
	assert_int_equal(g.n_deadlocks, 1);
	assert_int_equal(g.deadlocks[0].n, 2);
	assert_int_equal(g.n_chains, 4);
	for (size_t i = 0; i < g.n_chains; i++) {
		const struct vg_wait_chain *c = &g.chains[i];

		if (c->links[0].tid == waiter_tid) {
			assert_int_equal(c->end, VG_CHAIN_AT_THREAD);
			assert_int_equal(c->end_tid, gettid());
		} else if (c->links[0].tid == orphan_waiter_tid) {
			assert_int_equal(c->end, VG_CHAIN_DEAD_OWNER);
			assert_int_equal(c->end_tid, ghost_tid);
		} else {
			assert_int_equal(c->end, VG_CHAIN_DEADLOCK);
		}
	}
	vg_wait_graph_release(&g);
	vg_symbolizer_free(sym);
	vg_mem_free(mem);
	vg_target_free(t);
	/* the blocked threads end with the process */
}

/* The other glibc objects.  Their futex waits sit below generic helpers
 * (__futex_abstimed_wait_common64), so the innermost frames do not say
 * which object it is; the frame an unwinder would give next (the API
 * function) is appended by hand: what is tested is the layout side, the
 * object and owner read from real glibc objects. */
static void test_live_objects(void **state)
{
	struct vg_target *t = NULL;
	struct vg_mem *mem = NULL;
	struct vg_symbolizer *sym = NULL;
	struct vg_error err = { 0 };
	struct vg_target_env te;
	struct vg_decode_env env;
	pthread_t th;
	static const struct {
		volatile pid_t *tid;
		const char *api;
		enum vg_wait_kind kind;
		const char *object;
	} cases[] = {
		{ &reader_tid, "pthread_rwlock_rdlock", VG_WAIT_RWLOCK, "g_env_rw" },
		{ &writer_tid, "pthread_rwlock_wrlock", VG_WAIT_RWLOCK, "g_env_rw" },
		{ &read_held_writer_tid, "pthread_rwlock_wrlock", VG_WAIT_RWLOCK, "g_env_rw_read" },
		{ &cond_tid, "pthread_cond_wait", VG_WAIT_COND, "g_env_cond" },
		{ &sem_tid, "sem_wait", VG_WAIT_SEMAPHORE, "g_env_sem" },
		{ &joiner_tid, "pthread_join", VG_WAIT_JOIN, "" },
	};

	(void)state;
	assert_int_equal(pthread_rwlock_wrlock(&g_env_rw), 0);
	assert_int_equal(pthread_rwlock_rdlock(&g_env_rw_read), 0);
	assert_int_equal(sem_init(&g_env_sem, 0, 0), 0);
	assert_int_equal(pthread_create(&sleeper_thread, NULL, sleeper, NULL), 0);
	while (!sleeper_tid)
		usleep(1000);
	assert_int_equal(pthread_create(&th, NULL, reader, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, writer, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, read_held_writer, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, cond_waiter, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, sem_waiter, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, joiner, NULL), 0);
	while (!reader_tid || !writer_tid || !read_held_writer_tid || !cond_tid || !sem_tid || !joiner_tid)
		usleep(1000);

	assert_int_equal(vg_target_open(getpid(), &t, &err), 0);
	assert_int_equal(vg_mem_open(t, NULL, &mem, &err), 0);
	assert_int_equal(vg_symbolizer_open_target(t, VG_SYM_NO_DEBUGINFOD, &sym, &err), 0);
	te = (struct vg_target_env){ .mem = mem, .sym = sym };
	env = vg_target_env_decode(&te);

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *frames[] = { "__futex_abstimed_wait_common64", cases[i].api };
		struct vg_wait_input in = { .tid = *cases[i].tid, .frames = frames, .n_frames = 2 };
		struct vg_thread_info ti;
		struct vg_wait w;

		wait_futex(t, *cases[i].tid);
		assert_int_equal(vg_thread_info_read(t, *cases[i].tid, false, &ti, &err), 0);
		in.syscall = ti.syscall;
		vg_wait_classify(&in, &env, &w);
		if (w.kind != cases[i].kind || strcmp(w.object_name, cases[i].object) != 0)
			fail_msg("%s: %s %s, want %s %s (%s)", cases[i].api, vg_wait_kind_name(w.kind),
				 w.object_name, vg_wait_kind_name(cases[i].kind), cases[i].object,
				 w.detail);
		switch (cases[i].kind) {
		case VG_WAIT_RWLOCK:
			if (*cases[i].tid == read_held_writer_tid) {
				/* held to read by this thread: a count, no owner */
				assert_int_equal(w.object, (uint64_t)(uintptr_t)&g_env_rw_read);
				assert_int_equal(w.owner, 0);
				assert_int_equal(w.readers, 1);
				break;
			}
			/* this thread holds it to write: __cur_writer */
			assert_int_equal(w.object, (uint64_t)(uintptr_t)&g_env_rw);
			assert_int_equal(w.owner, gettid());
			assert_true(w.write_locked);
			break;
		case VG_WAIT_COND:
			assert_int_equal(w.object, (uint64_t)(uintptr_t)&g_env_cond);
			assert_int_equal(w.owner, 0);
			break;
		case VG_WAIT_SEMAPHORE:
			assert_int_equal(w.object, (uint64_t)(uintptr_t)&g_env_sem);
			assert_int_equal(w.owner, 0);
			break;
		default:  /* join: the owner is the joined thread */
			assert_int_equal(w.owner, sleeper_tid);
		}
	}
	vg_symbolizer_free(sym);
	vg_mem_free(mem);
	vg_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_waits),
		cmocka_unit_test(test_live_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
