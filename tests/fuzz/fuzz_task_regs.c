/* fuzz_task_regs.c - libFuzzer harness for the decoder of vigil stack's
 * task iterator stream (src/stack/task_regs.h).
 *
 * Any input is a sequence of records or refused: every record handed out
 * lies inside the input (fixed part + stack_len bytes, stack_len within
 * VG_TASK_REGS_MAX_STACK), the offset only grows, and the decoding ends
 * with 0 (consumed exactly) or -EINVAL.  Each record's registers convert
 * to a register set whose mask matches its NO_REGS flag, and the whole
 * stack is read (ASan catches a record that points past the input).
 * Built by tests/fuzz/run.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "stack/task_regs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_task_regs_record rec;
	const uint8_t *stack;
	size_t off = 0, prev = 0;
	unsigned sum = 0;
	int r;

	while ((r = vg_task_regs_next(data, size, &off, &rec, &stack)) > 0) {
		struct vg_regs regs;

		if (off <= prev || off > size || rec.stack_len > VG_TASK_REGS_MAX_STACK)
			abort();
		if (stack < data || stack + rec.stack_len != data + off)
			abort();
		for (size_t i = 0; i < rec.stack_len; i++)
			sum += stack[i];
		vg_task_regs_to_perf(&rec, &regs);
		if (!!(rec.flags & VG_TASK_NO_REGS) != (regs.mask == 0))
			abort();
		(void)vg_task_regs_still(&rec);
		prev = off;
	}
	if (r != 0 && r != -EINVAL)
		abort();
	if (r == 0 && off != size && size != 0)
		abort();
	(void)sum;
	return 0;
}
