/* watch.c - the report of `vigil watch`: its JSON document
 * (docs/json-schema/live_watch.json: capabilities, observation, watches
 * with their writer sites, writes, traps and timelines, dependent watches
 * with their generations) and its table. */
#include "report/watch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "report/text.h"

/* ---- JSON ---- */

static cJSON *value_hex(const unsigned char *b, unsigned len, bool ok)
{
	char text[24];
	uint64_t v = 0;

	if (!ok)
		return cJSON_CreateNull();
	for (unsigned i = len; i-- > 0;)
		v = v << 8 | b[i];
	snprintf(text, sizeof(text), "0x%" PRIx64, v);
	return cJSON_CreateString(text);
}

static cJSON *frames_json(const struct vg_watch_site *site)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < site->n_frames; i++)
		cJSON_AddItemToArray(arr, vg_json_sym_frame(&site->frames[i]));
	return arr;
}

static void add_text_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		vg_json_add_text(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *site_json(const struct vg_watch_site *s)
{
	cJSON *o = cJSON_CreateObject();
	const struct vg_writer *w = &s->writer;

	vg_json_add_addr(o, "trap_runtime_ip", s->trap_ip);
	vg_json_add_addr(o, "trap_static_ip", s->trap_static_ip);
	if (w->ip) {
		vg_json_add_addr(o, "writer_runtime_ip", w->ip);
		vg_json_add_addr(o, "writer_static_ip", s->writer_static_ip);
	} else {
		cJSON_AddNullToObject(o, "writer_runtime_ip");
		cJSON_AddNullToObject(o, "writer_static_ip");
	}
	add_text_or_null(o, "instruction", w->text[0] ? w->text : NULL);
	add_text_or_null(o, "mnemonic", w->mnemonic[0] ? w->mnemonic : NULL);
	cJSON_AddStringToObject(o, "kind", vg_writer_kind_name(w->kind));
	cJSON_AddStringToObject(o, "confidence", vg_writer_confidence_name(w->confidence));
	if (w->confidence == VG_CONF_HEURISTIC)
		cJSON_AddNumberToObject(o, "candidates", w->candidates);
	cJSON_AddNumberToObject(o, "width_bytes", w->width);
	add_text_or_null(o, "function", s->function);
	add_text_or_null(o, "symbol", s->symbol);
	cJSON_AddNumberToObject(o, "symbol_offset", (double)s->symbol_offset);
	add_text_or_null(o, "image", s->image);
	add_text_or_null(o, "file", s->file);
	cJSON_AddNumberToObject(o, "line", s->line);
	cJSON_AddNumberToObject(o, "column", s->column);
	cJSON_AddItemToObject(o, "inline_frames", frames_json(s));
	/* "hits": traps under the name of earlier reports. */
	cJSON_AddNumberToObject(o, "hits", (double)s->traps);
	cJSON_AddNumberToObject(o, "writes", (double)s->writes);
	cJSON_AddNumberToObject(o, "traps", (double)s->traps);
	cJSON_AddNumberToObject(o, "unverified_traps", (double)s->unverified);
	add_text_or_null(o, "unverified_why", s->unverified ? s->unverified_why : NULL);
	{
		cJSON *vs = cJSON_AddObjectToObject(o, "value_source");

		cJSON_AddStringToObject(vs, "kind", vg_value_kind_name(w->value_kind));
		add_text_or_null(vs, "register", w->value_kind == VG_VALUE_REGISTER ||
				 w->value_kind == VG_VALUE_ADD_REGISTER ? w->value_reg_name : NULL);
		add_text_or_null(vs, "why", w->value_kind == VG_VALUE_UNKNOWN ? w->why : NULL);
	}
	add_text_or_null(o, "caveat", s->caveat[0] ? s->caveat : NULL);
	if (s->kernel) {
		cJSON *sc = cJSON_AddObjectToObject(o, "syscall");

		add_text_or_null(sc, "name", s->syscall[0] ? s->syscall : NULL);
		if (s->syscall_nr >= 0)
			cJSON_AddNumberToObject(sc, "number", s->syscall_nr);
		else
			cJSON_AddNullToObject(sc, "number");
		vg_json_add_addr(o, "user_ip", s->user_ip);
		if (s->call_site_ip)
			vg_json_add_addr(o, "call_site_ip", s->call_site_ip);
		else
			cJSON_AddNullToObject(o, "call_site_ip");
		add_text_or_null(o, "kernel_function", s->kernel_function);
	}
	return o;
}

/* An add/sub's delta, signed at the store's width. */
static int64_t value_delta(const struct vg_watch_value *v)
{
	struct vg_writer w = { .width = (uint8_t)v->width };

	return vg_writer_delta(&w, v->value);
}

/* The value as the expression's type shows it, malloc'ed; NULL when the
 * watch has no type or the value is not known whole. */
static char *typed_value(const struct vg_watch_request *q, const struct vg_watch_value *v)
{
	unsigned char b[8];

	if (!q || !q->format || (v->kind != VG_VALUE_REGISTER && v->kind != VG_VALUE_IMMEDIATE))
		return NULL;
	for (unsigned i = 0; i < 8; i++)
		b[i] = (unsigned char)(v->value >> (8 * i));
	return q->format(q->format_arg, b, v->width ? v->width : 8);
}

static cJSON *value_json(const struct vg_watch_value *v, const struct vg_watch_request *q)
{
	cJSON *o = cJSON_CreateObject();
	char *typed = typed_value(q, v);

	cJSON_AddStringToObject(o, "kind", vg_value_kind_name(v->kind));
	add_text_or_null(o, "register", v->register_name[0] ? v->register_name : NULL);
	cJSON_AddNumberToObject(o, "width_bytes", v->width);
	if (v->kind == VG_VALUE_UNKNOWN) {
		cJSON_AddNullToObject(o, "value");
		add_text_or_null(o, "why", v->why);
	} else {
		vg_json_add_addr(o, "value", v->value);
	}
	if (q && q->format) {
		add_text_or_null(o, "typed", typed);
		free(typed);
	}
	if (v->kind == VG_VALUE_ADD_IMMEDIATE || v->kind == VG_VALUE_ADD_REGISTER) {
		char d[24];

		snprintf(d, sizeof(d), "%+" PRId64, value_delta(v));
		cJSON_AddStringToObject(o, "delta", d);
	}
	return o;
}

static void log_json(cJSON *o, const struct vg_watch_log *l, uint64_t start_ns, bool generations,
		     const char *sites_key, const char *samples_key, const struct vg_watch_request *q)
{
	cJSON *sites = cJSON_AddArrayToObject(o, sites_key);
	cJSON *samples = cJSON_AddArrayToObject(o, samples_key);
	size_t *order = malloc((l->n_sites + 1) * sizeof(*order));

	/* Sites by hits, most first (the culprit is usually the busiest). */
	for (size_t i = 0; order && i < l->n_sites; i++) {
		size_t j = i;

		while (j > 0 && l->sites[order[j - 1]].traps < l->sites[i].traps) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (size_t i = 0; order && i < l->n_sites; i++) {
		cJSON *sj = site_json(&l->sites[order[i]]);

		cJSON_AddNumberToObject(sj, "site", (double)order[i]);
		cJSON_AddItemToArray(sites, sj);
	}
	free(order);
	for (size_t i = 0; i < l->n_samples; i++) {
		const struct vg_watch_sample *s = &l->samples[i];
		const struct vg_watch_site *site = &l->sites[s->site];
		cJSON *sj = cJSON_CreateObject();

		cJSON_AddNumberToObject(sj, "tid", s->tid);
		{
			/* A string: CLOCK_MONOTONIC passes 2^53 ns after 104 days. */
			char t[24];

			snprintf(t, sizeof(t), "%" PRIu64, s->time_ns);
			cJSON_AddStringToObject(sj, "timestamp_ns", t);
		}
		cJSON_AddNumberToObject(sj, "offset_ns", s->time_ns >= start_ns ? (double)(s->time_ns - start_ns) : 0);
		if (site->writer.ip)
			vg_json_add_addr(sj, "writer_runtime_ip", site->writer.ip);
		else
			cJSON_AddNullToObject(sj, "writer_runtime_ip");
		cJSON_AddNumberToObject(sj, "site", (double)s->site);
		cJSON_AddNumberToObject(sj, "traps", (double)s->traps);
		if (generations)
			cJSON_AddNumberToObject(sj, "generation", s->generation);
		cJSON_AddItemToObject(sj, "value", value_json(&s->value, q));
		if (s->n_callchain) {
			cJSON *cc = cJSON_AddArrayToObject(sj, "callchain");

			for (size_t k = 0; k < s->n_callchain; k++) {
				char t[24];

				snprintf(t, sizeof(t), "0x%" PRIx64, s->callchain[k]);
				cJSON_AddItemToArray(cc, cJSON_CreateString(t));
			}
		}
		cJSON_AddItemToArray(samples, sj);
	}
}

static cJSON *watch_json(const struct vg_watch *w, uint64_t start_ns)
{
	cJSON *o = cJSON_CreateObject();
	bool changed = w->initial_ok && w->latest_ok && memcmp(w->initial, w->latest, w->len) != 0;

	vg_json_add_text(o, "input", w->req.input);
	add_text_or_null(o, "expr", w->req.expr);
	add_text_or_null(o, "type", w->req.type_name);
	vg_json_add_addr(o, "runtime_va", w->req.addr);
	if (w->has_static)
		vg_json_add_addr(o, "static_va", w->static_va);
	else
		cJSON_AddNullToObject(o, "static_va");
	add_text_or_null(o, "image", w->image);
	add_text_or_null(o, "symbol", w->req.symbol);
	if (w->req.symbol)
		cJSON_AddNumberToObject(o, "symbol_offset", (double)w->req.symbol_offset);
	cJSON_AddItemToObject(o, "region", vg_json_region(&w->region));
	cJSON_AddStringToObject(o, "perms", w->region.perms);
	cJSON_AddStringToObject(o, "access", w->rw ? "rw" : "w");
	cJSON_AddNumberToObject(o, "len_bytes", w->len);
	cJSON_AddItemToObject(o, "initial_value", value_hex(w->initial, w->len, w->initial_ok));
	cJSON_AddItemToObject(o, "latest_value", value_hex(w->latest, w->len, w->latest_ok));
	cJSON_AddBoolToObject(o, "changed", changed);
	if (w->log.has_last_value)
		cJSON_AddItemToObject(o, "last_written_value", value_json(&w->log.last_value, &w->req));
	cJSON_AddNumberToObject(o, "accepted_hits", (double)w->log.accepted_hits);
	cJSON_AddNumberToObject(o, "writes", (double)w->log.writes);
	cJSON_AddNumberToObject(o, "traps", (double)w->log.accepted_hits);
	cJSON_AddNumberToObject(o, "setup_hits", (double)w->log.setup_hits);
	cJSON_AddNumberToObject(o, "hits_after_stop", (double)w->log.after_stop);
	log_json(o, &w->log, start_ns, false, "writer_sites", "samples", &w->req);
	cJSON_AddBoolToObject(o, "samples_truncated", w->log.samples_truncated);
	return o;
}

/* The pointer slots between the root and the leaf (an expression's
 * a->b->c: the root is &a, hop "a->b" is here), each with its writes. */
static cJSON *hops_json(const struct vg_watch *w, uint64_t start_ns)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t k = 0; k < w->req.n_mid; k++) {
		const struct vg_watch_hop *h = &w->mid[k];
		cJSON *o = cJSON_CreateObject();

		add_text_or_null(o, "expr", w->req.mid_inputs[k]);
		cJSON_AddNumberToObject(o, "offset", (double)w->req.mid_offsets[k]);
		if (h->bound)
			vg_json_add_addr(o, "slot_runtime_va", h->addr);
		else
			cJSON_AddNullToObject(o, "slot_runtime_va");
		cJSON_AddNumberToObject(o, "writes", (double)h->log.writes);
		cJSON_AddNumberToObject(o, "traps", (double)h->log.accepted_hits);
		log_json(o, &h->log, start_ns, true, "writer_sites", "samples", NULL);
		cJSON_AddBoolToObject(o, "samples_truncated", h->log.samples_truncated);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *dependent_json(const struct vg_watch *w, uint64_t start_ns)
{
	cJSON *o = cJSON_CreateObject();
	const struct vg_watch_generation *cur = w->n_gens ? &w->gens[w->n_gens - 1] : NULL;
	cJSON *gens;

	vg_json_add_text(o, "input", w->req.input);
	add_text_or_null(o, "expr", w->req.expr);
	add_text_or_null(o, "type", w->req.type_name);
	vg_json_add_addr(o, "ptr_slot_runtime_va", w->req.addr);
	if (w->has_static)
		vg_json_add_addr(o, "ptr_slot_static_va", w->static_va);
	else
		cJSON_AddNullToObject(o, "ptr_slot_static_va");
	add_text_or_null(o, "symbol", w->req.symbol);
	cJSON_AddItemToObject(o, "region", vg_json_region(&w->region));
	cJSON_AddNumberToObject(o, "leaf_offset", (double)w->req.leaf_offset);
	cJSON_AddStringToObject(o, "access", w->rw ? "rw" : "w");
	cJSON_AddNumberToObject(o, "len_bytes", w->len);
	cJSON_AddStringToObject(o, "binding_state", vg_binding_name(w->binding));
	if (cur && cur->state == VG_BIND_BOUND)
		vg_json_add_addr(o, "leaf_runtime_va", cur->leaf_addr);
	else
		cJSON_AddNullToObject(o, "leaf_runtime_va");
	cJSON_AddItemToObject(o, "initial_pointer", value_hex(w->initial, 8, w->initial_ok));
	cJSON_AddItemToObject(o, "latest_pointer", value_hex(w->latest, 8, w->latest_ok));
	cJSON_AddNumberToObject(o, "generation", w->n_gens ? (double)(w->n_gens - 1) : 0);
	cJSON_AddNumberToObject(o, "root_hits", (double)w->log.accepted_hits);
	cJSON_AddNumberToObject(o, "root_writes", (double)w->log.writes);
	cJSON_AddNumberToObject(o, "accepted_hits", (double)w->leaf.accepted_hits);
	cJSON_AddNumberToObject(o, "writes", (double)w->leaf.writes);
	cJSON_AddNumberToObject(o, "traps", (double)w->leaf.accepted_hits);
	{
		uint64_t setup = w->log.setup_hits + w->leaf.setup_hits;

		for (size_t k = 0; k < w->req.n_mid; k++)
			setup += w->mid[k].log.setup_hits;
		cJSON_AddNumberToObject(o, "setup_hits", (double)setup);
	}
	cJSON_AddNumberToObject(o, "rebind_failures", w->rebind_failures);
	gens = cJSON_AddArrayToObject(o, "generations");
	for (size_t i = 0; i < w->n_gens; i++) {
		const struct vg_watch_generation *g = &w->gens[i];
		cJSON *gj = cJSON_CreateObject();

		cJSON_AddNumberToObject(gj, "index", g->index);
		vg_json_add_addr(gj, "pointer", g->pointer);
		if (g->state == VG_BIND_BOUND)
			vg_json_add_addr(gj, "leaf_runtime_va", g->leaf_addr);
		else
			cJSON_AddNullToObject(gj, "leaf_runtime_va");
		cJSON_AddStringToObject(gj, "binding_state", vg_binding_name(g->state));
		cJSON_AddNumberToObject(gj, "hits", (double)g->hits);
		cJSON_AddNumberToObject(gj, "bound_offset_ns",
					g->bound_ns > start_ns ? (double)(g->bound_ns - start_ns) : 0);
		/* Leaf writes in this window (pointer stored, breakpoint not
		 * yet moved) cannot have been seen. */
		if (w->req.n_mid) {
			cJSON *m = cJSON_AddArrayToObject(gj, "hop_slots");

			for (size_t k = 0; k < w->req.n_mid; k++) {
				char buf[24];

				snprintf(buf, sizeof(buf), "0x%" PRIx64, g->mid_addr[k]);
				cJSON_AddItemToArray(m, g->mid_addr[k] ? cJSON_CreateString(buf)
								       : cJSON_CreateNull());
			}
		}
		if (i > 0)
			cJSON_AddNumberToObject(gj, "rebind_latency_ns",
						g->bound_ns > g->pointer_written_ns
						? (double)(g->bound_ns - g->pointer_written_ns) : 0);
		cJSON_AddItemToArray(gens, gj);
	}
	log_json(o, &w->leaf, start_ns, true, "writer_sites", "samples", &w->req);
	cJSON_AddBoolToObject(o, "samples_truncated", w->leaf.samples_truncated);
	log_json(o, &w->log, start_ns, false, "root_writer_sites", "root_samples", NULL);
	cJSON_AddBoolToObject(o, "root_samples_truncated", w->log.samples_truncated);
	cJSON_AddItemToObject(o, "hops", hops_json(w, start_ns));
	return o;
}

static cJSON *coverage_json(const struct vg_watch_session *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *seeded = cJSON_AddArrayToObject(o, "seeded");
	cJSON *later = cJSON_AddArrayToObject(o, "covered_later");
	cJSON *uncovered = cJSON_AddArrayToObject(o, "not_covered");
	const struct vg_perf_stats *st = vg_watch_perf_stats(s);
	size_t n;
	const struct vg_cover_tid *t = vg_watch_threads(s, &n);

	for (size_t i = 0; i < n; i++) {
		if (t[i].how == VG_COVER_SEEDED) {
			cJSON_AddItemToArray(seeded, cJSON_CreateNumber(t[i].tid));
			continue;
		}
		cJSON *l = cJSON_CreateObject();

		cJSON_AddNumberToObject(l, "tid", t[i].tid);
		cJSON_AddStringToObject(l, "how", vg_cover_how_name(t[i].how));
		if (t[i].parent)
			cJSON_AddNumberToObject(l, "parent", t[i].parent);
		else
			cJSON_AddNullToObject(l, "parent");
		cJSON_AddItemToArray(t[i].how == VG_COVER_NONE ? uncovered : later, l);
	}
	cJSON_AddNumberToObject(o, "threads_total", (double)n);
	cJSON_AddNumberToObject(o, "exited_during_setup", st->exited_during_setup);
	cJSON_AddNumberToObject(o, "rescans", st->rescans);
	cJSON_AddStringToObject(o, "window", vg_watch_emulated(s)
				? "uprobe emulation: threads created after setup are not covered "
				  "(not_covered lists them)"
				: "none after setup: a thread created during setup by a thread not yet "
				  "attached is attached on a rescan; writes before setup ended are "
				  "counted in setup_hits only");
	return o;
}


cJSON *vg_report_watch_json(const struct vg_watch_session *s, const struct vg_report_watch_meta *m,
			    struct vg_error *err)
{
	cJSON *doc = vg_json_report_new("live_watch", m->target);
	cJSON *caps, *obs, *arr, *dep, *reasons;
	const struct vg_perf_stats *st = vg_watch_perf_stats(s);
	const char *const *why = vg_watch_lower_bound_reasons(s);
	uint64_t start = vg_watch_start_ns(s);

	if (!doc) {
		vg_error_set(err, -ENOMEM, "out of memory building the JSON report");
		return NULL;
	}
	cJSON_AddStringToObject(doc, "backend", vg_watch_emulated(s) ? "uprobe_emulation" : "perf_breakpoint");
	{
		cJSON *proc = cJSON_GetObjectItem(doc, "process");

		/* Without --bin the running executable is what symbols come
		 * from: it matches by definition. */
		cJSON_AddStringToObject(proc, "binary_match", m->bin_match ? m->bin_match : "running_executable");
		if (m->has_load_bias)
			vg_json_add_addr(proc, "load_bias", m->load_bias);
		else
			cJSON_AddNullToObject(proc, "load_bias");
	}
	caps = cJSON_AddObjectToObject(doc, "capabilities");
	cJSON_AddStringToObject(caps, "hardware_breakpoints",
				vg_watch_emulated(s) ? "not_used_emulated_by_uprobes" : "fire");
	cJSON_AddBoolToObject(caps, "kernel_writes_visible", vg_watch_kernel_visible(s));
	cJSON_AddNumberToObject(caps, "debug_registers", VG_WATCH_MAX_SLOTS);
	cJSON_AddNumberToObject(caps, "debug_registers_used", vg_watch_slots_used(s));
	cJSON_AddBoolToObject(caps, "registers_sampled", true);
	cJSON_AddBoolToObject(caps, "stacks_sampled", m->opt->stacks);

	obs = cJSON_AddObjectToObject(doc, "observation");
	if (m->opt->duration_ms)
		cJSON_AddNumberToObject(obs, "requested_ms", (double)m->opt->duration_ms);
	else
		cJSON_AddNullToObject(obs, "requested_ms");
	cJSON_AddNumberToObject(obs, "elapsed_ms", (double)vg_watch_elapsed_ms(s));
	cJSON_AddStringToObject(obs, "stop_reason", vg_stop_name(vg_watch_stop_reason(s)));
	/* exec() stops the watch; child processes write their own copies of
	 * memory: counted, not observed. */
	cJSON_AddItemToObject(obs, "process_tree",
			      vg_json_process_tree_perf(vg_watch_perf_stats(s), vg_watch_start_ns(s)));
	if (m->opt->max_events)
		cJSON_AddNumberToObject(obs, "max_events", (double)m->opt->max_events);
	cJSON_AddItemToObject(obs, "thread_coverage", coverage_json(s));
	{
		int ncpus;
		size_t nev = vg_watch_perf_events(s, &ncpus);

		cJSON_AddNumberToObject(obs, "perf_events", (double)nev);
		cJSON_AddNumberToObject(obs, "rings", ncpus);
	}
	cJSON_AddNumberToObject(obs, "samples", (double)st->samples);
	cJSON_AddNumberToObject(obs, "setup_hits", (double)st->before_start);
	cJSON_AddNumberToObject(obs, "lost_events", (double)st->lost);
	cJSON_AddNumberToObject(obs, "lost_records", (double)st->lost_records);
	cJSON_AddNumberToObject(obs, "throttled", (double)st->throttled);
	cJSON_AddNumberToObject(obs, "undecodable_records", (double)st->undecodable);
	cJSON_AddNumberToObject(obs, "other_process_samples_excluded", (double)st->other_process);
	cJSON_AddNumberToObject(obs, "duplicate_samples_dropped", (double)st->duplicates);
	cJSON_AddBoolToObject(obs, "counts_are_lower_bound", why[0] != NULL);
	reasons = cJSON_AddArrayToObject(obs, "lower_bound_reasons");
	for (size_t i = 0; why[i]; i++)
		cJSON_AddItemToArray(reasons, cJSON_CreateString(why[i]));

	arr = cJSON_AddArrayToObject(doc, "watches");
	dep = cJSON_AddArrayToObject(doc, "dependent_watches");
	for (size_t i = 0; i < vg_watch_count(s); i++) {
		const struct vg_watch *w = vg_watch_at(s, i);

		cJSON_AddItemToArray(w->req.follow ? dep : arr,
				     w->req.follow ? dependent_json(w, start) : watch_json(w, start));
	}
	return doc;
}

/* ---- table ---- */

static uint64_t le64(const unsigned char *b, unsigned len)
{
	uint64_t v = 0;

	for (unsigned i = len; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static void print_site(FILE *out, const char *indent, const struct vg_watch_site *s)
{
	const struct vg_writer *w = &s->writer;

	fprintf(out, "%ssite  0x%012" PRIx64 "  ", indent, w->ip);
	if (s->file) {
		vg_text_put(out, s->file);
		fprintf(out, ":%u", s->line);
	} else {
		fputs("??", out);
	}
	fputs("  ", out);
	vg_text_put(out, s->function ? s->function : "??");
	fprintf(out, "  %s  %s  %s  writes %" PRIu64 "  traps %" PRIu64, w->text[0] ? w->text : "?",
	             vg_writer_kind_name(w->kind), vg_writer_confidence_name(w->confidence), s->writes,
	             s->traps);
	if (s->kernel && s->syscall[0])
		fprintf(out, "  syscall %s(%d)", s->syscall, s->syscall_nr);
	else if (s->kernel)
		fprintf(out, "  syscall unknown (not named by the kernel call chain)");
	fprintf(out, "\n");
	if (s->unverified)
		fprintf(out, "%s  unverified: %" PRIu64 " trap%s: %s\n", indent, s->unverified,
		             s->unverified == 1 ? "" : "s", s->unverified_why ? s->unverified_why : "?");
	if (s->writer.kind == VG_WRITER_UNKNOWN && s->writer.why)
		fprintf(out, "%s  no writer: %s\n", indent, s->writer.why);
	for (size_t i = 1; i < s->n_frames; i++) {
		fprintf(out, "%s  in  ", indent);
		vg_text_put(out, s->frames[i].function ? s->frames[i].function : "??");
		if (s->frames[i].file) {
			fputs("  ", out);
			vg_text_put(out, s->frames[i].file);
			fprintf(out, ":%u", s->frames[i].line);
		}
		fprintf(out, "\n");
	}
	if (s->caveat[0])
		fprintf(out, "%s  caveat: %s\n", indent, s->caveat);
}

static void print_value(FILE *out, const struct vg_watch_value *v, const struct vg_watch_request *q)
{
	char *typed = typed_value(q, v);

	if (typed) {
		fputs("value ", out);
		vg_text_put(out, typed);
		fputs("  ", out);
		free(typed);
	}
	if (v->kind == VG_VALUE_UNKNOWN)
		fprintf(out, "value ?  (%s)", v->why ? v->why : "unknown");
	else if (v->kind == VG_VALUE_REGISTER)
		fprintf(out, "%s0x%" PRIx64 "  (register %s)", q && q->format ? "" : "value ", v->value, v->register_name);
	else if (v->kind == VG_VALUE_ADD_IMMEDIATE)
		fprintf(out, "value %+" PRId64 "  (added to the old value)", value_delta(v));
	else if (v->kind == VG_VALUE_ADD_REGISTER)
		fprintf(out, "value %+" PRId64 "  (register %s added to the old value)", value_delta(v),
		             v->register_name);
	else
		fprintf(out, "%s0x%" PRIx64 "  (immediate)", q && q->format ? "" : "value ", v->value);
}

static void print_log(FILE *out, const char *indent, const struct vg_watch_log *l, uint64_t start,
		      bool gens, const struct vg_watch_request *q)
{
	for (size_t i = 0; i < l->n_sites; i++)
		print_site(out, indent, &l->sites[i]);
	for (size_t i = 0; i < l->n_samples; i++) {
		const struct vg_watch_sample *s = &l->samples[i];

		fprintf(out, "%ssample  +%.6fs  tid %d  0x%012" PRIx64 "  ", indent,
		             s->time_ns > start ? (double)(s->time_ns - start) / 1e9 : 0.0, (int)s->tid,
		             l->sites[s->site].writer.ip);
		if (gens)
			fprintf(out, "gen %u  ", s->generation);
		if (s->traps > 1)
			fprintf(out, "traps %" PRIu64 "  ", s->traps);
		print_value(out, &s->value, q);
		fprintf(out, "\n");
	}
	if (l->samples_truncated)
		fprintf(out, "%s# timeline truncated at %zu samples (--max-samples); counts are complete\n",
		             indent, l->n_samples);
}

int vg_report_watch_table(FILE *out, const struct vg_watch_session *s, const struct vg_target *t)
{
	const struct vg_perf_stats *st = vg_watch_perf_stats(s);
	const char *const *why = vg_watch_lower_bound_reasons(s);
	uint64_t start = vg_watch_start_ns(s);
	size_t n_threads, seeded = 0;
	const struct vg_cover_tid *tids = vg_watch_threads(s, &n_threads);

	for (size_t i = 0; i < n_threads; i++)
		seeded += tids[i].how == VG_COVER_SEEDED;
	fprintf(out, "# vigil watch: pid %d (", (int)t->pid);
	vg_text_put(out, t->comm);
	fprintf(out, "), backend %s, %zu thread%s (%zu seeded, %zu covered later), stop: %s after %" PRIu64 " ms\n",
	             vg_watch_emulated(s) ? "uprobe_emulation" : "perf_breakpoint", n_threads,
	             n_threads == 1 ? "" : "s", seeded, n_threads - seeded,
	             vg_stop_name(vg_watch_stop_reason(s)), vg_watch_elapsed_ms(s));
	for (size_t i = 0; i < vg_watch_count(s); i++) {
		const struct vg_watch *w = vg_watch_at(s, i);

		if (!w->req.follow) {
			fprintf(out, "watch %zu  0x%012" PRIx64 "  ", i + 1, w->req.addr);
			vg_text_put(out, w->req.input);
			fprintf(out, "  %s  len %u  access %s  initial ", w->region.perms, w->len, w->rw ? "rw" : "w");
			if (w->initial_ok)
				fprintf(out, "0x%" PRIx64, le64(w->initial, w->len));
			else
				fputs("?", out);
			fputs("  latest ", out);
			if (w->latest_ok)
				fprintf(out, "0x%" PRIx64, le64(w->latest, w->len));
			else
				fputs("?", out);
			fprintf(out, "  writes %" PRIu64 "  traps %" PRIu64 "\n", w->log.writes,
			             w->log.accepted_hits);
			print_log(out, "  ", &w->log, start, false, &w->req);
			continue;
		}
		fprintf(out, "follow %zu  slot 0x%012" PRIx64 "  ", i + 1, w->req.addr);
		vg_text_put(out, w->req.input);
		fprintf(out, "  +%" PRIu64 "  len %u  %s  generation %zu  root writes %" PRIu64 "  writes %"
		             PRIu64 "  traps %" PRIu64 "\n", w->req.leaf_offset, w->len,
		             vg_binding_name(w->binding), w->n_gens ? w->n_gens - 1 : 0, w->log.writes,
		             w->leaf.writes, w->leaf.accepted_hits);
		for (size_t k = 0; k < w->req.n_mid; k++) {
			fprintf(out, "  hop %zu  ", k + 2);
			vg_text_put(out, w->req.mid_inputs[k] ? w->req.mid_inputs[k] : "?");
			fprintf(out, "  +%" PRIu64 "  writes %" PRIu64 "  traps %" PRIu64 "\n",
			        w->req.mid_offsets[k], w->mid[k].log.writes, w->mid[k].log.accepted_hits);
		}
		for (size_t g = 0; g < w->n_gens; g++) {
			fprintf(out, "  gen %u  pointer 0x%" PRIx64 "  leaf 0x%" PRIx64 "  %s  hits %" PRIu64,
			             w->gens[g].index, w->gens[g].pointer, w->gens[g].leaf_addr,
			             vg_binding_name(w->gens[g].state), w->gens[g].hits);
			for (size_t k = 0; k < w->req.n_mid; k++)
				fprintf(out, "  hop%zu 0x%" PRIx64, k + 2, w->gens[g].mid_addr[k]);
			fputc('\n', out);
		}
		print_log(out, "  ", &w->leaf, start, true, &w->req);
		fprintf(out, "  # pointer slot writes:\n");
		print_log(out, "  ", &w->log, start, false, NULL);
		for (size_t k = 0; k < w->req.n_mid; k++) {
			fprintf(out, "  # hop %zu writes (", k + 2);
			vg_text_put(out, w->req.mid_inputs[k] ? w->req.mid_inputs[k] : "?");
			fputs("):\n", out);
			print_log(out, "  ", &w->mid[k].log, start, true, NULL);
		}
	}
	fprintf(out, "# lost %" PRIu64 ", undecodable %" PRIu64 ", other processes %" PRIu64
	             ", setup hits %" PRIu64 "\n", st->lost, st->undecodable, st->other_process,
	             st->before_start);
	if (!why[0])
		fprintf(out, "# counts are exact\n");
	for (size_t i = 0; why[i]; i++)
		fprintf(out, "# counts are a lower bound: %s\n", why[i]);
	return ferror(out) ? -EIO : 0;
}
