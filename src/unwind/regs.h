/* regs.h - a sampled register set of x86-64, indexed by the perf register
 * numbers of <asm/perf_regs.h> (PERF_REG_X86_AX = 0 ... PERF_REG_X86_R15 =
 * 23), with a mask of the ones known.  The one register type of the perf
 * decoder, the writer decoding of watch, the CFI step and the unwinders:
 * it lives here so that none of them depends on another's folder. */
#ifndef VG_UNWIND_REGS_H
#define VG_UNWIND_REGS_H

#include <stdint.h>

#define VG_NREGS 24

/* mask bit i set when regs[i] is known. */
struct vg_regs {
	uint64_t mask;
	uint64_t regs[VG_NREGS];
};

#endif
