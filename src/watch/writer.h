/* writer.h - the instruction that wrote a watched location.
 *
 * An x86 data breakpoint traps *after* the access: the sampled IP (the trap
 * IP) is the instruction following the writer.  The writer is the
 * instruction that ends exactly at the trap IP:
 *   exact      decoded linearly (Zydis) from a known instruction boundary
 *              (the containing function's start) up to the trap IP; an
 *              instruction ends exactly there.
 *   heuristic  no known boundary: candidates starting 1..15 bytes before
 *              the trap IP that decode to exactly that length, that write
 *              memory, and whose memory operand can address the watched
 *              location (checked against the sampled registers when they
 *              are known); the longest surviving candidate is chosen and
 *              how many survived is reported.
 * A jump, call or ret can also land on the trap IP (the trap IP is a jump
 * target): that is why linear decode from the function start, not a
 * backward guess, is what makes an answer exact.
 *
 * Never reads the target: the caller supplies the code bytes. */
#ifndef VG_WRITER_H
#define VG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/regs.h"   /* struct vg_regs */

enum vg_writer_kind {
	VG_WRITER_UNKNOWN = 0,   /* "unknown": no writer found (see why) */
	VG_WRITER_STORE,         /* "store": plain store: mov, movnti, movbe, setcc */
	VG_WRITER_RMW,           /* "read_modify_write": add/sub/inc/dec/and/or/xor/not/neg/
	                          * shl..., xchg, xadd, cmpxchg(8b/16b), bts..., with or without lock */
	VG_WRITER_STRING,        /* "string_store": rep movs / rep stos (and their non-rep forms) */
	VG_WRITER_VECTOR,        /* "vector_store": SSE/AVX/AVX-512 stores (movups, vmovdqu, movntdq...) */
	VG_WRITER_PUSH,          /* "push": push / pushf to a watched stack slot */
	VG_WRITER_CALL,          /* "call": the return address pushed by a call (set by the caller) */
	VG_WRITER_KERNEL,        /* "kernel_write": the kernel wrote on the process's behalf (set by the caller) */
	VG_WRITER_OTHER,         /* "other_write": any other memory-writing instruction (fxsave, ...) */
};

enum vg_writer_confidence {
	VG_CONF_NONE = 0,        /* "none" */
	VG_CONF_EXACT,           /* "exact" */
	VG_CONF_HEURISTIC,       /* "heuristic" */
};

enum vg_value_kind {
	VG_VALUE_UNKNOWN = 0,    /* "unknown" (why says why) */
	VG_VALUE_REGISTER,       /* "register_store": source register, truncated to the width */
	VG_VALUE_IMMEDIATE,      /* "immediate_store" */
	VG_VALUE_ADD_IMMEDIATE,  /* "add_immediate": add/sub/inc/dec of a constant: the value is
	                          * the delta (two's complement, width bytes) */
	VG_VALUE_ADD_REGISTER,   /* "add_register": add/sub of a register: the delta */
};


struct vg_writer {
	enum vg_writer_kind kind;
	enum vg_writer_confidence confidence;
	uint64_t ip;                   /* runtime address of the writer */
	uint8_t length;                /* bytes */
	char text[128];                /* Intel syntax, absolute targets: "mov dword ptr [0x404028], eax" */
	char mnemonic[24];             /* "mov", "add", "rep stosb", "lock cmpxchg" */
	bool lock, rep;
	uint8_t width;                 /* bytes written per access (operand size); 0 unknown */

	/* Where the value comes from. */
	enum vg_value_kind value_kind;
	int value_reg;                 /* perf register index (value_kind == REGISTER), else -1 */
	unsigned value_shift;          /* 8 for ah/bh/ch/dh, else 0 */
	char value_reg_name[8];        /* "eax", "r9b", "ah" */
	uint64_t immediate;            /* value_kind == IMMEDIATE or ADD_IMMEDIATE (sign-extended,
	                                * truncated to width; a delta already negated for sub/dec) */
	bool negate;                   /* ADD_REGISTER: sub, the delta is minus the register */

	/* The memory operand that was written (for the heuristic check and
	 * for reports): base/index as perf register indices, -1 when absent;
	 * rip_relative: disp is relative to the end of the instruction
	 * (mem_base is then -1); mem_scale is 0 without an index. */
	int mem_base, mem_index;
	unsigned mem_scale;
	int64_t mem_disp;
	bool rip_relative;
	/* How the written address follows from the registers sampled after
	 * the instruction (vg_writer_store_address). */
	enum vg_writer_addr {
		VG_ADDR_NONE = 0,      /* writes no memory */
		VG_ADDR_OPERAND,       /* base + index * scale + disp (rip: the end) */
		VG_ADDR_STACK,         /* push / call: the new rsp */
		VG_ADDR_STRING,        /* movs / stos: rdi one element back (by DF) */
		VG_ADDR_FS_OPERAND,    /* fs: base + the operand (a thread-local of the
					* executable): the thread's fs base, not sampled,
					* comes from the caller */
		VG_ADDR_UNKNOWN,       /* addr_why says why */
	} addr_rule;
	const char *addr_why;          /* static sentence, VG_ADDR_UNKNOWN */
	uint8_t address_width;         /* 64, or 32 with an address-size prefix */

	unsigned candidates;           /* heuristic: how many candidates survived */
	const char *caveat;            /* static sentence or NULL ("movs/stos trap after the element ...") */
	const char *why;               /* static sentence when kind is UNKNOWN or value_kind UNKNOWN */
};

/* Exact decode: code holds the n bytes [start, trap_ip) of the target, start
 * is a known instruction boundary (function start), trap_ip = start + n.
 * Returns 0 and fills *out (confidence EXACT) when an instruction ends
 * exactly at trap_ip; if that instruction does not write memory, kind is
 * UNKNOWN with why ("the instruction before the trap IP does not write
 * memory: the trap IP is a jump target or the write was not by this
 * thread's code"), but ip, length, text and mnemonic are still filled.
 * A call that ends at trap_ip (a call to the next instruction) is kind
 * CALL with the return address as its IMMEDIATE value.  Returns -ENOENT
 * when linear decode does not meet trap_ip (it steps over it: trap_ip is
 * inside an instruction, or data in code broke the decode; or n is 0),
 * -EINVAL on undecodable bytes; *out is cleared (confidence NONE) on
 * error. */
int vg_writer_decode_exact(const uint8_t *code, size_t n, uint64_t start,
			   struct vg_writer *out);

/* The one instruction that starts at ip: code holds n >= 1 bytes from
 * ip (15 are always enough).  A trap IP is always an instruction
 * boundary, so this is exact.  Returns 0 and fills *out (confidence
 * EXACT; kind UNKNOWN with why when it writes no memory), -EINVAL on
 * undecodable bytes, -ENOENT when the bytes end inside it. */
int vg_writer_decode_at(const uint8_t *code, size_t n, uint64_t ip,
			struct vg_writer *out);

/* Where one execution of w wrote, from the registers sampled right after
 * it (for a string instruction: right after the iteration that trapped,
 * whether iterations remain or not; rdi/rsi/rcx have advanced by one
 * element) and, for an fs: operand, the thread's fs base (fs_base: NULL
 * when not known; perf does not sample it).  Returns true with *ea; false
 * with *why (static) when the registers needed were not sampled, the
 * instruction changed its own base or index register, the operand has a
 * gs: segment or an fs: one without fs_base. */
bool vg_writer_store_address(const struct vg_writer *w, const struct vg_regs *regs,
			     const uint64_t *fs_base, uint64_t *ea, const char **why);

/* Whether [a, a + alen) and [b, b + blen) share a byte (lengths 0 count
 * as 1). */
bool vg_writer_overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen);

/* Heuristic decode: code holds the n (<= 15 is enough; more is ignored)
 * bytes just before trap_ip.  watch_addr/watch_len: the watched location;
 * regs (may be NULL) the sampled registers: a candidate whose effective
 * address can be computed from known registers must overlap the watched
 * location.  The registers are sampled after the instruction ran: push
 * and call stored at the sampled rsp, movs/stos one element behind rdi
 * (ahead of it when DF is set; unknown without the flags), and any other
 * candidate that changes its own base or index register has an unknown
 * address, as does an fs:/gs: operand.  Returns 0 with confidence
 * HEURISTIC, a caveat and candidates = how many survived, or -ENOENT when
 * none does (*out cleared). */
int vg_writer_decode_heuristic(const uint8_t *code, size_t n, uint64_t trap_ip,
			       uint64_t watch_addr, unsigned watch_len,
			       const struct vg_regs *regs, struct vg_writer *out);

/* The value written by one execution of w, from that execution's sampled
 * registers: REGISTER -> the register (shifted by value_shift) truncated
 * to width; IMMEDIATE -> the immediate.  Returns false (and sets *why to a
 * static sentence; why may be NULL) when not known: registers not sampled
 * or the source register not among them, an RMW (the result depends on the
 * old memory), xchg (the register now holds the old value), movs (copied
 * from memory), a vector store.  stos is a REGISTER store of al/ax/eax/rax,
 * which stos never changes.  ADD_IMMEDIATE / ADD_REGISTER: the delta
 * added to the old contents (two's complement, truncated to width; see
 * vg_writer_delta for its sign). */
bool vg_writer_value(const struct vg_writer *w, const struct vg_regs *regs,
		     uint64_t *value, const char **why);

/* A delta of w's width as a signed number. */
int64_t vg_writer_delta(const struct vg_writer *w, uint64_t value);

/* Whether the instruction just before ip (code = the 2 bytes before it)
 * is `syscall` (0f 05): a kernel write's user-side IP. */
bool vg_writer_after_syscall(const uint8_t code[2]);

const char *vg_writer_kind_name(enum vg_writer_kind k);
const char *vg_writer_confidence_name(enum vg_writer_confidence c);
const char *vg_value_kind_name(enum vg_value_kind k);

#endif
