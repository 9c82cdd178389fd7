/* usdt.h - the USDT probes (SystemTap SDT: DTRACE_PROBE, sys/sdt.h) an
 * ELF image declares in its .note.stapsdt notes: provider, name, the
 * probe's address (a nop the kernel's uprobe replaces), its semaphore
 * (0: none) and its argument spec ("-4@%esi 8@%rdx").  vigil probe's
 * usdt:PROVIDER:NAME locations. */
#ifndef VG_ELF_USDT_H
#define VG_ELF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "util/error.h"

struct vg_usdt_probe {
	char provider[64];
	char name[64];
	uint64_t pc;          /* static address of the probe (prelink-adjusted) */
	uint64_t semaphore;   /* static address of its semaphore, 0: none */
	char args[256];       /* the argument spec as written, truncated */
};

/* Calls cb for each well-formed stapsdt note (type 3, owner "stapsdt",
 * desc: pc, base, semaphore (3 x 8 bytes, little-endian) then three
 * NUL-terminated strings) in data[0..len), a .note.stapsdt section's
 * bytes.  base_addr is the .stapsdt.base section's address (have_base
 * false: none): pc and semaphore move by base_addr - the note's base, as
 * prelink would have moved them.  Malformed notes are skipped; the count
 * of those is returned in *bad (may be NULL).  Stops and returns cb's
 * value when cb returns non-zero; else 0. */
int vg_usdt_parse_notes(const void *data, size_t len, uint64_t base_addr, bool have_base,
			int (*cb)(const struct vg_usdt_probe *p, void *arg), void *arg, size_t *bad);

/* One argument of a probe's spec, "[-]SIZE@OPERAND": size in bytes (1,
 * 2, 4, 8), signed when SIZE has a '-'; reg is the x86-64 register
 * (VG_USDT_REG_*: rax rbx rcx rdx rsi rdi rbp rsp r8..r15 in that order)
 * when OPERAND is a register (%rax, %esi, %r8d...) or the base of a
 * memory operand "DISP(%reg)" (mem set: the value is the size bytes at
 * reg + disp, as gcc -O0 places arguments: "-4@-20(%rbp)"), else -1 (a
 * constant, %rip-relative or indexed memory: not read). */
enum { VG_USDT_REG_RAX, VG_USDT_REG_RBX, VG_USDT_REG_RCX, VG_USDT_REG_RDX, VG_USDT_REG_RSI,
       VG_USDT_REG_RDI, VG_USDT_REG_RBP, VG_USDT_REG_RSP, VG_USDT_REG_R8 };
struct vg_usdt_arg {
	uint8_t size;
	bool is_signed;
	int reg;
	char reg_name[8];     /* the 64-bit name ("rax", "r8"), "" when not a register */
	bool mem;             /* the value is in memory at reg + disp */
	int64_t disp;
	char operand[24];     /* mem: the operand as written ("-20(%rbp)"), truncated */
};
/* Parses up to max arguments of spec; *n how many.  -EINVAL on a
 * malformed argument (those before it are in args). */
int vg_usdt_args_parse(const char *spec, struct vg_usdt_arg *args, size_t max, size_t *n);

/* The probes of an image (its open file through libelf): *out (free()
 * it), *n; 0 with *n = 0 when it has none.  <0 only when out of memory. */
int vg_usdt_image_probes(const struct vg_image *img, struct vg_usdt_probe **out, size_t *n,
			 struct vg_error *err);

#endif
