/* unwind.h - the unwinder: frames of a stopped-in-time user stack from
 * its registers (perf indices, struct vg_regs) and a copy of the top of
 * the stack starting at SP, by CFI or by frame pointers.  One unwinder for
 * every command: profile's samples, probe --stacks records, watch's traps
 * (a kernel write's call site is frame 1; --stacks the whole stack) and
 * the coming `stack`.
 *
 * vg_unwind_dwarf walks the copy with the images' CFI (unwind/cfi.h:
 * .eh_frame, else the file's own .debug_frame), recovering the caller's
 * rsp, rbp, rbx and r12-r15 at each step, so it goes through code built
 * without frame pointers (Debian's libc), PLT stubs and signal frames
 * (their rules are DWARF expressions; the caller of a signal frame is
 * looked up at its exact IP, not at IP - 1).  vg_unwind_fp follows the
 * rbp chain inside the same copy, which is what --unwind fp and the
 * kernel callchain do, and is wrong through such code.
 *
 * Only the stack copy is read: no byte of the target is touched, and a
 * rule whose slot lies beyond the copy ends the walk (VG_UNWIND_STACK_END).
 *
 * Cost: each image's CFI is opened on the first IP that falls in it, and
 * each CFI row, once compiled, is kept in one 2-way set-associative cache
 * keyed by (image, static IP), so a warm unwind does no allocation and no
 * CFI parsing.
 *
 * Not thread-safe: one unwinder per thread that unwinds. */
#ifndef VG_UNWIND_UNWIND_H
#define VG_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "unwind/cfi.h"
#include "unwind/regs.h"
#include "util/error.h"

struct vg_unwinder;

/* images is borrowed: it must stay alive until vg_unwinder_set_images
 * replaces it or the unwinder is freed.  pid only names the target in
 * messages.  Returns 0, or -ENOMEM. */
int vg_unwinder_new(pid_t pid, const struct vg_images *images,
		    struct vg_unwinder **out, struct vg_error *err);
struct vg_unwinder *vg_unwinder_free(struct vg_unwinder *u);

/* After a maps refresh (a dlopen): the new set is borrowed as above.
 * Call it BEFORE freeing the old set: an image object present in both sets
 * (the same pointer) keeps its CFI and its cache of decoded rows; the state
 * of every other old image is dropped.  Returns 0, or -ENOMEM (the
 * unwinder then holds the new set with no cached state). */
int vg_unwinder_set_images(struct vg_unwinder *u, const struct vg_images *images,
			   struct vg_error *err);

/* Unwind one sample.  regs needs IP and SP, and whatever registers the
 * CFA rules use (rbp in frame-pointer functions: sample all general
 * registers); stack holds stack_len bytes copied at regs SP.  Fills ips
 * innermost first: ips[0] is the sampled IP, the others are return
 * addresses, to be symbolized at ips[i] - 1 (the call instruction; the
 * byte after a call may begin the next function) -- except where
 * exact[i] is true: ips[0], a signal trampoline that a handler returns to
 * (glibc's __restore_rt: ips[i] - 1 is the nop before it, outside its
 * symbol), and the IP a signal interrupted.  exact may be NULL; else it
 * has max entries.  *n = number filled (0 only when max is 0 or IP/SP are
 * not sampled), *why = why the walk stopped.  Returns 0; a stop is not an
 * error.  Allocates only when an image is first seen (its CFI is opened)
 * or a row is first decoded (see the cache above). */
int vg_unwind_dwarf(struct vg_unwinder *u, const struct vg_regs *regs,
		    const uint8_t *stack, size_t stack_len, uint64_t *ips,
		    bool *exact, size_t max, size_t *n, enum vg_unwind_stop *why);

/* Frame-pointer walk inside the stack copy: ips[0] = IP, then the return
 * address at [rbp + 8] and the next rbp at [rbp] while rbp lies in the
 * copy and grows.  Needs IP, SP and BP sampled (else *n = 0 or 1 and
 * VG_UNWIND_NO_REGISTER).  A function sampled before its `mov rbp, rsp`
 * loses its caller, as the kernel's FP callchain does. */
void vg_unwind_fp(const struct vg_regs *regs, const uint8_t *stack,
		  size_t stack_len, uint64_t *ips, size_t max, size_t *n,
		  enum vg_unwind_stop *why);

/* Counters since vg_unwinder_new: rows decoded by libdw (cache misses)
 * and rows served from the cache; images whose CFI was opened. */
struct vg_unwind_stats {
	uint64_t rows_decoded, rows_cached;
	uint64_t images_opened;
};
void vg_unwinder_stats(const struct vg_unwinder *u, struct vg_unwind_stats *st);

/* "outermost", "stack_end", ... */
const char *vg_unwind_stop_name(enum vg_unwind_stop why);

#endif
