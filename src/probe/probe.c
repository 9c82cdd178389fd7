/* probe.c - a vigil probe session: its locations and sites, what each
 * can report, freeing, and the results.  Arming, the run and disarming
 * are in arm.c, exec.c, hits.c and run.c (probe_priv.h); see probe.h for
 * the order of arming and disarming and why. */
#include "probe/probe_priv.h"
#include "probe/filter.h"
#include "elf/usdt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --latency needs the function's entry: a return probe elsewhere would
 * hijack a return address that is not the function's own. */
static void decide_latency(struct vg_probe_location_result *l)
{
	/* Its code may sit at the start of the enclosing function, but the
	 * line's time is not that function's. */
	if (l->loc.is_file_line) {
		l->latency_why = "a FILE:LINE location is a line, not a function: there is no return to time";
		return;
	}
	for (size_t i = 0; i < l->loc.n_sites; i++) {
		const struct vg_probe_site *st = &l->loc.sites[i];

		if (!st->function) {
			l->latency_why = "no function symbol covers the address, so there is no return to measure";
			return;
		}
		if (st->function_offset != 0) {
			l->latency_why = "not at a function's first instruction: a return probe needs the entry";
			return;
		}
	}
}

/* --retval: where a return probe can go (decide_latency said so), rax at
 * each paired return, typed from the function's DWARF. */
static int decide_retval(struct vg_probe_session *s, struct vg_probe_location_result *l,
			 struct vg_error *err)
{
	int r;

	/* A return value exists only for a function: asking for it
	 * elsewhere is a mistake in the command, not a fact to report. */
	if (l->latency_why)
		return vg_error_set(err, -EINVAL, "--retval: '%s': %s", l->loc.input, l->latency_why);
	r = vg_sym_return_type(s->sym, l->loc.sites[0].function_addr, &l->retval.param, err);
	if (r < 0)
		return r;
	l->retval.values = vg_values_new(l->retval.param.kind == VG_PARAM_SIGNED);
	if (!l->retval.values)
		return vg_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* --filter: the terms, with parameter names from the function's DWARF;
 * only at a function's entry, where the arguments are in registers. */
static int decide_filter(struct vg_probe_session *s, struct vg_probe_location_result *l,
			 struct vg_error *err)
{
	struct vg_sym_param params[VG_PROBE_MAX_ARGS];
	size_t n = 0;

	memset(params, 0, sizeof(params));
	for (size_t i = 0; i < l->loc.n_sites; i++) {
		const struct vg_probe_site *st = &l->loc.sites[i];

		if (l->loc.is_file_line || !st->function || st->function_offset != 0)
			return vg_error_set(err, -EINVAL, "--filter: '%s' is not a function's entry: "
					    "its registers are not the arguments", l->loc.input);
	}
	{
		int r = vg_sym_params(s->sym, l->loc.sites[0].function_addr, params, VG_PROBE_MAX_ARGS,
				      &n, err);

		if (r < 0)
			return r;
	}
	return vg_probe_filter_parse(s->o.filter, params, n, l->filter, &l->n_filter, err);
}

/* x86-64 registers in elf/usdt.h's order as pt_regs words. */
static const int usdt_pt_regs[16] = {
	VG_PR_AX, VG_PR_BX, VG_PR_CX, VG_PR_DX, VG_PR_SI, VG_PR_DI, VG_PR_BP, VG_PR_SP,
	VG_PR_R8, VG_PR_R9, VG_PR_R10, VG_PR_R11, VG_PR_R12, VG_PR_R13, VG_PR_R14, VG_PR_R15,
};

/* usdt: the arguments as the note's spec places them (first site's spec
 * names and sizes them; each site's own spec says its registers). */
static int decide_usdt_args(struct vg_probe_session *s, struct vg_probe_location_result *l,
			    struct vg_error *err)
{
	struct vg_usdt_arg a[VG_PROBE_MAX_ARGS];
	size_t n = 0;

	if (vg_usdt_args_parse(l->loc.sites[0].usdt_args, a, s->o.n_args, &n) < 0 && !n)
		return vg_error_set(err, -EINVAL, "--args: '%s': its argument spec '%s' is malformed",
				    l->loc.input, l->loc.sites[0].usdt_args);
	if (n < s->o.n_args)
		return vg_error_set(err, -EINVAL, "--args %u: '%s' has %zu argument%s (spec '%s')",
				    s->o.n_args, l->loc.input, n, n == 1 ? "" : "s", l->loc.sites[0].usdt_args);
	for (size_t i = 0; i < n; i++) {
		struct vg_probe_arg *pa = &l->args[i];

		if (a[i].reg < 0)
			return vg_error_set(err, -EINVAL, "--args: '%s': argument %zu is neither in a "
					    "register nor at DISP(%%reg) in memory (spec '%s'): not read",
					    l->loc.input, i, l->loc.sites[0].usdt_args);
		memset(&pa->param, 0, sizeof(pa->param));
		pa->param.kind = a[i].is_signed ? VG_PARAM_SIGNED : VG_PARAM_UNSIGNED;
		pa->param.size = a[i].size;
		pa->param.reg = (unsigned)i;
		snprintf(pa->param.name, sizeof(pa->param.name), "arg%zu", i);
		snprintf(pa->usdt_reg, sizeof(pa->usdt_reg), "%s", a[i].reg_name);
		snprintf(pa->usdt_mem, sizeof(pa->usdt_mem), "%s", a[i].mem ? a[i].operand : "");
		pa->values = vg_values_new(a[i].is_signed);
		if (!pa->values)
			return vg_error_set(err, -ENOMEM, "out of memory");
		l->n_args++;
	}
	return 0;
}

/* Each usdt site's registers for its arguments, from its own spec. */
static int usdt_site_regs(struct site_state *ss, const struct vg_probe_location_result *l,
			  struct vg_error *err)
{
	struct vg_usdt_arg a[VG_PROBE_MAX_ARGS];
	size_t n = 0;

	for (size_t i = 0; i < VG_PROBE_MAX_ARGS; i++) {
		ss->usdt_pt[i] = -1;
		ss->usdt_mem[i] = (struct vg_bpf_mem_arg){ 0 };
	}
	if (!l->n_args)
		return 0;
	vg_usdt_args_parse(ss->site->usdt_args, a, l->n_args, &n);
	for (size_t i = 0; i < l->n_args; i++) {
		if (i >= n || a[i].reg < 0 || a[i].size != l->args[i].param.size)
			return vg_error_set(err, -EINVAL, "--args: '%s' at 0x%" PRIx64 ": argument %zu is "
					    "not in a register or memory of the same size there (spec '%s')",
					    l->loc.input, ss->site->runtime_addr, i, ss->site->usdt_args);
		ss->usdt_pt[i] = usdt_pt_regs[a[i].reg];
		if (a[i].mem)
			ss->usdt_mem[i] = (struct vg_bpf_mem_arg){ a[i].size, (uint32_t)ss->usdt_pt[i],
								    a[i].disp };
	}
	return 0;
}

static int decide_args(struct vg_probe_session *s, struct vg_probe_location_result *l,
		       struct vg_error *err)
{
	const struct vg_probe_site *st = &l->loc.sites[0];
	struct vg_sym_param params[VG_PROBE_MAX_ARGS];
	size_t n = 0;

	memset(params, 0, sizeof(params));
	if (st->function && st->function_offset == 0 && l->loc.n_sites == 1) {
		int r = vg_sym_params(s->sym, st->function_addr, params, s->o.n_args, &n, err);

		if (r < 0)
			return r;
	} else {
		l->args_why = "not at a function's first instruction: the registers are shown, they are not arguments";
	}
	/* Without DWARF, or not at an entry, or past the parameters: the
	 * raw registers that follow, in hex. */
	for (; n < s->o.n_args; n++) {
		unsigned reg = n ? params[n - 1].reg + 1 : 0;

		if (reg >= VG_PROBE_MAX_ARGS)
			break;
		memset(&params[n], 0, sizeof(params[n]));
		params[n].kind = VG_PARAM_UNKNOWN;
		params[n].size = 8;
		params[n].reg = reg;
	}
	for (size_t i = 0; i < n; i++) {
		l->args[i].param = params[i];
		l->args[i].values = vg_values_new(params[i].kind == VG_PARAM_SIGNED);
		if (!l->args[i].values)
			return vg_error_set(err, -ENOMEM, "out of memory");
		l->n_args++;
	}
	return 0;
}

int vg_probe_new(struct vg_target *t, struct vg_symbolizer *sym, const char *const *specs,
		 size_t n_specs, const struct vg_probe_opts *o, struct vg_probe_session **out,
		 struct vg_error *err)
{
	struct vg_probe_session *s;
	int r = 0;

	*out = NULL;
	if (n_specs == 0 || n_specs > VG_PROBE_MAX_LOCATIONS)
		return vg_error_set(err, -EINVAL, "expected 1 to %d locations, got %zu",
				    VG_PROBE_MAX_LOCATIONS, n_specs);
	if (o->n_args > VG_PROBE_MAX_ARGS)
		return vg_error_set(err, -EINVAL, "--args: at most %d integer arguments are in registers",
				    VG_PROBE_MAX_ARGS);
	s = calloc(1, sizeof(*s));
	if (!s)
		return vg_error_set(err, -ENOMEM, "out of memory");
	s->t = t;
	s->sym = sym;
	s->o = *o;
	if (!s->o.stack_bytes)
		s->o.stack_bytes = 8192;
	/* A hit with a stack copy is ~8 KiB: 1024 pages (4 MiB) per CPU hold
	 * ~500 of them between two drains; 256 pages lost a quarter of the
	 * records of a tight loop. */
	if (!s->o.ring_pages)
		s->o.ring_pages = s->o.stacks ? 1024 : 256;
	s->probe_task = t->mm_pid ? t->mm_pid : t->pid;
	s->exec_gate_fd = -1;
	s->locs = calloc(n_specs, sizeof(*s->locs));
	if (!s->locs) {
		free(s);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	s->n_locs = n_specs;
	for (size_t i = 0; i < n_specs && r >= 0; i++) {
		struct vg_probe_location_result *l = &s->locs[i];

		r = vg_probe_resolve(specs[i], sym, &l->loc, err);
		if (r < 0)
			break;
		l->first_site = s->n_sites;
		s->n_sites += l->loc.n_sites;
		if (s->n_sites > VG_PROBE_MAX_SITES) {
			r = vg_error_set(err, -E2BIG, "%zu probe sites (at most %d): '%s' expands to %zu",
					 s->n_sites, VG_PROBE_MAX_SITES, specs[i], l->loc.n_sites);
			break;
		}
		/* --retval rides on the return probe --latency uses. */
		if (o->latency || o->retval)
			decide_latency(l);
		if (o->retval)
			r = decide_retval(s, l, err);
		if (r >= 0 && o->filter)
			r = decide_filter(s, l, err);
		if (r < 0)
			break;
		if (o->n_args && l->loc.is_usdt)
			r = decide_usdt_args(s, l, err);
		else if (o->n_args)
			r = decide_args(s, l, err);
	}
	if (r >= 0) {
		s->sites = calloc(s->n_sites, sizeof(*s->sites));
		if (!s->sites)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0, k = 0; r >= 0 && i < s->n_locs; i++) {
		for (size_t j = 0; j < s->locs[i].loc.n_sites; j++, k++) {
			s->sites[k].site = &s->locs[i].loc.sites[j];
			s->sites[k].location = i;
			s->sites[k].entry_fd = -1;
			s->sites[k].return_fd = -1;
			s->sites[k].entry_prog = -1;
			s->sites[k].return_prog = -1;
			s->sites[k].result.has_return = (o->latency || o->retval) && !s->locs[i].latency_why;
			if (r >= 0 && s->locs[i].loc.is_usdt)
				r = usdt_site_regs(&s->sites[k], &s->locs[i], err);
		}
	}
	/* One per-thread stack pairs every location: the same entry twice
	 * (foo and 0xADDR-of-foo) would pair one location's returns with
	 * the other's entries.  Without --latency the same instruction in
	 * two locations (f f, or f and libc.so.6:f) would count every call
	 * once per location, and the total more than once: refused too. */
	for (size_t i = 0; r >= 0 && i < s->n_sites; i++)
		for (size_t j = i + 1; r >= 0 && j < s->n_sites; j++) {
			const struct site_state *a = &s->sites[i], *b = &s->sites[j];

			if (a->site->runtime_addr != b->site->runtime_addr)
				continue;
			if (a->result.has_return && b->result.has_return)
				r = vg_error_set(err, -EINVAL,
						 "'%s' and '%s' are the same function entry (0x%" PRIx64 "); give it once",
						 s->locs[a->location].loc.input, s->locs[b->location].loc.input,
						 a->site->runtime_addr);
			else if (a->location != b->location)
				r = vg_error_set(err, -EINVAL,
						 "'%s' and '%s' probe the same instruction (0x%" PRIx64 "): each call "
						 "would be counted once per location; give it once",
						 s->locs[a->location].loc.input, s->locs[b->location].loc.input,
						 a->site->runtime_addr);
		}
	if (r >= 0 && (o->latency || o->retval)) {
		s->pairing = vg_pairing_new(s->n_locs);
		if (!s->pairing)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (r >= 0 && o->stacks) {
		s->stacks = calloc(s->n_locs, sizeof(*s->stacks));
		if (!s->stacks)
			r = vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (r < 0) {
		vg_probe_free(s);
		return r;
	}
	*out = s;
	return 0;
}

struct vg_probe_session *vg_probe_free(struct vg_probe_session *s)
{
	if (!s)
		return NULL;
	vg_probe_disarm(s);
	for (size_t i = 0; i < s->n_locs; i++) {
		struct vg_probe_location_result *l = &s->locs[i];

		for (size_t j = 0; j < l->n_args; j++)
			vg_values_free(l->args[j].values);
		vg_values_free(l->retval.values);
		/* The stacks array borrows the table's entries. */
		free(l->stacks);
		if (s->stacks)
			probe_stack_table_clear(&s->stacks[i]);
		vg_probe_location_clear(&l->loc);
	}
	free(s->locs);
	free(s->sites);
	free(s->stacks);
	free(s->threads);
	vg_pairing_free(s->pairing);
	vg_unwinder_free(s->unwinder);
	vg_bpf_counters_free(s->counters);
	vg_bpf_output_free(s->output);
	free(s);
	return NULL;
}

/* ---- accessors ---- */

size_t vg_probe_n_locations(const struct vg_probe_session *s) { return s->n_locs; }
size_t vg_probe_n_sites(const struct vg_probe_session *s) { return s->n_sites; }

struct vg_probe_location_result *vg_probe_location(struct vg_probe_session *s, size_t i)
{
	return i < s->n_locs ? &s->locs[i] : NULL;
}

const struct vg_probe_site_result *vg_probe_site(const struct vg_probe_session *s, size_t i)
{
	return i < s->n_sites ? &s->sites[i].result : NULL;
}

struct vg_latency *vg_probe_latency(struct vg_probe_session *s, size_t loc)
{
	return s->o.latency && s->pairing && loc < s->n_locs && !s->locs[loc].latency_why
		? vg_pairing_latency(s->pairing, (uint32_t)loc) : NULL;
}

const struct vg_bpf_thread_count *vg_probe_thread_counts(const struct vg_probe_session *s,
							 size_t *n, uint64_t *dropped)
{
	*n = s->n_threads;
	if (dropped)
		*dropped = s->threads_dropped;
	return s->threads;
}

const struct vg_probe_stats *vg_probe_stats(const struct vg_probe_session *s) { return &s->stats; }
enum vg_stop vg_probe_stop_reason(const struct vg_probe_session *s) { return s->stop; }

uint64_t vg_probe_armed_ns(const struct vg_probe_session *s) { return s->armed_ns; }

uint64_t vg_probe_duration_ns(const struct vg_probe_session *s)
{
	return s->armed_ns && s->stopped_ns > s->armed_ns ? s->stopped_ns - s->armed_ns : 0;
}

const struct vg_probe_opts *vg_probe_opts(const struct vg_probe_session *s) { return &s->o; }
