/* tgt_stack_waits.h - what the two files of tgt_stack_waits share. */
#ifndef TGT_STACK_WAITS_H
#define TGT_STACK_WAITS_H

#include <sys/types.h>

struct stack_thread {
	const char *name;   /* pthread_setname_np name (<= 15 bytes) */
	pid_t tid;
	const char *function, *kind, *object;
	int line;
	const char *owner; /* name of the thread holding it, or NULL */
	int ready;
};

/* Record what self is about to block in (the call is at line of
 * function), then let main write the truth once every thread has. */
void stack_thread_block(struct stack_thread *self, const char *function, int line,
			const char *kind, const char *object, const char *owner);

int nofp_outer(struct stack_thread *self);
extern int nofp_call_line;  /* the line in nofp_outer that calls nofp_inner */

#endif
