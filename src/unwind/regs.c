/* regs.c - the DWARF <-> perf register map of x86-64. */
#include "unwind/regs.h"

const int vg_perf_of_dwarf[VG_DWARF_NREGS] = {
	0 /* rax */, 3 /* rdx */, 2 /* rcx */, 1 /* rbx */,
	4 /* rsi */, 5 /* rdi */, 6 /* rbp */, 7 /* rsp */,
	16, 17, 18, 19, 20, 21, 22, 23 /* r8..r15 */,
	VG_PERF_IP,
};

int vg_dwarf_of_perf(int p)
{
	for (int i = 0; i < VG_DWARF_NREGS; i++)
		if (vg_perf_of_dwarf[i] == p)
			return i;
	return -1;
}

const char *vg_dwarf_reg_name(unsigned dw)
{
	static const char *const names[VG_DWARF_NREGS] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	};

	return dw < VG_DWARF_NREGS ? names[dw] : "?";
}
