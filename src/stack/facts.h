/* facts.h - everything vigil stack says of the threads of one snapshot
 * besides their frames: each thread's /proc facts (thread_info.h), what
 * it waits for (waits.h), the fd behind an I/O wait (fd_desc.h) and the
 * state of the thread that owns what it waits for.
 *
 * The one place vigil stack reads these: the snapshot report and the
 * wall-clock profile both call vg_stack_facts_read after the capture
 * (capture.h), so the system call seen is the one read right after the
 * registers.  The wait is classified from that system call and the names
 * of the thread's innermost user frames (the captured stack, symbolized
 * once per address), with the target's memory read for owners through
 * target_env.h.  Nothing here stops or writes to the target. */
#ifndef VG_STACK_FACTS_H
#define VG_STACK_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "stack/capture.h"
#include "stack/thread_info.h"
#include "stack/waits.h"
#include "util/error.h"

struct vg_mem;
struct vg_symbolizer;

struct vg_stack_facts {
	struct vg_thread_info info;
	/* 0, or -errno: info could not be read (info_why says why; the
	 * thread exited, or /proc refused); info is then zero but tid. */
	int info_error;
	char info_why[160];
	/* wait.fd >= 0: what the fd is ("tcp 127.0.0.1:P -> ... (ESTABLISHED)",
	 * "pipe:[N] read end ..."), "" when unknown */
	char fd_kind[16];           /* vg_fd_kind_name, "" unknown */
	char fd_text[400];
	/* wait.owner != 0: the owner's state letter and name, 0 / "" when
	 * it is no thread of the process */
	char owner_state;
	char owner_name[64];
};

struct vg_stack_facts_reader;

/* t, mem and sym are borrowed and must outlive the reader.  NULL only
 * when out of memory. */
struct vg_stack_facts_reader *vg_stack_facts_reader_new(const struct vg_target *t,
							 struct vg_mem *mem,
							 struct vg_symbolizer *sym);
struct vg_stack_facts_reader *vg_stack_facts_reader_free(struct vg_stack_facts_reader *r);

/* Step one, right after the capture: each thread's /proc facts (name,
 * state, CPU time, system call, and its kernel stack when with_kernel)
 * into facts[n], nothing else, so the snapshot stays short.  A thread
 * whose facts cannot be read is marked in info_error, never an error of
 * the whole.  Returns 0. */
int vg_stack_facts_read(struct vg_stack_facts_reader *r, const struct vg_thread_stack *stacks,
			size_t n, bool with_kernel, struct vg_stack_facts *facts);

/* Step two: what each thread waits for into waits[n] (the array
 * vg_wait_chains takes), from its system call and innermost frame names
 * (symbolized here: the first lookups in an image load its debug
 * information), the fd behind an I/O wait and the owner's state.  The
 * system call is the capture's (stacks[i].syscall: the one of the
 * registers the frames come from) when it has one, and replaces
 * facts[i].info.syscall then; /proc's otherwise.  The
 * target's /proc/net tables are read at most once a second: a socket's
 * line may be up to a second old in a wall-clock profile.  Returns 0 or
 * -ENOMEM. */
int vg_stack_facts_classify(struct vg_stack_facts_reader *r, const struct vg_thread_stack *stacks,
			    size_t n, struct vg_stack_facts *facts, struct vg_wait *waits,
			    struct vg_error *err);

/* The leaf frame of a wall-clock sample: "[mutex g_lock]", "[read tcp
 * 127.0.0.1:P -> 127.0.0.1:Q (ESTABLISHED)]", "[sleep]", "[running]".
 * Returns buf. */
const char *vg_stack_wait_leaf(const struct vg_wait *w, const struct vg_stack_facts *f,
			       char *buf, size_t size);

#endif
