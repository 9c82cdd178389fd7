/* ifunc.h - the implementation an IFUNC symbol selected in a live process.
 *
 * An STT_GNU_IFUNC symbol (libc's strcmp, memcpy...) does not point at the
 * function: its value is a resolver that the dynamic linker calls once per
 * reference, at relocation time, and whose answer (__strcmp_avx2 on one
 * CPU, __strcmp_sse2_unaligned on another) it writes into the reference's
 * pointer slot.  Probing or naming the resolver's address observes code
 * that ran once at startup: "0 calls" for a function called thousands of
 * times a second.
 *
 * The selection is read back from the target, never guessed: the slots
 * that refer to the function are the R_X86_64_IRELATIVE relocations of the
 * defining image whose addend is the resolver (its own calls, through its
 * PLT) and the JUMP_SLOT/GLOB_DAT/64 relocations naming the symbol in every
 * image (the main executable's and the other libraries' imports).  Their
 * values are read with process_vm_readv (then /proc/PID/mem).  A value
 * counts when it points into the defining image and is not the resolver
 * itself; a lazily bound PLT slot that was never called still points at
 * its own PLT stub and does not count.  Two slots that disagree make the
 * answer ambiguous: refused, not picked. */
#ifndef VG_IFUNC_H
#define VG_IFUNC_H

#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "util/error.h"

struct vg_ifunc {
	uint64_t resolver;      /* runtime address of the IFUNC symbol */
	uint64_t impl;          /* runtime address of the selected code */
	/* The symbol that starts at impl (from img's tables, else its debug
	 * file's: __strcmp_avx2), borrowed until img is freed; NULL: none. */
	const char *impl_name;
	size_t n_slots;         /* slots read that hold impl */
};

/* sym is an IFUNC symbol of img (sym->ifunc), img one of imgs, whose
 * target (imgs->target) is read.  0 and *out filled, or (sentence in
 * err): -ENOENT no slot holds a selection (none refers to the function,
 * or only unbound lazy PLT slots do), -EINVAL slots disagree, -ENODEV no
 * live target (offline: there is no selection); -ESRCH the target is gone,
 * -EPERM/-EACCES its memory cannot be read. */
int vg_ifunc_resolve(const struct vg_images *imgs, const struct vg_image *img,
		     const struct vg_symbol *sym, struct vg_ifunc *out,
		     struct vg_error *err);

#endif
