/* kallsyms.h - kernel addresses to symbols from /proc/kallsyms.
 *
 * The table is read once, sorted by address, one symbol per address; a
 * lookup finds the last symbol at or below the address and accepts it only
 * below that symbol's end.  kallsyms has no sizes: the end is the next
 * symbol's address, except for the last symbol of vmlinux or of a module
 * (the next one belongs elsewhere, or there is none), whose size is a guess
 * capped at VG_KSYM_BOUNDARY_CAP.  Module symbols carry the module name
 * without its brackets ("ext4" for "[ext4]").  When the file is unreadable,
 * or every address reads 0 (kptr_restrict, or no CAP_SYSLOG), the table is
 * empty and `why` says so and what to do, once, instead of answering "???"
 * per address. */
#ifndef VG_KALLSYMS_H
#define VG_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Size given to the last symbol before a module boundary or the end. */
#define VG_KSYM_BOUNDARY_CAP 4096u

struct vg_ksym {
	uint64_t addr;
	uint64_t size;          /* up to the next symbol (an upper bound), > 0;
				 * addr + size - 1 never wraps */
	const char *name;
	const char *module;     /* NULL: vmlinux */
	char type;              /* nm-style type letter */
};

struct vg_kallsyms;

/* Read and parse a kallsyms text (path NULL: /proc/kallsyms).  An
 * unreadable or empty file, or one with only zero addresses, is not an
 * error: the table is empty and vg_kallsyms_why() explains.  Lines that do
 * not parse are skipped and counted (vg_kallsyms_malformed); symbols below
 * the kernel half (per-CPU offsets, absolute values) are dropped.
 * Returns 0 and *out (free with vg_kallsyms_free), or -ENOMEM, -EFBIG
 * (over 256 MiB), or -EINVAL when no line parses (not kallsyms at all; err
 * names the first line). */
int vg_kallsyms_load(const char *path, struct vg_kallsyms **out,
		     struct vg_error *err);
/* The same on len bytes already in memory (copied; buf need not be
 * NUL-terminated); origin names them in messages.  For tests and fuzzing. */
int vg_kallsyms_parse(const char *buf, size_t len, const char *origin,
		      struct vg_kallsyms **out, struct vg_error *err);
struct vg_kallsyms *vg_kallsyms_free(struct vg_kallsyms *k);

/* 0 and *sym filled (borrowed until free), or -ENOENT (no symbol covers
 * addr, or the table is empty). */
int vg_kallsyms_lookup(const struct vg_kallsyms *k, uint64_t addr,
		       struct vg_ksym *sym);

/* Symbols in the table (one per address), and lines skipped as malformed. */
size_t vg_kallsyms_count(const struct vg_kallsyms *k);
size_t vg_kallsyms_malformed(const struct vg_kallsyms *k);
/* NULL when the table is usable; else the one sentence saying why not
 * ("/proc/kallsyms shows every address as 0: kernel.kptr_restrict=1 hides
 * them from processes without CAP_SYSLOG; run as root or set
 * kernel.kptr_restrict=0"). */
const char *vg_kallsyms_why(const struct vg_kallsyms *k);

/* Is addr in the kernel half of the x86-64 address space? */
bool vg_addr_is_kernel(uint64_t addr);

#endif
