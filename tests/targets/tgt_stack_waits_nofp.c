/* tgt_stack_waits_nofp.c - the part of tgt_stack_waits built with
 * -fomit-frame-pointer (see meson.build): an unwinder must use CFI here,
 * rbp is not a frame chain.  The functions are noinline so that each is
 * a frame, and each does work after its call so the call is no tail
 * call. */
#include <time.h>

#include "tgt_stack_waits.h"

__attribute__((noinline)) static int nofp_inner(struct stack_thread *self)
{
	struct timespec ts = { 3600, 0 };
	volatile int after = 0;

	stack_thread_block(self, "nofp_inner", __LINE__ + 1, "sleep", "-", NULL);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return after + 1;
}

int nofp_call_line;

__attribute__((noinline)) int nofp_outer(struct stack_thread *self)
{
	nofp_call_line = __LINE__; volatile int keep = nofp_inner(self);

	return keep + 1;
}
