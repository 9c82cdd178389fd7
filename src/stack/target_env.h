/* target_env.h - the callbacks of struct vg_decode_env over a live target.
 *
 * syscall_text.c and waits.c ask the target through four callbacks so that
 * they stay pure; this module answers them with vigil's own pieces: memory
 * through vg_mem (process_vm_readv), data symbols through the symbolizer
 * ("g_lock", "g_cond+40"), fds through an fd describer.  A caller (vigil
 * stack) fills struct vg_target_env once per snapshot and passes
 * vg_target_env_decode() to vg_syscall_text and vg_wait_classify. */
#ifndef VG_STACK_TARGET_ENV_H
#define VG_STACK_TARGET_ENV_H

#include "stack/fd_desc.h"
#include "stack/syscall_text.h"

struct vg_mem;
struct vg_symbolizer;

/* All borrowed; any may be NULL (that callback is then left NULL). */
struct vg_target_env {
	struct vg_mem *mem;
	struct vg_symbolizer *sym;
	struct vg_fd_describer *fds;
};

/* The decode env whose ctx is e (e must outlive its use). */
struct vg_decode_env vg_target_env_decode(struct vg_target_env *e);

/* The name_data callback alone over a symbolizer (ctx): the symbol that
 * covers addr, "+N" when inside it; *start its address.  False when no
 * symbol covers addr (heap, stack, a stripped image). */
bool vg_target_env_name_data(void *symbolizer, uint64_t addr, char *buf, size_t size,
			     uint64_t *start);

#endif
