/* waits.c - classify a thread's wait, follow owners, find deadlocks.
 *
 * A futex alone says nothing about what it is: the user frames say which
 * glibc function waits on it, and that function's object layout says
 * where the object starts and whether it records an owner (see waits.h
 * for the offsets, checked against glibc 2.36's bits/struct_mutex.h and
 * struct_rwlock.h).  Frame names are compared without leading '_', symbol
 * versions ("@@GLIBC_2.3.2") or clone suffixes (".isra.0"), because
 * symbolizers differ in which alias of a glibc function they print.
 * Only the innermost frames are looked at: glibc's wait helpers are within
 * a few frames of the system call. */
#include "stack/waits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/futex.h>

#include "kernel/syscalls.h"

/* How many innermost frames may name the waiting glibc function. */
#define FRAMES_LOOKED_AT 10

/* glibc 2.36 x86-64 object layouts */
#define MUTEX_OWNER_OFF 8        /* pthread_mutex_t.__data.__owner */
#define RWLOCK_READERS_OFF 0     /* __readers */
#define RWLOCK_READERS_SHIFT 3   /* PTHREAD_RWLOCK_READER_SHIFT (nptl) */
#define RWLOCK_WRPHASE_OFF 8     /* __wrphase_futex */
#define RWLOCK_WRITERS_OFF 12    /* __writers_futex */
#define RWLOCK_CUR_WRITER_OFF 24 /* __cur_writer */
#define COND_G_SIGNALS_OFF 40    /* __g_signals[0]; [1] at 44 */
#define COND_SIZE 48

const char *vg_wait_kind_name(enum vg_wait_kind kind)
{
	static const char *const names[] = {
		[VG_WAIT_UNKNOWN] = "unknown", [VG_WAIT_RUNNING] = "running",
		[VG_WAIT_USER] = "user", [VG_WAIT_MUTEX] = "mutex", [VG_WAIT_RWLOCK] = "rwlock",
		[VG_WAIT_COND] = "cond", [VG_WAIT_SEMAPHORE] = "semaphore",
		[VG_WAIT_JOIN] = "join", [VG_WAIT_LOCK] = "lock", [VG_WAIT_FUTEX] = "futex",
		[VG_WAIT_IO] = "io", [VG_WAIT_POLL] = "poll", [VG_WAIT_SLEEP] = "sleep",
		[VG_WAIT_SIGNAL] = "signal", [VG_WAIT_CHILD] = "child",
		[VG_WAIT_IO_URING] = "io_uring", [VG_WAIT_YIELD] = "yield",
		[VG_WAIT_SYSCALL] = "syscall",
	};
	return (unsigned)kind < sizeof names / sizeof names[0] && names[kind] ? names[kind]
										 : "unknown";
}

/* A frame name without leading '_', glibc's "__GI_" hidden-alias prefix
 * (__GI___lll_lock_wait, the name DWARF gives), "@..." or ".suffix". */
static void base_name(const char *frame, char *out, size_t size)
{
	size_t n;

	while (*frame == '_')
		frame++;
	if (strncmp(frame, "GI_", 3) == 0)
		frame += 3;
	while (*frame == '_')
		frame++;
	n = strcspn(frame, "@.");
	if (n >= size)
		n = size - 1;
	memcpy(out, frame, n);
	out[n] = '\0';
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What a normalized frame name says, or VG_WAIT_UNKNOWN for a frame that
 * says nothing (the futex helpers, the syscall wrapper, user code). */
static enum vg_wait_kind frame_kind(const char *name, bool *write)
{
	if (strcmp(name, "lll_lock_wait_private") == 0)
		return VG_WAIT_LOCK;
	if (strcmp(name, "lll_lock_wait") == 0 || starts(name, "pthread_mutex_") ||
	    starts(name, "mtx_lock") || starts(name, "mtx_timedlock"))
		return VG_WAIT_MUTEX;
	if (starts(name, "pthread_rwlock_")) {
		const char *rest = name + strlen("pthread_rwlock_");

		*write = strstr(rest, "wr") != NULL;
		return VG_WAIT_RWLOCK;
	}
	if ((starts(name, "pthread_cond_") && !strstr(name, "signal") && !strstr(name, "broadcast")) ||
	    starts(name, "condvar_") || starts(name, "cnd_wait") || starts(name, "cnd_timedwait"))
		return VG_WAIT_COND;
	if (starts(name, "new_sem_wait") || strcmp(name, "sem_wait") == 0 ||
	    starts(name, "sem_timedwait") || starts(name, "sem_clockwait"))
		return VG_WAIT_SEMAPHORE;
	if (strcmp(name, "pthread_join") == 0 || starts(name, "pthread_clockjoin") ||
	    starts(name, "pthread_timedjoin") || strcmp(name, "thrd_join") == 0)
		return VG_WAIT_JOIN;
	return VG_WAIT_UNKNOWN;
}

static bool read_u32(const struct vg_decode_env *env, uint64_t addr, uint32_t *v)
{
	return env && env->read && env->read(env->ctx, addr, v, sizeof *v) == 0;
}

/* Name the object at addr; *start where the named symbol begins. */
static bool name_object(const struct vg_decode_env *env, uint64_t addr, char *buf, size_t size,
			uint64_t *start)
{
	*start = 0;
	buf[0] = '\0';
	if (!env || !env->name_data || !addr)
		return false;
	if (!env->name_data(env->ctx, addr, buf, size, start)) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

static void classify_futex(const struct vg_wait_input *in, const struct vg_decode_env *env,
			   struct vg_wait *out)
{
	const uint64_t *a = in->syscall.args;
	uint64_t uaddr = a[0], start;
	unsigned cmd = (unsigned)(a[1] & FUTEX_CMD_MASK);
	enum vg_wait_kind kind = VG_WAIT_FUTEX;
	bool write = false;
	uint32_t v;
	char name[160];
	bool named;

	for (size_t i = 0; in->frames && i < in->n_frames && i < FRAMES_LOOKED_AT; i++) {
		char base[96];

		if (!in->frames[i])
			continue;
		base_name(in->frames[i], base, sizeof base);
		kind = frame_kind(base, &write);
		if (kind != VG_WAIT_UNKNOWN)
			break;
		kind = VG_WAIT_FUTEX;
	}
	out->kind = kind;
	out->object = uaddr;
	named = name_object(env, uaddr, name, sizeof name, &start);

	switch (kind) {
	case VG_WAIT_MUTEX:
	case VG_WAIT_LOCK:
		/* The futex word is __lock at offset 0: uaddr is the mutex. */
		if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_TRYLOCK_PI) {
			/* PI: the word is the owner's TID (and flag bits) */
			if (read_u32(env, uaddr, &v))
				out->owner = (pid_t)(v & FUTEX_TID_MASK);
		} else if (kind == VG_WAIT_MUTEX && read_u32(env, uaddr + MUTEX_OWNER_OFF, &v)) {
			out->owner = (pid_t)(v & FUTEX_TID_MASK);
		}
		break;
	case VG_WAIT_RWLOCK:
		/* Readers wait on __wrphase_futex, writers on __writers_futex
		 * or __wrphase_futex; the lock is 8-aligned, so the word's
		 * alignment tells which of the two (12 is 4 mod 8). */
		if (named && uaddr - start <= RWLOCK_WRITERS_OFF)
			out->object = start;
		else
			out->object = uaddr - ((uaddr & 7) == 4 ? RWLOCK_WRITERS_OFF : RWLOCK_WRPHASE_OFF);
		if (read_u32(env, out->object + RWLOCK_CUR_WRITER_OFF, &v) && v) {
			out->owner = (pid_t)(v & FUTEX_TID_MASK);
			out->write_locked = true;
		} else if (read_u32(env, out->object + RWLOCK_READERS_OFF, &v)) {
			out->readers = v >> RWLOCK_READERS_SHIFT;
		}
		(void)write;
		break;
	case VG_WAIT_COND:
		/* Waiters sleep on __g_signals[g]; which g is not knowable from
		 * outside, but the object is 8-aligned: 40 is 0 mod 8, 44 is 4. */
		if (named && uaddr - start < COND_SIZE)
			out->object = start;
		else
			out->object = uaddr - ((uaddr & 7) == 4 ? COND_G_SIGNALS_OFF + 4
								: COND_G_SIGNALS_OFF);
		break;
	case VG_WAIT_JOIN:
		/* futex_wait(&pd->tid, tid): the expected value is the TID */
		out->owner = (pid_t)(uint32_t)a[2];
		break;
	default:
		break;
	}
	if (out->object != uaddr)
		name_object(env, out->object, out->object_name, sizeof out->object_name, &start);
	else if (named)
		memcpy(out->object_name, name, sizeof out->object_name);
}

static const struct {
	const char *name;
	enum vg_wait_kind kind;
	bool fd_arg0;
} syscall_kinds[] = {
	{ "read", VG_WAIT_IO, true },         { "write", VG_WAIT_IO, true },
	{ "pread64", VG_WAIT_IO, true },      { "pwrite64", VG_WAIT_IO, true },
	{ "readv", VG_WAIT_IO, true },        { "writev", VG_WAIT_IO, true },
	{ "preadv", VG_WAIT_IO, true },       { "pwritev", VG_WAIT_IO, true },
	{ "preadv2", VG_WAIT_IO, true },      { "pwritev2", VG_WAIT_IO, true },
	{ "recvfrom", VG_WAIT_IO, true },     { "sendto", VG_WAIT_IO, true },
	{ "recvmsg", VG_WAIT_IO, true },      { "sendmsg", VG_WAIT_IO, true },
	{ "recvmmsg", VG_WAIT_IO, true },     { "sendmmsg", VG_WAIT_IO, true },
	{ "accept", VG_WAIT_IO, true },       { "accept4", VG_WAIT_IO, true },
	{ "connect", VG_WAIT_IO, true },
	{ "poll", VG_WAIT_POLL, false },      { "ppoll", VG_WAIT_POLL, false },
	{ "select", VG_WAIT_POLL, false },    { "pselect6", VG_WAIT_POLL, false },
	{ "epoll_wait", VG_WAIT_POLL, true }, { "epoll_pwait", VG_WAIT_POLL, true },
	{ "epoll_pwait2", VG_WAIT_POLL, true },
	{ "nanosleep", VG_WAIT_SLEEP, false }, { "clock_nanosleep", VG_WAIT_SLEEP, false },
	{ "pause", VG_WAIT_SIGNAL, false },   { "rt_sigsuspend", VG_WAIT_SIGNAL, false },
	{ "rt_sigtimedwait", VG_WAIT_SIGNAL, false },
	{ "wait4", VG_WAIT_CHILD, false },    { "waitid", VG_WAIT_CHILD, false },
	{ "io_uring_enter", VG_WAIT_IO_URING, true },
	{ "sched_yield", VG_WAIT_YIELD, false },
};

/* A sleep or poll interrupted by a stop (SIGSTOP, a ptrace attach such as
 * eu-stack's, a handled signal) resumes as restart_syscall, whose
 * registers are no longer its arguments: the libc frames say what it was. */
static enum vg_wait_kind restarted_kind(const struct vg_wait_input *in)
{
	for (size_t i = 0; in->frames && i < in->n_frames && i < FRAMES_LOOKED_AT; i++) {
		char base[96];

		if (!in->frames[i])
			continue;
		base_name(in->frames[i], base, sizeof base);
		if (strstr(base, "nanosleep") || strcmp(base, "sleep") == 0 ||
		    strcmp(base, "usleep") == 0)
			return VG_WAIT_SLEEP;
		if (strstr(base, "poll") || strstr(base, "select"))
			return VG_WAIT_POLL;
	}
	return VG_WAIT_SYSCALL;
}

void vg_wait_classify(const struct vg_wait_input *in, const struct vg_decode_env *env,
		      struct vg_wait *out)
{
	const char *name;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (!in)
		return;
	out->tid = in->tid;
	switch (in->syscall.state) {
	case VG_SYSCALL_RUNNING:
		out->kind = VG_WAIT_RUNNING;
		return;
	case VG_SYSCALL_NONE:
		out->kind = VG_WAIT_USER;
		return;
	case VG_SYSCALL_IN:
		break;
	default:
		out->kind = VG_WAIT_UNKNOWN;
		return;
	}
	vg_syscall_text(in->syscall.nr, in->syscall.args, env, out->detail, sizeof out->detail);
	name = in->syscall.nr <= 0x7fffffff ? vg_syscall_name((int)in->syscall.nr) : NULL;
	if (name && strcmp(name, "futex") == 0) {
		classify_futex(in, env, out);
		return;
	}
	if (name && strcmp(name, "restart_syscall") == 0) {
		out->kind = restarted_kind(in);
		return;
	}
	out->kind = VG_WAIT_SYSCALL;
	for (size_t i = 0; name && i < sizeof syscall_kinds / sizeof syscall_kinds[0]; i++) {
		if (strcmp(syscall_kinds[i].name, name) == 0) {
			out->kind = syscall_kinds[i].kind;
			if (syscall_kinds[i].fd_arg0)
				out->fd = (int)(int32_t)in->syscall.args[0];
			break;
		}
	}
}

struct tid_index {
	pid_t tid;
	size_t index;
};

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = ((const struct tid_index *)a)->tid, y = ((const struct tid_index *)b)->tid;

	return (x > y) - (x < y);
}

static long index_of(const struct tid_index *map, size_t n, pid_t tid)
{
	struct tid_index key = { .tid = tid };
	const struct tid_index *e = bsearch(&key, map, n, sizeof *map, cmp_tid);

	return e ? (long)e->index : -1;
}

static struct vg_wait_link link_of(const struct vg_wait *w)
{
	return (struct vg_wait_link){ .tid = w->tid, .object = w->object,
				      .object_name = w->object_name, .owner = w->owner };
}

/* Record the cycle links[0..n) once, rotated to start at its lowest TID. */
static int add_deadlock(struct vg_wait_graph *g, const struct vg_wait_link *links, size_t n)
{
	size_t low = 0;
	struct vg_wait_link *copy;
	struct vg_deadlock *grown;

	for (size_t i = 1; i < n; i++)
		if (links[i].tid < links[low].tid)
			low = i;
	for (size_t d = 0; d < g->n_deadlocks; d++) {
		/* the same cycle found from another thread: same lowest TID,
		 * same length (a thread waits on one thing at a time) */
		if (g->deadlocks[d].n == n && g->deadlocks[d].links[0].tid == links[low].tid)
			return 0;
	}
	copy = calloc(n, sizeof *copy);
	grown = realloc(g->deadlocks, (g->n_deadlocks + 1) * sizeof *grown);
	if (!copy || !grown) {
		free(copy);
		if (grown)
			g->deadlocks = grown;
		return -ENOMEM;
	}
	g->deadlocks = grown;
	for (size_t i = 0; i < n; i++)
		copy[i] = links[(low + i) % n];
	g->deadlocks[g->n_deadlocks++] = (struct vg_deadlock){ .links = copy, .n = n };
	return 0;
}

int vg_wait_chains(const struct vg_wait *waits, size_t n, struct vg_wait_graph *out)
{
	struct tid_index *map = NULL;
	size_t *seen_at = NULL;  /* position in the current chain + 1, 0: not in it */
	size_t *path = NULL;     /* the indexes the current chain went through */
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	map = calloc(n, sizeof *map);
	seen_at = calloc(n, sizeof *seen_at);
	path = calloc(n, sizeof *path);
	out->chains = calloc(n, sizeof *out->chains);
	if (!map || !seen_at || !path || !out->chains)
		goto fail;
	for (size_t i = 0; i < n; i++)
		map[i] = (struct tid_index){ .tid = waits[i].tid, .index = i };
	qsort(map, n, sizeof *map, cmp_tid);

	for (size_t i = 0; i < n; i++) {
		struct vg_wait_chain *c;
		size_t cur = i;

		if (waits[i].owner == 0)
			continue;
		c = &out->chains[out->n_chains];
		c->links = calloc(n, sizeof *c->links);
		if (!c->links)
			goto fail;
		out->n_chains++;
		for (;;) {
			const struct vg_wait *w = &waits[cur];
			long next;

			if (w->owner == 0) {
				c->end = VG_CHAIN_AT_THREAD;
				c->end_tid = w->tid;
				break;
			}
			if (seen_at[cur]) {
				c->end = VG_CHAIN_DEADLOCK;
				c->end_tid = w->tid;
				if (add_deadlock(out, c->links + seen_at[cur] - 1,
						 c->n - (seen_at[cur] - 1)) < 0)
					goto fail;
				break;
			}
			path[c->n] = cur;
			c->links[c->n++] = link_of(w);
			seen_at[cur] = c->n;
			next = index_of(map, n, w->owner);
			if (next < 0) {
				c->end = VG_CHAIN_DEAD_OWNER;
				c->end_tid = w->owner;
				break;
			}
			cur = (size_t)next;
		}
		for (size_t k = 0; k < c->n; k++)
			seen_at[path[k]] = 0;
	}
	rc = 0;
fail:
	free(map);
	free(seen_at);
	free(path);
	if (rc < 0)
		vg_wait_graph_release(out);
	return rc;
}

void vg_wait_graph_release(struct vg_wait_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_chains; i++)
		free(g->chains[i].links);
	for (size_t i = 0; i < g->n_deadlocks; i++)
		free(g->deadlocks[i].links);
	free(g->chains);
	free(g->deadlocks);
	memset(g, 0, sizeof(*g));
}
