/* test_watch_replay.c - real data-breakpoint traps, replayed through the
 * attribution the live watch uses (watch/attribute.h).
 *
 * fixtures/hwtrace/trace.txt is what perf recorded on a machine whose
 * breakpoints fire (AMD EPYC, kernel 6.18) while storekinds wrote the
 * 8-byte cell g_area.cell in 22 ways, twice each: 86 traps for 44 writes.
 * The code comes from the binary the trace was recorded from
 * (fixtures/hwtrace/storekinds) and, for libc's memcpy/memset/read, from
 * libc-code.txt; kernel symbol names come from the trace's chains.  The
 * replay must name, for every kind, the writer instruction, its kind,
 * how many writes (executions) and how many traps, and whether it is
 * exact: the trace has no flags register, so every string instruction's
 * direction is unverified and must say so (heuristic), while every other
 * kind is verified against the sampled registers (exact). */
#include <asm/perf_regs.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "watch/attribute.h"

#define DIR FIXTURES "/hwtrace/"
#define KERNEL_START 0xffff800000000000ull
#define MAX_TRAPS 256
#define MAX_CHAIN 16
#define MAX_NAMES 64

struct rec {
	uint32_t tid;
	uint64_t ip;                   /* runtime trap IP (kernel address for a kernel trap) */
	char symbol[64];               /* the trap's (first frame's) symbol */
	uint64_t chain[MAX_CHAIN];
	size_t n_chain;
	struct vg_regs user;
};

struct libc_code {
	uint64_t start;
	char name[64];
	uint8_t bytes[128];
	size_t n;
};

struct replay {
	uint64_t cell, cell_static;
	uint64_t exe_bias, libc_bias;
	uint8_t *exe;                  /* storekinds, whole file */
	size_t exe_size;
	struct libc_code libc[8];
	size_t n_libc;
	struct rec recs[MAX_TRAPS];
	size_t n;
	struct { uint64_t ip; char name[64]; } ksyms[MAX_NAMES];
	size_t n_ksyms;
};

static struct replay R;

/* ---- the recorded files ---- */

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	buf[len] = 0;
	*n = (size_t)len;
	return buf;
}

static const char *const REG_NAMES[] = {
	[PERF_REG_X86_AX] = "AX", [PERF_REG_X86_BX] = "BX", [PERF_REG_X86_CX] = "CX",
	[PERF_REG_X86_DX] = "DX", [PERF_REG_X86_SI] = "SI", [PERF_REG_X86_DI] = "DI",
	[PERF_REG_X86_BP] = "BP", [PERF_REG_X86_SP] = "SP", [PERF_REG_X86_IP] = "IP",
	[PERF_REG_X86_FLAGS] = "FLAGS", [PERF_REG_X86_R8] = "R8", [PERF_REG_X86_R9] = "R9",
	[PERF_REG_X86_R10] = "R10", [PERF_REG_X86_R11] = "R11", [PERF_REG_X86_R12] = "R12",
	[PERF_REG_X86_R13] = "R13", [PERF_REG_X86_R14] = "R14", [PERF_REG_X86_R15] = "R15",
};

static void parse_regs(const char *line, struct vg_regs *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < VG_NREGS; i++) {
		char key[16];
		const char *p;

		if (!REG_NAMES[i])
			continue;
		snprintf(key, sizeof(key), " %s:0x", REG_NAMES[i]);
		p = strstr(line, key);
		if (!p)
			continue;
		out->regs[i] = strtoull(p + strlen(key), NULL, 16);
		out->mask |= 1ull << i;
	}
}

static void add_ksym(uint64_t ip, const char *sym)
{
	char name[64];
	const char *plus = strchr(sym, '+');
	size_t len = plus ? (size_t)(plus - sym) : strlen(sym);

	snprintf(name, sizeof(name), "%.*s", (int)len, sym);
	for (size_t i = 0; i < R.n_ksyms; i++)
		if (R.ksyms[i].ip == ip)
			return;
	assert_true(R.n_ksyms < MAX_NAMES);
	R.ksyms[R.n_ksyms].ip = ip;
	snprintf(R.ksyms[R.n_ksyms].name, sizeof(R.ksyms[0].name), "%s", name);
	R.n_ksyms++;
}

/* Blocks: " TID mem:ADDR:", chain lines "\tADDR SYM+OFF" (user frames as
 * static offsets), then " ABI:2 AX:0x... IP:0x...". */
static void parse_trace(void)
{
	size_t n;
	char *text = (char *)slurp(DIR "trace.txt", &n), *save = NULL;
	struct rec *cur = NULL;
	uint64_t first_static = 0, user_static = 0;
	bool first_line = false;
	char user_sym[64] = "";

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p;

		if (line[0] == '#') {
			p = strstr(line, "# cell 0x");
			assert_non_null(p);
			R.cell = strtoull(p + 7, NULL, 16);
			p = strstr(line, "static 0x");
			assert_non_null(p);
			R.cell_static = strtoull(p + 7, NULL, 16) + 56;
			continue;
		}
		if (strstr(line, " mem:")) {
			assert_true(R.n < MAX_TRAPS);
			cur = &R.recs[R.n++];
			memset(cur, 0, sizeof(*cur));
			cur->tid = (uint32_t)strtoul(line, NULL, 10);
			first_line = true;
			user_static = 0;
			continue;
		}
		assert_non_null(cur);
		if (line[0] == '\t') {
			char sym[64] = "";
			uint64_t a = strtoull(line + 1, NULL, 16);

			sscanf(line, " %*s %63s", sym);
			if (first_line) {
				snprintf(cur->symbol, sizeof(cur->symbol), "%s", sym);
				first_static = a;
				first_line = false;
			}
			if (a >= KERNEL_START) {
				add_ksym(a, sym);
				if (cur->n_chain < MAX_CHAIN)
					cur->chain[cur->n_chain++] = a;
			} else if (!user_static && strcmp(sym, "[unknown]") != 0) {
				user_static = a;
				snprintf(user_sym, sizeof(user_sym), "%s", sym);
			}
			continue;
		}
		p = strstr(line, "ABI:");
		assert_non_null(p);
		parse_regs(line, &cur->user);
		assert_true(cur->user.mask >> PERF_REG_X86_IP & 1);
		if (first_static >= KERNEL_START) {
			cur->ip = first_static;
			if (cur->n_chain < MAX_CHAIN)
				cur->chain[cur->n_chain++] = PERF_CONTEXT_USER;
		} else {
			cur->ip = cur->user.regs[PERF_REG_X86_IP];
		}
		/* The bias of the image of the first user frame. */
		if (user_static) {
			uint64_t bias = cur->user.regs[PERF_REG_X86_IP] - user_static;

			if (strncmp(user_sym, "k_", 2) == 0 || strncmp(user_sym, "main", 4) == 0)
				R.exe_bias = bias;
			else
				R.libc_bias = bias;
		}
	}
	free(text);
}

static void parse_libc(void)
{
	size_t n;
	char *text = (char *)slurp(DIR "libc-code.txt", &n), *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct libc_code *c;
		char hex[300];

		if (line[0] == '#')
			continue;
		assert_true(R.n_libc < 8);
		c = &R.libc[R.n_libc++];
		assert_int_equal(sscanf(line, "%" SCNx64 " %63s %299s", &c->start, c->name, hex), 3);
		c->n = strlen(hex) / 2;
		assert_true(c->n <= sizeof(c->bytes));
		for (size_t i = 0; i < c->n; i++)
			sscanf(hex + 2 * i, "%2hhx", &c->bytes[i]);
	}
	free(text);
}

/* ---- the environment: code and symbols of the recorded process ---- */

static int read_code(void *arg, uint64_t addr, uint8_t *buf, size_t n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)R.exe;
	uint64_t st;

	(void)arg;
	if (addr >= R.libc_bias) {
		st = addr - R.libc_bias;
		for (size_t i = 0; i < R.n_libc; i++)
			if (st >= R.libc[i].start && st + n <= R.libc[i].start + R.libc[i].n) {
				memcpy(buf, R.libc[i].bytes + (st - R.libc[i].start), n);
				return 0;
			}
		return -EFAULT;
	}
	st = addr - R.exe_bias;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(R.exe + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && st >= ph->p_vaddr && st + n <= ph->p_vaddr + ph->p_filesz &&
		    ph->p_offset + (st - ph->p_vaddr) + n <= R.exe_size) {
			memcpy(buf, R.exe + ph->p_offset + (st - ph->p_vaddr), n);
			return 0;
		}
	}
	return -EFAULT;
}

/* The function containing ip: storekinds' symbol table, libc's from
 * libc-code.txt. */
static bool function_start(void *arg, uint64_t ip, uint64_t *start)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)R.exe;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(R.exe + eh->e_shoff);
	uint64_t st;

	(void)arg;
	if (ip >= R.libc_bias) {
		st = ip - R.libc_bias;
		for (size_t i = 0; i < R.n_libc; i++)
			if (st >= R.libc[i].start && st < R.libc[i].start + R.libc[i].n) {
				*start = R.libc[i].start + R.libc_bias;
				return true;
			}
		return false;
	}
	st = ip - R.exe_bias;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		size_t n;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		sym = (const Elf64_Sym *)(R.exe + sh[i].sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		for (size_t j = 0; j < n; j++)
			if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && st >= sym[j].st_value &&
			    st < sym[j].st_value + sym[j].st_size) {
				*start = sym[j].st_value + R.exe_bias;
				return true;
			}
	}
	return false;
}

static const char *kernel_symbol(void *arg, uint64_t ip)
{
	(void)arg;
	for (size_t i = 0; i < R.n_ksyms; i++)
		if (R.ksyms[i].ip == ip)
			return R.ksyms[i].name;
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	memset(&R, 0, sizeof(R));
	R.exe = slurp(DIR "storekinds", &R.exe_size);
	parse_trace();
	parse_libc();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(R.exe);
	return 0;
}

/* ---- the replay ---- */

struct kind_result {
	char function[64];             /* the trap's function (k_..., libc's, or the kernel's) */
	enum vg_writer_kind kind;
	char mnemonic[24];
	enum vg_writer_confidence confidence;   /* the least of its traps */
	unsigned writes, traps;
	uint64_t writer_ip;
};

static struct kind_result results[64];
static size_t n_results;

static struct kind_result *result_for(uint64_t writer_ip, const char *function)
{
	for (size_t i = 0; i < n_results; i++)
		if (results[i].writer_ip == writer_ip)
			return &results[i];
	assert_true(n_results < 64);
	memset(&results[n_results], 0, sizeof(results[0]));
	results[n_results].writer_ip = writer_ip;
	results[n_results].confidence = VG_CONF_EXACT;
	snprintf(results[n_results].function, sizeof(results[0].function), "%s", function);
	return &results[n_results++];
}

static void replay_all(void)
{
	struct vg_trap_env env = { NULL, read_code, function_start, kernel_symbol };
	struct vg_attributor *a = vg_attributor_new(&env);

	assert_non_null(a);
	n_results = 0;
	for (size_t i = 0; i < R.n; i++) {
		const struct rec *rc = &R.recs[i];
		struct vg_trap t = {
			.tid = rc->tid, .ip = rc->ip, .user = &rc->user, .intr = NULL,
			.callchain = rc->chain, .n_callchain = rc->n_chain,
		};
		struct vg_trap_result r;
		struct kind_result *k;
		char fn[64];
		const char *plus = strchr(rc->symbol, '+');

		assert_int_equal(vg_attribute_trap(a, &t, R.cell, 8, &r), 0);
		snprintf(fn, sizeof(fn), "%.*s", plus ? (int)(plus - rc->symbol) : 63, rc->symbol);
		k = result_for(r.key, r.how == VG_TRAP_KERNEL ? "read" : fn);
		/* No writer: counted under the trap IP, kind unknown. */
		k->kind = r.writer ? r.writer->kind : VG_WRITER_UNKNOWN;
		snprintf(k->mnemonic, sizeof(k->mnemonic), "%s", r.writer ? r.writer->mnemonic : "");
		if (r.confidence > k->confidence || r.confidence == VG_CONF_NONE)
			k->confidence = r.confidence;
		k->traps++;
		k->writes += !r.continues;
	}
	vg_attributor_free(a);
}

struct expect {
	const char *function;          /* prefix of the writer's function */
	enum vg_writer_kind kind;
	const char *mnemonic;
	enum vg_writer_confidence confidence;
	unsigned writes, traps;
};

/* REPS = 2: every kind wrote twice. */
static const struct expect EXPECTED[] = {
	{ "k_mov_reg", VG_WRITER_STORE, "mov", VG_CONF_EXACT, 2, 2 },
	{ "k_mov_imm", VG_WRITER_STORE, "mov", VG_CONF_EXACT, 2, 2 },
	{ "k_mov_byte_mid", VG_WRITER_STORE, "mov", VG_CONF_EXACT, 2, 2 },
	{ "k_straddle", VG_WRITER_STORE, "mov", VG_CONF_EXACT, 2, 2 },
	{ "k_lock_add", VG_WRITER_RMW, "lock add", VG_CONF_EXACT, 2, 2 },
	{ "k_add_reg", VG_WRITER_RMW, "add", VG_CONF_EXACT, 2, 2 },
	{ "k_inc", VG_WRITER_RMW, "inc", VG_CONF_EXACT, 2, 2 },
	{ "k_bts", VG_WRITER_RMW, "bts", VG_CONF_EXACT, 2, 2 },
	{ "k_xchg", VG_WRITER_RMW, "xchg", VG_CONF_EXACT, 2, 2 },
	{ "k_cmpxchg", VG_WRITER_RMW, "lock cmpxchg", VG_CONF_EXACT, 2, 2 },
	{ "k_setcc", VG_WRITER_STORE, "setl", VG_CONF_EXACT, 2, 2 },
	{ "k_pop_mem", VG_WRITER_OTHER, "pop", VG_CONF_EXACT, 2, 2 },
	{ "k_movnti", VG_WRITER_STORE, "movnti", VG_CONF_EXACT, 2, 2 },
	{ "k_sse_store", VG_WRITER_VECTOR, "vmovdqa", VG_CONF_EXACT, 2, 2 },
	{ "k_avx_store", VG_WRITER_VECTOR, "vmovdqa", VG_CONF_EXACT, 2, 2 },
	/* No flags in the trace: the direction of a string store is
	 * assumed, never verified. */
	{ "k_stosq", VG_WRITER_STRING, "stosq", VG_CONF_HEURISTIC, 2, 2 },
	{ "k_rep_movsb", VG_WRITER_STRING, "rep movsb", VG_CONF_HEURISTIC, 2, 16 },
	{ "k_rep_movsq", VG_WRITER_STRING, "rep movsq", VG_CONF_HEURISTIC, 2, 2 },
	{ "k_rep_stosb", VG_WRITER_STRING, "rep stosb", VG_CONF_HEURISTIC, 2, 16 },
	{ "__memmove_avx_unaligned_erms", VG_WRITER_VECTOR, "vmovdqu", VG_CONF_EXACT, 2, 2 },
	{ "__memset_avx2_unaligned_erms", VG_WRITER_VECTOR, "vmovdqu", VG_CONF_EXACT, 2, 2 },
	{ "read", VG_WRITER_KERNEL, "syscall", VG_CONF_EXACT, 2, 16 },
};

static void test_every_kind(void **state)
{
	unsigned traps = 0, writes = 0;

	(void)state;
	assert_int_equal(R.n, 86);
	assert_int_equal(R.cell - R.exe_bias, R.cell_static);
	replay_all();
	for (size_t i = 0; i < sizeof(EXPECTED) / sizeof(EXPECTED[0]); i++) {
		const struct expect *x = &EXPECTED[i];
		const struct kind_result *k = NULL;

		for (size_t j = 0; j < n_results; j++)
			if (strcmp(results[j].function, x->function) == 0)
				k = &results[j];
		if (!k)
			fail_msg("%s: no writer attributed to it", x->function);
		if (k->kind != x->kind || strcmp(k->mnemonic, x->mnemonic) != 0 ||
		    k->confidence != x->confidence || k->writes != x->writes || k->traps != x->traps)
			fail_msg("%s: got %s '%s' %s writes %u traps %u; expected %s '%s' %s writes %u traps %u",
				 x->function, vg_writer_kind_name(k->kind), k->mnemonic,
				 vg_writer_confidence_name(k->confidence), k->writes, k->traps,
				 vg_writer_kind_name(x->kind), x->mnemonic,
				 vg_writer_confidence_name(x->confidence), x->writes, x->traps);
	}
	for (size_t j = 0; j < n_results; j++) {
		traps += results[j].traps;
		writes += results[j].writes;
	}
	/* One writer per kind, nothing else: no trap went to an instruction
	 * that writes no memory (mov ecx, 0x40 before a rep movsb). */
	assert_int_equal(n_results, sizeof(EXPECTED) / sizeof(EXPECTED[0]));
	assert_int_equal(traps, 86);
	assert_int_equal(writes, 44);
}

/* With the flags sampled (DF clear), every string trap is verified. */
static void test_flags_make_strings_exact(void **state)
{
	(void)state;
	for (size_t i = 0; i < R.n; i++)
		if (R.recs[i].ip < KERNEL_START) {
			R.recs[i].user.regs[PERF_REG_X86_FLAGS] = 0x246;
			R.recs[i].user.mask |= 1ull << PERF_REG_X86_FLAGS;
		}
	replay_all();
	for (size_t j = 0; j < n_results; j++)
		if (results[j].kind == VG_WRITER_STRING && results[j].confidence != VG_CONF_EXACT)
			fail_msg("%s: %s with DF clear sampled is %s", results[j].function,
				 results[j].mnemonic, vg_writer_confidence_name(results[j].confidence));
	/* DF set: rdi moved backwards, so rdi + 1 is where a backward
	 * iteration wrote: the forward-recorded iterations no longer verify,
	 * and are not called exact. */
	for (size_t i = 0; i < R.n; i++)
		if (R.recs[i].ip < KERNEL_START)
			R.recs[i].user.regs[PERF_REG_X86_FLAGS] = 0x246 | 0x400;
	replay_all();
	for (size_t j = 0; j < n_results; j++)
		if (strncmp(results[j].function, "k_rep", 5) == 0)
			assert_int_not_equal(results[j].confidence, VG_CONF_EXACT);
	for (size_t i = 0; i < R.n; i++)
		R.recs[i].user.mask &= ~(1ull << PERF_REG_X86_FLAGS);
}

/* Kernel registers at the trap (PERF_SAMPLE_REGS_INTR, as the live watch
 * samples them): a per-byte kernel copy continues while rcx falls and rdi
 * advances by the bytes consumed; a new call restarts them. */
static void test_kernel_copy_with_intr_regs(void **state)
{
	struct vg_trap_env env = { NULL, read_code, function_start, kernel_symbol };
	struct vg_attributor *a = vg_attributor_new(&env);
	unsigned writes = 0, traps = 0;

	(void)state;
	for (int call = 0; call < 3; call++) {
		for (int b = 0; b < 8; b++) {
			const struct rec *rc = NULL;
			struct vg_regs intr = { 0 };
			struct vg_trap_result r;
			struct vg_trap t;

			for (size_t i = 0; i < R.n && !rc; i++)
				if (R.recs[i].ip >= KERNEL_START)
					rc = &R.recs[i];
			assert_non_null(rc);
			/* Copies of 64 bytes into g_area: byte 56 + b. */
			intr.mask = 1ull << PERF_REG_X86_CX | 1ull << PERF_REG_X86_DI;
			intr.regs[PERF_REG_X86_CX] = 7 - (uint64_t)b;
			intr.regs[PERF_REG_X86_DI] = R.cell + 1 + (uint64_t)b;
			/* The second call's copy stops inside the cell at
			 * the same kernel IP: only the registers tell. */
			t = (struct vg_trap){ .tid = 1, .ip = b == 7 ? rc->ip + 2 : rc->ip,
					      .user = &rc->user, .intr = &intr,
					      .callchain = rc->chain, .n_callchain = rc->n_chain };
			if (call == 1 && b == 7)
				t.ip = rc->ip;
			assert_int_equal(vg_attribute_trap(a, &t, R.cell, 8, &r), 0);
			assert_int_equal(r.how, VG_TRAP_KERNEL);
			assert_string_equal(r.syscall, "read");
			traps++;
			writes += !r.continues;
		}
	}
	assert_int_equal(traps, 24);
	assert_int_equal(writes, 3);
	vg_attributor_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_flags_make_strings_exact),
		cmocka_unit_test(test_kernel_copy_with_intr_regs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
