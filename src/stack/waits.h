/* waits.h - what each thread waits for, who holds it, and deadlocks.
 *
 * The input per thread is its system call (thread_info.h) and the names of
 * its user frames, innermost first, as strings (any symbolizer's names:
 * "__lll_lock_wait", "___pthread_mutex_lock", "pthread_mutex_lock@@GLIBC_
 * 2.2.5").  A futex is classified by the glibc function that waits on it,
 * and the object's owner is read from the object where glibc records one
 * (glibc 2.36 x86-64 layouts, bits/struct_mutex.h, struct_rwlock.h):
 *   mutex   futex word __lock at +0, owner TID __owner at +8
 *   PI / robust mutex: the futex word itself holds the owner TID
 *   rwlock  readers wait on __wrphase_futex (+8), writers on
 *           __writers_futex (+12) or +8; writer TID __cur_writer at +24,
 *           reader count in __readers (+0) above its 3 flag bits
 *   pthread_join  the futex word is the joined thread's tid field: its
 *           value (the futex's expected value) is the TID waited for
 * A condition variable or semaphore records no owner.  vg_wait_chains then
 * follows owner -> that owner's wait -> ...: a chain that comes back is a
 * deadlock.  Everything but vg_wait_classify's memory reads is pure. */
#ifndef VG_STACK_WAITS_H
#define VG_STACK_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack/syscall_text.h"
#include "stack/thread_info.h"

enum vg_wait_kind {
	VG_WAIT_UNKNOWN = 0,  /* no system call information */
	VG_WAIT_RUNNING,      /* on a CPU */
	VG_WAIT_USER,         /* off-CPU outside a system call (preempted,
	                       * page fault, stopped) */
	VG_WAIT_MUTEX,        /* pthread_mutex_t (owner known) */
	VG_WAIT_RWLOCK,       /* pthread_rwlock_t (owner when write-locked) */
	VG_WAIT_COND,         /* pthread_cond_t */
	VG_WAIT_SEMAPHORE,    /* sem_t */
	VG_WAIT_JOIN,         /* pthread_join: owner is the joined thread */
	VG_WAIT_LOCK,         /* a glibc-internal lock (stdio, malloc arena) */
	VG_WAIT_FUTEX,        /* a futex no known frame explains */
	VG_WAIT_IO,           /* read/write/recv/send/accept/connect on an fd */
	VG_WAIT_POLL,         /* poll, select, epoll */
	VG_WAIT_SLEEP,        /* nanosleep, clock_nanosleep */
	VG_WAIT_SIGNAL,       /* pause, rt_sigsuspend, rt_sigtimedwait */
	VG_WAIT_CHILD,        /* wait4, waitid */
	VG_WAIT_IO_URING,     /* io_uring_enter */
	VG_WAIT_YIELD,        /* sched_yield */
	VG_WAIT_SYSCALL,      /* another system call */
};
#define VG_WAIT_NKINDS (VG_WAIT_SYSCALL + 1)

/* "unknown", "running", "user", "mutex", "rwlock", "cond", "semaphore",
 * "join", "lock", "futex", "io", "poll", "sleep", "signal", "child",
 * "io_uring", "yield", "syscall": stable names (JSON). */
const char *vg_wait_kind_name(enum vg_wait_kind kind);

struct vg_wait_input {
	pid_t tid;
	struct vg_thread_syscall syscall;
	const char *const *frames;  /* function names, innermost first; may be NULL */
	size_t n_frames;
};

struct vg_wait {
	pid_t tid;
	enum vg_wait_kind kind;
	uint64_t object;          /* the lock, cond, sem...; 0 when none */
	char object_name[160];    /* name_data's name, "" when unnamed */
	int fd;                   /* VG_WAIT_IO, VG_WAIT_POLL: the fd, else -1 */
	pid_t owner;              /* the thread holding it (join: the joined
	                           * thread), 0 when the object records none */
	bool write_locked;        /* VG_WAIT_RWLOCK: the owner holds it to write */
	unsigned readers;         /* VG_WAIT_RWLOCK: how many hold it to read
	                           * (no owner TID is recorded for readers) */
	char detail[256];         /* the system call as text (syscall_text.h) */
};

/* Classify one thread.  env (may be NULL) reads the target's memory for
 * owners and names objects and fds.  Never fails: what cannot be known is
 * left 0 / "". */
void vg_wait_classify(const struct vg_wait_input *in, const struct vg_decode_env *env,
		      struct vg_wait *out);

/* How a chain of owners ends. */
enum vg_chain_end {
	VG_CHAIN_AT_THREAD,    /* at a thread that waits on no owner: its own
	                        * wait (running, sleep, I/O...) says why */
	VG_CHAIN_DEAD_OWNER,   /* the owner TID is not a thread of the process:
	                        * it exited holding the lock */
	VG_CHAIN_DEADLOCK,     /* it reaches a cycle */
};

/* One step: thread tid waits on object, which owner holds. */
struct vg_wait_link {
	pid_t tid;
	uint64_t object;
	const char *object_name;  /* borrowed from the vg_wait array */
	pid_t owner;
};

struct vg_wait_chain {
	struct vg_wait_link *links;   /* links[0].tid is the waiting thread */
	size_t n;
	enum vg_chain_end end;
	pid_t end_tid;                /* AT_THREAD: the last thread; DEAD_OWNER:
	                               * the missing owner; DEADLOCK: the first
	                               * thread met twice */
};

struct vg_deadlock {
	struct vg_wait_link *links;   /* the cycle, from its lowest TID, each
	                               * link's owner is the next link's tid */
	size_t n;
};

struct vg_wait_graph {
	struct vg_wait_chain *chains; /* one per thread waiting on an owner */
	size_t n_chains;
	struct vg_deadlock *deadlocks;/* each cycle once */
	size_t n_deadlocks;
};

/* Follow owners through waits[0..n) (one per thread of the process).
 * Returns 0 or -ENOMEM; out is owned by the caller (vg_wait_graph_release)
 * and borrows the object names of waits. */
int vg_wait_chains(const struct vg_wait *waits, size_t n, struct vg_wait_graph *out);
void vg_wait_graph_release(struct vg_wait_graph *g);

#endif
