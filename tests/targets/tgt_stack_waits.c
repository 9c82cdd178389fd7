/* tgt_stack_waits - threads that block at known lines, for vigil stack.
 * usage: tgt_stack_waits TRUTHFILE
 *
 * Every thread names itself (pthread_setname_np), records the function and
 * line of the call it is about to block in, what it waits for and who
 * holds it, then blocks there.  Main waits until each thread is inside its
 * system call (/proc/self/task/TID/syscall shows the expected number) and
 * writes, besides "pid" and "obj" lines (truth.h):
 *   thread NAME TID FUNCTION FILE LINE KIND OBJECT OWNER_TID SYSCALL
 *       KIND: mutex cond io join sleep signal running; OBJECT a global's
 *       name, "fd=N" or "-"; OWNER_TID 0 when nobody holds it; SYSCALL the
 *       system call it is in ("-" for the spinner)
 *   uframe NAME IDX FUNCTION FILE LINE INLINED   user frames of thread
 *       NAME in this program, innermost first (IDX counts only these:
 *       glibc's frames and the signal frame between them are not listed)
 *   deadlock NAME NAME                           the two-thread cycle
 *   pipe READFD WRITEFD, tcp_server ADDR:PORT, tcp_client ADDR:PORT
 *   main TID, state ready
 * The threads:
 *   holder     holds g_lock, sleeps in nanosleep while holding it
 *   waiter     pthread_mutex_lock(&g_lock): owner holder
 *   dl_a dl_b  deadlock: dl_a holds g_m1 wants g_m2, dl_b the reverse
 *   condwait   pthread_cond_wait(&g_cond), never signalled
 *   piperead   read() on a pipe whose write end main keeps open
 *   sockrecv   recv() on the accepted end of a loopback TCP connection
 *   sleeper    sleeps; joiner pthread_join()s it
 *   inlined    a sleep three always_inline levels deep
 *   sighandler inside its SIGUSR1 handler, in pause()
 *   nofp       two frames without frame pointers (tgt_stack_waits_nofp.c)
 *   spinner    spins in spin_here() */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"
#include "tgt_stack_waits.h"

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_m1 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_m2 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_cond_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
volatile unsigned long g_spins;

static pthread_mutex_t truth_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t truth_cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t dl_barrier;
static int pipe_fds[2];
static int sock_server = -1, sock_client = -1;
static pthread_t sleeper_thread;
static char fd_text[2][16];

/* Lines of the inline chain, recorded where each call is. */
static int inline_line[4];
/* Lines of the calls below the signal handler and the frameless code. */
static int kill_line, nofp_main_line;

enum { HOLDER, WAITER, DL_A, DL_B, CONDWAIT, PIPEREAD, SOCKRECV, SLEEPER, JOINER,
       INLINED, SIGHANDLER, NOFP, SPINNER, NTHREADS };

static struct stack_thread threads[NTHREADS] = {
	[HOLDER] = { .name = "holder" },     [WAITER] = { .name = "waiter" },
	[DL_A] = { .name = "dl_a" },         [DL_B] = { .name = "dl_b" },
	[CONDWAIT] = { .name = "condwait" }, [PIPEREAD] = { .name = "piperead" },
	[SOCKRECV] = { .name = "sockrecv" }, [SLEEPER] = { .name = "sleeper" },
	[JOINER] = { .name = "joiner" },     [INLINED] = { .name = "inlined" },
	[SIGHANDLER] = { .name = "sighandler" }, [NOFP] = { .name = "nofp" },
	[SPINNER] = { .name = "spinner" },
};

/* The system call each thread ends up in (glibc 2.36 x86-64: nanosleep
 * and sleep call clock_nanosleep, recv calls recvfrom). */
static const char *const expected_syscall[NTHREADS] = {
	[HOLDER] = "clock_nanosleep", [WAITER] = "futex", [DL_A] = "futex",
	[DL_B] = "futex", [CONDWAIT] = "futex", [PIPEREAD] = "read",
	[SOCKRECV] = "recvfrom", [SLEEPER] = "clock_nanosleep", [JOINER] = "futex",
	[INLINED] = "clock_nanosleep", [SIGHANDLER] = "pause", [NOFP] = "clock_nanosleep",
	[SPINNER] = "-",
};
static const int expected_nr[NTHREADS] = {
	[HOLDER] = 230, [WAITER] = 202, [DL_A] = 202, [DL_B] = 202, [CONDWAIT] = 202,
	[PIPEREAD] = 0, [SOCKRECV] = 45, [SLEEPER] = 230, [JOINER] = 202,
	[INLINED] = 230, [SIGHANDLER] = 34, [NOFP] = 230, [SPINNER] = -1,
};

void stack_thread_block(struct stack_thread *self, const char *function, int line,
			const char *kind, const char *object, const char *owner)
{
	pthread_mutex_lock(&truth_mutex);
	self->function = function;
	self->line = line;
	self->kind = kind;
	self->object = object;
	self->owner = owner;
	self->ready = 1;
	pthread_cond_broadcast(&truth_cond);
	pthread_mutex_unlock(&truth_mutex);
}

static struct stack_thread *start(void *arg)
{
	struct stack_thread *self = arg;

	self->tid = gettid();
	pthread_setname_np(pthread_self(), self->name);
	return self;
}

static void sleep_long(void)
{
	struct timespec ts = { 3600, 0 };

	nanosleep(&ts, NULL);
}

static void *holder_main(void *arg)
{
	struct stack_thread *self = start(arg);

	pthread_mutex_lock(&g_lock);
	stack_thread_block(self, "holder_main", __LINE__ + 2, "sleep", "-", NULL);
	for (;;) {
		struct timespec ts = { 3600, 0 }; nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *waiter_main(void *arg)
{
	struct stack_thread *self = start(arg);

	stack_thread_block(self, "waiter_main", __LINE__ + 1, "mutex", "g_lock", "holder");
	pthread_mutex_lock(&g_lock);
	return NULL;
}

static void *dl_a_main(void *arg)
{
	struct stack_thread *self = start(arg);

	pthread_mutex_lock(&g_m1);
	pthread_barrier_wait(&dl_barrier);
	stack_thread_block(self, "dl_a_main", __LINE__ + 1, "mutex", "g_m2", "dl_b");
	pthread_mutex_lock(&g_m2);
	return NULL;
}

static void *dl_b_main(void *arg)
{
	struct stack_thread *self = start(arg);

	pthread_mutex_lock(&g_m2);
	pthread_barrier_wait(&dl_barrier);
	stack_thread_block(self, "dl_b_main", __LINE__ + 1, "mutex", "g_m1", "dl_a");
	pthread_mutex_lock(&g_m1);
	return NULL;
}

static void *condwait_main(void *arg)
{
	struct stack_thread *self = start(arg);

	pthread_mutex_lock(&g_cond_mutex);
	stack_thread_block(self, "condwait_main", __LINE__ + 2, "cond", "g_cond", NULL);
	for (;;)
		pthread_cond_wait(&g_cond, &g_cond_mutex);
	return NULL;
}

static void *piperead_main(void *arg)
{
	struct stack_thread *self = start(arg);
	char c;

	stack_thread_block(self, "piperead_main", __LINE__ + 1, "io", fd_text[0], NULL);
	(void)!read(pipe_fds[0], &c, 1);
	return NULL;
}

static void *sockrecv_main(void *arg)
{
	struct stack_thread *self = start(arg);
	char c;

	stack_thread_block(self, "sockrecv_main", __LINE__ + 1, "io", fd_text[1], NULL);
	(void)!recv(sock_server, &c, 1, 0);
	return NULL;
}

static void *sleeper_main(void *arg)
{
	struct stack_thread *self = start(arg);

	stack_thread_block(self, "sleeper_main", __LINE__ + 1, "sleep", "-", NULL);
	sleep(3600);
	return NULL;
}

static void *joiner_main(void *arg)
{
	struct stack_thread *self = start(arg);

	stack_thread_block(self, "joiner_main", __LINE__ + 1, "join", "-", "sleeper");
	pthread_join(sleeper_thread, NULL);
	return NULL;
}

static inline __attribute__((always_inline)) void sleep_level3(struct stack_thread *self)
{
	struct timespec ts = { 3600, 0 };

	stack_thread_block(self, "sleep_level3", __LINE__ + 1, "sleep", "-", NULL);
	inline_line[0] = __LINE__; nanosleep(&ts, NULL);
}

static inline __attribute__((always_inline)) void sleep_level2(struct stack_thread *self)
{
	inline_line[1] = __LINE__; sleep_level3(self);
	g_spins++;  /* work after the call: no tail call */
}

static inline __attribute__((always_inline)) void sleep_level1(struct stack_thread *self)
{
	inline_line[2] = __LINE__; sleep_level2(self);
	g_spins++;
}

static void *inlined_main(void *arg)
{
	struct stack_thread *self = start(arg);

	inline_line[3] = __LINE__; sleep_level1(self);
	return NULL;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	stack_thread_block(&threads[SIGHANDLER], "on_sigusr1", __LINE__ + 1, "signal", "-", NULL);
	pause();
}

static void *sighandler_main(void *arg)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };

	start(arg);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	kill_line = __LINE__; pthread_kill(pthread_self(), SIGUSR1);
	sleep_long();
	return NULL;
}

static void *nofp_main(void *arg)
{
	struct stack_thread *self = start(arg);

	nofp_main_line = __LINE__; nofp_outer(self);
	return NULL;
}

__attribute__((noinline)) static void spin_here(void)
{
	for (;;)
		g_spins++;
}

static void *spinner_main(void *arg)
{
	struct stack_thread *self = start(arg);

	stack_thread_block(self, "spin_here", 0, "running", "-", NULL);
	spin_here();
	return NULL;
}

static void *(*const mains[NTHREADS])(void *) = {
	[HOLDER] = holder_main, [WAITER] = waiter_main, [DL_A] = dl_a_main,
	[DL_B] = dl_b_main, [CONDWAIT] = condwait_main, [PIPEREAD] = piperead_main,
	[SOCKRECV] = sockrecv_main, [SLEEPER] = sleeper_main, [JOINER] = joiner_main,
	[INLINED] = inlined_main, [SIGHANDLER] = sighandler_main, [NOFP] = nofp_main,
	[SPINNER] = spinner_main,
};

static pid_t tid_of(const char *name)
{
	for (int i = 0; i < NTHREADS; i++)
		if (name && strcmp(threads[i].name, name) == 0)
			return threads[i].tid;
	return 0;
}

/* A loopback TCP connection: sock_server is the accepted end. */
static void tcp_pair(struct sockaddr_in *server, struct sockaddr_in *client)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		exit(99);
	sock_client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock_client < 0 || connect(sock_client, (struct sockaddr *)&a, sizeof a) < 0)
		exit(99);
	sock_server = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sock_server < 0)
		exit(99);
	close(lfd);
	len = sizeof *server;
	getsockname(sock_server, (struct sockaddr *)server, &len);
	len = sizeof *client;
	getsockname(sock_client, (struct sockaddr *)client, &len);
}

int main(int argc, char **argv)
{
	struct sockaddr_in server, client;
	char addr[INET_ADDRSTRLEN];
	FILE *f;

	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	if (pipe2(pipe_fds, O_CLOEXEC) < 0)
		return 99;
	tcp_pair(&server, &client);
	snprintf(fd_text[0], sizeof fd_text[0], "fd=%d", pipe_fds[0]);
	snprintf(fd_text[1], sizeof fd_text[1], "fd=%d", sock_server);
	pthread_barrier_init(&dl_barrier, NULL, 2);

	/* holder first: the waiter must find g_lock taken */
	for (int i = 0; i < NTHREADS; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, mains[i], &threads[i]) != 0)
			return 99;
		if (i == SLEEPER)
			sleeper_thread = th;
		if (i == HOLDER || i == SLEEPER) {
			pthread_mutex_lock(&truth_mutex);
			while (!threads[i].ready)
				pthread_cond_wait(&truth_cond, &truth_mutex);
			pthread_mutex_unlock(&truth_mutex);
		}
	}
	pthread_mutex_lock(&truth_mutex);
	for (int i = 0; i < NTHREADS; i++)
		while (!threads[i].ready)
			pthread_cond_wait(&truth_cond, &truth_mutex);
	pthread_mutex_unlock(&truth_mutex);
	/* Each thread said where it will block; wait until it does. */
	for (int i = 0; i < NTHREADS; i++)
		if (expected_nr[i] >= 0)
			truth_wait_in_syscall(threads[i].tid, expected_nr[i]);

	f = truth_begin(argv[1]);
	truth_objects(f);
	for (int i = 0; i < NTHREADS; i++) {
		const struct stack_thread *t = &threads[i];

		fprintf(f, "thread %s %d %s %s %d %s %s %d %s\n", t->name, (int)t->tid, t->function,
			i == NOFP ? "tgt_stack_waits_nofp.c" : "tgt_stack_waits.c", t->line, t->kind,
			t->object, (int)tid_of(t->owner), expected_syscall[i]);
	}
	/* The inlined thread's frames from the call outwards. */
	fprintf(f, "uframe inlined 0 sleep_level3 tgt_stack_waits.c %d 1\n", inline_line[0]);
	fprintf(f, "uframe inlined 1 sleep_level2 tgt_stack_waits.c %d 1\n", inline_line[1]);
	fprintf(f, "uframe inlined 2 sleep_level1 tgt_stack_waits.c %d 1\n", inline_line[2]);
	fprintf(f, "uframe inlined 3 inlined_main tgt_stack_waits.c %d 0\n", inline_line[3]);
	/* Below the handler: the signal frame, then where the signal came. */
	fprintf(f, "uframe sighandler 0 on_sigusr1 tgt_stack_waits.c %d 0\n",
		threads[SIGHANDLER].line);
	fprintf(f, "uframe sighandler 1 sighandler_main tgt_stack_waits.c %d 0\n", kill_line);
	fprintf(f, "uframe nofp 0 nofp_inner tgt_stack_waits_nofp.c %d 0\n", threads[NOFP].line);
	fprintf(f, "uframe nofp 1 nofp_outer tgt_stack_waits_nofp.c %d 0\n", nofp_call_line);
	fprintf(f, "uframe nofp 2 nofp_main tgt_stack_waits.c %d 0\n", nofp_main_line);
	fprintf(f, "deadlock dl_a dl_b\n");
	fprintf(f, "pipe %d %d\n", pipe_fds[0], pipe_fds[1]);
	inet_ntop(AF_INET, &server.sin_addr, addr, sizeof addr);
	fprintf(f, "tcp_server %s:%u\n", addr, (unsigned)ntohs(server.sin_port));
	inet_ntop(AF_INET, &client.sin_addr, addr, sizeof addr);
	fprintf(f, "tcp_client %s:%u\n", addr, (unsigned)ntohs(client.sin_port));
	fprintf(f, "main %d\n", (int)gettid());
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	truth_wait_forever();
}
