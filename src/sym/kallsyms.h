/* kallsyms.h - kernel addresses to symbols from /proc/kallsyms.
 *
 * The table is read once, sorted by address; a lookup finds the last symbol
 * at or below the address (lower bound) and accepts it only below that
 * symbol's end: the next symbol's address, or the end of its module/section
 * for the last one (kallsyms has no sizes).  Module symbols carry the module
 * name ("[ext4]").  When the file is unreadable, or every address reads 0
 * (kptr_restrict, or no CAP_SYSLOG), the table is empty and `why` says so and
 * what to do, once, instead of answering "???" per address. */
#ifndef VG_KALLSYMS_H
#define VG_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct vg_ksym {
	uint64_t addr;
	uint64_t size;          /* up to the next symbol (an upper bound) */
	const char *name;
	const char *module;     /* NULL: vmlinux */
	char type;              /* nm-style type letter */
};

struct vg_kallsyms;

/* Parse a kallsyms text (path NULL: /proc/kallsyms).  An unreadable file or
 * one with only zero addresses is not an error: the table is empty and
 * vg_kallsyms_why() explains.  <0 only for out-of-memory or malformed input
 * that is not kallsyms at all (-EINVAL, err says which line). */
int vg_kallsyms_load(const char *path, struct vg_kallsyms **out,
		     struct vg_error *err);
struct vg_kallsyms *vg_kallsyms_free(struct vg_kallsyms *k);

/* 0 and *sym filled (borrowed until free), or -ENOENT (no symbol covers
 * addr, or the table is empty). */
int vg_kallsyms_lookup(const struct vg_kallsyms *k, uint64_t addr,
		       struct vg_ksym *sym);

size_t vg_kallsyms_count(const struct vg_kallsyms *k);
/* NULL when the table is usable; else the one sentence saying why not
 * ("/proc/kallsyms shows every address as 0: kernel.kptr_restrict=1 hides
 * them from processes without CAP_SYSLOG; run as root or set
 * kernel.kptr_restrict=0"). */
const char *vg_kallsyms_why(const struct vg_kallsyms *k);

/* Is addr in the kernel half of the x86-64 address space? */
bool vg_addr_is_kernel(uint64_t addr);

#endif
