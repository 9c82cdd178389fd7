/* test_target.c - vg_target_* against real processes (this one, its threads
 * and children it forks), and vg_proc_stat_parse on hostile comms. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/target.h"

/* A real stat line with the comm replaced; starttime is 987654. */
#define STAT_FMT \
	"4242 (%s) S 1 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 20 0 1 0 987654 " \
	"5390336 320 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

static void check_comm(const char *comm)
{
	char line[512];
	struct vg_proc_stat st;

	snprintf(line, sizeof(line), STAT_FMT, comm);
	assert_int_equal(vg_proc_stat_parse(line, &st), 0);
	assert_string_equal(st.comm, comm);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.flags, 4194560UL);
	assert_int_equal(st.utime, 1ULL);
	assert_int_equal(st.stime, 2ULL);
	assert_int_equal(st.starttime, 987654ULL);
}

static void test_parse_tricky_comms(void **state)
{
	check_comm("a) b (c");
	check_comm("with spaces");
	check_comm("");
	check_comm(") S 1 2 3");
	check_comm("((((");
	check_comm("x)");
}

static void test_parse_truncates_comm(void **state)
{
	char line[512], comm[100];
	struct vg_proc_stat st;

	memset(comm, 'c', sizeof(comm) - 1);
	comm[sizeof(comm) - 1] = '\0';
	snprintf(line, sizeof(line), STAT_FMT, comm);
	assert_int_equal(vg_proc_stat_parse(line, &st), 0);
	assert_int_equal(strlen(st.comm), sizeof(st.comm) - 1);
	assert_int_equal(st.starttime, 987654ULL);
}

static void test_parse_malformed(void **state)
{
	struct vg_proc_stat st;

	assert_int_equal(vg_proc_stat_parse("", &st), -EINVAL);
	assert_int_equal(vg_proc_stat_parse("12 (x S 1", &st), -EINVAL);
	assert_int_equal(vg_proc_stat_parse("12 (x) S 1 2 3", &st), -EINVAL);
	assert_int_equal(vg_proc_stat_parse("(x) S 1 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 20 0 1 0 5 6",
					    &st), -EINVAL);
	assert_int_equal(vg_proc_stat_parse(NULL, &st), -EINVAL);
}

static unsigned long long self_starttime(pid_t pid)
{
	char path[64], buf[1024];
	struct vg_proc_stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(vg_proc_stat_parse(buf, &st), 0);
	return st.starttime;
}

static void test_open_self(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	bool alive, changed;
	char path[64];

	prctl(PR_SET_NAME, "vg t) (x");
	assert_int_equal(vg_target_open(getpid(), &t, &err), 0);
	assert_int_equal(t->pid, getpid());
	assert_int_equal(t->requested, getpid());
	assert_string_equal(t->comm, "vg t) (x");
	assert_int_equal(t->starttime, self_starttime(getpid()));
	assert_int_equal(t->n_warnings, 0);
	vg_target_recheck(t, &alive, &changed);
	assert_true(alive);
	assert_false(changed);
	assert_int_equal(vg_target_explain(t, -EFAULT, &err), -EFAULT);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	assert_string_equal(vg_target_proc_path(t, (char[64]){ 0 }, 64, "maps"), path);
	/* identity: a different starttime is another process */
	t->starttime++;
	vg_target_recheck(t, &alive, &changed);
	assert_true(changed);
	assert_false(alive);
	assert_int_equal(vg_target_explain(t, -EFAULT, &err), -ESRCH);
	assert_non_null(strstr(err.msg, "now belongs to another process"));
	assert_null(vg_target_free(t));
	assert_null(vg_target_free(NULL));
}

static void test_open_invalid(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = (void *)1;

	assert_int_equal(vg_target_open(0, &t, &err), -EINVAL);
	assert_null(t);
	assert_int_equal(err.exit, VG_EXIT_USAGE);
	vg_error_clear(&err);
	assert_int_equal(vg_target_open(-5, &t, &err), -EINVAL);
}

static void test_open_nonexistent(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	long pid_max = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &pid_max), 1);
	fclose(f);
	assert_int_equal(vg_target_open((pid_t)(pid_max + 1), &t, &err), -ESRCH);
	assert_null(t);
	assert_int_equal(err.exit, VG_EXIT_GONE);
	assert_non_null(strstr(err.msg, "no process with pid"));
}

struct thr {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pid_t tid;
	bool quit;
};

static void *thread_main(void *arg)
{
	struct thr *th = arg;

	pthread_mutex_lock(&th->mu);
	th->tid = gettid();
	pthread_cond_broadcast(&th->cv);
	while (!th->quit)
		pthread_cond_wait(&th->cv, &th->mu);
	pthread_mutex_unlock(&th->mu);
	return NULL;
}

static void test_open_thread_and_list(void **state)
{
	struct thr th = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false };
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	char want[128];
	pthread_t pt;
	pid_t *tids = NULL;
	size_t n = 0, i;
	bool found = false;

	assert_int_equal(pthread_create(&pt, NULL, thread_main, &th), 0);
	pthread_mutex_lock(&th.mu);
	while (!th.tid)
		pthread_cond_wait(&th.cv, &th.mu);
	pthread_mutex_unlock(&th.mu);
	assert_int_not_equal(th.tid, getpid());

	assert_int_equal(vg_target_open(th.tid, &t, &err), 0);
	assert_int_equal(t->pid, getpid());
	assert_int_equal(t->requested, th.tid);
	assert_int_equal(t->starttime, self_starttime(getpid()));
	assert_int_equal(t->n_warnings, 1);
	snprintf(want, sizeof(want), "pid %d is a thread of process %d; observing process %d",
		 (int)th.tid, (int)getpid(), (int)getpid());
	assert_string_equal(t->warnings[0], want);

	assert_int_equal(vg_target_threads(t, &tids, &n, &err), 0);
	assert_true(n >= 2);
	assert_int_equal(tids[0], getpid());  /* the leader has the smallest tid */
	for (i = 0; i < n; i++) {
		if (i)
			assert_true(tids[i - 1] < tids[i]);
		if (tids[i] == th.tid)
			found = true;
	}
	assert_true(found);
	free(tids);
	vg_target_free(t);

	pthread_mutex_lock(&th.mu);
	th.quit = true;
	pthread_cond_broadcast(&th.cv);
	pthread_mutex_unlock(&th.mu);
	pthread_join(pt, NULL);
}

static void test_warnings_cap(void **state)
{
	struct vg_target *t = NULL;
	int i;

	assert_int_equal(vg_target_open(getpid(), &t, NULL), 0);
	for (i = 0; i < VG_TARGET_MAX_WARNINGS + 5; i++)
		vg_target_warn(t, "warning %d", i);
	assert_int_equal(t->n_warnings, VG_TARGET_MAX_WARNINGS);
	assert_string_equal(t->warnings[3], "warning 3");
	vg_target_free(t);
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/* Wait until the child shows state Z without reaping it. */
static void wait_zombie(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

static void test_reaped_child(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	pid_t pid = spawn_sleeper();

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(vg_target_open(pid, &t, &err), -ESRCH);
	assert_null(t);
}

static void test_zombie_child(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	char want[96];
	pid_t pid = spawn_sleeper();

	kill(pid, SIGKILL);
	wait_zombie(pid);
	assert_int_equal(vg_target_open(pid, &t, &err), -ESRCH);
	assert_null(t);
	snprintf(want, sizeof(want), "pid %d has exited (zombie)", (int)pid);
	assert_non_null(strstr(err.msg, want));
	waitpid(pid, NULL, 0);
}

static void test_recheck_after_exit(void **state)
{
	struct vg_error err = { 0 };
	struct vg_target *t = NULL;
	bool alive, changed;
	pid_t *tids;
	size_t n;
	pid_t pid = spawn_sleeper();

	assert_int_equal(vg_target_open(pid, &t, &err), 0);
	vg_target_recheck(t, &alive, &changed);
	assert_true(alive);
	assert_false(changed);

	kill(pid, SIGKILL);
	wait_zombie(pid);
	vg_target_recheck(t, &alive, &changed);
	assert_false(alive);  /* zombie */
	assert_false(changed);
	assert_int_equal(vg_target_explain(t, -EFAULT, &err), -ESRCH);
	assert_int_equal(err.exit, VG_EXIT_GONE);

	waitpid(pid, NULL, 0);
	vg_target_recheck(t, &alive, &changed);
	assert_false(alive);
	assert_false(changed);
	vg_error_clear(&err);
	assert_int_equal(vg_target_threads(t, &tids, &n, &err), -ESRCH);
	vg_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_tricky_comms),
		cmocka_unit_test(test_parse_truncates_comm),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_open_self),
		cmocka_unit_test(test_open_invalid),
		cmocka_unit_test(test_open_nonexistent),
		cmocka_unit_test(test_open_thread_and_list),
		cmocka_unit_test(test_warnings_cap),
		cmocka_unit_test(test_reaped_child),
		cmocka_unit_test(test_zombie_child),
		cmocka_unit_test(test_recheck_after_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
