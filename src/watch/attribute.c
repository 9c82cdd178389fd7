/* attribute.c - which write a data-breakpoint trap belongs to: see
 * attribute.h for the rule.
 *
 * Decoding is the expensive part and depends only on the code, so it is
 * done once per distinct trap IP (the instruction at it and the one that
 * ends at it), once per return address (calls) and once per user IP after
 * a system call; what depends on the sample (the address written, whether
 * it continues a write) is a few additions per trap.  Never reads the
 * target itself and never prints. */
#include "watch/attribute.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "util/vec.h"
#include "kernel/syscalls.h"

#define KERNEL_START 0xffff800000000000ull
#define MAX_INSN 15
#define MAX_FUNCTION_BYTES (1u << 20)   /* linear decode reads at most this much code */
#define KERNEL_FORWARD_MAX 15           /* the last iteration's trap: the IP after the copy instruction */

static const char WHY_NOT_WRITER[] =
	"the instruction that ends at the trap IP writes no memory, and no rep string "
	"instruction at the trap IP wrote the watched bytes: the trap IP is a jump target";
static const char WHY_ELSEWHERE[] =
	"the instruction that ends at the trap IP wrote other bytes (evaluated with the "
	"sampled registers): the trap IP is a jump target";
static const char WHY_NO_CODE[] = "the code at the trap IP could not be read or decoded";
static const char WHY_BACKWARDS[] =
	"no function start known: decoded backwards from the trap IP";
static const char WHY_NO_SYSCALL[] =
	"the kernel wrote, but the user IP does not follow a syscall instruction (a signal "
	"frame, or the process's exit)";
static const char WHY_NO_SYSCALL_NAME[] =
	"the kernel wrote during a system call that its call chain does not name";
static const char WHY_NO_USER_IP[] = "the kernel wrote; the user registers were not sampled";
static const char WHY_DF_ASSUMED[] =
	"the flags were not sampled: the string instruction's direction was assumed "
	"forward (DF clear, as the ABI requires at calls)";

/* What one trap IP decodes to. */
struct code_entry {
	uint64_t ip;
	bool at_ok;                    /* at: the instruction starting at ip */
	struct vg_writer at;
	enum vg_trap_how before_how;   /* AFTER (exact decode), BACKWARDS, or NONE */
	struct vg_writer before;       /* the instruction ending at ip */
	bool at_function_start;        /* ip is its function's first byte */
};

struct call_entry {
	uint64_t ra;
	bool ok;
	struct vg_writer call;
};

struct syscall_entry {
	uint64_t user_ip;
	struct vg_writer writer;       /* kind KERNEL; text "syscall" when it follows one */
	bool after_syscall;
};

/* The last trap of one thread, for continuation. */
struct thread_state {
	uint32_t tid;                  /* 0: empty slot */
	bool kernel;
	enum vg_trap_how how;
	uint64_t key;
	int syscall_nr;
	uint64_t kip;                  /* kernel IP */
	bool string_regs;              /* cx/di below are known */
	uint64_t cx, di;
	uint64_t user_hash;            /* kernel: the user registers at the system call */
	bool intr;
};

struct vg_attributor {
	struct vg_trap_env env;
	struct code_entry **code;      /* open addressing by ip; n_code used of cap_code */
	size_t n_code, cap_code;
	struct call_entry *calls;
	size_t n_calls, cap_calls;
	struct syscall_entry **sys;
	size_t n_sys, cap_sys;
	struct thread_state *threads;  /* open addressing by tid */
	size_t n_threads, cap_threads;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static bool reg(const struct vg_regs *r, int i, uint64_t *v)
{
	if (!r || !(r->mask >> i & 1))
		return false;
	*v = r->regs[i];
	return true;
}

struct vg_attributor *vg_attributor_new(const struct vg_trap_env *env)
{
	struct vg_attributor *a = calloc(1, sizeof(*a));

	if (a)
		a->env = *env;
	return a;
}

struct vg_attributor *vg_attributor_free(struct vg_attributor *a)
{
	if (!a)
		return NULL;
	for (size_t i = 0; i < a->cap_code; i++)
		free(a->code[i]);
	for (size_t i = 0; i < a->n_sys; i++)
		free(a->sys[i]);
	free(a->code);
	free(a->calls);
	free(a->sys);
	free(a->threads);
	free(a);
	return NULL;
}

/* ---- decoding, once per trap IP ---- */

static uint8_t *read_code(struct vg_attributor *a, uint64_t from, size_t n)
{
	uint8_t *buf = malloc(n ? n : 1);

	if (buf && a->env.read_code(a->env.arg, from, buf, n) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The instruction that ends at ip: exact from the function start,
 * backwards (with the first trap's registers) without one. */
static void decode_before(struct vg_attributor *a, struct code_entry *e, const struct vg_trap *t,
			  uint64_t watch_addr, unsigned watch_len)
{
	uint64_t start;
	uint8_t *code;

	e->before_how = VG_TRAP_NONE;
	if (a->env.function_start && a->env.function_start(a->env.arg, e->ip, &start) &&
	    start <= e->ip && e->ip - start <= MAX_FUNCTION_BYTES) {
		if (start == e->ip) {
			e->at_function_start = true;
			return;
		}
		code = read_code(a, start, e->ip - start);
		if (code && vg_writer_decode_exact(code, e->ip - start, start, &e->before) == 0)
			e->before_how = VG_TRAP_AFTER;
		free(code);
		if (e->before_how != VG_TRAP_NONE)
			return;
	}
	if (e->ip <= MAX_INSN || !(code = read_code(a, e->ip - MAX_INSN, MAX_INSN)))
		return;
	if (vg_writer_decode_heuristic(code, MAX_INSN, e->ip, watch_addr, watch_len, t->user,
				       &e->before) == 0)
		e->before_how = VG_TRAP_BACKWARDS;
	free(code);
}

static struct code_entry *code_entry(struct vg_attributor *a, const struct vg_trap *t,
				     uint64_t watch_addr, unsigned watch_len)
{
	struct code_entry *e;
	uint8_t *code;
	size_t i;

	if (a->cap_code && a->n_code * 2 < a->cap_code) {
		for (i = mix64(t->ip) & (a->cap_code - 1); a->code[i]; i = (i + 1) & (a->cap_code - 1))
			if (a->code[i]->ip == t->ip)
				return a->code[i];
	} else {
		size_t cap = a->cap_code ? a->cap_code * 2 : 64;
		struct code_entry **grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return NULL;
		for (size_t j = 0; j < a->cap_code; j++) {
			if (!a->code[j])
				continue;
			for (i = mix64(a->code[j]->ip) & (cap - 1); grown[i]; i = (i + 1) & (cap - 1))
				;
			grown[i] = a->code[j];
		}
		free(a->code);
		a->code = grown;
		a->cap_code = cap;
		return code_entry(a, t, watch_addr, watch_len);
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ip = t->ip;
	if ((code = read_code(a, t->ip, MAX_INSN)) != NULL) {
		e->at_ok = vg_writer_decode_at(code, MAX_INSN, t->ip, &e->at) == 0;
		free(code);
	}
	decode_before(a, e, t, watch_addr, watch_len);
	a->code[i] = e;
	a->n_code++;
	return e;
}

/* The call that ends at ra (a return address found on the stack). */
static const struct vg_writer *call_ending_at(struct vg_attributor *a, uint64_t ra)
{
	struct call_entry *c;
	uint64_t start;
	uint8_t *code;

	for (size_t i = 0; i < a->n_calls; i++)
		if (a->calls[i].ra == ra)
			return a->calls[i].ok ? &a->calls[i].call : NULL;
	if (VG_GROW(a->calls, a->cap_calls, a->n_calls + 1) < 0)
		return NULL;
	c = &a->calls[a->n_calls++];
	memset(c, 0, sizeof(*c));
	c->ra = ra;
	if (ra == 0 || !a->env.function_start || !a->env.function_start(a->env.arg, ra - 1, &start) ||
	    start >= ra || ra - start > MAX_FUNCTION_BYTES)
		return NULL;
	code = read_code(a, start, ra - start);
	c->ok = code && vg_writer_decode_exact(code, ra - start, start, &c->call) == 0 &&
		c->call.addr_rule == VG_ADDR_STACK && c->call.kind == VG_WRITER_CALL;
	free(code);
	return c->ok ? &c->call : NULL;
}

/* ---- continuation ---- */

static struct thread_state *thread_state(struct vg_attributor *a, uint32_t tid)
{
	size_t i;

	if (a->n_threads * 2 >= a->cap_threads) {
		size_t cap = a->cap_threads ? a->cap_threads * 2 : 64;
		struct thread_state *grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return NULL;
		for (size_t j = 0; j < a->cap_threads; j++) {
			if (!a->threads[j].tid)
				continue;
			for (i = mix64(a->threads[j].tid) & (cap - 1); grown[i].tid; i = (i + 1) & (cap - 1))
				;
			grown[i] = a->threads[j];
		}
		free(a->threads);
		a->threads = grown;
		a->cap_threads = cap;
	}
	for (i = mix64(tid) & (a->cap_threads - 1); a->threads[i].tid; i = (i + 1) & (a->cap_threads - 1))
		if (a->threads[i].tid == tid)
			return &a->threads[i];
	a->threads[i].tid = tid;
	a->threads[i].key = UINT64_MAX;
	a->n_threads++;
	return &a->threads[i];
}

static uint64_t regs_hash(const struct vg_regs *r)
{
	uint64_t h = r ? mix64(r->mask) : 0;

	for (int i = 0; r && i < VG_NREGS; i++)
		if (r->mask >> i & 1)
			h = mix64(h ^ r->regs[i] ^ (uint64_t)i << 56);
	return h;
}

/* rcx fell by k > 0 and rdi moved by k elements of one of the sizes
 * allowed (mask of 1, 2, 4, 8): the same string execution, further on. */
static bool string_moved_on(const struct thread_state *prev, uint64_t cx, uint64_t di,
			    unsigned sizes)
{
	uint64_t k, d;

	if (!prev->string_regs || cx >= prev->cx)
		return false;
	k = prev->cx - cx;
	d = di > prev->di ? di - prev->di : prev->di - di;
	for (unsigned s = 1; s <= 8; s <<= 1)
		if ((sizes & s) && k <= UINT64_MAX / s && d == k * s)
			return true;
	return false;
}

static bool user_continues(const struct thread_state *prev, const struct vg_trap_result *r,
			   const struct vg_regs *user)
{
	uint64_t cx, di;

	if (prev->kernel || prev->how != VG_TRAP_ITERATION || prev->key != r->key ||
	    (r->how != VG_TRAP_ITERATION && r->how != VG_TRAP_AFTER) ||
	    !reg(user, PERF_REG_X86_CX, &cx) || !reg(user, PERF_REG_X86_DI, &di))
		return false;
	return string_moved_on(prev, cx, di, r->writer->width ? r->writer->width : 1);
}

/* A kernel copy traps per element with the same user registers: with the
 * kernel's registers, rcx/rdi must have moved by the elements consumed
 * (or the IP moved forward: the last iteration, or the next store of an
 * unrolled copy); without them, the IP stayed or moved forward. */
static bool kernel_continues(const struct thread_state *prev, const struct vg_trap_result *r,
			     const struct vg_trap *t, uint64_t user_hash)
{
	uint64_t cx = 0, di = 0;
	bool intr = reg(t->intr, PERF_REG_X86_CX, &cx) && reg(t->intr, PERF_REG_X86_DI, &di);

	if (!prev->kernel || prev->key != r->key || prev->syscall_nr != r->syscall_nr ||
	    prev->user_hash != user_hash)
		return false;
	if (t->ip > prev->kip && t->ip - prev->kip <= KERNEL_FORWARD_MAX)
		return true;
	if (t->ip != prev->kip)
		return false;
	if (intr && prev->intr)
		return string_moved_on(prev, cx, di, 1 | 2 | 4 | 8);
	return !intr && !prev->intr;
}

static void remember(struct thread_state *st, const struct vg_trap *t,
		     const struct vg_trap_result *r, uint64_t user_hash)
{
	const struct vg_regs *regs = r->how == VG_TRAP_KERNEL ? t->intr : t->user;
	uint64_t cx = 0, di = 0;

	st->kernel = r->how == VG_TRAP_KERNEL;
	st->how = r->how;
	st->key = r->key;
	st->syscall_nr = r->syscall_nr;
	st->kip = t->ip;
	st->user_hash = user_hash;
	st->string_regs = reg(regs, PERF_REG_X86_CX, &cx) && reg(regs, PERF_REG_X86_DI, &di);
	st->cx = cx;
	st->di = di;
	st->intr = st->kernel && st->string_regs;
}

/* ---- user traps ---- */

/* Verify w against the watched bytes with the sampled registers: EXACT
 * when its destination overlaps them; false when it is known to be
 * elsewhere. */
static bool verify(const struct vg_writer *w, const struct vg_trap *t, uint64_t watch_addr,
		   unsigned watch_len, struct vg_trap_result *out)
{
	uint64_t ea;
	const char *why;

	if (!vg_writer_store_address(w, t->user, t->fs_base_known ? &t->fs_base : NULL, &ea, &why)) {
		out->confidence = VG_CONF_HEURISTIC;
		out->why = why;
		return true;
	}
	out->store_addr = ea;
	out->store_addr_known = true;
	if (!vg_writer_overlaps(ea, w->width, watch_addr, watch_len))
		return false;
	out->confidence = VG_CONF_EXACT;
	return true;
}

/* A string instruction's destination when DF is not known: forward. */
static bool string_forward_overlaps(const struct vg_writer *w, const struct vg_regs *regs,
				    uint64_t watch_addr, unsigned watch_len, uint64_t *ea)
{
	uint64_t di, flags;

	if (!reg(regs, PERF_REG_X86_DI, &di) || reg(regs, PERF_REG_X86_FLAGS, &flags))
		return false;
	*ea = di - w->width;
	return vg_writer_overlaps(*ea, w->width, watch_addr, watch_len);
}

static void attribute_user(struct vg_attributor *a, const struct vg_trap *t, uint64_t watch_addr,
			   unsigned watch_len, struct code_entry *e, struct vg_trap_result *out)
{
	uint64_t ea;

	/* 1. A rep string instruction at the trap IP, iterations remaining. */
	if (e->at_ok && e->at.kind == VG_WRITER_STRING && e->at.rep) {
		struct vg_trap_result r = *out;

		r.how = VG_TRAP_ITERATION;
		r.writer = &e->at;
		r.key = e->at.ip;
		if (verify(&e->at, t, watch_addr, watch_len, &r) && r.confidence == VG_CONF_EXACT) {
			*out = r;
			return;
		}
		/* Without the flags: forward, unless the instruction before
		 * is verified to have written the watched bytes. */
		if (string_forward_overlaps(&e->at, t->user, watch_addr, watch_len, &ea)) {
			struct vg_trap_result b = *out;

			if (e->before_how == VG_TRAP_AFTER &&
			    verify(&e->before, t, watch_addr, watch_len, &b) &&
			    b.confidence == VG_CONF_EXACT) {
				b.how = VG_TRAP_AFTER;
				b.writer = &e->before;
				b.key = e->before.ip;
				*out = b;
				return;
			}
			r.confidence = VG_CONF_HEURISTIC;
			r.why = WHY_DF_ASSUMED;
			r.store_addr = ea;
			r.store_addr_known = true;
			*out = r;
			return;
		}
	}
	/* 3. The return address of a call, at a function's first byte. */
	if (e->at_function_start) {
		uint64_t sp, ra;
		const struct vg_writer *call;

		if (reg(t->user, PERF_REG_X86_SP, &sp) && t->stack_size >= 8 &&
		    vg_writer_overlaps(sp, 8, watch_addr, watch_len)) {
			memcpy(&ra, t->stack, 8);
			if ((call = call_ending_at(a, ra)) != NULL) {
				out->how = VG_TRAP_CALL;
				out->writer = call;
				out->key = call->ip;
				out->confidence = VG_CONF_EXACT;
				out->store_addr = sp;
				out->store_addr_known = true;
				return;
			}
		}
		out->why = WHY_NOT_WRITER;
		return;
	}
	/* 2. The instruction that ends at the trap IP. */
	if (e->before_how == VG_TRAP_NONE) {
		out->why = e->at_ok ? WHY_NOT_WRITER : WHY_NO_CODE;
		return;
	}
	if (e->before.kind == VG_WRITER_UNKNOWN) {
		out->why = WHY_NOT_WRITER;
		return;
	}
	out->how = e->before_how;
	out->writer = &e->before;
	out->key = e->before.ip;
	if (!verify(&e->before, t, watch_addr, watch_len, out)) {
		out->how = VG_TRAP_NONE;
		out->writer = NULL;
		out->confidence = VG_CONF_NONE;
		out->why = WHY_ELSEWHERE;
		return;
	}
	if (e->before_how == VG_TRAP_BACKWARDS) {
		out->confidence = VG_CONF_HEURISTIC;
		out->why = WHY_BACKWARDS;
	}
}

/* ---- kernel traps ---- */

static struct syscall_entry *syscall_entry(struct vg_attributor *a, uint64_t user_ip)
{
	struct syscall_entry *e;
	uint8_t before[2];

	for (size_t i = a->n_sys; i-- > 0;)
		if (a->sys[i]->user_ip == user_ip)
			return a->sys[i];
	if (VG_GROW(a->sys, a->cap_sys, a->n_sys + 1) < 0 || !(e = calloc(1, sizeof(*e))))
		return NULL;
	a->sys[a->n_sys++] = e;
	e->user_ip = user_ip;
	e->writer.kind = VG_WRITER_KERNEL;
	e->writer.value_reg = e->writer.mem_base = e->writer.mem_index = -1;
	e->writer.why = "written by the kernel on the process's behalf";
	if (user_ip >= 2 && a->env.read_code(a->env.arg, user_ip - 2, before, 2) == 0 &&
	    vg_writer_after_syscall(before)) {
		e->after_syscall = true;
		e->writer.ip = user_ip - 2;
		e->writer.length = 2;
		e->writer.confidence = VG_CONF_EXACT;
		strcpy(e->writer.text, "syscall");
		strcpy(e->writer.mnemonic, "syscall");
	}
	return e;
}

static void attribute_kernel(struct vg_attributor *a, const struct vg_trap *t,
			     struct vg_trap_result *out)
{
	struct syscall_entry *e;

	out->how = VG_TRAP_KERNEL;
	for (size_t i = 0; i < t->n_callchain; i++) {
		uint64_t ip = t->callchain[i];
		const char *name;

		if (ip == PERF_CONTEXT_USER)
			break;
		if (ip >= (uint64_t)PERF_CONTEXT_MAX || !a->env.kernel_symbol ||
		    !(name = a->env.kernel_symbol(a->env.arg, ip)))
			continue;
		if (!out->kernel_function)
			out->kernel_function = name;
		if (vg_syscall_from_kernel_symbol(name, out->syscall, sizeof(out->syscall))) {
			out->syscall_nr = vg_syscall_number(out->syscall);
			break;
		}
	}
	if (!out->kernel_function && a->env.kernel_symbol)
		out->kernel_function = a->env.kernel_symbol(a->env.arg, t->ip);
	if (!reg(t->user, PERF_REG_X86_IP, &out->user_ip)) {
		out->confidence = VG_CONF_HEURISTIC;
		out->why = WHY_NO_USER_IP;
		return;
	}
	out->key = out->user_ip;
	e = syscall_entry(a, out->user_ip);
	out->writer = e ? &e->writer : NULL;
	if (!e || !e->after_syscall) {
		out->confidence = VG_CONF_HEURISTIC;
		out->why = WHY_NO_SYSCALL;
	} else if (!out->syscall[0]) {
		out->confidence = VG_CONF_HEURISTIC;
		out->why = WHY_NO_SYSCALL_NAME;
	} else {
		out->confidence = VG_CONF_EXACT;
	}
}

int vg_attribute_trap(struct vg_attributor *a, const struct vg_trap *t,
		      uint64_t watch_addr, unsigned watch_len, struct vg_trap_result *out)
{
	struct thread_state *st;
	uint64_t user_hash = 0;

	memset(out, 0, sizeof(*out));
	out->syscall_nr = -1;
	out->key = t->ip;
	if (t->ip >= KERNEL_START) {
		attribute_kernel(a, t, out);
		user_hash = regs_hash(t->user);
	} else {
		struct code_entry *e = code_entry(a, t, watch_addr, watch_len);

		if (!e)
			return -ENOMEM;
		attribute_user(a, t, watch_addr, watch_len, e, out);
	}
	if (out->how == VG_TRAP_NONE)
		out->confidence = VG_CONF_NONE;
	st = thread_state(a, t->tid);
	if (!st)
		return -ENOMEM;
	if (out->how == VG_TRAP_KERNEL)
		out->continues = kernel_continues(st, out, t, user_hash);
	else if (out->writer)
		out->continues = user_continues(st, out, t->user);
	remember(st, t, out, user_hash);
	return 0;
}
