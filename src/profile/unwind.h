/* unwind.h - user stacks of a sampled process, by CFI or by frame pointers.
 *
 * A sample gives the user registers (perf indices, struct vg_regs) and a
 * copy of the top of the user stack starting at the sampled SP
 * (PERF_SAMPLE_STACK_USER).  vg_unwind_dwarf walks it with the images' CFI
 * (.eh_frame, else the file's own .debug_frame), recovering the caller's
 * rsp, rbp, rbx and r12-r15 at each step, so it goes through code built
 * without frame pointers (Debian's libc), PLT stubs and signal frames
 * (their rules are DWARF expressions, evaluated here; the caller of a
 * signal frame is looked up at its exact IP, not at IP - 1).  vg_unwind_fp follows the rbp
 * chain inside the same copy, which is what --unwind fp and the kernel
 * callchain do, and is wrong through such code.
 *
 * Only the stack copy is read: no byte of the target is touched, and a
 * rule whose slot lies beyond the copy ends the walk (VG_UNWIND_STACK_END).
 *
 * Cost: each image's CFI is opened on the first IP that falls in it, and
 * each CFI row, once decoded, is kept compiled (CFA rule and the rules of
 * the 17 general registers) in one 2-way set-associative cache keyed by
 * (image, static IP), so a warm unwind does no allocation and no CFI
 * parsing.
 *
 * Not thread-safe: one unwinder per drain thread. */
#ifndef VG_UNWIND_H
#define VG_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/image.h"
#include "unwind/regs.h"
#include "util/error.h"

enum vg_unwind_stop {
	VG_UNWIND_OUTERMOST = 0,  /* "outermost": return address undefined
	                           * (_start, clone) or 0, or rbp 0 (fp) */
	VG_UNWIND_STACK_END,      /* "stack_end": a saved slot or frame lies
	                           * beyond the stack copy */
	VG_UNWIND_NO_CFI,         /* "no_cfi": no CFI row covers the IP, or the
	                           * image has no .eh_frame/.debug_frame */
	VG_UNWIND_UNSUPPORTED,    /* "unsupported_rule": the CFA or return
	                           * address rule is an expression using an
	                           * operation outside the supported set
	                           * (branches, pieces, non-general registers) */
	VG_UNWIND_NO_IMAGE,       /* "no_image": IP in no ELF image (JIT code,
	                           * a stale image set; the vDSO is an image) */
	VG_UNWIND_NO_REGISTER,    /* "missing_register": a rule needs a
	                           * register not sampled or not recovered */
	VG_UNWIND_BAD_FRAME,      /* "bad_frame": the stack pointer (or rbp)
	                           * did not move up the stack: corrupt or
	                           * looping chain */
	VG_UNWIND_MAX_FRAMES,     /* "max_frames": the ips array is full */
};

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
