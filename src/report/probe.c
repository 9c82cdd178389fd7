/* probe.c - `vigil probe` as JSON and as a table: calls per location and
 * site, why the counts are or are not exact, and the latency, argument
 * and caller figures asked for. */
#include "report/probe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/json.h"
#include "report/text.h"

/* ---- shared facts ---- */

static const char *param_kind_name(enum vg_param_kind k)
{
	switch (k) {
	case VG_PARAM_SIGNED: return "signed";
	case VG_PARAM_UNSIGNED: return "unsigned";
	case VG_PARAM_POINTER: return "pointer";
	case VG_PARAM_UNKNOWN: break;
	}
	return "unknown";
}

static void value_text(const struct vg_sym_param *p, uint64_t v, char *buf, size_t len)
{
	if (p->kind == VG_PARAM_SIGNED)
		snprintf(buf, len, "%" PRId64, (int64_t)v);
	else if (p->kind == VG_PARAM_UNSIGNED)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "0x%" PRIx64, v);
}

/* Bucket k of a latency log2 histogram: [2^k, 2^(k+1)) ns, bucket 0
 * from 0. */
static void latency_bucket(unsigned k, uint64_t *lo, uint64_t *hi)
{
	*lo = k ? 1ull << k : 0;
	*hi = k >= 63 ? UINT64_MAX : (2ull << k) - 1;
}

/* One non-empty bucket of an argument's log2 histogram, its bounds in the
 * argument's notation (decimal, or hex for pointers and unknowns). */
struct value_bucket {
	char lo[24], hi[24];
	uint64_t count;
};
#define MAX_VALUE_BUCKETS (2 * (VG_LOG2_BUCKETS + 1))

/* Bucket k >= 1 holds magnitudes [2^(k-1), 2^k), bucket 0 holds 0;
 * negatives (signed kinds) come first, most negative first, as [-hi, -lo]
 * (the last one holds only INT64_MIN, whose -hi is no int64).  Returns
 * how many were filled. */
static size_t value_buckets(const struct vg_sym_param *p, const struct vg_values_summary *sum,
			    struct value_bucket *out)
{
	bool hex = p->kind == VG_PARAM_POINTER || p->kind == VG_PARAM_UNKNOWN;
	size_t n = 0;

	for (unsigned k = VG_LOG2_BUCKETS + 1; sum->is_signed && k-- > 0;) {
		uint64_t lo = k ? 1ull << (k - 1) : 0, hi = k >= 64 ? lo : (1ull << k) - 1;

		if (!sum->neg_log2[k])
			continue;
		snprintf(out[n].lo, sizeof(out[n].lo), "-%" PRIu64, k ? hi : 0);
		snprintf(out[n].hi, sizeof(out[n].hi), "-%" PRIu64, lo);
		out[n++].count = sum->neg_log2[k];
	}
	for (unsigned k = 0; k <= VG_LOG2_BUCKETS; k++) {
		uint64_t lo = k ? 1ull << (k - 1) : 0, hi = !k ? 0 : k >= 64 ? UINT64_MAX : (1ull << k) - 1;

		if (!sum->log2[k])
			continue;
		snprintf(out[n].lo, sizeof(out[n].lo), hex ? "0x%" PRIx64 : "%" PRIu64, lo);
		snprintf(out[n].hi, sizeof(out[n].hi), hex ? "0x%" PRIx64 : "%" PRIu64, hi);
		out[n++].count = sum->log2[k];
	}
	return n;
}

/* Why the calls counts may be short of the truth (counts_short), one
 * sentence each; the sentences may quote the kernel's or the target's
 * words, so they go through vg_json_text. */
/* An IFUNC location: the name given, its resolver, the implementation
 * probed in its place; null otherwise. */
static cJSON *ifunc_json(const struct vg_probe_location *l)
{
	cJSON *j;

	if (!l->ifunc)
		return cJSON_CreateNull();
	j = cJSON_CreateObject();
	vg_json_add_text(j, "symbol", l->ifunc);
	vg_json_add_addr(j, "resolver", l->ifunc_resolver);
	if (l->sites[0].function)
		vg_json_add_text(j, "implementation", l->sites[0].function);
	else
		cJSON_AddNullToObject(j, "implementation");
	vg_json_add_addr(j, "implementation_address", l->sites[0].runtime_addr);
	return j;
}

/* Why the counts are not exact: arr gets the reasons calls are missing
 * (lower_bound_reasons), over the reasons they may include calls they
 * should not (count_notes).  The counts are a lower bound only with the
 * former and none of the latter. */
static void count_reasons(struct vg_probe_session *s, cJSON *arr, cJSON *over, bool *counts_short,
			  bool *counts_over)
{
	const struct vg_probe_stats *st = vg_probe_stats(s);
	double gate_us = st->exec_gate_ns > st->exec_ns ? (double)(st->exec_gate_ns - st->exec_ns) / 1e3 : 0.0;
	char buf[640];

	*counts_short = *counts_over = false;
	if (st->rearms) {
		snprintf(buf, sizeof(buf), "the thread the probes were on exited %u time%s; they were re-armed on "
			 "thread %d, and calls in the moments between are missing (and calls then running show as in_flight)",
			 st->rearms, st->rearms == 1 ? "" : "s", (int)st->rearmed_on);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
		*counts_short = true;
	}
	if (st->rearm_failures && vg_probe_stop_reason(s) != VG_STOP_TASK_LOST) {
		snprintf(buf, sizeof(buf), "the thread the probes were on exited while other threads of the process "
			 "were still listed and none could take the probes (%s): calls those threads made before "
			 "they ended are missing", st->rearm_why[0] ? st->rearm_why : "no reason given");
		cJSON_AddItemToArray(arr, vg_json_text(buf));
		*counts_short = true;
	}
	if (vg_probe_stop_reason(s) == VG_STOP_TASK_LOST) {
		snprintf(buf, sizeof(buf), "the thread the probes were on exited and no other thread could take them%s%s: "
			 "the probe stopped early", st->rearm_why[0] ? ": " : "", st->rearm_why);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
		*counts_short = true;
	}
	if (st->leader_exited) {
		cJSON_AddItemToArray(arr, vg_json_text(
			"the thread the probes were opened on exited while its process went on: "
			"the kernel stops a probe whose task is gone, so calls after that are missing"));
		*counts_short = true;
	}
	if (st->exec_ns && st->exec_gate_kernel) {
		snprintf(buf, sizeof(buf), "the process called exec() (new program '%s'): the probe's gate "
			 "closed in the kernel at the exec itself, so the counts are exactly the old "
			 "program's calls; the new program's are not counted", st->exec_comm);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
		*counts_short = true;
	} else if (st->exec_ns) {
		snprintf(buf, sizeof(buf), "the process called exec() (new program '%s') and vigil closed the "
			 "probe's gate %.0f us later, when it read the exec (%s): the counts may include "
			 "calls of the new program in those %.0f us, and miss its later ones, so they are "
			 "neither exact nor a lower bound", st->exec_comm, gate_us,
			 st->exec_gate_why[0] ? st->exec_gate_why : "no exec gate", gate_us);
		cJSON_AddItemToArray(over, vg_json_text(buf));
		*counts_over = true;
	}
	if (st->children) {
		snprintf(buf, sizeof(buf), "the process created %" PRIu64 " child process%s during the probe: "
			 "they run the same code and their calls are not counted",
			 st->children, st->children == 1 ? "" : "es");
		cJSON_AddItemToArray(arr, vg_json_text(buf));
		*counts_short = true;
	}
	if (!st->tree_watched) {
		cJSON_AddItemToArray(arr, vg_json_text(
			"child processes could not be watched (the perf event was refused): "
			"calls of children would be missing unseen"));
		*counts_short = true;
	}
	if (!st->tree_watched && !st->exec_gate_armed) {
		snprintf(buf, sizeof(buf), "exec() could not be watched (the perf event was refused, and the "
			 "exec gate: %s): after an exec, calls of the new program would be counted as "
			 "this program's", st->exec_gate_why);
		cJSON_AddItemToArray(over, vg_json_text(buf));
		*counts_over = true;
	}
}

static cJSON *tree_json(struct vg_probe_session *s)
{
	const struct vg_probe_stats *st = vg_probe_stats(s);
	struct vg_json_tree t = {
		.watched = st->tree_watched, .start_ns = vg_probe_armed_ns(s),
		.exec_ns = st->exec_ns, .stop_ns = st->exec_gate_ns, .exec_comm = st->exec_comm,
		.exec_stop = st->exec_gate_kernel ? VG_JSON_EXEC_STOP_KERNEL : VG_JSON_EXEC_STOP_VIGIL,
		.children = st->children, .pids = st->child_pids, .n_pids = st->n_child_pids,
	};

	return vg_json_process_tree(&t);
}

/* Why latency, argument and stack figures cover fewer calls than counted
 * (the counts themselves do not depend on records). */
static void record_notes(struct vg_probe_session *s, cJSON *arr)
{
	const struct vg_probe_stats *st = vg_probe_stats(s);
	char buf[256];

	if (st->records_lost) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " records lost (ring full): latency, argument and stack "
			 "figures cover fewer calls than counted; the counts are exact", st->records_lost);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
	}
	if (st->records_malformed) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " records could not be decoded or queued", st->records_malformed);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
	}
}

/* ---- JSON ---- */

static cJSON *latency_json(struct vg_probe_session *s, size_t i)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	struct vg_latency *lat = vg_probe_latency(s, i);
	struct vg_latency_summary sum;
	cJSON *j, *h;

	if (!lat)
		return cJSON_CreateNull();
	vg_latency_summarize(lat, &sum);
	j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "count", (double)sum.count);
	cJSON_AddNumberToObject(j, "in_flight", (double)l->pairing.in_flight);
	cJSON_AddNumberToObject(j, "in_flight_oldest_ns", (double)l->pairing.in_flight_oldest_ns);
	cJSON_AddNumberToObject(j, "min_ns", (double)sum.min_ns);
	cJSON_AddNumberToObject(j, "p50_ns", (double)sum.p50_ns);
	cJSON_AddNumberToObject(j, "p90_ns", (double)sum.p90_ns);
	cJSON_AddNumberToObject(j, "p99_ns", (double)sum.p99_ns);
	cJSON_AddNumberToObject(j, "max_ns", (double)sum.max_ns);
	cJSON_AddNumberToObject(j, "mean_ns", sum.count ? (double)sum.sum_ns / (double)sum.count : 0);
	cJSON_AddBoolToObject(j, "percentiles_exact", sum.exact);
	cJSON_AddNumberToObject(j, "unmatched_returns", (double)l->pairing.unmatched_returns);
	cJSON_AddNumberToObject(j, "unreturned", (double)l->pairing.unreturned);
	h = cJSON_AddArrayToObject(j, "histogram");
	for (unsigned k = sum.log2_lo; k <= sum.log2_hi && k < VG_LOG2_BUCKETS; k++) {
		uint64_t lo, hi;
		cJSON *b;

		if (!sum.log2[k])
			continue;
		latency_bucket(k, &lo, &hi);
		b = cJSON_CreateObject();
		cJSON_AddNumberToObject(b, "lo_ns", (double)lo);
		cJSON_AddNumberToObject(b, "hi_ns", (double)hi);
		cJSON_AddNumberToObject(b, "count", (double)sum.log2[k]);
		cJSON_AddItemToArray(h, b);
	}
	return j;
}

/* One value distribution (an argument, or the return value): its type,
 * count, top values and log2 histogram.  tv holds top entries. */
static cJSON *values_json(const struct vg_sym_param *p, const struct vg_values *values,
			  struct vg_value_count *tv, size_t top)
{
	struct vg_values_summary sum;
	struct value_bucket buckets[MAX_VALUE_BUCKETS];
	size_t n_top = 0, n_b;
	cJSON *j = cJSON_CreateObject(), *t, *h;
	char buf[32];

	vg_values_summarize(values, tv, top, &n_top, &sum);
	if (p->type[0])
		vg_json_add_text(j, "type", p->type);
	else
		cJSON_AddNullToObject(j, "type");
	cJSON_AddStringToObject(j, "kind", param_kind_name(p->kind));
	cJSON_AddNumberToObject(j, "count", (double)sum.count);
	cJSON_AddNumberToObject(j, "distinct", (double)sum.distinct);
	cJSON_AddNumberToObject(j, "other", (double)sum.other);
	t = cJSON_AddArrayToObject(j, "top");
	for (size_t k = 0; k < n_top; k++) {
		cJSON *e = cJSON_CreateObject();

		value_text(p, tv[k].value, buf, sizeof(buf));
		cJSON_AddStringToObject(e, "value", buf);
		cJSON_AddNumberToObject(e, "count", (double)tv[k].count);
		cJSON_AddItemToArray(t, e);
	}
	h = cJSON_AddArrayToObject(j, "histogram");
	n_b = value_buckets(p, &sum, buckets);
	for (size_t k = 0; k < n_b; k++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "lo", buckets[k].lo);
		cJSON_AddStringToObject(e, "hi", buckets[k].hi);
		cJSON_AddNumberToObject(e, "count", (double)buckets[k].count);
		cJSON_AddItemToArray(h, e);
	}
	return j;
}

static cJSON *args_json(const struct vg_probe_location_result *l, size_t top)
{
	cJSON *arr;
	struct vg_value_count *tv;

	if (!l->n_args)
		return cJSON_CreateNull();
	arr = cJSON_CreateArray();
	tv = calloc(top, sizeof(*tv));
	for (size_t i = 0; tv && i < l->n_args; i++) {
		const struct vg_sym_param *p = &l->args[i].param;
		cJSON *j = values_json(p, l->args[i].values, tv, top), *first;

		/* reg and name first, as before the split. */
		first = cJSON_CreateObject();
		cJSON_AddStringToObject(first, "reg", l->args[i].usdt_reg[0] ? l->args[i].usdt_reg
								      : vg_sym_param_reg_name(p->reg));
		if (l->args[i].usdt_mem[0])
			cJSON_AddStringToObject(first, "memory", l->args[i].usdt_mem);
		if (p->name[0])
			vg_json_add_text(first, "name", p->name);
		else
			cJSON_AddNullToObject(first, "name");
		while (j->child) {
			cJSON *c = cJSON_DetachItemViaPointer(j, j->child);

			cJSON_AddItemToObject(first, c->string, c);
		}
		cJSON_Delete(j);
		cJSON_AddItemToArray(arr, first);
	}
	free(tv);
	return arr;
}

static cJSON *retval_json(const struct vg_probe_location_result *l, size_t top)
{
	struct vg_value_count *tv;
	cJSON *j;

	if (!l->retval.values)
		return cJSON_CreateNull();
	tv = calloc(top ? top : 1, sizeof(*tv));
	if (!tv)
		return cJSON_CreateNull();
	j = values_json(&l->retval.param, l->retval.values, tv, top);
	free(tv);
	return j;
}

/* One symbolized stack frame per inline level of each address, innermost
 * first, as every report shows a frame (vg_json_sym_frame) plus the
 * address; an address without DWARF scope is one frame of its symbol. */
static void stack_frames_json(struct vg_symbolizer *sym, const struct vg_probe_stack *st,
			      cJSON *frames)
{
	struct vg_sym_result *res = malloc(sizeof(*res));
	struct vg_error err = { 0 };

	for (size_t i = 0; res && i < st->n; i++) {
		uint64_t look = st->exact[i] ? st->ips[i] : st->ips[i] - 1;
		struct vg_sym_frame only;
		const struct vg_sym_frame *fr = res->frames;
		size_t n = 0;

		if (vg_sym_lookup(sym, look, res, &err) == 0)
			n = res->n_frames;
		if (n == 0) {
			/* vg_sym_lookup fills res even when it fails. */
			only = (struct vg_sym_frame){
				.function = res->has_symbol ? res->symbol : NULL,
				.file = res->file, .line = res->file ? res->line : 0,
				.column = res->file ? res->column : 0,
			};
			fr = &only;
			n = 1;
		}
		for (size_t k = 0; k < n; k++) {
			cJSON *f = vg_json_sym_frame(&fr[k]);

			vg_json_add_addr(f, "address", st->ips[i]);
			cJSON_AddItemToArray(frames, f);
		}
	}
	free(res);
}

static cJSON *stacks_json(struct vg_probe_session *s, struct vg_symbolizer *sym, size_t i, size_t top)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	cJSON *j, *stops, *arr;

	if (!vg_probe_opts(s)->stacks)
		return cJSON_CreateNull();
	j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "records", (double)l->stack_records);
	cJSON_AddNumberToObject(j, "distinct", (double)l->n_stacks);
	cJSON_AddNumberToObject(j, "dropped", (double)l->stacks_dropped);
	stops = cJSON_AddObjectToObject(j, "unwind_stops");
	for (int k = 0; k < 8; k++)
		if (l->unwind_stop[k])
			cJSON_AddNumberToObject(stops, vg_unwind_stop_name((enum vg_unwind_stop)k),
						(double)l->unwind_stop[k]);
	arr = cJSON_AddArrayToObject(j, "top");
	for (size_t k = 0; k < l->n_stacks && k < top; k++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "count", (double)l->stacks[k].count);
		stack_frames_json(sym, &l->stacks[k], cJSON_AddArrayToObject(e, "frames"));
		cJSON_AddItemToArray(arr, e);
	}
	return j;
}

static cJSON *site_json(struct vg_probe_session *s, const struct vg_probe_site *st, size_t idx)
{
	cJSON *j = cJSON_CreateObject();

	vg_json_add_text(j, "image", st->image && st->image->path ? st->image->path : st->path);
	vg_json_add_addr(j, "file_offset", st->file_offset);
	vg_json_add_addr(j, "runtime_address", st->runtime_addr);
	if (st->function)
		vg_json_add_text(j, "function", st->function);
	else
		cJSON_AddNullToObject(j, "function");
	cJSON_AddNumberToObject(j, "function_offset", (double)st->function_offset);
	cJSON_AddBoolToObject(j, "inlined", st->inlined);
	if (st->inlined_into)
		vg_json_add_text(j, "inlined_into", st->inlined_into);
	else
		cJSON_AddNullToObject(j, "inlined_into");
	if (st->inlined_function)
		vg_json_add_text(j, "inlined_function", st->inlined_function);
	else
		cJSON_AddNullToObject(j, "inlined_function");
	if (st->file)
		vg_json_add_text(j, "file", st->file);
	else
		cJSON_AddNullToObject(j, "file");
	cJSON_AddNumberToObject(j, "line", st->line);
	cJSON_AddNumberToObject(j, "calls", (double)vg_probe_site(s, idx)->calls);
	return j;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct vg_bpf_thread_count *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The location's calls per thread, its sites merged, by tid: malloc'ed
 * (site is meaningless in the result); NULL with *n = 0 when none or out
 * of memory. */
static struct vg_bpf_thread_count *location_threads(struct vg_probe_session *s,
						     const struct vg_probe_location_result *l,
						     size_t *n)
{
	const struct vg_bpf_thread_count *tc;
	struct vg_bpf_thread_count *out;
	size_t all, k = 0, m = 0;

	*n = 0;
	tc = vg_probe_thread_counts(s, &all, NULL);
	out = all ? malloc(all * sizeof(*out)) : NULL;
	if (!out)
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (tc[i].site >= l->first_site && tc[i].site < l->first_site + l->loc.n_sites)
			out[k++] = tc[i];
	qsort(out, k, sizeof(*out), cmp_tid);
	for (size_t i = 0; i < k; i++) {
		if (m && out[m - 1].tid == out[i].tid)
			out[m - 1].calls += out[i].calls;
		else
			out[m++] = out[i];
	}
	*n = m;
	return out;
}

static cJSON *per_thread_json(struct vg_probe_session *s, size_t i)
{
	struct vg_bpf_thread_count *th;
	size_t n;
	cJSON *arr;

	if (!vg_probe_opts(s)->per_thread)
		return cJSON_CreateNull();
	th = location_threads(s, vg_probe_location(s, i), &n);
	arr = cJSON_CreateArray();
	for (size_t k = 0; k < n; k++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "tid", th[k].tid);
		cJSON_AddNumberToObject(e, "calls", (double)th[k].calls);
		cJSON_AddItemToArray(arr, e);
	}
	free(th);
	return arr;
}

cJSON *vg_report_probe_json(struct vg_probe_session *s, struct vg_symbolizer *sym,
			    const struct vg_target *t, size_t top, struct vg_error *err)
{
	const struct vg_probe_opts *o = vg_probe_opts(s);
	const struct vg_probe_stats *st = vg_probe_stats(s);
	double secs = (double)vg_probe_duration_ns(s) / 1e9;
	cJSON *doc, *obs, *reasons, *over, *locs;
	bool counts_short, counts_over, exact;
	uint64_t dropped = 0;

	doc = vg_json_report_new("live_probe", t);
	if (!doc) {
		vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
		return NULL;
	}
	obs = cJSON_AddObjectToObject(doc, "observation");
	cJSON_AddStringToObject(obs, "mechanism", "uprobe+bpf");
	cJSON_AddNumberToObject(obs, "duration_ms", (double)vg_probe_duration_ns(s) / 1e6);
	cJSON_AddStringToObject(obs, "stop_reason", vg_stop_name(vg_probe_stop_reason(s)));
	cJSON_AddStringToObject(obs, "coverage", "all_threads");
	reasons = cJSON_CreateArray();
	over = cJSON_CreateArray();
	count_reasons(s, reasons, over, &counts_short, &counts_over);
	exact = !counts_short && !counts_over;
	cJSON_AddBoolToObject(obs, "counts_exact", exact);
	cJSON_AddBoolToObject(obs, "counts_are_lower_bound", counts_short && !counts_over);
	cJSON_AddBoolToObject(obs, "records_complete", !st->records_lost && !st->records_malformed);
	cJSON_AddItemToObject(obs, "lower_bound_reasons", reasons);
	cJSON_AddItemToObject(obs, "count_notes", over);
	cJSON_AddItemToObject(obs, "process_tree", tree_json(s));
	record_notes(s, cJSON_AddArrayToObject(obs, "record_notes"));
	cJSON_AddNumberToObject(obs, "records", (double)st->records);
	cJSON_AddNumberToObject(obs, "records_lost", (double)st->records_lost);
	vg_probe_thread_counts(s, &(size_t){ 0 }, &dropped);
	cJSON_AddNumberToObject(obs, "per_thread_unattributed", (double)dropped);
	cJSON_AddBoolToObject(obs, "probes_removed", true);
	if (vg_probe_stop_reason(s) == VG_STOP_TARGET_EXITED)
		cJSON_AddNullToObject(obs, "code_restored");
	else
		cJSON_AddBoolToObject(obs, "code_restored", st->code_restored);
	cJSON_AddNumberToObject(obs, "code_sites_checked", (double)st->code_checked);
	if (st->code_why[0])
		vg_json_add_text(obs, "code_note", st->code_why);
	else
		cJSON_AddNullToObject(obs, "code_note");

	locs = cJSON_AddArrayToObject(doc, "locations");
	for (size_t i = 0; i < vg_probe_n_locations(s); i++) {
		struct vg_probe_location_result *l = vg_probe_location(s, i);
		const struct vg_probe_site *s0 = &l->loc.sites[0];
		cJSON *j = cJSON_CreateObject(), *arr;

		vg_json_add_text(j, "input", l->loc.input);
		vg_json_add_text(j, "image", s0->image && s0->image->path ? s0->image->path : s0->path);
		vg_json_add_addr(j, "file_offset", s0->file_offset);
		arr = cJSON_AddArrayToObject(j, "runtime_addresses");
		for (size_t k = 0; k < l->loc.n_sites; k++) {
			char buf[24];

			snprintf(buf, sizeof(buf), "0x%" PRIx64, l->loc.sites[k].runtime_addr);
			cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
		}
		arr = cJSON_AddArrayToObject(j, "sites");
		for (size_t k = 0; k < l->loc.n_sites; k++)
			cJSON_AddItemToArray(arr, site_json(s, &l->loc.sites[k], l->first_site + k));
		cJSON_AddItemToObject(j, "ifunc", ifunc_json(&l->loc));
		cJSON_AddNumberToObject(j, "calls", (double)l->calls);
		cJSON_AddBoolToObject(j, "calls_exact", exact);
		cJSON_AddNumberToObject(j, "calls_per_s", secs > 0 ? (double)l->calls / secs : 0);
		if (o->filter)
			cJSON_AddNumberToObject(j, "calls_seen", (double)l->calls_seen);
		else
			cJSON_AddNullToObject(j, "calls_seen");
		cJSON_AddItemToObject(j, "per_thread", per_thread_json(s, i));
		cJSON_AddItemToObject(j, "latency", latency_json(s, i));
		if (o->latency && l->latency_why)
			vg_json_add_text(j, "latency_note", l->latency_why);
		cJSON_AddItemToObject(j, "retval", retval_json(l, top));
		cJSON_AddItemToObject(j, "args", args_json(l, top));
		if (o->n_args && l->args_why)
			vg_json_add_text(j, "args_note", l->args_why);
		cJSON_AddItemToObject(j, "stacks", stacks_json(s, sym, i, top));
		cJSON_AddItemToArray(locs, j);
	}
	return doc;
}

/* ---- table ---- */

static void put_ns(FILE *out, uint64_t ns)
{
	if (ns < 10000)
		fprintf(out, "%" PRIu64 " ns", ns);
	else if (ns < 10000000)
		fprintf(out, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		fprintf(out, "%.2f ms", (double)ns / 1e6);
	else
		fprintf(out, "%.2f s", (double)ns / 1e9);
}

/* bcc funclatency's picture: one row per non-empty log2 range. */
static void put_bar(FILE *out, uint64_t count, uint64_t max)
{
	int w = max ? (int)((count * 40 + max - 1) / max) : 0;

	fprintf(out, "|%-40.*s|\n", w, "****************************************");
}

/* The location's calls per thread, its sites merged (the counts come
 * sorted by site, then tid). */
static void table_per_thread(FILE *out, struct vg_probe_session *s,
			     const struct vg_probe_location_result *l)
{
	size_t n;
	struct vg_bpf_thread_count *th = location_threads(s, l, &n);

	for (size_t k = 0; k < n; k++)
		fprintf(out, "  tid %-10u %14" PRIu64 "\n", th[k].tid, th[k].calls);
	free(th);
}

/* An integer argument's log2 histogram, negative magnitudes first. */
static void table_value_histogram(FILE *out, const struct vg_sym_param *p,
				  const struct vg_values_summary *sum)
{
	struct value_bucket b[MAX_VALUE_BUCKETS];
	uint64_t max = 0;
	size_t n;

	if (p->kind != VG_PARAM_SIGNED && p->kind != VG_PARAM_UNSIGNED)
		return;
	n = value_buckets(p, sum, b);
	for (size_t k = 0; k < n; k++)
		max = b[k].count > max ? b[k].count : max;
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "      %20s -> %-17s : %-8" PRIu64 " ", b[k].lo, b[k].hi, b[k].count);
		put_bar(out, b[k].count, max);
	}
}

static void table_latency(FILE *out, struct vg_probe_session *s, size_t i)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	struct vg_latency *lat = vg_probe_latency(s, i);
	struct vg_latency_summary sum;
	uint64_t max = 0;

	fputc('\n', out);
	vg_text_put(out, l->loc.input);
	if (!lat) {
		fprintf(out, ": no latency: %s\n", l->latency_why ? l->latency_why : "not measured");
		return;
	}
	vg_latency_summarize(lat, &sum);
	fprintf(out, ": latency of %" PRIu64 " calls, %" PRIu64 " still running at the stop\n",
		sum.count, l->pairing.in_flight);
	if (!sum.count)
		return;
	fputs("  min ", out);
	put_ns(out, sum.min_ns);
	fputs("  p50 ", out);
	put_ns(out, sum.p50_ns);
	fputs("  p90 ", out);
	put_ns(out, sum.p90_ns);
	fputs("  p99 ", out);
	put_ns(out, sum.p99_ns);
	fputs("  max ", out);
	put_ns(out, sum.max_ns);
	fprintf(out, "%s\n", sum.exact ? "" : "  (percentiles within 1.6%)");
	/* Return probes are armed first, so a call already entered when
	 * they were armed returns with no entry recorded. */
	if (l->pairing.unmatched_returns)
		fprintf(out, "  %" PRIu64 " returns of calls that began before the probe was armed%s, not timed\n",
			l->pairing.unmatched_returns,
			vg_probe_stats(s)->records_lost ? " (or whose entry record was lost)" : "");
	if (l->pairing.unreturned)
		fprintf(out, "  %" PRIu64 " calls left without returning (longjmp, exceptions%s), not timed\n",
			l->pairing.unreturned, vg_probe_stats(s)->records_lost ? ", lost records" : "");
	for (unsigned k = sum.log2_lo; k <= sum.log2_hi && k < VG_LOG2_BUCKETS; k++)
		max = sum.log2[k] > max ? sum.log2[k] : max;
	fprintf(out, "  %21s : %-8s %s\n", "nsecs", "count", "distribution");
	for (unsigned k = sum.log2_lo; k <= sum.log2_hi && k < VG_LOG2_BUCKETS; k++) {
		uint64_t lo, hi;

		latency_bucket(k, &lo, &hi);
		fprintf(out, "  %10" PRIu64 " -> %-10" PRIu64 ": %-8" PRIu64 " ", lo, hi, sum.log2[k]);
		put_bar(out, sum.log2[k], max);
	}
}

/* One value set's lines, for arguments and return values alike: the
 * count and distinct values, the top values with their shares, and the
 * histogram. */
static void table_value_counts(FILE *out, const struct vg_sym_param *p, const struct vg_value_count *tv,
			       size_t n_top, const struct vg_values_summary *sum)
{
	char buf[32];

	fprintf(out, ": %" PRIu64 " values, %" PRIu64 " distinct%s\n", sum->count, sum->distinct,
		sum->other ? " or more" : "");
	for (size_t v = 0; v < n_top; v++) {
		value_text(p, tv[v].value, buf, sizeof(buf));
		fprintf(out, "      %-20s x%-8" PRIu64 " %5.1f%%\n", buf, tv[v].count,
			sum->count ? 100.0 * (double)tv[v].count / (double)sum->count : 0);
	}
	table_value_histogram(out, p, sum);
}

static void table_args(FILE *out, struct vg_probe_session *s, size_t i, size_t top)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	struct vg_value_count *tv = calloc(top, sizeof(*tv));

	fputc('\n', out);
	vg_text_put(out, l->loc.input);
	fprintf(out, ": arguments%s%s\n", l->args_why ? " - " : "", l->args_why ? l->args_why : "");
	for (size_t k = 0; tv && k < l->n_args; k++) {
		const struct vg_sym_param *p = &l->args[k].param;
		struct vg_values_summary sum;
		size_t n_top = 0;

		vg_values_summarize(l->args[k].values, tv, top, &n_top, &sum);
		if (l->args[k].usdt_mem[0])
			fprintf(out, "  %s ", l->args[k].usdt_mem);
		else
			fprintf(out, "  %-3s ", l->args[k].usdt_reg[0] ? l->args[k].usdt_reg : vg_sym_param_reg_name(p->reg));
		if (p->name[0]) {
			vg_text_put(out, p->type[0] ? p->type : "?");
			fputc(' ', out);
			vg_text_put(out, p->name);
		} else {
			fprintf(out, "arg%u", p->reg + 1);
		}
		table_value_counts(out, p, tv, n_top, &sum);
	}
	free(tv);
}

static void table_retval(FILE *out, struct vg_probe_session *s, size_t i, size_t top)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	const struct vg_sym_param *p = &l->retval.param;
	struct vg_value_count *tv;
	struct vg_values_summary sum;
	size_t n_top = 0;

	fputc('\n', out);
	vg_text_put(out, l->loc.input);
	if (!l->retval.values) {
		fputs(": no return value\n", out);
		return;
	}
	tv = calloc(top ? top : 1, sizeof(*tv));
	if (!tv)
		return;
	vg_values_summarize(l->retval.values, tv, top, &n_top, &sum);
	fputs(": returned ", out);
	vg_text_put(out, p->type[0] ? p->type : "?");
	table_value_counts(out, p, tv, n_top, &sum);
	free(tv);
}

static void table_stacks(FILE *out, struct vg_probe_session *s, struct vg_symbolizer *sym,
			 size_t i, size_t top)
{
	struct vg_probe_location_result *l = vg_probe_location(s, i);
	struct vg_sym_result *res = malloc(sizeof(*res));
	struct vg_error err = { 0 };

	fputc('\n', out);
	vg_text_put(out, l->loc.input);
	fprintf(out, ": callers (%" PRIu64 " stacks recorded, %zu distinct", l->stack_records, l->n_stacks);
	if (l->stacks_dropped)
		fprintf(out, "; %" PRIu64 " not kept (too many distinct stacks): the counts below are lower bounds",
			l->stacks_dropped);
	fputs(")\n", out);
	for (size_t k = 0; res && k < l->n_stacks && k < top; k++) {
		const struct vg_probe_stack *st = &l->stacks[k];

		fprintf(out, "  %" PRIu64 " calls (%.1f%%):\n", st->count,
			l->stack_records ? 100.0 * (double)st->count / (double)l->stack_records : 0);
		for (size_t f = 0; f < st->n; f++) {
			uint64_t look = st->exact[f] ? st->ips[f] : st->ips[f] - 1;

			if (vg_sym_lookup(sym, look, res, &err) < 0 || res->n_frames == 0) {
				fprintf(out, "    0x%" PRIx64 " %s\n", st->ips[f],
					res->has_symbol ? res->symbol : "??");
				continue;
			}
			for (size_t fr = 0; fr < res->n_frames; fr++) {
				const struct vg_sym_frame *sf = &res->frames[fr];

				fputs("    ", out);
				vg_text_put(out, sf->function ? sf->function : "??");
				if (sf->inlined)
					fputs(" (inlined)", out);
				if (sf->file) {
					const char *base = strrchr(sf->file, '/');

					fputc(' ', out);
					vg_text_put(out, base ? base + 1 : sf->file);
					fprintf(out, ":%u", sf->line);
				}
				fputc('\n', out);
			}
		}
	}
	free(res);
}

int vg_report_probe_table(FILE *out, struct vg_probe_session *s, struct vg_symbolizer *sym,
			  const struct vg_target *t, size_t top)
{
	const struct vg_probe_opts *o = vg_probe_opts(s);
	double secs = (double)vg_probe_duration_ns(s) / 1e9;
	cJSON *reasons = cJSON_CreateArray(), *over = cJSON_CreateArray(), *it;
	bool counts_short = false, counts_over = false;

	if (reasons && over) {
		count_reasons(s, reasons, over, &counts_short, &counts_over);
		record_notes(s, reasons);
	}
	fprintf(out, "# pid %d (", (int)t->pid);
	vg_text_put(out, t->comm);
	fprintf(out, "): probed %.3f s, stopped by %s; counts %s\n", secs,
		vg_stop_name(vg_probe_stop_reason(s)),
		counts_over ? "are neither exact nor lower bounds" : counts_short ? "are lower bounds" : "exact");
	cJSON_ArrayForEach(it, over)
		fprintf(out, "# note: %s\n", it->valuestring);
	cJSON_ArrayForEach(it, reasons)
		fprintf(out, "# note: %s\n", it->valuestring);
	cJSON_Delete(over);
	cJSON_Delete(reasons);
	fprintf(out, "%-32s %5s %14s %12s\n", "LOCATION", "SITES", "CALLS", "CALLS/S");
	for (size_t i = 0; i < vg_probe_n_locations(s); i++) {
		struct vg_probe_location_result *l = vg_probe_location(s, i);

		vg_text_put(out, l->loc.input);
		fprintf(out, "%*s %5zu %14" PRIu64 " %12.1f\n",
			(int)(strlen(l->loc.input) < 32 ? 32 - strlen(l->loc.input) : 0), "",
			l->loc.n_sites, l->calls, secs > 0 ? (double)l->calls / secs : 0);
		if (o->filter) {
			fputs("  --filter ", out);
			vg_text_put(out, o->filter);
			fprintf(out, ": %" PRIu64 " calls, %" PRIu64 " matched\n", l->calls_seen, l->calls);
		}
		for (size_t k = 0; l->loc.n_sites > 1 && k < l->loc.n_sites; k++) {
			const struct vg_probe_site *ps = &l->loc.sites[k];

			fprintf(out, "  0x%" PRIx64 " ", ps->runtime_addr);
			vg_text_put(out, ps->inlined_into ? ps->inlined_into : ps->function ? ps->function : "??");
			if (ps->inlined) {
				fputs(" (inlined copy of ", out);
				vg_text_put(out, ps->inlined_function ? ps->inlined_function : "??");
				fputc(')', out);
			}
			fprintf(out, " %" PRIu64 " calls\n", vg_probe_site(s, l->first_site + k)->calls);
		}
		if (o->per_thread)
			table_per_thread(out, s, l);
	}
	for (size_t i = 0; o->latency && i < vg_probe_n_locations(s); i++)
		table_latency(out, s, i);
	for (size_t i = 0; o->retval && i < vg_probe_n_locations(s); i++)
		table_retval(out, s, i, top);
	for (size_t i = 0; o->n_args && i < vg_probe_n_locations(s); i++)
		table_args(out, s, i, top);
	for (size_t i = 0; o->stacks && i < vg_probe_n_locations(s); i++)
		table_stacks(out, s, sym, i, top);
	if (o->per_thread) {
		uint64_t dropped = 0;

		vg_probe_thread_counts(s, &(size_t){ 0 }, &dropped);
		if (dropped)
			fprintf(out, "# %" PRIu64 " calls not attributed to a thread (the per-thread table was full): "
				"per-thread rows add up to less than CALLS\n", dropped);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- the stacks' meta ---- */

void vg_report_probe_stacks_meta(struct vg_probe_session *s, const struct vg_target *t,
				 struct vg_stacks_meta *m, char *why, size_t size)
{
	uint64_t stops[8] = { 0 }, cut = 0, dur = vg_probe_duration_ns(s);
	struct timespec now;
	size_t len = 0;

	memset(m, 0, sizeof(*m));
	m->event = "calls";
	m->period = 1;              /* each count is one call */
	clock_gettime(CLOCK_REALTIME, &now);
	m->duration_ns = dur;
	m->start_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - dur;
	m->lost = vg_probe_stats(s)->records_lost;
	m->pid = t->pid;
	m->comm = t->comm;
	for (size_t i = 0; i < vg_probe_n_locations(s); i++) {
		const struct vg_probe_location_result *l = vg_probe_location(s, i);

		m->lost += l->stacks_dropped;
		for (int k = 0; k < 8; k++)
			stops[k] += l->unwind_stop[k];
	}
	why[0] = '\0';
	for (int k = 0; k < 8; k++) {
		if (k == VG_UNWIND_OUTERMOST || !stops[k] || len >= size)
			continue;
		cut += stops[k];
		len += (size_t)snprintf(why + len, size - len, "%s%s %" PRIu64, len ? ", " : "",
					vg_unwind_stop_name((enum vg_unwind_stop)k), stops[k]);
	}
	m->stacks_cut = cut;
	m->stacks_cut_why = cut ? why : NULL;
}
