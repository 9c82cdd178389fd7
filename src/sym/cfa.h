/* cfa.h - one frame up from a sampled user-space leaf, by the image's CFI.
 *
 * A kernel write (read(2) into a watched buffer) traps in the kernel; the
 * user side of the sample is the IP right after `syscall` in a libc wrapper
 * that has no frame pointer, so a frame-pointer walk skips the wrapper's
 * caller, which is the line the user wants.  One CFI step (.eh_frame, else
 * .debug_frame) from the sampled registers and a copy of the top of the
 * user stack gives the wrapper's return address exactly.
 *
 * Supported rules (what compilers emit for x86-64): CFA = rsp/rbp + offset
 * (DW_OP_bregN), return address at CFA + offset (the usual CFA-8).
 * Anything else is -ENOTSUP.  One step only: the caller's rbp (saved at
 * CFA + offset or unchanged) is not recovered, so nothing reads its rule. */
#ifndef VG_CFA_H
#define VG_CFA_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "unwind/regs.h"
#include "util/error.h"

struct vg_cfi;   /* the CFI of one ELF file */

/* elf is borrowed and must outlive the result.  Returns 0 with *out, or
 * -ENOENT when the file has neither .eh_frame nor .debug_frame. */
int vg_cfi_open(Elf *elf, struct vg_cfi **out, struct vg_error *err);
struct vg_cfi *vg_cfi_free(struct vg_cfi *c);

/* One step: static_ip = the sampled IP minus the image's load bias (for a
 * return address already stepped to, pass ip - 1 so the call's own row is
 * used: caller's job); regs holds at least SP (and BP when the rule needs
 * it); stack holds stack_len bytes read at regs SP.  On success
 * *return_address is the caller's IP and *caller_sp the CFA.  -ENOENT: no
 * FDE covers static_ip, or the row says the return address is undefined
 * (the outermost frame); -ENOTSUP: a rule outside the supported forms;
 * -ENODATA: a rule needs a register regs does not hold; -ERANGE: the slot
 * lies outside the bytes given. */
int vg_cfi_step(struct vg_cfi *c, uint64_t static_ip, const struct vg_regs *regs,
		const uint8_t *stack, size_t stack_len, uint64_t *return_address,
		uint64_t *caller_sp, struct vg_error *err);

#endif
