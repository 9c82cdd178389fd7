/* facts.c - one snapshot's thread facts and waits (facts.h).
 *
 * The wait needs the names of the innermost user frames (which glibc
 * function waits on a futex); they are looked up here from the captured
 * return addresses, inline frames included, innermost first, and only as
 * many as waits.c looks at.  The fd describer caches the target's
 * /proc/net tables and reads one only when an I/O wait names a socket.
 * Reading /proc/net/tcp costs milliseconds (11 ms here, for one socket
 * wait, against 0.3 ms for the whole capture of 14 threads), so the
 * cache is kept for up to NET_MAX_AGE_NS across snapshots (the wall-clock
 * profile takes one every few ms) instead of being dropped at each. */
#include "stack/facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/syscalls.h"
#include "stack/fd_desc.h"
#include "stack/target_env.h"
#include "sym/symbolizer.h"

/* waits.c looks at the 10 innermost frames; inline frames count. */
#define NAMES 16
#define NAME_LEN 128
/* How long the cached /proc/net tables serve later snapshots. */
#define NET_MAX_AGE_NS 1000000000ull

struct vg_stack_facts_reader {
	const struct vg_target *t;
	struct vg_symbolizer *sym;
	struct vg_fd_describer *fds;
	struct vg_target_env env;
	struct vg_sym_result res;
	uint64_t net_since_ns;      /* when the describer was last reset */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct vg_stack_facts_reader *vg_stack_facts_reader_new(const struct vg_target *t,
							 struct vg_mem *mem,
							 struct vg_symbolizer *sym)
{
	struct vg_stack_facts_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->t = t;
	r->sym = sym;
	r->fds = vg_fd_describer_new(t);
	if (!r->fds) {
		free(r);
		return NULL;
	}
	r->env = (struct vg_target_env){ .mem = mem, .sym = sym, .fds = r->fds };
	return r;
}

struct vg_stack_facts_reader *vg_stack_facts_reader_free(struct vg_stack_facts_reader *r)
{
	if (r) {
		vg_fd_describer_free(r->fds);
		free(r);
	}
	return NULL;
}

/* The function names of st's innermost frames into names[], innermost
 * first (an address's inline frames innermost first too). */
static size_t frame_names(struct vg_stack_facts_reader *r, const struct vg_thread_stack *st,
			  char names[NAMES][NAME_LEN])
{
	size_t k = 0;

	for (size_t i = 0; i < st->n && k < NAMES; i++) {
		uint64_t a = st->exact[i] || st->ips[i] == 0 ? st->ips[i] : st->ips[i] - 1;

		if (vg_sym_lookup(r->sym, a, &r->res, NULL) < 0)
			break;
		if (r->res.n_frames == 0) {
			snprintf(names[k++], NAME_LEN, "%s", r->res.has_symbol ? r->res.symbol : "");
			continue;
		}
		for (size_t f = 0; f < r->res.n_frames && k < NAMES; f++)
			snprintf(names[k++], NAME_LEN, "%s",
				 r->res.frames[f].function ? r->res.frames[f].function : "");
	}
	return k;
}

static const struct vg_stack_facts *facts_of(const struct vg_stack_facts *facts, size_t n,
					     pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (facts[i].info.tid == tid && !facts[i].info_error)
			return &facts[i];
	return NULL;
}

int vg_stack_facts_read(struct vg_stack_facts_reader *r, const struct vg_thread_stack *stacks,
			size_t n, bool with_kernel, struct vg_stack_facts *facts)
{
	for (size_t i = 0; i < n; i++) {
		struct vg_stack_facts *f = &facts[i];
		struct vg_error e = { 0 };

		memset(f, 0, sizeof(*f));
		f->info_error = vg_thread_info_read(r->t, stacks[i].tid, with_kernel, &f->info, &e);
		if (f->info_error < 0) {
			snprintf(f->info_why, sizeof(f->info_why), "%.159s",
				 e.msg[0] ? e.msg : strerror(-f->info_error));
			f->info.tid = stacks[i].tid;
			f->info.syscall.nr = -1;
		}
	}
	return 0;
}

int vg_stack_facts_classify(struct vg_stack_facts_reader *r, const struct vg_thread_stack *stacks,
			    size_t n, struct vg_stack_facts *facts, struct vg_wait *waits,
			    struct vg_error *err)
{
	struct vg_decode_env env = vg_target_env_decode(&r->env);
	char names[NAMES][NAME_LEN];
	const char *ptrs[NAMES];

	if (mono_ns() - r->net_since_ns > NET_MAX_AGE_NS) {
		vg_fd_describer_reset(r->fds);
		r->net_since_ns = mono_ns();
	}
	for (size_t i = 0; i < NAMES; i++)
		ptrs[i] = names[i];
	for (size_t i = 0; i < n; i++) {
		struct vg_stack_facts *f = &facts[i];
		struct vg_wait_input in = { .tid = stacks[i].tid, .frames = ptrs };

		/* The call at the registers' moment, when the capture had it:
		 * /proc's, read after, may be of a thread that woke since. */
		if (stacks[i].syscall.state != VG_SYSCALL_UNKNOWN)
			f->info.syscall = stacks[i].syscall;
		in.syscall = f->info.syscall;
		in.n_frames = frame_names(r, &stacks[i], names);
		vg_wait_classify(&in, &env, &waits[i]);
		if (waits[i].fd >= 0) {
			struct vg_fd_desc d;

			if (vg_fd_describe(r->fds, waits[i].fd, &d, NULL) == 0) {
				snprintf(f->fd_kind, sizeof(f->fd_kind), "%s", vg_fd_kind_name(d.kind));
				snprintf(f->fd_text, sizeof(f->fd_text), "%s", d.text);
			}
		}
	}
	/* Owners: their state from this snapshot, or read now when the
	 * owner was not asked for (--tid). */
	for (size_t i = 0; i < n; i++) {
		const struct vg_stack_facts *o;
		struct vg_thread_info *other;

		if (!waits[i].owner)
			continue;
		o = facts_of(facts, n, waits[i].owner);
		if (o) {
			facts[i].owner_state = o->info.state;
			snprintf(facts[i].owner_name, sizeof(facts[i].owner_name), "%s", o->info.name);
			continue;
		}
		other = malloc(sizeof(*other));
		if (!other)
			return vg_error_set(err, -ENOMEM, "out of memory");
		if (vg_thread_info_read(r->t, waits[i].owner, false, other, NULL) == 0) {
			facts[i].owner_state = other->state;
			snprintf(facts[i].owner_name, sizeof(facts[i].owner_name), "%s", other->name);
		}
		free(other);
	}
	return 0;
}

const char *vg_stack_wait_leaf(const struct vg_wait *w, const struct vg_stack_facts *f,
			       char *buf, size_t size)
{
	const char *call = f && f->info.syscall.state == VG_SYSCALL_IN && f->info.syscall.nr >= 0 &&
				   f->info.syscall.nr < 0x7fffffff
				   ? vg_syscall_name((int)f->info.syscall.nr) : NULL;
	const char *kind = vg_wait_kind_name(w->kind);

	switch (w->kind) {
	case VG_WAIT_RUNNING:
	case VG_WAIT_SLEEP:
	case VG_WAIT_YIELD:
	case VG_WAIT_IO_URING:
		snprintf(buf, size, "[%s]", kind);
		break;
	case VG_WAIT_USER:
		/* preempted in its own code: runnable, it wants the CPU, and a
		 * wall-clock profile counts that as running */
		snprintf(buf, size, f && f->info.state == 'R' ? "[running]" : "[off cpu in user code]");
		break;
	case VG_WAIT_UNKNOWN:
		snprintf(buf, size, "[%s]", f && f->info.state ? vg_thread_state_name(f->info.state)
							   : "unknown");
		break;
	case VG_WAIT_MUTEX:
	case VG_WAIT_RWLOCK:
	case VG_WAIT_COND:
	case VG_WAIT_SEMAPHORE:
	case VG_WAIT_LOCK:
	case VG_WAIT_FUTEX:
		if (w->object_name[0])
			snprintf(buf, size, "[%s %s]", kind, w->object_name);
		else if (w->object)
			snprintf(buf, size, "[%s 0x%llx]", kind, (unsigned long long)w->object);
		else
			snprintf(buf, size, "[%s]", kind);
		break;
	case VG_WAIT_JOIN:
		if (w->owner)
			snprintf(buf, size, "[join %d]", (int)w->owner);
		else
			snprintf(buf, size, "[join]");
		break;
	case VG_WAIT_IO:
	case VG_WAIT_POLL:
		if (w->fd >= 0 && f && f->fd_text[0])
			snprintf(buf, size, "[%s %s]", call ? call : kind, f->fd_text);
		else if (w->fd >= 0)
			snprintf(buf, size, "[%s fd %d]", call ? call : kind, w->fd);
		else
			snprintf(buf, size, "[%s]", call ? call : kind);
		break;
	default:
		snprintf(buf, size, call ? "[%s %s]" : "[%s]", kind, call);
		break;
	}
	return buf;
}
