/* symbolized.h - a symbolizer's answer for one address as the stack trie
 * takes it: the frames (innermost first, the inline chain, else the ELF
 * symbol) and the site (static address, the image interned).  profile
 * and probe --stacks both fill their tries through it, so an address
 * reads the same in every stack output of every command. */
#ifndef VG_STACKS_SYMBOLIZED_H
#define VG_STACKS_SYMBOLIZED_H

#include <stdbool.h>
#include <stddef.h>

#include "stacktrie/stacks.h"
#include "sym/symbolizer.h"

/* Fill in[0..max) from res and complete site (whose address and kernel
 * the caller set): static_address, and image, interned in s ("[kernel.
 * kallsyms]" for a kernel address, "[perf-PID.map]" for JIT code the
 * perf map names; VG_STACKS_NONE when in no image or
 * out of memory).  Returns the number of frames, 0 when nothing is
 * known.  The strings are res's: intern them (vg_stacks_intern_address)
 * while res lives. */
size_t vg_stacks_sym_frames(struct vg_stacks *s, const struct vg_sym_result *res, bool kernel,
			    struct vg_stack_frame_in *in, size_t max, struct vg_stack_site *site);

/* The frame ids of one address, root first (*first .. *first + *n - 1):
 * interned already, or symbolized now with sym and interned.  A return
 * address must be given minus one (inside its call).  0, -ENOMEM, -E2BIG. */
int vg_stacks_symbolize_address(struct vg_stacks *s, struct vg_symbolizer *sym, uint64_t address,
				uint32_t *first, uint32_t *n, struct vg_error *err);

#endif
