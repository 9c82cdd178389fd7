/* hits.c - what each hit a probe recorded becomes: an entry or return
 * for the pairing, argument values, and with --stacks an unwound stack
 * counted in its location's table of distinct stacks. */
#include "probe/probe_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STACK_MAX_FRAMES 128
#define STACKS_MAX_DISTINCT 65536

static uint64_t hash_ips(const uint64_t *ips, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int stack_table_grow(struct stack_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct stack_entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].hash)
			continue;
		for (j = t->slots[i].hash & (cap - 1); slots[j].hash; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static void stack_table_add(struct stack_table *t, const uint64_t *ips, const bool *exact, size_t n)
{
	uint64_t h = hash_ips(ips, n);
	size_t j;

	if ((t->used + 1) * 2 > t->cap && stack_table_grow(t) < 0) {
		t->dropped++;
		return;
	}
	for (j = h & (t->cap - 1); t->slots[j].hash; j = (j + 1) & (t->cap - 1)) {
		struct vg_probe_stack *st = &t->slots[j].st;

		if (t->slots[j].hash == h && st->n == n && memcmp(st->ips, ips, n * sizeof(*ips)) == 0) {
			st->count++;
			return;
		}
	}
	if (t->used >= STACKS_MAX_DISTINCT) {
		t->dropped++;
		return;
	}
	t->slots[j].st.ips = malloc(n * sizeof(*ips));
	t->slots[j].st.exact = malloc(n * sizeof(*exact));
	if (!t->slots[j].st.ips || !t->slots[j].st.exact) {
		free(t->slots[j].st.ips);
		free(t->slots[j].st.exact);
		t->slots[j].st.ips = NULL;
		t->slots[j].st.exact = NULL;
		t->dropped++;
		return;
	}
	memcpy(t->slots[j].st.ips, ips, n * sizeof(*ips));
	memcpy(t->slots[j].st.exact, exact, n * sizeof(*exact));
	t->slots[j].st.n = n;
	t->slots[j].st.count = 1;
	t->slots[j].hash = h;
	t->used++;
}

/* The record's pt_regs as perf register indices (what the unwinder takes). */
static void record_regs(const struct vg_probe_record *r, struct vg_regs *regs)
{
	static const struct { uint8_t perf, pt; } map[] = {
		{ 0, VG_PR_AX }, { 1, VG_PR_BX }, { 2, VG_PR_CX }, { 3, VG_PR_DX },
		{ 4, VG_PR_SI }, { 5, VG_PR_DI }, { 6, VG_PR_BP }, { 7, VG_PR_SP },
		{ 8, VG_PR_IP }, { 9, VG_PR_FLAGS }, { 10, VG_PR_CS }, { 11, VG_PR_SS },
		{ 16, VG_PR_R8 }, { 17, VG_PR_R9 }, { 18, VG_PR_R10 }, { 19, VG_PR_R11 },
		{ 20, VG_PR_R12 }, { 21, VG_PR_R13 }, { 22, VG_PR_R14 }, { 23, VG_PR_R15 },
	};

	memset(regs, 0, sizeof(*regs));
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		regs->regs[map[i].perf] = r->regs[map[i].pt];
		regs->mask |= 1ull << map[i].perf;
	}
}

/* rdi rsi rdx rcx r8 r9 */
static const enum vg_probe_reg arg_regs[VG_PROBE_MAX_ARGS] = {
	VG_PR_DI, VG_PR_SI, VG_PR_DX, VG_PR_CX, VG_PR_R8, VG_PR_R9,
};

/* The register's value as the parameter's type holds it: only its low
 * size bytes are defined (the ABI leaves the rest unspecified). */
static uint64_t arg_value(const struct vg_sym_param *p, uint64_t raw)
{
	unsigned bits = p->size && p->size < 8 ? p->size * 8u : 64u;
	uint64_t v = bits < 64 ? raw & ((1ull << bits) - 1) : raw;

	if (p->kind == VG_PARAM_SIGNED && bits < 64 && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

static void on_entry(struct vg_probe_session *s, const struct vg_probe_record *r, size_t len,
		     struct vg_probe_location_result *l, size_t loc)
{
	uint32_t tid = (uint32_t)r->pid_tgid;

	if (r->flags & VG_PROBE_REC_DROPPED) {
		/* Dropped by the filter: only there for its return. */
		if (s->pairing && s->sites[r->site].result.has_return)
			vg_pairing_entry_dropped(s->pairing, tid, (uint32_t)loc, r->time_ns);
		return;
	}
	if (s->pairing && s->sites[r->site].result.has_return)
		vg_pairing_entry(s->pairing, tid, (uint32_t)loc, r->time_ns);
	for (size_t i = 0; i < l->n_args; i++) {
		/* usdt: where this site's spec put it (resolved at the start). */
		int pt = l->loc.is_usdt ? s->sites[r->site].usdt_pt[i] : (int)arg_regs[l->args[i].param.reg];

		if (l->loc.is_usdt && s->sites[r->site].usdt_mem[i].size && i < VG_BPF_MAX_MEM_ARGS)
			vg_values_add(l->args[i].values, arg_value(&l->args[i].param, r->mem[i]));
		else if (pt >= 0 && pt < VG_PR_COUNT)
			vg_values_add(l->args[i].values, arg_value(&l->args[i].param, r->regs[pt]));
	}
	if (s->stacks && s->unwinder) {
		struct vg_regs regs;
		uint64_t ips[STACK_MAX_FRAMES];
		bool exact[STACK_MAX_FRAMES];
		size_t n = 0, have = len - offsetof(struct vg_probe_record, stack);
		enum vg_unwind_stop why = VG_UNWIND_OUTERMOST;

		if (have > r->stack_len)
			have = r->stack_len;
		record_regs(r, &regs);
		vg_unwind_dwarf(s->unwinder, &regs, r->stack, have, ips, exact, STACK_MAX_FRAMES, &n, &why);
		l->stack_records++;
		if ((unsigned)why < 8)
			l->unwind_stop[why]++;
		if (n)
			stack_table_add(&s->stacks[loc], ips, exact, n);
	}
}

static void on_record(const struct vg_probe_record *r, size_t len, void *arg)
{
	struct vg_probe_session *s = arg;
	size_t loc;

	s->stats.records++;
	/* Only the target's mm reaches the programs (the kernel's uprobe
	 * filter), so no pid check: the tgid is in the initial PID namespace,
	 * which need not be vigil's. */
	if (r->site >= s->n_sites) {
		s->stats.records_malformed++;
		return;
	}
	loc = s->sites[r->site].location;
	if (r->kind == VG_PROBE_REC_ENTRY) {
		on_entry(s, r, len, &s->locs[loc], loc);
	} else if (r->kind == VG_PROBE_REC_RETURN && s->pairing) {
		struct vg_probe_location_result *l = &s->locs[loc];

		/* Only a paired return is of a call counted since arming: its
		 * value joins the distribution, so it has one value per call. */
		if (vg_pairing_return(s->pairing, (uint32_t)r->pid_tgid, (uint32_t)loc, r->time_ns, NULL) &&
		    l->retval.values)
			vg_values_add(l->retval.values, arg_value(&l->retval.param, r->regs[VG_PR_AX]));
	} else {
		s->stats.records_malformed++;
	}
}

void probe_drain(struct vg_probe_session *s, uint64_t until)
{
	if (s->output)
		vg_bpf_output_drain(s->output, until, on_record, s);
}

static int cmp_stack_count(const void *a, const void *b)
{
	const struct vg_probe_stack *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->n < y->n ? -1 : x->n > y->n;
}

void probe_collect_stacks(struct vg_probe_session *s)
{
	for (size_t i = 0; s->stacks && i < s->n_locs; i++) {
		struct stack_table *t = &s->stacks[i];
		struct vg_probe_location_result *l = &s->locs[i];

		l->stacks_dropped = t->dropped;
		l->stacks = calloc(t->used ? t->used : 1, sizeof(*l->stacks));
		if (!l->stacks) {
			l->stacks_dropped = l->stack_records;
			continue;
		}
		for (size_t j = 0; j < t->cap; j++)
			if (t->slots[j].hash)
				l->stacks[l->n_stacks++] = t->slots[j].st;
		qsort(l->stacks, l->n_stacks, sizeof(*l->stacks), cmp_stack_count);
	}
}

void probe_stack_table_clear(struct stack_table *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].st.ips);
		free(t->slots[i].st.exact);
	}
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
