/* fuzz_attribute.c - libFuzzer harness for the trap attribution of
 * vigil watch (watch/attribute.h) on hostile code bytes and registers.
 *
 * Everything the attributor reads is the target's: its code, its
 * registers, its stack, and the trap IPs its breakpoints give.  The input
 * is split into a header (watched address and length, a function start
 * offset), then a run of traps (IP offset, tid, flags, registers) and the
 * rest is the "code" the traps fall into, served at a fixed base.  The
 * attributor must not crash, hang or leak, and what it returns must be
 * consistent: a writer for every how but NONE, exact only with a known
 * store address that overlaps the watched bytes.  Built by
 * tests/fuzz/run.sh. */
#include <asm/perf_regs.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "watch/attribute.h"

#define BASE 0x400000ull
#define NTRAPS 8

struct env {
	const uint8_t *code;
	size_t n;
	uint64_t start;                /* function start (BASE + offset), 0: none */
};

static int read_code(void *arg, uint64_t addr, uint8_t *buf, size_t n)
{
	const struct env *e = arg;

	if (addr < BASE || addr - BASE > e->n || n > e->n - (addr - BASE))
		return -EFAULT;
	memcpy(buf, e->code + (addr - BASE), n);
	return 0;
}

static bool function_start(void *arg, uint64_t ip, uint64_t *start)
{
	const struct env *e = arg;

	if (!e->start || ip < e->start || ip >= BASE + e->n)
		return false;
	*start = e->start;
	return true;
}

static const char *kernel_symbol(void *arg, uint64_t ip)
{
	(void)arg;
	return ip & 1 ? "ksys_read" : "_copy_to_iter";
}

static uint64_t take(const uint8_t **p, size_t *n, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && *n; i++, (*p)++, (*n)--)
		v |= (uint64_t)**p << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct env e = { 0 };
	struct vg_trap_env env = { &e, read_code, function_start, kernel_symbol };
	struct vg_attributor *a;
	uint64_t watch, traps[NTRAPS][6];
	unsigned len;

	if (size < 16 + NTRAPS * 24)
		return 0;
	watch = BASE + take(&data, &size, 2);
	len = 1u << (take(&data, &size, 1) & 3);
	e.start = take(&data, &size, 1) & 1 ? BASE + take(&data, &size, 1) : 0;
	for (int i = 0; i < NTRAPS; i++)
		for (int j = 0; j < 6; j++)
			traps[i][j] = take(&data, &size, 4);
	e.code = data;
	e.n = size;
	a = vg_attributor_new(&env);
	if (!a)
		return 0;
	for (int i = 0; i < NTRAPS; i++) {
		struct vg_regs user = { 0 }, intr = { 0 };
		uint64_t chain[3] = { 0xffffffff81000000ull | traps[i][4], PERF_CONTEXT_USER, BASE };
		uint8_t stack[8];
		bool kernel = traps[i][0] >> 31;
		struct vg_trap t = {
			.tid = (uint32_t)(traps[i][1] & 3) + 1,
			.ip = kernel ? chain[0] : BASE + (traps[i][0] & 0xffff),
			.user = &user, .intr = traps[i][5] & 1 ? &intr : NULL,
			.callchain = chain, .n_callchain = kernel ? 3 : 0,
			.stack = stack, .stack_size = sizeof(stack),
			/* Sometimes the thread's fs base (fs: stores verified). */
			.fs_base = watch + (traps[i][3] >> 24 & 0xff) - 0x80,
			.fs_base_known = traps[i][5] >> 1 & 1,
		};
		struct vg_trap_result r;

		/* Registers near the watched address, so that verification
		 * has something to find; the flags' DF bit from the input. */
		user.mask = traps[i][2] | 1ull << PERF_REG_X86_IP;
		for (int k = 0; k < VG_NREGS; k++)
			user.regs[k] = watch + (traps[i][3] >> (k % 24) & 0xff) - 0x80;
		user.regs[PERF_REG_X86_IP] = kernel ? BASE + (traps[i][0] & 0xffff) : t.ip;
		user.regs[PERF_REG_X86_FLAGS] = traps[i][3] & 0x400;
		intr.mask = 1ull << PERF_REG_X86_CX | 1ull << PERF_REG_X86_DI;
		intr.regs[PERF_REG_X86_CX] = traps[i][5] >> 8 & 0xff;
		intr.regs[PERF_REG_X86_DI] = traps[i][5] >> 16;
		memcpy(stack, &traps[i][4], 8);
		if (vg_attribute_trap(a, &t, watch, len, &r) < 0)
			break;
		if ((r.how != VG_TRAP_NONE) != (r.writer != NULL) && r.how != VG_TRAP_KERNEL)
			abort();
		if (r.how != VG_TRAP_KERNEL && r.confidence == VG_CONF_EXACT &&
		    (!r.store_addr_known ||
		     !vg_writer_overlaps(r.store_addr, r.writer->width, watch, len)))
			abort();
		if (r.how == VG_TRAP_NONE && r.confidence != VG_CONF_NONE)
			abort();
	}
	vg_attributor_free(a);
	return 0;
}
