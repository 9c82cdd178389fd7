/* regs.h - a sampled register set of x86-64, indexed by the perf register
 * numbers of <asm/perf_regs.h> (PERF_REG_X86_AX = 0 ... PERF_REG_X86_R15 =
 * 23), with a mask of the ones known, and the map between those numbers
 * and the DWARF register numbers CFI speaks in.  The one register type of
 * the perf decoder, the writer decoding of watch, the CFI evaluator and
 * the unwinder: it lives here so that none of them depends on another's
 * folder. */
#ifndef VG_UNWIND_REGS_H
#define VG_UNWIND_REGS_H

#include <stdint.h>

#define VG_NREGS 24

/* mask bit i set when regs[i] is known. */
struct vg_regs {
	uint64_t mask;
	uint64_t regs[VG_NREGS];
};

/* perf indices the unwinder needs by name. */
#define VG_PERF_BP 6
#define VG_PERF_SP 7
#define VG_PERF_IP 8

/* x86-64 DWARF registers (System V psABI, "DWARF Register Number
 * Mapping"): 0..15 are rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15;
 * 16 is the return address column, which holds a frame's IP. */
#define VG_DWARF_NREGS 17
#define VG_DWARF_BP 6
#define VG_DWARF_SP 7
#define VG_DWARF_RA 16

/* perf index of DWARF register dw (< VG_DWARF_NREGS; RA maps to IP). */
extern const int vg_perf_of_dwarf[VG_DWARF_NREGS];

/* DWARF register of perf index p, or -1 for one CFI has no column for
 * (flags, segment registers). */
int vg_dwarf_of_perf(int p);

/* "rax", ..., "r15", "rip" (16); "?" past the end. */
const char *vg_dwarf_reg_name(unsigned dw);

#endif
