/* addrspec.h - the ADDR forms every command accepts, resolved to a runtime
 * address in the target:
 *   0xHEX                runtime address
 *   @0xHEX               static (ELF virtual) address in the main executable,
 *                        or in --bin FILE when given
 *   SYMBOL[+OFF]         symbol of .symtab/.dynsym, main executable first,
 *                        then every other image in map order
 *   IMAGE:SYMBOL[+OFF]   symbol in the image whose file name or path is IMAGE
 *                        (split at the last single ':', so "memfd:x:sym"
 *                        and C++ "lib.so:ns::f" both work)
 * SYMBOL comes from the image's own .symtab/.dynsym, else from its separate
 * debug file's .symtab (debuginfo.h: libc6-dbg names __strcmp_avx2).  A
 * SYMBOL that is an IFUNC (STT_GNU_IFUNC) stands for the implementation the
 * process selected, read from its relocated slots (ifunc.h): never for the
 * resolver, which ran once at startup; when no selection can be read the
 * spec is refused (-ENOENT, -EINVAL for two selections).
 * OFF is decimal or 0xHEX.  Errors are -EINVAL (malformed), -ENOENT (no such
 * symbol or image), -ERANGE (overflow), with a sentence in err. */
#ifndef VG_ADDRSPEC_H
#define VG_ADDRSPEC_H

#include <stdint.h>

#include "elf/image.h"
#include "util/error.h"
#include "util/number.h"   /* vg_parse_u64, for every caller */

struct vg_addr {
	uint64_t runtime;                 /* the resolved address */
	const struct vg_image *image;     /* image that resolved it, or NULL for 0xHEX */
	const char *symbol;               /* borrowed, NULL unless SYMBOL form */
	uint64_t symbol_offset;
	/* SYMBOL form: how many images define it (> 1: the first in the
	 * documented order was taken; the caller should say so). */
	unsigned n_definitions;
	/* SYMBOL naming an IFUNC: the name given (borrowed, as symbol) and
	 * the resolver's runtime address; runtime and symbol are then the
	 * selected implementation's (symbol NULL when no symbol starts
	 * there).  NULL: not an IFUNC. */
	const char *ifunc;
	uint64_t ifunc_resolver;
};

/* bin, if non-NULL, is the --bin image (static addresses and symbols come
 * from it; its bias is the running main image's). */
int vg_addr_parse(const char *spec, const struct vg_images *imgs,
		  const struct vg_image *bin, struct vg_addr *out,
		  struct vg_error *err);

#endif
