/* syscall_text.h - a system call and its six arguments as a person reads it.
 *
 * /proc/TID/syscall gives a number and six raw registers.  For the calls a
 * thread blocks in (futex, read and friends, poll family, sleeps, waits for
 * children or signals, io_uring_enter) the arguments become what they
 * mean: "futex(0x5601…=g_lock, WAIT_PRIVATE, 2)", "read(5 = pipe:[1234],
 * 4096)", "nanosleep(1.5 s)".  Every other call is "name(0x…, …)" with its
 * six registers.  What needs the target (its memory, its symbols, its fds)
 * comes through the callbacks of struct vg_decode_env, so the decoding
 * itself is pure and unit tested; vg_decode_env_mem adapts a struct vg_mem
 * (process_vm_readv, never ptrace). */
#ifndef VG_STACK_SYSCALL_TEXT_H
#define VG_STACK_SYSCALL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct vg_mem;

/* What decoding may ask of the target.  Every member may be NULL: the text
 * then shows the raw value instead ("nanosleep(0x7ffc…)"). */
struct vg_decode_env {
	void *ctx;              /* passed to every callback */
	/* Read len bytes of target memory at addr: 0, or -errno. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Name a data address ("g_lock", "g_cond+40"): true and the name in
	 * buf; *start (when start is not NULL) is where the named object
	 * begins, so addr - *start is the offset into it.  False: unnamed. */
	bool (*name_data)(void *ctx, uint64_t addr, char *buf, size_t size, uint64_t *start);
	/* Describe fd ("socket tcp 127.0.0.1:6379 -> …", "/var/log/x"):
	 * true and the text in buf, false when unknown. */
	bool (*describe_fd)(void *ctx, int fd, char *buf, size_t size);
	/* The current time of clock id, for absolute timeouts shown as "in
	 * 1.2 s"; NULL means clock_gettime. */
	int (*clock)(void *ctx, clockid_t id, struct timespec *now);
};

/* The read callback over a struct vg_mem (ctx must be the vg_mem). */
int vg_decode_env_mem_read(void *mem, uint64_t addr, void *buf, size_t len);

/* Write the text of system call nr with args into buf (always NUL-ended,
 * cut with "…" when it does not fit).  Returns buf.  nr < 0 gives
 * "no system call". */
const char *vg_syscall_text(long nr, const uint64_t args[6], const struct vg_decode_env *env,
			    char *buf, size_t size);

/* The futex operation as text: "WAIT_PRIVATE", "WAIT_BITSET|CLOCK_REALTIME",
 * "LOCK_PI_PRIVATE", "op_42" for an unknown command.  Returns buf. */
const char *vg_futex_op_text(uint64_t op, char *buf, size_t size);

/* A duration in ns as "1.5 s", "250 ms", "12 us", "800 ns".  Returns buf. */
const char *vg_duration_text(uint64_t ns, char *buf, size_t size);

#endif
