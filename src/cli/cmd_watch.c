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
#include "expr/eval.h"
#include "expr/parse.h"
#include "expr/tls.h"
#include "report/json.h"
#include "report/print.h"
#include "report/watch.h"
#include "target/maps.h"
#include "target/mem.h"
#include "util/zydis.h"
#include "watch/watch.h"

const char cmd_watch_usage[] =
	"usage: vigil watch PID|NAME ADDR|EXPR... [--expr EXPR]... [--follow PTR_SLOT+OFFSET]...\n"
	"                   [--len 1|2|4|8] [--access w|rw] [--duration TIME] [--max-events N]\n"
	"                   [--max-samples N] [--regs] [--stacks] [--bin FILE [--force-bin]]\n"
	"                   [--tid TID] [--json]\n"
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
	"An argument that is no ADDR form is a C expression over the DWARF, as vigil\n"
	"print reads it ('g_head->mid->tail->val'): its length comes from its type\n"
	"(1, 2, 4 or 8 bytes), each pointer it reads is watched too, and a write to\n"
	"one moves the breakpoints after it (as --follow); written values are also\n"
	"shown by their type.  A thread-local variable (errno, __thread data) is that\n"
	"of the thread --tid names (through libthread_db, as vigil print finds it).\n"
	"\n"
	"x86 has 4 debug registers per thread: a watch takes 1, a --follow takes 2,\n"
	"an expression 1 per pointer hop + 1 (said on stderr before arming).\n"
	"Stops at --duration, --max-events, when the target exits, or on Ctrl-C; the\n"
	"report is printed in every case.  Every count says whether it is exact.\n"
	"\n"
	CLI_TARGET_HELP
	CLI_LAUNCH_HELP
	"With -- CMD, ADDRs are in CMD itself: its libraries are not loaded yet.\n"
	"\n"
	"options:\n"
	"  --follow P+OFF   watch the pointer stored at P and the location *P + OFF;\n"
	"                   when P is written the leaf breakpoint moves to the new\n"
	"                   target (a new generation); P takes the ADDR forms\n"
	"  --expr EXPR      watch EXPR as an expression even if it reads as an ADDR\n"
	"                   (--expr g_count: the length from its type)\n"
	"  --len N          bytes watched: 1, 2, 4 or 8 (default 8); ADDR must be\n"
	"                   aligned to N; an expression's length is its type's\n"
	"  --access w|rw    writes only (default), or reads and writes\n"
	"  --duration TIME  stop after TIME: 2s, 500ms, 1.5s, 1m (a bare number is\n"
	"                   milliseconds; default: until Ctrl-C)\n"
	"  --max-events N   stop after N accepted traps\n"
	"  --max-samples N  timeline entries kept per watch (default 1000); counts\n"
	"                   stay exact past it\n"
	"  --regs           accepted for compatibility: the registers are always\n"
	"                   sampled (they verify each writer and give its value)\n"
	"  --stacks         each write's user call stack, unwound by CFI\n"
	"  --bin FILE       take @0xHEX and symbols from FILE (an unstripped copy of\n"
	"                   the running executable)\n"
	"  --force-bin      use --bin FILE even when it does not match\n"
	"  --tid TID        the thread whose thread-local variables an expression\n"
	"                   names (required for one: each thread has its own copy)\n"
	"  --json           one JSON document (docs/json-schema/live_watch.json)\n"
	"  -h, --help       this help\n"
	"\n"
	"A line '# armed: ...' on stderr says when every thread is covered.\n"
	"\n"
	"examples:\n"
	"  vigil watch 4242 g_config+16 --len 4 --regs\n"
	"  vigil watch 4242 0x7ffd5e8c1a28 --duration 5s --json\n"
	"  vigil watch 4242 --follow g_queue+8 --len 4 --regs   (*g_queue + 8)\n"
	"  vigil watch 4242 'g_head->mid->tail->val'\n"
	"  vigil watch 4242 g_tls_count --tid 4250      (thread 4250's __thread copy)\n";

#define MAX_WATCHES 8

/* A chain hop further than this from the pointer before it is not a
 * member or constant index of what that pointer points to (an index
 * read from memory, a[g_i]): it cannot be re-bound from that pointer. */
#define MAX_HOP_OFFSET (16ull << 20)

struct watch_args {
	const char *pid;
	const char *addrs[MAX_WATCHES];
	bool is_expr[MAX_WATCHES];   /* --expr: an expression even if it reads as an ADDR */
	size_t n_addrs;
	const char *follows[MAX_WATCHES];
	size_t n_follows;
	struct vg_watch_options opt;
	const char *bin_path;
	bool force_bin;
	pid_t tid;                   /* --tid: whose thread-local variables; 0: none */
};

static int parse_number(struct vg_cli *cli, const char *opt, const char *arg, uint64_t *out)
{
	if (vg_parse_u64(arg, 0, out) < 0)
		return cli_usage_error(cli, "invalid %s '%s': expected a number (decimal or 0xHEX)", opt, arg);
	return 0;
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct watch_args *a)
{
	enum { OPT_FOLLOW = 256, OPT_EXPR, OPT_LEN, OPT_ACCESS, OPT_DURATION, OPT_MAX_EVENTS,
	       OPT_MAX_SAMPLES, OPT_REGS, OPT_STACKS, OPT_BIN, OPT_FORCE_BIN, OPT_JSON, OPT_TID };
	static const struct option opts[] = {
		{ "follow", required_argument, NULL, OPT_FOLLOW },
		{ "expr", required_argument, NULL, OPT_EXPR },
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
		{ "tid", required_argument, NULL, OPT_TID },
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
		case OPT_EXPR:
			if (a->n_addrs + a->n_follows >= MAX_WATCHES)
				return cli_usage_error(cli, "too many locations (at most %d, and the hardware takes 4)", MAX_WATCHES);
			a->is_expr[a->n_addrs] = true;
			a->addrs[a->n_addrs++] = optarg;
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
			if ((r = cli_parse_duration(cli, "--duration", optarg, 1, CLI_MAX_DURATION_MS, &a->opt.duration_ms)))
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
		case OPT_TID:
			if ((r = cli_parse_pid(cli, optarg, &a->tid)))
				return r;
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

/* ---- the command ----------------------------------------------------- */

static void progress_line(const struct vg_watch_session *s, void *arg)
{
	uint64_t hits = 0;

	for (size_t i = 0; i < vg_watch_count(s); i++) {
		const struct vg_watch *w = vg_watch_at(s, i);

		hits += w->log.accepted_hits + w->leaf.accepted_hits;
		for (size_t k = 0; k < w->req.n_mid; k++)
			hits += w->mid[k].log.accepted_hits;
	}
	fprintf(stderr, "\r# watching: %" PRIu64 " s, %" PRIu64 " hits, %" PRIu64 " lost   ",
		(uint64_t)((vg_perf_now() - vg_watch_start_ns(s)) / 1000000000u), hits,
		vg_watch_perf_stats(s)->lost);
}

/* What the report needs to show an expression's values by their type. */
struct typed_ctx {
	struct vg_expr_env *env;
	const struct vg_type *type;
};

static char *format_typed(void *arg, const unsigned char *bytes, unsigned len)
{
	const struct typed_ctx *c = arg;
	const struct vg_type *st = vg_type_strip(c->type);
	struct vg_print_opts o = { .max_depth = 20, .max_elements = 200 };
	char sym[160] = "";

	if (st && st->kind == VG_TYPE_POINTER && len == 8) {
		uint64_t p = 0;

		for (unsigned i = 8; i-- > 0;)
			p = p << 8 | bytes[i];
		if (p)
			vg_expr_env_describe(c->env, p, sym, sizeof(sym));
	}
	return vg_report_print_scalar(c->type, bytes, len, sym, &o);
}

/* An expression watch: its lvalue, its length from its type, and the
 * pointers read on the way as a chain (root slot, mid hops, leaf offset)
 * that the watch re-binds when one of them is written. */
static int expr_request(struct vg_cli *cli, struct vg_expr_env *env, const char *text,
			struct vg_expr_result *res, char **type_name, struct typed_ctx *typed,
			struct vg_watch_request *q)
{
	struct vg_error err = { 0 };
	struct vg_expr *e = NULL;
	const struct vg_type *st;
	uint64_t size, prev;
	char tn[256];
	int r;

	if (vg_expr_parse_typed(text, vg_expr_env_is_type, env, &e, &err) < 0)
		return cli_fail(cli, &err);
	r = vg_expr_eval(env, e, res, &err);
	vg_expr_free(e);
	if (r < 0) {
		vg_target_explain(cli->target, err.code, &err);
		return cli_fail(cli, &err);
	}
	if (!res->lvalue)
		return cli_usage_error(cli, "%s: not an object in memory (an lvalue): nothing to watch", text);
	vg_type_name(res->type, tn, sizeof(tn));
	if (res->bit_size)
		return cli_usage_error(cli, "%s: a bit-field (%s : %u): a breakpoint watches whole bytes; "
				       "watch its storage unit by address (vigil print --json gives its offset)",
				       text, tn, res->bit_size);
	size = vg_type_size(res->type);
	if (size != 1 && size != 2 && size != 4 && size != 8) {
		st = vg_type_strip(res->type);
		if (st && (st->kind == VG_TYPE_STRUCT || st->kind == VG_TYPE_UNION || st->kind == VG_TYPE_CLASS) &&
		    st->n_members && st->members[0].name)
			return cli_usage_error(cli, "%s is %s (%" PRIu64 " bytes): a hardware breakpoint watches "
					       "1, 2, 4 or 8 aligned bytes; watch one member (%s%s%s.%s)",
					       text, tn, size, text[0] == '*' ? "(" : "", text,
					       text[0] == '*' ? ")" : "", st->members[0].name);
		return cli_usage_error(cli, "%s is %s (%" PRIu64 " bytes): a hardware breakpoint watches 1, 2, "
				       "4 or 8 aligned bytes; watch one member or element", text, tn, size);
	}
	if (!(*type_name = strdup(tn)))
		return cli_out_of_memory(cli, "for the expression");
	q->input = text;
	q->expr = text;
	q->type_name = *type_name;
	q->len = (unsigned)size;
	*typed = (struct typed_ctx){ env, res->type };
	q->format = format_typed;
	q->format_arg = typed;
	if (res->n_hops + 1 > VG_WATCH_MAX_SLOTS)
		return cli_usage_error(cli, "%s needs %zu debug registers (%zu pointer hops + leaf); x86 has 4 "
				       "(DR0-DR3): watch a shorter path, e.g. from a pointer it reaches",
				       text, res->n_hops + 1, res->n_hops);
	if (res->n_hops)
		fprintf(stderr, "# %s needs %zu debug registers: %zu hop%s + leaf; this machine has %d\n",
			text, res->n_hops + 1, res->n_hops, res->n_hops == 1 ? "" : "s", VG_WATCH_MAX_SLOTS);
	else
		fprintf(stderr, "# %s needs 1 debug register (no pointer hop); this machine has %d\n",
			text, VG_WATCH_MAX_SLOTS);
	if (res->n_hops == 0) {
		q->addr = res->addr;
		return 0;
	}
	q->follow = true;
	q->addr = res->hops[0].slot;
	prev = res->hops[0].value;
	for (size_t k = 1; k <= res->n_hops; k++) {
		uint64_t at = k < res->n_hops ? res->hops[k].slot : res->addr;

		if (at - prev >= MAX_HOP_OFFSET)
			return cli_usage_error(cli, "%s: %s is not reached from %s by a member or a constant "
					       "index, so it cannot be re-bound when that pointer changes",
					       text, k < res->n_hops ? res->hops[k].expr : text,
					       res->hops[k - 1].expr);
		if (k < res->n_hops) {
			q->mid_offsets[k - 1] = at - prev;
			q->mid_inputs[k - 1] = res->hops[k].expr;
			prev = res->hops[k].value;
		} else {
			q->leaf_offset = at - prev;
		}
	}
	q->n_mid = res->n_hops - 1;
	return 0;
}

/* A thread's fs base for the watch (vg_watch_options.thread_pointer):
 * the threads libthread_db listed before arming (a thread created later
 * has none: its fs: stores stay heuristic). */
struct thread_pointers {
	struct vg_tls_thread *t;
	size_t n;
};

static int thread_pointer(void *ctx, pid_t tid, uint64_t *fs_base)
{
	const struct thread_pointers *tp = ctx;

	for (size_t i = 0; i < tp->n; i++) {
		if (tp->t[i].tid == tid) {
			*fs_base = tp->t[i].tp;
			return 0;
		}
	}
	return -ENOENT;
}

/* Resolve every ADDR, expression and --follow slot into requests
 * (validated later by vg_watch_new, before anything is armed).  An
 * argument that is no ADDR form is an expression over the DWARF. */
static int build_requests(struct vg_cli *cli, const struct watch_args *a,
			  const struct vg_images *imgs, const struct vg_image *bin,
			  struct vg_mem *mem, struct vg_expr_env **env,
			  struct vg_expr_result *results, struct typed_ctx *typed,
			  struct vg_watch_request *reqs,
			  char **owned, size_t *n)
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
		if ((follow || !a->is_expr[i]) &&
		    vg_addr_parse(follow ? slot : spec, imgs, bin, &addr, &err) == 0) {
			q->addr = addr.runtime;
			q->symbol = addr.symbol;
			q->symbol_offset = addr.symbol_offset;
			continue;
		}
		if (follow)
			return cli_fail(cli, &err);
		vg_error_clear(&err);
		if (!*env) {
			char root[64];

			snprintf(root, sizeof(root), "/proc/%d/root", (int)cli->target->mm_pid);
			if (!(*env = vg_expr_env_new(imgs, mem, root)))
				return cli_out_of_memory(cli, "for the expression environment");
			/* No default thread: a thread-local watched in the wrong
			 * thread would report nothing, and say nothing. */
			vg_expr_env_set_thread(*env, cli->target->pid, a->tid);
		}
		r = expr_request(cli, *env, spec, &results[i], &owned[i], &typed[i], q);
		if (r)
			return r;
	}
	return 0;
}

int cmd_watch(struct vg_cli *cli, int argc, char **argv)
{
	struct watch_args a = { 0 };
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;   /* the symbolizer's once it is open */
	const struct vg_image *main_img;
	bool has_load_bias = false;
	uint64_t load_bias = 0;
	struct vg_image *bin = NULL;
	struct vg_symbolizer *sym = NULL;
	struct vg_watch_session *s = NULL;
	struct vg_watch_request reqs[MAX_WATCHES];
	struct vg_expr_result results[MAX_WATCHES] = { 0 };
	struct typed_ctx typed[MAX_WATCHES] = { 0 };
	struct vg_expr_env *env = NULL;
	char *owned[MAX_WATCHES] = { 0 };
	const char *bin_match = NULL;
	struct cli_stop_signals stop = { .fd = -1 };
	struct thread_pointers tps = { 0 };
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
	r = build_requests(cli, &a, imgs, bin, mem, &env, results, typed, reqs, owned, &n);
	if (r)
		goto out;
	main_img = vg_images_main(imgs);
	if (main_img) {
		has_load_bias = true;
		load_bias = main_img->bias;
	}
	/* The symbolizer takes the images the ADDRs were resolved with (and
	 * borrows the maps): opening every ELF again doubled the setup. */
	/* The threads' fs bases, while the image set is ours: a store to a
	 * thread-local of the executable (fs:) is then verified. */
	if (vg_tls_thread_pointers(imgs, mem, cli->target->pid, &tps.t, &tps.n, NULL) < 0)
		tps.n = 0;
	r = vg_symbolizer_open_loaded(cli->target, 0, maps, imgs, &sym, &err);
	imgs = NULL;
	a.opt.thread_pointer = thread_pointer;
	a.opt.thread_pointer_ctx = &tps;
	if (r < 0 ||
	    vg_watch_new(cli->target, sym, maps, mem, reqs, n, &a.opt, &s, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}

	if (vg_watch_arm(s, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	{
		const char *why;

		/* Loaded now, before the first hit, and said once. */
		if (!vg_zydis_load(&why))
			cli_warn("%s: the writing instructions are not decoded (kind, value and operand unknown)",
				 why);
	}
	r = cli_launch_release(cli);   /* "-- CMD": watched from its first instruction */
	if (r)
		goto out;
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
		struct vg_report_watch_meta m = {
			.target = cli->target, .opt = &a.opt, .bin_match = bin_match,
			.has_load_bias = has_load_bias, .load_bias = load_bias,
		};
		cJSON *doc = vg_report_watch_json(s, &m, &err);

		r = doc ? cli_print_json(doc) : cli_fail(cli, &err);
	} else {
		r = vg_report_watch_table(stdout, s, cli->target);
		cli_print_target_notes(cli->target);
		r = r < 0 ? 1 : 0;
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
	free(tps.t);
	for (size_t i = 0; i < MAX_WATCHES; i++)
		vg_expr_result_clear(&results[i]);
	vg_expr_env_free(env);
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
