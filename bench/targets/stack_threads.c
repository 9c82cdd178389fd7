/* stack_threads: a process whose threads block at a known depth, plus one
 * thread that measures its own longest stall, for bench/stack.sh (vigil
 * stack against eu-stack and gdb, which stop every thread for the dump).
 *
 *   stack_threads N GAPFILE [CPU]
 *     N        threads in all (>= 2): N-2 blocked workers, the gap meter
 *              and the main thread (which waits in pthread_join)
 *     GAPFILE  where the gap meter writes "gap_max_ns NS iterations K"
 *     CPU      pin the gap meter to this CPU and make it SCHED_FIFO
 *              (bench/stack.sh runs the tool on another CPU): what the
 *              meter then sees is the tool stopping the process, not the
 *              tool or the rest of the machine competing for its core.
 *              A stopped thread does not run at any priority, so a
 *              ptrace freeze still shows in full.  With CPU, a child
 *              process on the same CPU also looks at the gap meter's
 *              state in /proc every ~50 us and adds up the time it saw
 *              it stopped (t or T): the stop itself, apart from any
 *              gap the machine makes (a virtual CPU's steal time).
 *
 * Workers rotate over three waits, each ~8 frames deep through a chain of
 * noinline and always_inline functions (so inline frames and lines are
 * part of the answer): pthread_cond_wait on a condition nobody signals,
 * read() on a pipe nobody writes, and nanosleep(1 h).
 *
 * The gap meter sleeps 200 us per iteration with clock_nanosleep and keeps
 * the longest time between two wake-ups minus the 200 us.  A tool that
 * stops the process for D ms adds about D ms to that figure; one that
 * stops nothing adds only its share of the machine's two cores.  SIGUSR1
 * resets the maximum, SIGUSR2 writes it to GAPFILE (atomically: .tmp then
 * rename; with CPU followed by "stopped_ns NS looks K stopped_looks S",
 * the observer's figures since the reset); only the gap meter takes them (the others block both), so no
 * worker is woken out of its wait.  Prints "ready" when every thread is
 * blocked. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_never = PTHREAD_COND_INITIALIZER;
static int g_pipe[2];
static atomic_int g_blocked;
static atomic_int g_reset, g_report;
static const char *g_gapfile;
static _Atomic pid_t g_meter_tid;

/* The stop observer's running totals, shared with the child process
 * (MAP_SHARED): only it writes them. */
struct observed {
	_Atomic uint64_t stopped_ns, looks, stopped_looks;
};
static struct observed *g_obs;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		atomic_store(&g_reset, 1);
	else
		atomic_store(&g_report, 1);
}

static void write_gap(uint64_t gap, uint64_t iters, const uint64_t *obs_base)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", g_gapfile);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "gap_max_ns %llu iterations %llu", (unsigned long long)gap,
		(unsigned long long)iters);
	if (g_obs)
		fprintf(f, " stopped_ns %llu looks %llu stopped_looks %llu",
			(unsigned long long)(atomic_load(&g_obs->stopped_ns) - obs_base[0]),
			(unsigned long long)(atomic_load(&g_obs->looks) - obs_base[1]),
			(unsigned long long)(atomic_load(&g_obs->stopped_looks) - obs_base[2]));
	fprintf(f, "\n");
	fclose(f);
	rename(tmp, g_gapfile);
}

static void observed_now(uint64_t *base)
{
	if (!g_obs)
		return;
	base[0] = atomic_load(&g_obs->stopped_ns);
	base[1] = atomic_load(&g_obs->looks);
	base[2] = atomic_load(&g_obs->stopped_looks);
}

/* The child: the gap meter's state letter (field 3 of its stat) every
 * ~50 us; time between two looks that both saw it stopped counts in
 * full, between a stopped and a running look half.  It shares the meter's
 * CPU at normal priority, so the SCHED_FIFO meter always goes first. */
static void observe(pid_t pid, pid_t tid, int cpu)
{
	char path[64], buf[512];
	cpu_set_t set;
	uint64_t prev_t = 0;
	int prev_stopped = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != pid)
		_exit(0);
	/* Wake when asked, not up to 50 us later (the default slack). */
	prctl(PR_SET_TIMERSLACK, 1UL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(1);
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
		uint64_t t = now_ns();
		if (n <= 0)
			_exit(0);
		buf[n] = '\0';
		char *rp = strrchr(buf, ')');
		int stopped = rp && rp[1] == ' ' && (rp[2] == 't' || rp[2] == 'T');
		if (prev_t) {
			uint64_t d = t - prev_t;
			if (stopped && prev_stopped)
				atomic_fetch_add(&g_obs->stopped_ns, d);
			else if (stopped || prev_stopped)
				atomic_fetch_add(&g_obs->stopped_ns, d / 2);
		}
		atomic_fetch_add(&g_obs->looks, 1);
		if (stopped)
			atomic_fetch_add(&g_obs->stopped_looks, 1);
		prev_t = t;
		prev_stopped = stopped;
		struct timespec ts = { 0, 20000 };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
}

static void *gap_meter(void *arg)
{
	int cpu = (int)(intptr_t)arg;
	const uint64_t period = 200000;
	sigset_t usr;

	/* The only thread that takes SIGUSR1/2: a worker interrupted in
	 * read() would leave its known wait for sleep(). */
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &usr, NULL);

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
			fprintf(stderr, "stack_threads: cannot pin the gap meter to CPU %d\n", cpu);
			exit(1);
		}
		struct sched_param sp = { .sched_priority = 1 };
		int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (e != 0) {
			fprintf(stderr, "stack_threads: cannot make the gap meter SCHED_FIFO: %s\n",
				strerror(e));
			exit(1);
		}
	}
	uint64_t max = 0, iters = 0, prev = now_ns(), obs_base[3] = { 0, 0, 0 };
	atomic_store(&g_meter_tid, gettid());
	for (;;) {
		struct timespec ts = { 0, (long)period };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		uint64_t t = now_ns(), gap = t - prev;
		prev = t;
		iters++;
		if (gap > period && gap - period > max)
			max = gap - period;
		if (atomic_exchange(&g_reset, 0)) {
			max = 0;
			iters = 0;
			observed_now(obs_base);
		}
		if (atomic_exchange(&g_report, 0))
			write_gap(max, iters, obs_base);
	}
	return NULL;
}

static void wait_forever(int kind)
{
	atomic_fetch_add(&g_blocked, 1);
	if (kind == 0) {
		pthread_mutex_lock(&g_mutex);
		for (;;)
			pthread_cond_wait(&g_never, &g_mutex);
	} else if (kind == 1) {
		char c;
		for (;;)
			if (read(g_pipe[0], &c, 1) <= 0)
				sleep(3600);
	} else {
		for (;;) {
			struct timespec ts = { 3600, 0 };
			nanosleep(&ts, NULL);
		}
	}
}

static inline __attribute__((always_inline)) void level3(int kind) { wait_forever(kind); }
static inline __attribute__((always_inline)) void level2(int kind) { level3(kind); }
__attribute__((noinline)) static void level1(int kind) { level2(kind); __asm__ volatile(""); }
__attribute__((noinline)) static void level0(int kind) { level1(kind); __asm__ volatile(""); }

static void *worker(void *arg)
{
	int kind = (int)(intptr_t)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", kind);
	pthread_setname_np(pthread_self(), name);
	level0(kind);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || atoi(argv[1]) < 2) {
		fprintf(stderr, "usage: stack_threads N GAPFILE [CPU] (N >= 2)\n");
		return 2;
	}
	int n = atoi(argv[1]);
	int cpu = argc == 4 ? atoi(argv[3]) : -1;
	g_gapfile = argv[2];
	if (pipe(g_pipe) != 0)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* Blocked in every thread but the gap meter (which unblocks them):
	 * created threads inherit this mask. */
	sigset_t usr;
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr, NULL);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_t meter;
	if (pthread_create(&meter, &attr, gap_meter, (void *)(intptr_t)cpu) != 0)
		return 1;
	pthread_setname_np(meter, "gap-meter");
	if (cpu >= 0) {
		/* The observer is another process: a tool that stops this one
		 * (ptrace attaches every thread of the process) does not stop
		 * it.  Forked before the workers exist. */
		g_obs = mmap(NULL, sizeof(*g_obs), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (g_obs == MAP_FAILED)
			return 1;
		while (!atomic_load(&g_meter_tid))
			usleep(1000);
		pid_t parent = getpid(), child = fork();
		if (child < 0)
			return 1;
		if (child == 0)
			observe(parent, atomic_load(&g_meter_tid), cpu);
	}
	for (int i = 0; i < n - 2; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, (void *)(intptr_t)(i % 3)) != 0) {
			fprintf(stderr, "stack_threads: pthread_create %d failed\n", i);
			return 1;
		}
	}
	while (atomic_load(&g_blocked) < n - 2)
		usleep(1000);
	usleep(50000); /* let the last ones reach their system call */
	printf("ready\n");
	fflush(stdout);
	pthread_join(meter, NULL);
	return 0;
}
