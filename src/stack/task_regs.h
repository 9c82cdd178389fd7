/* task_regs.h - what the task iterator (task_regs.bpf.c) writes, and its
 * decoder.  The bytes come from the kernel, but the decoder still checks
 * every length: a short or inconsistent stream is refused, never guessed
 * at (fuzzed by tests/fuzz/fuzz_task_regs.c). */
#ifndef VG_STACK_TASK_REGS_H
#define VG_STACK_TASK_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/regs.h"

/* The kernel's struct pt_regs on x86-64, 21 words. */
#define VG_TASK_REGS_NREGS 21

/* flags: keep in step with task_regs.bpf.c. */
#define VG_TASK_ON_CPU_BEFORE 1u   /* on a CPU when the registers were read */
#define VG_TASK_ON_CPU_AFTER 2u    /* on a CPU when the stack copy ended */
#define VG_TASK_NO_REGS 4u         /* no user registers (kernel thread) */
#define VG_TASK_COPY_FAULT 8u      /* the copy stopped at an unreadable page */
#define VG_TASK_KTHREAD 16u
#define VG_TASK_EXITING 32u

/* One record's fixed part; stack_len bytes of stack (copied at regs SP)
 * follow it in the stream. */
struct vg_task_regs_record {
	uint32_t tid;              /* in the initial PID namespace */
	uint32_t state;            /* task->__state: 0 runnable, 1 S, 2 D, ... */
	uint32_t flags;
	uint32_t stack_len;
	uint64_t csw_before;       /* nvcsw + nivcsw before the registers */
	uint64_t csw_after;        /* ... and after the stack copy */
	uint64_t regs[VG_TASK_REGS_NREGS];
};

/* Largest copy a record may carry (24 KiB + a page). */
#define VG_TASK_REGS_MAX_STACK (24576u + 4096u)

/* The next record of buf[*off, len): *rec, *stack (borrowed, rec->
 * stack_len bytes), *off advanced.  Returns 1, 0 at the end, -EINVAL for
 * a truncated record or a stack_len beyond VG_TASK_REGS_MAX_STACK. */
int vg_task_regs_next(const uint8_t *buf, size_t len, size_t *off,
		      struct vg_task_regs_record *rec, const uint8_t **stack);

/* A record's registers by perf index (what the unwinder takes). */
void vg_task_regs_to_perf(const struct vg_task_regs_record *rec, struct vg_regs *regs);

/* The registers stand still: the thread was off every CPU from before the
 * registers were read until after its stack was copied, and was not
 * switched in and out meanwhile. */
bool vg_task_regs_still(const struct vg_task_regs_record *rec);

#endif
