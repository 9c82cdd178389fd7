/* cmd_watch.c - `vigil watch PID ADDR...`: who writes a location of a live
 * process, with hardware breakpoints (src/watch/watch.h), reported as one
 * JSON document or a greppable table.  SIGINT and SIGTERM stop the watch
 * and the full report is still printed; every exit path closes the
 * events, so no breakpoint stays in the target. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/cli.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "report/json.h"
#include "target/maps.h"
#include "target/mem.h"
#include "watch/watch.h"

const char cmd_watch_usage[] =
	"usage: vigil watch PID ADDR... [--follow PTR_SLOT+OFFSET]... [--len 1|2|4|8]\n"
	"                   [--access w|rw] [--duration MS] [--max-events N] [--max-samples N]\n"
	"                   [--regs] [--stacks] [--bin FILE [--force-bin]] [--json]\n"
	"\n"
	"Who writes this location?  Arms a hardware data breakpoint (x86 debug\n"
	"registers, through perf_event_open) on every thread of a running process,\n"
	"threads created later included, without stopping it, and reports each\n"
	"instruction that wrote: the store itself, not the instruction after it (the\n"
	"trap IP); its function, inline frames and file:line; the value written; and a\n"
	"timeline with one entry per write.  A writer is 'exact' only when its\n"
	"destination, computed from the registers sampled at the trap, overlaps the\n"
	"watched bytes; otherwise 'heuristic' with the reason.  Writes by the kernel on\n"
	"the process's behalf (read(2) into the buffer) are named with their system\n"
	"call and the line that called it.\n"
	"\n"
	"writes and traps: a rep movs/stos traps once per iteration over the watched\n"
	"bytes and the kernel's copy once per byte; such traps of one execution (one\n"
	"system call) are one write.  'writes' counts executions, 'traps' breakpoint\n"
	"hits (traps >= writes).\n"
	"\n"
	"x86 has 4 debug registers per thread: a watch takes 1, a --follow takes 2.\n"
	"Stops at --duration, --max-events, when the target exits, or on Ctrl-C; the\n"
	"report is printed in every case.  Every count says whether it is exact.\n"
	"\n"
	"options:\n"
	"  --follow P+OFF   watch the pointer stored at P and the location *P + OFF;\n"
	"                   when P is written the leaf breakpoint moves to the new\n"
	"                   target (a new generation); P takes the ADDR forms\n"
	"  --len N          bytes watched: 1, 2, 4 or 8 (default 8); ADDR must be\n"
	"                   aligned to N\n"
	"  --access w|rw    writes only (default), or reads and writes\n"
	"  --duration MS    stop after MS milliseconds (default: until Ctrl-C)\n"
	"  --max-events N   stop after N accepted traps\n"
	"  --max-samples N  timeline entries kept per watch (default 1000); counts\n"
	"                   stay exact past it\n"
	"  --regs           accepted for compatibility: the registers are always\n"
	"                   sampled (they verify each writer and give its value)\n"
	"  --stacks         sample user call stacks (frame pointers) for each hit\n"
	"  --bin FILE       take @0xHEX and symbols from FILE (an unstripped copy of\n"
	"                   the running executable)\n"
	"  --force-bin      use --bin FILE even when it does not match\n"
	"  --json           one JSON document (docs/json-schema/live_watch.json)\n"
	"  -h, --help       this help\n"
	"\n"
	"A line '# armed: ...' on stderr says when every thread is covered.\n"
	"\n"
	"examples:\n"
	"  vigil watch 4242 g_config+16 --len 4 --regs\n"
	"  vigil watch 4242 0x7ffd5e8c1a28 --duration 5000 --json\n"
	"  vigil watch 4242 --follow g_queue+8 --len 4 --regs   (*g_queue + 8)\n";

#define MAX_WATCHES 8

struct watch_args {
	const char *pid;
	const char *addrs[MAX_WATCHES];
	size_t n_addrs;
	const char *follows[MAX_WATCHES];
	size_t n_follows;
	struct vg_watch_options opt;
	const char *bin_path;
	bool force_bin;
};

static int parse_number(struct vg_cli *cli, const char *opt, const char *arg, uint64_t *out)
{
	if (vg_parse_u64(arg, 0, out) < 0)
		return cli_usage_error(cli, "invalid %s '%s': expected a number (decimal or 0xHEX)", opt, arg);
	return 0;
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct watch_args *a)
{
	enum { OPT_FOLLOW = 256, OPT_LEN, OPT_ACCESS, OPT_DURATION, OPT_MAX_EVENTS,
	       OPT_MAX_SAMPLES, OPT_REGS, OPT_STACKS, OPT_BIN, OPT_FORCE_BIN, OPT_JSON };
	static const struct option opts[] = {
		{ "follow", required_argument, NULL, OPT_FOLLOW },
		{ "len", required_argument, NULL, OPT_LEN },
		{ "access", required_argument, NULL, OPT_ACCESS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
		{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
		{ "regs", no_argument, NULL, OPT_REGS },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "bin", required_argument, NULL, OPT_BIN },
		{ "force-bin", no_argument, NULL, OPT_FORCE_BIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, r;

	opterr = 0;
	a->opt.len = 8;
	a->opt.max_samples = 1000;
	/* Test hooks (src/watch/watch.h): the environment is read here, in
	 * the CLI, and handed to the library as options. */
	a->opt.emulate_traps = getenv("VIGIL_WATCH_EMULATE_TRAPS");
	a->opt.no_selftest = getenv("VIGIL_WATCH_NO_SELFTEST") != NULL;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!a->pid) {
				a->pid = optarg;
			} else if (a->n_addrs + a->n_follows >= MAX_WATCHES) {
				return cli_usage_error(cli, "too many locations (at most %d, and the hardware takes 4)", MAX_WATCHES);
			} else {
				a->addrs[a->n_addrs++] = optarg;
			}
			break;
		case OPT_FOLLOW:
			if (a->n_addrs + a->n_follows >= MAX_WATCHES)
				return cli_usage_error(cli, "too many locations (at most %d, and the hardware takes 4)", MAX_WATCHES);
			a->follows[a->n_follows++] = optarg;
			break;
		case OPT_LEN:
			if (vg_parse_u64(optarg, 0, &v) < 0 || (v != 1 && v != 2 && v != 4 && v != 8))
				return cli_usage_error(cli, "invalid --len '%s': x86 breakpoints watch 1, 2, 4 or 8 bytes", optarg);
			a->opt.len = (unsigned)v;
			break;
		case OPT_ACCESS:
			if (strcmp(optarg, "w") && strcmp(optarg, "rw"))
				return cli_usage_error(cli, "invalid --access '%s': expected w or rw (x86 has no read-only data breakpoint)", optarg);
			a->opt.rw = optarg[0] == 'r';
			break;
		case OPT_DURATION:
			if ((r = cli_parse_duration(cli, optarg, &a->opt.duration_ms)))
				return r;
			break;
		case OPT_MAX_EVENTS:
			if ((r = parse_number(cli, "--max-events", optarg, &a->opt.max_events)))
				return r;
			if (a->opt.max_events == 0)
				return cli_usage_error(cli, "--max-events must be at least 1");
			break;
		case OPT_MAX_SAMPLES:
			if ((r = parse_number(cli, "--max-samples", optarg, &v)))
				return r;
			a->opt.max_samples = (size_t)v;
			break;
		case OPT_REGS:
			a->opt.regs = true;
			break;
		case OPT_STACKS:
			a->opt.stacks = true;
			break;
		case OPT_BIN:
			a->bin_path = optarg;
			break;
		case OPT_FORCE_BIN:
			a->force_bin = true;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case 'h':
			fputs(cmd_watch_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (!a->pid)
			a->pid = argv[optind];
		else if (a->n_addrs + a->n_follows < MAX_WATCHES)
			a->addrs[a->n_addrs++] = argv[optind];
		else
			return cli_usage_error(cli, "too many locations (at most %d)", MAX_WATCHES);
	}
	if (!a->pid || a->n_addrs + a->n_follows == 0)
		return cli_usage_error(cli, "expected PID and at least one ADDR or --follow; usage: vigil watch PID ADDR... [--follow PTR_SLOT+OFFSET]");
	if (a->force_bin && !a->bin_path)
		return cli_usage_error(cli, "--force-bin needs --bin FILE");
	return 0;
}

/* --follow P+OFF: the offset is after the last '+', so P may itself be
 * SYMBOL+OFF ("g_root+8+16": slot g_root+8, leaf offset 16). */
static int split_follow(struct vg_cli *cli, const char *spec, char **slot, uint64_t *off)
{
	const char *plus = strrchr(spec, '+');

	*off = 0;
	if (plus && plus != spec && vg_parse_u64(plus + 1, 0, off) == 0) {
		*slot = strndup(spec, (size_t)(plus - spec));
	} else {
		*slot = strdup(spec);
	}
	if (!*slot)
		return cli_out_of_memory(cli, "parsing --follow");
	return 0;
}

/* ---- report: JSON ---------------------------------------------------- */

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
	cJSON_AddNumberToObject(o, "hits", (double)s->hits);
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

static cJSON *value_json(const struct vg_watch_value *v)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "kind", vg_value_kind_name(v->kind));
	add_text_or_null(o, "register", v->register_name[0] ? v->register_name : NULL);
	cJSON_AddNumberToObject(o, "width_bytes", v->width);
	if (v->kind == VG_VALUE_UNKNOWN) {
		cJSON_AddNullToObject(o, "value");
		add_text_or_null(o, "why", v->why);
	} else {
		vg_json_add_addr(o, "value", v->value);
	}
	if (v->kind == VG_VALUE_ADD_IMMEDIATE || v->kind == VG_VALUE_ADD_REGISTER) {
		char d[24];

		snprintf(d, sizeof(d), "%+" PRId64, value_delta(v));
		cJSON_AddStringToObject(o, "delta", d);
	}
	return o;
}

static void log_json(cJSON *o, const struct vg_watch_log *l, uint64_t start_ns, bool generations,
		     const char *sites_key, const char *samples_key)
{
	cJSON *sites = cJSON_AddArrayToObject(o, sites_key);
	cJSON *samples = cJSON_AddArrayToObject(o, samples_key);
	size_t *order = malloc((l->n_sites + 1) * sizeof(*order));

	/* Sites by hits, most first (the culprit is usually the busiest). */
	for (size_t i = 0; order && i < l->n_sites; i++) {
		size_t j = i;

		while (j > 0 && l->sites[order[j - 1]].hits < l->sites[i].hits) {
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
		cJSON_AddItemToObject(sj, "value", value_json(&s->value));
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
		cJSON_AddItemToObject(o, "last_written_value", value_json(&w->log.last_value));
	cJSON_AddNumberToObject(o, "accepted_hits", (double)w->log.accepted_hits);
	cJSON_AddNumberToObject(o, "writes", (double)w->log.writes);
	cJSON_AddNumberToObject(o, "traps", (double)w->log.accepted_hits);
	cJSON_AddNumberToObject(o, "setup_hits", (double)w->log.setup_hits);
	cJSON_AddNumberToObject(o, "hits_after_stop", (double)w->log.after_stop);
	log_json(o, &w->log, start_ns, false, "writer_sites", "samples");
	cJSON_AddBoolToObject(o, "samples_truncated", w->log.samples_truncated);
	return o;
}

static cJSON *dependent_json(const struct vg_watch *w, uint64_t start_ns)
{
	cJSON *o = cJSON_CreateObject();
	const struct vg_watch_generation *cur = w->n_gens ? &w->gens[w->n_gens - 1] : NULL;
	cJSON *gens;

	vg_json_add_text(o, "input", w->req.input);
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
	cJSON_AddNumberToObject(o, "setup_hits", (double)(w->log.setup_hits + w->leaf.setup_hits));
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
		if (i > 0)
			cJSON_AddNumberToObject(gj, "rebind_latency_ns",
						g->bound_ns > g->pointer_written_ns
						? (double)(g->bound_ns - g->pointer_written_ns) : 0);
		cJSON_AddItemToArray(gens, gj);
	}
	log_json(o, &w->leaf, start_ns, true, "writer_sites", "samples");
	cJSON_AddBoolToObject(o, "samples_truncated", w->leaf.samples_truncated);
	log_json(o, &w->log, start_ns, false, "root_writer_sites", "root_samples");
	cJSON_AddBoolToObject(o, "root_samples_truncated", w->log.samples_truncated);
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


static int print_json(struct vg_cli *cli, const struct vg_watch_session *s,
		      const struct watch_args *a, const char *bin_match,
		      const struct vg_images *imgs)
{
	cJSON *doc = vg_json_report_new("live_watch", cli->target);
	cJSON *caps, *obs, *arr, *dep, *reasons;
	const struct vg_perf_stats *st = vg_watch_perf_stats(s);
	const char *const *why = vg_watch_lower_bound_reasons(s);
	uint64_t start = vg_watch_start_ns(s);

	if (!doc)
		return cli_out_of_memory(cli, "building the JSON report");
	cJSON_AddStringToObject(doc, "backend", vg_watch_emulated(s) ? "uprobe_emulation" : "perf_breakpoint");
	{
		cJSON *proc = cJSON_GetObjectItem(doc, "process");
		const struct vg_image *main_img = imgs ? vg_images_main(imgs) : NULL;

		/* Without --bin the running executable is what symbols come
		 * from: it matches by definition. */
		cJSON_AddStringToObject(proc, "binary_match", bin_match ? bin_match : "running_executable");
		if (main_img)
			vg_json_add_addr(proc, "load_bias", main_img->bias);
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
	cJSON_AddBoolToObject(caps, "stacks_sampled", a->opt.stacks);

	obs = cJSON_AddObjectToObject(doc, "observation");
	if (a->opt.duration_ms)
		cJSON_AddNumberToObject(obs, "requested_ms", (double)a->opt.duration_ms);
	else
		cJSON_AddNullToObject(obs, "requested_ms");
	cJSON_AddNumberToObject(obs, "elapsed_ms", (double)vg_watch_elapsed_ms(s));
	cJSON_AddStringToObject(obs, "stop_reason", vg_stop_name(vg_watch_stop_reason(s)));
	/* exec() stops the watch; child processes write their own copies of
	 * memory: counted, not observed. */
	cJSON_AddItemToObject(obs, "process_tree",
			      vg_json_process_tree_perf(vg_watch_perf_stats(s), vg_watch_start_ns(s)));
	if (a->opt.max_events)
		cJSON_AddNumberToObject(obs, "max_events", (double)a->opt.max_events);
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
	return cli_print_json(doc);
}

/* ---- report: table --------------------------------------------------- */

static uint64_t le64(const unsigned char *b, unsigned len)
{
	uint64_t v = 0;

	for (unsigned i = len; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static void print_site(const char *indent, const struct vg_watch_site *s)
{
	const struct vg_writer *w = &s->writer;

	printf("%ssite  0x%012" PRIx64 "  ", indent, w->ip);
	if (s->file) {
		cli_put_text(stdout, s->file);
		printf(":%u", s->line);
	} else {
		fputs("??", stdout);
	}
	fputs("  ", stdout);
	cli_put_text(stdout, s->function ? s->function : "??");
	printf("  %s  %s  %s  writes %" PRIu64 "  traps %" PRIu64, w->text[0] ? w->text : "?",
	       vg_writer_kind_name(w->kind), vg_writer_confidence_name(w->confidence), s->writes,
	       s->traps);
	if (s->kernel && s->syscall[0])
		printf("  syscall %s(%d)", s->syscall, s->syscall_nr);
	else if (s->kernel)
		printf("  syscall unknown (not named by the kernel call chain)");
	printf("\n");
	if (s->unverified)
		printf("%s  unverified: %" PRIu64 " trap%s: %s\n", indent, s->unverified,
		       s->unverified == 1 ? "" : "s", s->unverified_why ? s->unverified_why : "?");
	if (s->writer.kind == VG_WRITER_UNKNOWN && s->writer.why)
		printf("%s  no writer: %s\n", indent, s->writer.why);
	for (size_t i = 1; i < s->n_frames; i++) {
		printf("%s  in  ", indent);
		cli_put_text(stdout, s->frames[i].function ? s->frames[i].function : "??");
		if (s->frames[i].file) {
			fputs("  ", stdout);
			cli_put_text(stdout, s->frames[i].file);
			printf(":%u", s->frames[i].line);
		}
		printf("\n");
	}
	if (s->caveat[0])
		printf("%s  caveat: %s\n", indent, s->caveat);
}

static void print_value(const struct vg_watch_value *v)
{
	if (v->kind == VG_VALUE_UNKNOWN)
		printf("value ?  (%s)", v->why ? v->why : "unknown");
	else if (v->kind == VG_VALUE_REGISTER)
		printf("value 0x%" PRIx64 "  (register %s)", v->value, v->register_name);
	else if (v->kind == VG_VALUE_ADD_IMMEDIATE)
		printf("value %+" PRId64 "  (added to the old value)", value_delta(v));
	else if (v->kind == VG_VALUE_ADD_REGISTER)
		printf("value %+" PRId64 "  (register %s added to the old value)", value_delta(v),
		       v->register_name);
	else
		printf("value 0x%" PRIx64 "  (immediate)", v->value);
}

static void print_log(const char *indent, const struct vg_watch_log *l, uint64_t start, bool gens)
{
	for (size_t i = 0; i < l->n_sites; i++)
		print_site(indent, &l->sites[i]);
	for (size_t i = 0; i < l->n_samples; i++) {
		const struct vg_watch_sample *s = &l->samples[i];

		printf("%ssample  +%.6fs  tid %d  0x%012" PRIx64 "  ", indent,
		       s->time_ns > start ? (double)(s->time_ns - start) / 1e9 : 0.0, (int)s->tid,
		       l->sites[s->site].writer.ip);
		if (gens)
			printf("gen %u  ", s->generation);
		if (s->traps > 1)
			printf("traps %" PRIu64 "  ", s->traps);
		print_value(&s->value);
		printf("\n");
	}
	if (l->samples_truncated)
		printf("%s# timeline truncated at %zu samples (--max-samples); counts are complete\n",
		       indent, l->n_samples);
}

static void print_table(struct vg_cli *cli, const struct vg_watch_session *s)
{
	const struct vg_perf_stats *st = vg_watch_perf_stats(s);
	const char *const *why = vg_watch_lower_bound_reasons(s);
	uint64_t start = vg_watch_start_ns(s);
	size_t n_threads, seeded = 0;
	const struct vg_cover_tid *t = vg_watch_threads(s, &n_threads);

	for (size_t i = 0; i < n_threads; i++)
		seeded += t[i].how == VG_COVER_SEEDED;
	printf("# vigil watch: pid %d (", (int)cli->target->pid);
	cli_put_text(stdout, cli->target->comm);
	printf("), backend %s, %zu thread%s (%zu seeded, %zu covered later), stop: %s after %" PRIu64 " ms\n",
	       vg_watch_emulated(s) ? "uprobe_emulation" : "perf_breakpoint", n_threads,
	       n_threads == 1 ? "" : "s", seeded, n_threads - seeded,
	       vg_stop_name(vg_watch_stop_reason(s)), vg_watch_elapsed_ms(s));
	for (size_t i = 0; i < vg_watch_count(s); i++) {
		const struct vg_watch *w = vg_watch_at(s, i);

		if (!w->req.follow) {
			printf("watch %zu  0x%012" PRIx64 "  ", i + 1, w->req.addr);
			cli_put_text(stdout, w->req.input);
			printf("  %s  len %u  access %s  initial ", w->region.perms, w->len, w->rw ? "rw" : "w");
			if (w->initial_ok)
				printf("0x%" PRIx64, le64(w->initial, w->len));
			else
				fputs("?", stdout);
			fputs("  latest ", stdout);
			if (w->latest_ok)
				printf("0x%" PRIx64, le64(w->latest, w->len));
			else
				fputs("?", stdout);
			printf("  writes %" PRIu64 "  traps %" PRIu64 "\n", w->log.writes,
			       w->log.accepted_hits);
			print_log("  ", &w->log, start, false);
			continue;
		}
		printf("follow %zu  slot 0x%012" PRIx64 "  ", i + 1, w->req.addr);
		cli_put_text(stdout, w->req.input);
		printf("  +%" PRIu64 "  len %u  %s  generation %zu  root writes %" PRIu64 "  writes %"
		       PRIu64 "  traps %" PRIu64 "\n", w->req.leaf_offset, w->len,
		       vg_binding_name(w->binding), w->n_gens ? w->n_gens - 1 : 0, w->log.writes,
		       w->leaf.writes, w->leaf.accepted_hits);
		for (size_t g = 0; g < w->n_gens; g++)
			printf("  gen %u  pointer 0x%" PRIx64 "  leaf 0x%" PRIx64 "  %s  hits %" PRIu64 "\n",
			       w->gens[g].index, w->gens[g].pointer, w->gens[g].leaf_addr,
			       vg_binding_name(w->gens[g].state), w->gens[g].hits);
		print_log("  ", &w->leaf, start, true);
		printf("  # pointer slot writes:\n");
		print_log("  ", &w->log, start, false);
	}
	printf("# lost %" PRIu64 ", undecodable %" PRIu64 ", other processes %" PRIu64
	       ", setup hits %" PRIu64 "\n", st->lost, st->undecodable, st->other_process,
	       st->before_start);
	if (!why[0])
		printf("# counts are exact\n");
	for (size_t i = 0; why[i]; i++)
		printf("# counts are a lower bound: %s\n", why[i]);
	cli_print_target_notes(cli->target);
}

/* ---- the command ----------------------------------------------------- */

static void progress_line(const struct vg_watch_session *s, void *arg)
{
	uint64_t hits = 0;

	for (size_t i = 0; i < vg_watch_count(s); i++) {
		const struct vg_watch *w = vg_watch_at(s, i);

		hits += w->log.accepted_hits + w->leaf.accepted_hits;
	}
	fprintf(stderr, "\r# watching: %" PRIu64 " s, %" PRIu64 " hits, %" PRIu64 " lost   ",
		(uint64_t)((vg_perf_now() - vg_watch_start_ns(s)) / 1000000000u), hits,
		vg_watch_perf_stats(s)->lost);
}

/* Resolve every ADDR and --follow slot into requests (validated later by
 * vg_watch_new, before anything is armed). */
static int build_requests(struct vg_cli *cli, const struct watch_args *a,
			  const struct vg_images *imgs, const struct vg_image *bin,
			  struct vg_watch_request *reqs, char **owned, size_t *n)
{
	struct vg_error err = { 0 };

	*n = 0;
	for (size_t i = 0; i < a->n_addrs + a->n_follows; i++) {
		bool follow = i >= a->n_addrs;
		const char *spec = follow ? a->follows[i - a->n_addrs] : a->addrs[i];
		struct vg_watch_request *q = &reqs[(*n)++];
		struct vg_addr addr;
		char *slot = NULL;
		int r;

		memset(q, 0, sizeof(*q));
		q->input = spec;
		q->follow = follow;
		if (follow) {
			r = split_follow(cli, spec, &slot, &q->leaf_offset);
			if (r)
				return r;
			owned[i] = slot;
		}
		if (vg_addr_parse(follow ? slot : spec, imgs, bin, &addr, &err) < 0)
			return cli_fail(cli, &err);
		q->addr = addr.runtime;
		q->symbol = addr.symbol;
		q->symbol_offset = addr.symbol_offset;
	}
	return 0;
}

int cmd_watch(struct vg_cli *cli, int argc, char **argv)
{
	struct watch_args a = { 0 };
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	struct vg_image *bin = NULL;
	struct vg_symbolizer *sym = NULL;
	struct vg_watch_session *s = NULL;
	struct vg_watch_request reqs[MAX_WATCHES];
	char *owned[MAX_WATCHES] = { 0 };
	const char *bin_match = NULL;
	struct cli_stop_signals stop = { .fd = -1 };
	int r;
	size_t n;

	cli->operation = "live_watch";   /* errors and reports say the same */
	r = parse_args(cli, argc, argv, &a);
	if (r)
		return r < 0 ? 0 : r;
	/* Ctrl-C and SIGTERM end the watch, not vigil, from the start: one
	 * during the setup (tens of ms) stops it at once, with a report. */
	cli_stop_signals_begin(&stop);
	r = cli_open_target(cli, a.pid, &maps, &mem);
	if (r)
		goto out;
	r = cli_need_user_memory(cli, "watch");
	if (r)
		goto out;
	r = cli_load_images(cli, a.bin_path, a.force_bin, maps, mem, &imgs, &bin, &bin_match);
	if (r)
		goto out;
	r = build_requests(cli, &a, imgs, bin, reqs, owned, &n);
	if (r)
		goto out;
	if (vg_symbolizer_open_target(cli->target, 0, &sym, &err) < 0 ||
	    vg_watch_new(cli->target, sym, maps, mem, reqs, n, &a.opt, &s, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}

	if (vg_watch_arm(s, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	{
		size_t nt;

		vg_watch_threads(s, &nt);
		fprintf(stderr, "# armed: %zu location%s in pid %d, %zu thread%s covered, %u debug "
			"register%s per thread%s\n", n, n == 1 ? "" : "s", (int)cli->target->pid, nt,
			nt == 1 ? "" : "s", vg_watch_slots_used(s), vg_watch_slots_used(s) == 1 ? "" : "s",
			vg_watch_emulated(s) ? " (uprobe emulation)" : "");
	}
	if (vg_watch_run(s, stop.fd, isatty(STDERR_FILENO) ? progress_line : NULL, NULL, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	vg_watch_disarm(s);
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (cli->json) {
		r = print_json(cli, s, &a, bin_match, imgs);
	} else {
		print_table(cli, s);
		r = 0;
	}
	if (r == 0) {
		const struct vg_perf_stats *st = vg_watch_perf_stats(s);

		if (st->exec_ns)
			fprintf(stderr, "# watch: pid %d called exec() ('%s'): stopped there; writes of the "
				"new program are not counted (exit 4)\n", (int)cli->target->pid, st->exec_comm);
		if (st->children)
			fprintf(stderr, "# watch: %" PRIu64 " child process%s created during the watch: "
				"their writes (to their own copies of memory) are not watched\n",
				st->children, st->children == 1 ? "" : "es");
		if (vg_watch_stop_reason(s) == VG_STOP_TARGET_EXEC)
			r = VG_EXIT_GONE;
	}
out:
	vg_watch_free(s);
	cli_stop_signals_end(&stop);
	vg_symbolizer_free(sym);
	vg_image_free(bin);
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	for (size_t i = 0; i < MAX_WATCHES; i++)
		free(owned[i]);
	return r;
}
