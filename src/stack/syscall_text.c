/* syscall_text.c - decode the system call a blocked thread is in.
 *
 * One table maps a system call name (kernel/syscalls.c gives the name of
 * the number) to the function that writes its arguments.  Pointers to
 * timespecs, pollfd arrays, fd_sets and signal masks are read from the
 * target through env->read; when a read fails the raw pointer is shown, so
 * a half-decoded line never claims what it did not see.  The arguments
 * are the registers at entry as /proc/TID/syscall shows them (x86-64:
 * rdi rsi rdx r10 r8 r9). */
#include "stack/syscall_text.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/futex.h>

#include "kernel/syscalls.h"
#include "target/mem.h"

int vg_decode_env_mem_read(void *mem, uint64_t addr, void *buf, size_t len)
{
	struct vg_mem_result res;

	return vg_mem_read(mem, addr, buf, len, &res, NULL);
}

/* A bounded text being appended to; a cut text ends with "…". */
struct out {
	char *buf;
	size_t size, len;
	bool cut;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->cut)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len) {
		o->cut = true;
		o->len = o->size - 1;
		/* "…" is 3 bytes of UTF-8: room for it is kept when possible */
		if (o->size >= 4)
			memcpy(o->buf + o->size - 4, "\xe2\x80\xa6", 4);
		return;
	}
	o->len += (size_t)n;
}

const char *vg_duration_text(uint64_t ns, char *buf, size_t size)
{
	static const struct { uint64_t unit; const char *name; } units[] = {
		{ 1000000000ULL, "s" }, { 1000000ULL, "ms" }, { 1000ULL, "us" },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (ns >= units[i].unit) {
			uint64_t whole = ns / units[i].unit;
			/* three decimals, trailing zeros dropped: 1.5 s, 1.25 s */
			uint64_t frac = (ns % units[i].unit) / (units[i].unit / 1000);
			if (frac == 0) {
				snprintf(buf, size, "%llu %s", (unsigned long long)whole, units[i].name);
			} else {
				char f[24];
				size_t n;

				snprintf(f, sizeof f, "%03llu", (unsigned long long)frac);
				for (n = strlen(f); n > 0 && f[n - 1] == '0'; n--)
					f[n - 1] = '\0';
				snprintf(buf, size, "%llu.%s %s", (unsigned long long)whole, f,
					 units[i].name);
			}
			return buf;
		}
	}
	snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	return buf;
}

const char *vg_futex_op_text(uint64_t op, char *buf, size_t size)
{
	static const char *const cmds[] = {
		[FUTEX_WAIT] = "WAIT", [FUTEX_WAKE] = "WAKE", [FUTEX_FD] = "FD",
		[FUTEX_REQUEUE] = "REQUEUE", [FUTEX_CMP_REQUEUE] = "CMP_REQUEUE",
		[FUTEX_WAKE_OP] = "WAKE_OP", [FUTEX_LOCK_PI] = "LOCK_PI",
		[FUTEX_UNLOCK_PI] = "UNLOCK_PI", [FUTEX_TRYLOCK_PI] = "TRYLOCK_PI",
		[FUTEX_WAIT_BITSET] = "WAIT_BITSET", [FUTEX_WAKE_BITSET] = "WAKE_BITSET",
		[FUTEX_WAIT_REQUEUE_PI] = "WAIT_REQUEUE_PI",
		[FUTEX_CMP_REQUEUE_PI] = "CMP_REQUEUE_PI", [FUTEX_LOCK_PI2] = "LOCK_PI2",
	};
	unsigned cmd = (unsigned)(op & FUTEX_CMD_MASK);
	char num[24];
	const char *name = cmd < sizeof cmds / sizeof cmds[0] && cmds[cmd] ? cmds[cmd] : NULL;

	if (!name || op > 0xffffffffULL) {
		snprintf(num, sizeof num, "op_%llu", (unsigned long long)(op & 0xffffffffULL & FUTEX_CMD_MASK));
		name = num;
	}
	snprintf(buf, size, "%s%s%s", name, op & FUTEX_PRIVATE_FLAG ? "_PRIVATE" : "",
		 op & FUTEX_CLOCK_REALTIME ? "|CLOCK_REALTIME" : "");
	return buf;
}

static bool read_mem(const struct vg_decode_env *env, uint64_t addr, void *buf, size_t len)
{
	return addr && env && env->read && env->read(env->ctx, addr, buf, len) == 0;
}

static void put_fd(struct out *o, const struct vg_decode_env *env, uint64_t arg)
{
	char desc[256];
	int fd = (int)arg;

	if (env && env->describe_fd && fd >= 0 && env->describe_fd(env->ctx, fd, desc, sizeof desc))
		put(o, "%d = %s", fd, desc);
	else
		put(o, "%d", fd);
}

static void put_addr(struct out *o, const struct vg_decode_env *env, uint64_t addr)
{
	char name[160];

	if (addr && env && env->name_data &&
	    env->name_data(env->ctx, addr, name, sizeof name, NULL))
		put(o, "0x%llx=%s", (unsigned long long)addr, name);
	else
		put(o, "0x%llx", (unsigned long long)addr);
}

static bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	uint64_t s = (uint64_t)ts->tv_sec;

	return s > UINT64_MAX / 1000000000ULL - 1 ? UINT64_MAX
						   : s * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

/* A relative timeout pointer: "1.5 s"; NULL is "no timeout". */
static void put_rel_timespec(struct out *o, const struct vg_decode_env *env, uint64_t ptr)
{
	struct timespec ts;
	char d[32];

	if (!ptr)
		put(o, "no timeout");
	else if (read_mem(env, ptr, &ts, sizeof ts) && ts_valid(&ts))
		put(o, "%s", vg_duration_text(ts_ns(&ts), d, sizeof d));
	else
		put(o, "0x%llx", (unsigned long long)ptr);
}

/* An absolute deadline on clock id: "in 1.2 s" (or "1.2 s ago"). */
static void put_abs_timespec(struct out *o, const struct vg_decode_env *env, uint64_t ptr,
			     clockid_t id)
{
	struct timespec ts, now;
	char d[32];
	int rc;

	if (!ptr) {
		put(o, "no timeout");
		return;
	}
	if (!read_mem(env, ptr, &ts, sizeof ts) || !ts_valid(&ts)) {
		put(o, "0x%llx", (unsigned long long)ptr);
		return;
	}
	rc = env->clock ? env->clock(env->ctx, id, &now) : clock_gettime(id, &now);
	if (rc != 0 || !ts_valid(&now)) {
		put(o, "at %lld.%09ld", (long long)ts.tv_sec, ts.tv_nsec);
		return;
	}
	if (ts_ns(&ts) >= ts_ns(&now))
		put(o, "in %s", vg_duration_text(ts_ns(&ts) - ts_ns(&now), d, sizeof d));
	else
		put(o, "%s ago", vg_duration_text(ts_ns(&now) - ts_ns(&ts), d, sizeof d));
}

static void put_ms(struct out *o, int64_t ms)
{
	char d[32];

	if (ms < 0)
		put(o, "no timeout");
	else
		put(o, "%s", vg_duration_text((uint64_t)ms * 1000000ULL, d, sizeof d));
}

static void put_sigset(struct out *o, const struct vg_decode_env *env, uint64_t ptr)
{
	uint64_t mask;
	bool first = true;

	if (!read_mem(env, ptr, &mask, sizeof mask)) {
		put(o, "0x%llx", (unsigned long long)ptr);
		return;
	}
	put(o, "[");
	for (int sig = 1; sig <= 64; sig++) {
		if (!(mask & (1ULL << (sig - 1))))
			continue;
		const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

		if (abbrev)
			put(o, "%sSIG%s", first ? "" : " ", abbrev);
		else
			put(o, "%s%d", first ? "" : " ", sig);
		first = false;
	}
	put(o, "]");
}

/* futex(uaddr, op, val, timeout|val2, uaddr2, val3) */
static void fmt_futex(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	unsigned cmd = (unsigned)(a[1] & FUTEX_CMD_MASK);
	char op[48];

	put_addr(o, env, a[0]);
	put(o, ", %s, %u", vg_futex_op_text(a[1], op, sizeof op), (unsigned)a[2]);
	switch (cmd) {
	case FUTEX_WAIT:
		/* FUTEX_WAIT's timeout is relative (man 2 futex) */
		if (a[3]) {
			put(o, ", ");
			put_rel_timespec(o, env, a[3]);
		}
		break;
	case FUTEX_WAIT_BITSET:
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_LOCK_PI2:
		if (a[3]) {
			put(o, ", ");
			put_abs_timespec(o, env, a[3], a[1] & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME
										  : CLOCK_MONOTONIC);
		}
		if (cmd == FUTEX_WAIT_BITSET && (uint32_t)a[5] != FUTEX_BITSET_MATCH_ANY)
			put(o, ", bitset 0x%x", (unsigned)a[5]);
		break;
	case FUTEX_LOCK_PI:
		/* LOCK_PI's timeout is absolute on CLOCK_REALTIME */
		if (a[3]) {
			put(o, ", ");
			put_abs_timespec(o, env, a[3], CLOCK_REALTIME);
		}
		break;
	default:
		put(o, ", 0x%llx, 0x%llx, 0x%llx", (unsigned long long)a[3],
		    (unsigned long long)a[4], (unsigned long long)a[5]);
	}
}

/* read/write/recvfrom/...(fd, buf, count, ...) */
static void fmt_fd_count(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_fd(o, env, a[0]);
	put(o, ", %llu", (unsigned long long)a[2]);
}

/* recvmsg/sendmsg/accept/connect/...(fd, ...) */
static void fmt_fd(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_fd(o, env, a[0]);
}

static void put_pollfds(struct out *o, const struct vg_decode_env *env, uint64_t ptr,
			uint64_t nfds)
{
	struct pollfd fds[8];
	size_t n = nfds < 8 ? (size_t)nfds : 8;

	if (n == 0 || !read_mem(env, ptr, fds, n * sizeof fds[0])) {
		put(o, "0x%llx, %llu", (unsigned long long)ptr, (unsigned long long)nfds);
		return;
	}
	put(o, "[");
	for (size_t i = 0; i < n; i++) {
		put(o, "%s", i ? ", " : "");
		put_fd(o, env, (uint64_t)(int64_t)fds[i].fd);
		put(o, " %s%s", fds[i].events & (POLLIN | POLLPRI) ? "in" : "",
		    fds[i].events & POLLOUT ? "out" : "");
	}
	put(o, "%s], %llu", nfds > n ? ", …" : "", (unsigned long long)nfds);
}

static void fmt_poll(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_pollfds(o, env, a[0], a[1]);
	put(o, ", ");
	put_ms(o, (int32_t)a[2]);
}

static void fmt_ppoll(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_pollfds(o, env, a[0], a[1]);
	put(o, ", ");
	put_rel_timespec(o, env, a[2]);
}

/* The fds of an fd_set (first nfds bits, at most 1024). */
static void put_fdset(struct out *o, const struct vg_decode_env *env, uint64_t ptr, uint64_t nfds)
{
	uint64_t bits[16];
	size_t words;
	bool first = true;

	if (!ptr) {
		put(o, "NULL");
		return;
	}
	if (nfds > 1024)
		nfds = 1024;
	words = (size_t)(nfds + 63) / 64;
	if (words == 0 || !read_mem(env, ptr, bits, words * 8)) {
		put(o, "0x%llx", (unsigned long long)ptr);
		return;
	}
	put(o, "[");
	for (uint64_t fd = 0; fd < nfds; fd++) {
		if (bits[fd / 64] & (1ULL << (fd % 64))) {
			put(o, "%s%llu", first ? "" : " ", (unsigned long long)fd);
			first = false;
		}
	}
	put(o, "]");
}

static void fmt_select_sets(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put(o, "%lld, ", (long long)(int32_t)a[0]);
	put_fdset(o, env, a[1], a[0]);
	put(o, ", ");
	put_fdset(o, env, a[2], a[0]);
	put(o, ", ");
	put_fdset(o, env, a[3], a[0]);
	put(o, ", ");
}

static void fmt_select(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	struct { int64_t sec, usec; } tv;
	char d[32];

	fmt_select_sets(o, a, env);
	if (!a[4])
		put(o, "no timeout");
	else if (read_mem(env, a[4], &tv, sizeof tv) && tv.sec >= 0 && tv.usec >= 0 &&
		 tv.usec < 1000000)
		put(o, "%s", vg_duration_text((uint64_t)tv.sec * 1000000000ULL +
					      (uint64_t)tv.usec * 1000ULL, d, sizeof d));
	else
		put(o, "0x%llx", (unsigned long long)a[4]);
}

static void fmt_pselect(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	fmt_select_sets(o, a, env);
	put_rel_timespec(o, env, a[4]);
}

/* epoll_wait/epoll_pwait(epfd, events, maxevents, timeout_ms, ...) */
static void fmt_epoll_wait(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_fd(o, env, a[0]);
	put(o, ", maxevents %d, ", (int)(int32_t)a[2]);
	put_ms(o, (int32_t)a[3]);
}

static void fmt_epoll_pwait2(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_fd(o, env, a[0]);
	put(o, ", maxevents %d, ", (int)(int32_t)a[2]);
	put_rel_timespec(o, env, a[3]);
}

static void fmt_nanosleep(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_rel_timespec(o, env, a[0]);
}

/* clock_nanosleep(clockid, flags, request, remain) */
static void fmt_clock_nanosleep(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	static const char *const clocks[] = {
		"REALTIME", "MONOTONIC", "PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID",
		"MONOTONIC_RAW", "REALTIME_COARSE", "MONOTONIC_COARSE", "BOOTTIME",
		"REALTIME_ALARM", "BOOTTIME_ALARM", "SGI_CYCLE", "TAI",
	};
	clockid_t id = (clockid_t)(int32_t)a[0];

	if (id >= 0 && (size_t)id < sizeof clocks / sizeof clocks[0])
		put(o, "%s, ", clocks[id]);
	else
		put(o, "clock %d, ", (int)id);
	if (a[1] & TIMER_ABSTIME)
		put_abs_timespec(o, env, a[2], id);
	else
		put_rel_timespec(o, env, a[2]);
}

/* wait4(pid, status, options, rusage) */
static void fmt_wait4(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	int pid = (int)(int32_t)a[0];

	if (pid == -1)
		put(o, "any child");
	else if (pid == 0)
		put(o, "any child in its process group");
	else if (pid < 0)
		put(o, "any child in process group %d", -pid);
	else
		put(o, "pid %d", pid);
	if (a[2])
		put(o, ", options 0x%llx", (unsigned long long)a[2]);
}

/* waitid(idtype, id, infop, options, rusage) */
static void fmt_waitid(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	/* P_ALL 0, P_PID 1, P_PGID 2, P_PIDFD 3 (include/uapi/linux/wait.h) */
	switch (a[0]) {
	case 0: put(o, "any child"); break;
	case 1: put(o, "pid %d", (int)(int32_t)a[1]); break;
	case 2: put(o, "process group %d", (int)(int32_t)a[1]); break;
	case 3: put(o, "pidfd "); put_fd(o, env, a[1]); break;
	default: put(o, "idtype %llu, id %llu", (unsigned long long)a[0], (unsigned long long)a[1]);
	}
	put(o, ", options 0x%llx", (unsigned long long)a[3]);
}

static void fmt_none(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
}

/* rt_sigsuspend(mask, sigsetsize): the signals blocked while waiting */
static void fmt_sigsuspend(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put(o, "blocking ");
	put_sigset(o, env, a[0]);
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize) */
static void fmt_sigtimedwait(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_sigset(o, env, a[0]);
	put(o, ", ");
	put_rel_timespec(o, env, a[2]);
}

/* io_uring_enter(fd, to_submit, min_complete, flags, argp, argsz) */
static void fmt_io_uring_enter(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	put_fd(o, env, a[0]);
	put(o, ", submit %u, wait for %u, flags 0x%x", (unsigned)a[1], (unsigned)a[2],
	    (unsigned)a[3]);
}

static void fmt_raw(struct out *o, const uint64_t *a, const struct vg_decode_env *env)
{
	for (int i = 0; i < 6; i++)
		put(o, "%s0x%llx", i ? ", " : "", (unsigned long long)a[i]);
}

typedef void (*formatter)(struct out *, const uint64_t *, const struct vg_decode_env *);

static const struct {
	const char *name;
	formatter fmt;
} decoders[] = {
	{ "futex", fmt_futex },
	{ "read", fmt_fd_count },       { "write", fmt_fd_count },
	{ "pread64", fmt_fd_count },    { "pwrite64", fmt_fd_count },
	{ "readv", fmt_fd },            { "writev", fmt_fd },
	{ "recvfrom", fmt_fd_count },   { "sendto", fmt_fd_count },
	{ "recvmsg", fmt_fd },          { "sendmsg", fmt_fd },
	{ "recvmmsg", fmt_fd },         { "sendmmsg", fmt_fd },
	{ "accept", fmt_fd },           { "accept4", fmt_fd },
	{ "connect", fmt_fd },
	{ "poll", fmt_poll },           { "ppoll", fmt_ppoll },
	{ "select", fmt_select },       { "pselect6", fmt_pselect },
	{ "epoll_wait", fmt_epoll_wait }, { "epoll_pwait", fmt_epoll_wait },
	{ "epoll_pwait2", fmt_epoll_pwait2 },
	{ "nanosleep", fmt_nanosleep }, { "clock_nanosleep", fmt_clock_nanosleep },
	{ "wait4", fmt_wait4 },         { "waitid", fmt_waitid },
	{ "pause", fmt_none },          { "sched_yield", fmt_none },
	/* the registers of a resumed call are not its arguments */
	{ "restart_syscall", fmt_none },
	{ "rt_sigsuspend", fmt_sigsuspend },
	{ "rt_sigtimedwait", fmt_sigtimedwait },
	{ "io_uring_enter", fmt_io_uring_enter },
};

const char *vg_syscall_text(long nr, const uint64_t args[6], const struct vg_decode_env *env,
			    char *buf, size_t size)
{
	struct out o = { .buf = buf, .size = size };
	char label[32];
	const char *name;
	formatter fmt = fmt_raw;

	if (!buf || size == 0)
		return buf;
	buf[0] = '\0';
	if (nr < 0 || nr > 0x7fffffff) {
		put(&o, "no system call");
		return buf;
	}
	name = vg_syscall_label((int)nr, label, sizeof label);
	for (size_t i = 0; i < sizeof decoders / sizeof decoders[0]; i++) {
		if (strcmp(decoders[i].name, name) == 0) {
			fmt = decoders[i].fmt;
			break;
		}
	}
	put(&o, "%s(", name);
	fmt(&o, args, env);
	put(&o, ")");
	return buf;
}
