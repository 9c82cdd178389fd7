/* resolve.h - a probe LOCATION to the (file, file offset) pairs a uprobe
 * needs (the function's parameters for --args: params.h).
 *
 * LOCATION forms (the ADDR forms of addrspec.h, plus FILE:LINE):
 *   SYMBOL, IMAGE:SYMBOL, SYMBOL+OFF, IMAGE:SYMBOL+OFF   one site
 *   0xADDR (runtime), @0xADDR (static, main executable)   one site
 *   FILE:LINE   every address the line tables map to LINE of a source file
 *               whose path ends with FILE (at a '/' boundary), in every
 *               image with DWARF, main executable first: one site per
 *               distinct function or inlined copy the line appears in (its
 *               lowest is_stmt address there), so a line inlined into two
 *               callers gives two sites.
 * A spec is FILE:LINE when the text after its last ':' is all decimal
 * digits and the text before it contains a '.' or a '/'.  FILE is
 * compared with the line table's name as written and with that name
 * joined to the CU's DW_AT_comp_dir and normalized lexically ("a/../b"),
 * so both "probe_fx.c" and "/src/tests/probe_fx.c" find a file the
 * compiler recorded as "build/../tests/probe_fx.c".
 *
 * A site must lie in an executable, file-backed mapping: its file offset is
 * the mapping's offset + (address - mapping start), and its path is the
 * image's open_path (what the kernel can open: map_files or
 * /proc/PID/root/..., the exact mapped inode).  An image read from target
 * memory (no file route) cannot be probed. */
#ifndef VG_PROBE_RESOLVE_H
#define VG_PROBE_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "sym/symbolizer.h"
#include "target/maps.h"
#include "util/error.h"

struct vg_probe_site {
	const struct vg_image *image;  /* borrowed from the symbolizer's images */
	char *path;                    /* owned: the path to open (image->open_path) */
	uint64_t file_offset;
	uint64_t ref_ctr_offset;       /* usdt: its semaphore's file offset, 0: none */
	char *usdt_args;               /* owned: usdt: the note's argument spec, else NULL */
	uint64_t runtime_addr;
	uint64_t static_addr;          /* runtime_addr - image bias */
	char *function;                /* owned: the symbol containing it, or NULL */
	uint64_t function_addr;        /* runtime address of that symbol */
	uint64_t function_offset;      /* runtime_addr - function_addr */
	/* Whether the innermost scope at this address (symbolizer frame 0)
	 * is an inlined copy, and the scope it is inlined into (frame 1,
	 * which may itself be inlined); set for every form.  For FILE:LINE
	 * that innermost scope is the one the site stands for. */
	char *inlined_into;            /* owned: the function it is inlined into, or NULL */
	char *inlined_function;        /* owned: the inlined function this is a copy of, or NULL */
	bool inlined;
	/* owned: source file of the address, or NULL; for FILE:LINE the
	 * matched file (absolute as the symbolizer prints it) and LINE. */
	char *file;
	uint32_t line;                 /* 0: unknown */
};

struct vg_probe_location {
	char *input;                   /* owned copy of the spec */
	bool is_file_line;
	bool is_usdt;
	struct vg_probe_site *sites;
	size_t n_sites;
	/* SYMBOL form defined in several images: how many (> 1: the first in
	 * addrspec's order was taken, and a caller should say so). */
	unsigned n_definitions;
	/* SYMBOL naming an IFUNC (elf/ifunc.h): the name given (owned) and
	 * its resolver's runtime address; the site is the implementation
	 * the process selected, never the resolver.  NULL: not an IFUNC. */
	char *ifunc;
	uint64_t ifunc_resolver;
};

/* Resolve spec in the live target behind sym (its current images and
 * maps).  Errors (sentence in err): -EINVAL malformed, -ENOENT no such
 * symbol, image, file or line ("no code for tgt.c:99 in any image with
 * DWARF; nearest lines with code: 97, 101"), -EFAULT the address is not in
 * any mapping, -ENOEXEC the address is in a mapping that is not executable
 * ("0x... is in [heap] rw-p, not in executable code") or not file-backed
 * (JIT, anonymous: "uprobes need a file"), -ENOENT/-EINVAL also for an
 * IFUNC whose selected implementation cannot be read, -ENODATA the image has no
 * file vigil can hand to the kernel, -ESTALE the mapping at the address
 * changed while resolving, -ESRCH the target is gone.  A warning-free
 * success fills *out (free with vg_probe_location_clear); on error *out
 * is left empty.
 *
 * The maps are read afresh on every call; each image's DWARF is the
 * symbolizer's (found on first use), and a FILE:LINE call reads every
 * line table of every image (~0.3 s with libc's debug info installed).
 * Not thread-safe
 * against lookups in the same symbolizer from other threads. */
int vg_probe_resolve(const char *spec, struct vg_symbolizer *sym, struct vg_probe_location *out,
		     struct vg_error *err);
void vg_probe_location_clear(struct vg_probe_location *loc);

#endif
