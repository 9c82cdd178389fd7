/* attribute.h - which write a data-breakpoint trap belongs to.
 *
 * A trap says where the CPU was, not what wrote.  The rule (ARCHITECTURE
 * "Watch: attributing a trap"):
 *   1. A `rep` string instruction at the trap IP whose current iteration's
 *      destination (rdi one element back by DF: the registers are those
 *      after that iteration) overlaps the watched bytes is the writer: the
 *      hardware traps once per iteration and leaves the IP on the `rep`
 *      instruction while iterations remain.
 *   2. Otherwise the writer is the instruction that ends at the trap IP,
 *      decoded linearly from the start of its function.
 *   3. A trap at a function's first instruction whose watched bytes are
 *      the slot at rsp is the call that pushed its return address.
 *   4. A trap in the kernel is a write on the process's behalf: the user
 *      `syscall` instruction and the system call (from the kernel chain).
 * A user trap is "exact" only when the chosen instruction's memory
 * destination, evaluated with the sampled registers, overlaps the watched
 * bytes; anything less is "heuristic" with the reason, and an instruction
 * that writes no memory is never a writer.
 *
 * Writes and traps: the consecutive iterations of one `rep` execution (and
 * the per-byte traps of one kernel copy) are one write.  A trap continues
 * the previous write of its thread when both belong to the same writer and
 * the string registers moved by exactly the elements consumed: rcx fell by
 * k > 0 and rdi moved by k elements.  Kernel traps use the kernel's
 * registers at the trap (PERF_SAMPLE_REGS_INTR); without them, the same
 * user registers and a kernel IP that stayed or moved forward.
 *
 * Pure: the target is reached only through struct vg_trap_env, so the live
 * watch and the replay of recorded traps (tests) share every decision. */
#ifndef VG_ATTRIBUTE_H
#define VG_ATTRIBUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watch/writer.h"

/* What the attributor needs of the target. */
struct vg_trap_env {
	void *arg;
	/* n bytes of code at addr into buf: 0, or a negative errno. */
	int (*read_code)(void *arg, uint64_t addr, uint8_t *buf, size_t n);
	/* The start of the function that contains ip (its symbol): true with
	 * *start, false when unknown. */
	bool (*function_start)(void *arg, uint64_t ip, uint64_t *start);
	/* The kernel function that contains a kernel address (borrowed, valid
	 * while the attributor lives), or NULL. */
	const char *(*kernel_symbol)(void *arg, uint64_t ip);
};

/* One breakpoint hit as perf delivered it. */
struct vg_trap {
	uint32_t tid;
	uint64_t ip;                   /* sampled IP: a kernel address for a kernel trap */
	const struct vg_regs *user;    /* user registers: after the store, or at the system call */
	const struct vg_regs *intr;    /* registers at the trap (the kernel's for a kernel
	                                * trap); NULL or mask 0: not sampled */
	const uint64_t *callchain;     /* kernel frames first; PERF_CONTEXT_* markers allowed */
	size_t n_callchain;
	const uint8_t *stack;          /* user stack from user->sp (a call's return address) */
	size_t stack_size;
	/* The thread's fs base (its thread pointer), which perf does not
	 * sample: known only when the session could find it (fs: stores to
	 * the executable's thread-locals are verified with it). */
	uint64_t fs_base;
	bool fs_base_known;
};

enum vg_trap_how {
	VG_TRAP_NONE = 0,              /* no writer: why says why */
	VG_TRAP_AFTER,                 /* the instruction that ends at the trap IP */
	VG_TRAP_ITERATION,             /* a rep string instruction at the trap IP, iterations remain */
	VG_TRAP_CALL,                  /* a call's return address on a watched stack slot */
	VG_TRAP_BACKWARDS,             /* no function start: decoded backwards (heuristic) */
	VG_TRAP_KERNEL,                /* the kernel, on the process's behalf */
};

struct vg_trap_result {
	enum vg_trap_how how;
	/* The writer (borrowed: valid until the attributor is freed).  For a
	 * kernel trap: the user `syscall` instruction (kind KERNEL), text
	 * empty when the user IP does not follow one.  NULL for NONE. */
	const struct vg_writer *writer;
	uint64_t key;                  /* one per writer: its IP; a kernel write: user IP */
	enum vg_writer_confidence confidence;   /* of this trap */
	const char *why;               /* not exact: why (static) */
	uint64_t store_addr;           /* where it wrote, when store_addr_known */
	bool store_addr_known;
	bool continues;                /* the same write as this thread's previous trap */
	/* kernel */
	uint64_t user_ip;              /* user IP at the system call (0 unknown) */
	char syscall[32];              /* "" unknown */
	int syscall_nr;                /* -1 unknown */
	const char *kernel_function;   /* innermost kernel frame (borrowed from env) */
};

struct vg_attributor;

/* env is copied.  NULL on out of memory. */
struct vg_attributor *vg_attributor_new(const struct vg_trap_env *env);
struct vg_attributor *vg_attributor_free(struct vg_attributor *a);

/* Attribute one trap of a watch on [watch_addr, watch_addr + watch_len)
 * (the binding at the trap's time).  Traps must come in time order per
 * thread (continuation).  Returns 0, or -ENOMEM; *out is always filled. */
int vg_attribute_trap(struct vg_attributor *a, const struct vg_trap *t,
		      uint64_t watch_addr, unsigned watch_len,
		      struct vg_trap_result *out);

#endif
