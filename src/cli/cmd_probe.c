/* cmd_probe.c - `vigil probe PID LOCATION...`: how often, how long and
 * with what arguments code runs in a live process, with the callers that
 * reach it.  Counts are exact (kernel uprobes with eBPF counters); the
 * report comes at the stop (duration, Ctrl-C or the target's exit). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/stack_opts.h"
#include "elf/addrspec.h"
#include "probe/probe.h"
#include "report/probe.h"
#include "report/stack_format.h"
#include "sym/symbolizer.h"
#include <stdlib.h>

#include "elf/usdt.h"
#include "report/text.h"
#include "util/outfile.h"

const char cmd_probe_usage[] =
	"usage: vigil probe PID|NAME LOCATION... [--duration TIME] [--latency] [--retval]\n"
	"                   [--args N] [--filter EXPR]\n"
	"                   [--stacks [--format table|folded|pprof|speedscope|svg]]\n"
	"                   [--per-thread] [--interval TIME] [--json] [-o FILE]...\n"
	"       vigil probe PID|NAME --list-usdt\n"
	"\n"
	"Is this code running, how often, how long does it take, with what arguments\n"
	"and who calls it?  Puts a kernel uprobe on each LOCATION of a running process\n"
	"(every thread, threads created later included) and counts every hit exactly\n"
	"with a small eBPF program, without stopping the process.  Stops at\n"
	"--duration, on Ctrl-C, or when the process exits; the report is written in\n"
	"every case.\n"
	"\n"
	"LOCATION:\n"
	"  SYMBOL, IMAGE:SYMBOL   a function (main executable first, then libraries)\n"
	"  SYMBOL+OFF             an instruction inside it (OFF decimal or 0xHEX)\n"
	"  0xADDR, @0xADDR        a runtime address, or a static one of the executable\n"
	"  FILE:LINE              every address the line tables give that source line,\n"
	"                         one site per function or inlined copy of it\n"
	"  usdt:PROVIDER:NAME, usdt:IMAGE:PROVIDER:NAME   a USDT probe (sys/sdt.h),\n"
	"                         semaphores raised by the kernel\n"
	"\n"
	CLI_TARGET_HELP
	CLI_LAUNCH_HELP
	"With -- CMD, LOCATIONs are in CMD itself: its libraries are not loaded yet.\n"
	"\n"
	"options:\n"
	"  --duration TIME   stop after TIME: 2s, 500ms, 1.5s, 1m (a bare number is\n"
	"                    milliseconds; default: until Ctrl-C)\n"
	"  --latency         time every call (entry and return probe, paired per thread,\n"
	"                    recursion included): min, p50, p90, p99, max, histogram\n"
	"  --retval          the return value of every call (rax, at a return probe;\n"
	"                    signed/unsigned/pointer from DWARF's return type): top\n"
	"                    values and a log2 histogram (bpftrace's retval); only at\n"
	"                    a function's entry, and one return probe serves --latency\n"
	"  --args N          the first N integer/pointer arguments (1-6, System V\n"
	"                    registers rdi rsi rdx rcx r8 r9), named and typed from\n"
	"                    DWARF: top values and a log2 histogram of integers\n"
	"  --filter EXPR     only the calls whose arguments match are counted, timed\n"
	"                    and recorded: TERM [&& TERM]... (up to 4), TERM is argN\n"
	"                    (0-5, arg0 = rdi) or a DWARF parameter name, an operator\n"
	"                    (== != < <= > >=) and a number: 'len > 4096 && arg0 != 0';\n"
	"                    evaluated in the kernel, typed as the parameter is; the\n"
	"                    report also gives the calls seen in all; with --latency\n"
	"                    or --retval a dropped call's return is left out too\n"
	"  --stacks          the call stacks that reach each location (CFI unwinding)\n"
	"  --format F        with --stacks, write the stacks instead of the report, as\n"
	"                    vigil profile does: table (functions by self and total\n"
	"                    share), folded (flamegraph.pl), pprof (gzipped\n"
	"                    profile.proto), speedscope, svg (flame graph); each stack\n"
	"                    runs from its outermost caller to the probed location,\n"
	"                    counted once per hit; json is the same as --json\n"
	"  --per-thread      calls per thread\n"
	"  --interval TIME   a stderr line every TIME (1s, 500ms): calls/s per location\n"
	"                    (perf stat -I)\n"
	"  --top N           stacks and values listed per location (default 5;\n"
	"                    --format table: functions per section, default 25)\n"
	"  --stack-bytes N   --stacks: user stack bytes copied per hit (default 8192)\n"
	"  --json            one JSON document (docs/json-schema/live_probe.json)\n"
	"  -o, --output FILE write the result to FILE (-: standard output) in the\n"
	"                    format its extension names (.json the JSON report, .txt\n"
	"                    the table; with --stacks .svg .pb.gz .folded\n"
	"                    .speedscope.json the stacks), else --format's; repeat\n"
	"                    it for several outputs of one run\n"
	"  --list-usdt       list the USDT probes of the process's images (image,\n"
	"                    PROVIDER:NAME, address, semaphore, argument spec)\n"
	"  -h, --help        this help\n"
	"\n"
	"Counting costs the target one kernel trap per hit (~1-20 us, the hardware's\n"
	"price); --latency, --retval, --args and --stacks add a record per hit.  While armed,\n"
	"the kernel keeps a breakpoint in its copy of each probed page; closing the\n"
	"probes restores the original bytes, which vigil reads back and checks.\n"
	"vigil never writes into the target.  Needs root or CAP_SYS_ADMIN: the\n"
	"kernel's uprobe PMU requires it since 2025 (CAP_PERFMON + CAP_BPF was\n"
	"enough before; the error says which is missing).\n"
	"\n"
	"examples:\n"
	"  vigil probe 4242 malloc --duration 5s\n"
	"  vigil probe 4242 handle_request --latency --stacks\n"
	"  vigil probe 4242 malloc --stacks --duration 5s --format svg -o malloc.svg\n"	"  vigil probe 4242 malloc --stacks --duration 5s -o malloc.svg -o malloc.pb.gz\n"
	"  vigil probe 4242 handle_request --latency -o report.json -o -\n"
	"  vigil probe 4242 'libc.so.6:write' --args 3 --interval 1s\n"
	"  vigil probe 4242 'libc.so.6:read' --retval --latency\n"
	"  vigil probe 4242 'libc.so.6:write' --filter 'arg0 == 2' --stacks\n"
	"  vigil probe 4242 'libc.so.6:read' --filter 'arg2 > 4096' --latency --retval\n"
	"  vigil probe 4242 server.c:118 --per-thread --json\n"
	"  vigil probe -p 4242 handle_request --duration 10s\n"
	"  vigil probe parse_line -- ./myprog input.txt     (counts from its first call)\n";

struct probe_args {
	const char *pid;
	const char *specs[VG_PROBE_MAX_LOCATIONS];
	size_t n_specs;
	struct vg_probe_opts o;
	bool json;
	const char *format_name;                /* --format: a stack format or json; NULL: none */
	bool stack_table;                       /* --format table --stacks: "table" is the stacks' */
	const char *out_args[CLI_MAX_OUTPUTS];
	size_t n_out_args;
	struct cli_outputs outs;
	uint64_t top;
	bool top_given;
	bool list_usdt;
};

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct probe_args *a)
{
	enum { OPT_DURATION = 256, OPT_LATENCY, OPT_RETVAL, OPT_FILTER, OPT_ARGS, OPT_STACKS, OPT_PER_THREAD,
	       OPT_INTERVAL, OPT_JSON, OPT_TOP, OPT_STACK_BYTES, OPT_FORMAT, OPT_LIST_USDT };
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "latency", no_argument, NULL, OPT_LATENCY },
		{ "retval", no_argument, NULL, OPT_RETVAL },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "args", required_argument, NULL, OPT_ARGS },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "list-usdt", no_argument, NULL, OPT_LIST_USDT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;
	uint64_t v;

	a->top = 5;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-ho:", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!a->pid) {
				a->pid = optarg;
				break;
			}
			if (a->n_specs == VG_PROBE_MAX_LOCATIONS)
				return cli_usage_error(cli, "at most %d locations", VG_PROBE_MAX_LOCATIONS);
			a->specs[a->n_specs++] = optarg;
			break;
		case OPT_DURATION:
			if ((r = cli_opt_duration(cli, optarg, &a->o.duration_ms)))
				return r;
			break;
		case OPT_LATENCY:
			a->o.latency = true;
			break;
		case OPT_LIST_USDT:
			a->list_usdt = true;
			break;
		case OPT_RETVAL:
			a->o.retval = true;
			break;
		case OPT_FILTER:
			a->o.filter = optarg;
			break;
		case OPT_ARGS:
			if (vg_parse_u64(optarg, 0, &v) < 0 || v == 0 || v > VG_PROBE_MAX_ARGS)
				return cli_usage_error(cli, "invalid --args '%s': expected 1 to %d (the integer argument registers)",
						       optarg, VG_PROBE_MAX_ARGS);
			a->o.n_args = (unsigned)v;
			break;
		case OPT_STACKS:
			a->o.stacks = true;
			break;
		case OPT_PER_THREAD:
			a->o.per_thread = true;
			break;
		case OPT_INTERVAL:
			if (cli_parse_duration(cli, "--interval", optarg, 10, 86400000, &v))
				return VG_EXIT_USAGE;
			a->o.interval_ms = v;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_TOP:
			if (vg_parse_u64(optarg, 0, &v) < 0 || v == 0 || v > 1000000)
				return cli_usage_error(cli, "invalid --top '%s': expected 1 to 1000000", optarg);
			a->top = v;
			a->top_given = true;
			break;
		case OPT_FORMAT:
			if ((r = cli_opt_format(cli, optarg)))
				return r;
			/* json is the report; the rest are the stacks'. */
			if (strcmp(optarg, "json") == 0) {
				a->json = true;
				a->format_name = NULL;
				break;
			}
			a->format_name = optarg;
			break;
		case OPT_STACK_BYTES:
			if (vg_parse_u64(optarg, 1, &v) < 0 || v < 512 || v > 16384 || v % 512)
				return cli_usage_error(cli, "invalid --stack-bytes '%s': expected a multiple of 512 from 512 to 16384", optarg);
			a->o.stack_bytes = (uint32_t)v;
			break;
		case 'o':
			if ((r = cli_opt_output(cli, optarg, a->out_args, &a->n_out_args)))
				return r;
			break;
		case 'h':
			fputs(cmd_probe_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	if (!a->pid)
		return cli_usage_error(cli, "expected a PID and at least one LOCATION; usage: vigil probe PID LOCATION... [options]");
	if (a->list_usdt && a->n_specs)
		return cli_usage_error(cli, "--list-usdt takes no LOCATION");
	if (a->list_usdt && (a->json || cli->json || a->n_out_args))
		return cli_usage_error(cli, "--list-usdt prints a text list to standard output: no --json or -o");
	if (a->list_usdt)
		return 0;
	if (!a->n_specs)
		return cli_usage_error(cli, "expected at least one LOCATION after the PID (SYMBOL, IMAGE:SYMBOL, SYMBOL+OFF, 0xADDR, @0xADDR, FILE:LINE)");
	if (a->format_name && !a->o.stacks)
		return cli_usage_error(cli, "--format %s writes the call stacks: add --stacks", a->format_name);
	if (a->format_name && (a->json || cli->json))
		return cli_usage_error(cli, "--json and --format %s disagree", a->format_name);
	a->stack_table = a->format_name && strcmp(a->format_name, "table") == 0;
	r = cli_outputs_plan(cli, a->out_args, a->n_out_args,
			     a->format_name ? a->format_name : a->json || cli->json ? "json" : NULL,
			     "table", cli_opt_format_known, &a->outs);
	if (r)
		return r;
	/* An extension that names a stack format asks for the stacks. */
	for (size_t i = 0; i < a->outs.n; i++)
		if (!a->o.stacks && strcmp(a->outs.o[i].format, "table") != 0 &&
		    strcmp(a->outs.o[i].format, "json") != 0)
			return cli_usage_error(cli, "-o '%s' is a %s file, which holds the call stacks: add --stacks",
					       a->outs.o[i].arg, a->outs.o[i].format);
	return 0;
}

/* ---- live lines ---- */

struct live {
	uint64_t prev[VG_PROBE_MAX_LOCATIONS];
	uint64_t prev_ns;
};

static void interval_line(struct vg_probe_session *s, uint64_t elapsed_ns, void *arg)
{
	struct live *lv = arg;
	double dt = (double)(elapsed_ns - lv->prev_ns) / 1e9;

	fprintf(stderr, "# +%.3fs", (double)elapsed_ns / 1e9);
	for (size_t i = 0; i < vg_probe_n_locations(s); i++) {
		uint64_t now = vg_probe_live_calls(s, i);

		fputs("  ", stderr);
		cli_put_text(stderr, vg_probe_location(s, i)->loc.input);
		fprintf(stderr, " %.0f/s", dt > 0 ? (double)(now - lv->prev[i]) / dt : 0.0);
		lv->prev[i] = now;
	}
	fputc('\n', stderr);
	lv->prev_ns = elapsed_ns;
}

/* The document to stdout as every command prints it, or to the -o file
 * on one line.  0, -EIO (out's error), or an exit code. */
static int print_json(struct vg_cli *cli, struct vg_probe_session *s, struct vg_symbolizer *sym,
		      const struct probe_args *a, FILE *out)
{
	struct vg_error err = { 0 };
	cJSON *doc = vg_report_probe_json(s, sym, cli->target, (size_t)a->top, &err);

	if (!doc)
		return cli_fail(cli, &err);
	return cli_write_json(cli, doc, out);
}

/* --format: the stacks through the stack writers' table, as profile
 * writes its own.  0, or a negative errno with err filled. */
static int write_stacks(struct vg_probe_session *s, const struct vg_target *t,
			const struct probe_args *a, const struct vg_stack_format *f, FILE *out,
			struct vg_error *err)
{
	struct vg_stacks *stacks = NULL;
	struct vg_stacks_meta meta;
	char cut_why[256];
	struct vg_stack_write_opts wo = { .meta = &meta, .top = a->top_given ? (size_t)a->top : 25 };
	int r = vg_probe_stacks(s, &stacks, err);

	if (r < 0)
		return r;
	vg_report_probe_stacks_meta(s, t, &meta, cut_why, sizeof(cut_why));
	r = f->write(out, stacks, &wo, err);
	vg_stacks_free(stacks);
	return r;
}

/* What each output of the probe is written from. */
struct probe_write {
	struct vg_probe_session *s;
	struct vg_symbolizer *sym;
	const struct probe_args *a;
};

static int probe_writer(struct vg_cli *cli, FILE *out, const struct cli_output *o, void *arg,
			struct vg_error *err)
{
	const struct probe_write *pw = arg;

	if (strcmp(o->format, "json") == 0)
		return print_json(cli, pw->s, pw->sym, pw->a, out);
	if (strcmp(o->format, "table") == 0 && !pw->a->stack_table)
		return vg_report_probe_table(out, pw->s, pw->sym, cli->target, (size_t)pw->a->top);
	return write_stacks(pw->s, cli->target, pw->a, vg_stack_format_find(o->format), out, err);
}

/* --list-usdt: every image's .note.stapsdt probes, as usdt: locations
 * name them, at their runtime addresses. */
static int list_usdt(struct vg_cli *cli, struct vg_symbolizer *sym)
{
	const struct vg_images *imgs = vg_symbolizer_images(sym);
	struct vg_error err = { 0 };
	size_t total = 0;

	for (size_t i = 0; imgs && i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		struct vg_usdt_probe *p = NULL;
		size_t n = 0;

		if (vg_usdt_image_probes(img, &p, &n, &err) < 0)
			return cli_fail(cli, &err);
		if (n) {
			vg_text_put(stdout, img->path && img->path[0] ? img->path : "?");
			fputc('\n', stdout);
		}
		for (size_t k = 0; k < n; k++) {
			char loc[160];

			snprintf(loc, sizeof(loc), "usdt:%s:%s", p[k].provider, p[k].name);
			fputs("  ", stdout);
			vg_text_put(stdout, loc);
			printf("  0x%" PRIx64, p[k].pc + img->bias);
			if (p[k].semaphore)
				printf("  semaphore 0x%" PRIx64, p[k].semaphore + img->bias);
			fputs("  args ", stdout);
			vg_text_put(stdout, p[k].args[0] ? p[k].args : "-");
			fputc('\n', stdout);
		}
		total += n;
		free(p);
	}
	if (!total)
		printf("# no USDT probes in the %zu images of the process\n", imgs ? imgs->n : 0);
	return fflush(stdout) == 0 ? 0 : VG_EXIT_RUNTIME;
}

int cmd_probe(struct vg_cli *cli, int argc, char **argv)
{
	struct probe_args a;
	struct vg_error err = { 0 };
	struct vg_symbolizer *sym = NULL;
	struct vg_probe_session *s = NULL;
	struct cli_stop_signals stop = { .fd = -1 };
	struct live lv;
	int r;

	cli->operation = "live_probe";
	memset(&a, 0, sizeof(a));
	memset(&lv, 0, sizeof(lv));
	r = parse_args(cli, argc, argv, &a);
	if (r)
		return r < 0 ? 0 : r;
	/* A bad -o is refused now, not after the run it would lose. */
	r = cli_outputs_check(cli, &a.outs);
	if (r)
		return r;
	/* Ctrl-C and SIGTERM end the probe, not vigil, from the start: one
	 * during the setup (resolving, loading, arming: tens of ms) stops it
	 * right after arming, and the report follows. */
	cli_stop_signals_begin(&stop);
	r = cli_attach(cli, a.pid);
	if (r)
		goto out;
	r = cli_need_user_memory(cli, "probe");
	if (r)
		goto out;
	if (vg_symbolizer_open_target(cli->target, 0, &sym, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (a.list_usdt) {
		r = list_usdt(cli, sym);
		goto out;
	}
	r = vg_probe_new(cli->target, sym, a.specs, a.n_specs, &a.o, &s, &err);
	if (r < 0) {
		if (r == -ESRCH)
			vg_target_explain(cli->target, err.code, &err);
		else if (r == -E2BIG || r == -ENODATA)
			vg_error_set_exit(&err, VG_EXIT_USAGE);
		r = cli_fail(cli, &err);
		goto out;
	}
	for (size_t i = 0; i < vg_probe_n_locations(s); i++) {
		const struct vg_probe_location *l = &vg_probe_location(s, i)->loc;

		if (l->ifunc)
			fprintf(stderr, "# %s: '%s' is an IFUNC (resolver at 0x%" PRIx64 "): probing the implementation this process selected, %s at 0x%" PRIx64 "\n",
				l->input, l->ifunc, l->ifunc_resolver,
				l->sites[0].function ? l->sites[0].function : "(no symbol)",
				l->sites[0].runtime_addr);
		if (l->n_definitions > 1)
			cli_warn("'%s' is defined in %u images: probing the one in %s (main executable first, "
				 "then map order); name the image with IMAGE:SYMBOL to choose", l->input,
				 l->n_definitions, l->sites[0].image && l->sites[0].image->path[0]
				 ? l->sites[0].image->path : l->sites[0].path);
	}
	if (vg_probe_arm(s, &err) < 0) {
		vg_target_explain(cli->target, err.code, &err);
		if (err.code == -EOPNOTSUPP)   /* no uprobe PMU: a kernel capability */
			vg_error_set_exit(&err, VG_EXIT_PERM);
		r = cli_fail(cli, &err);
		goto out;
	}
	r = cli_launch_release(cli);   /* "-- CMD": armed before its first instruction */
	if (r)
		goto out;
	fprintf(stderr, "# probing pid %d: %zu location%s, %zu site%s (mechanism uprobe+bpf)%s; Ctrl-C to stop\n",
		(int)cli->target->pid, vg_probe_n_locations(s), vg_probe_n_locations(s) == 1 ? "" : "s",
		vg_probe_n_sites(s), vg_probe_n_sites(s) == 1 ? "" : "s",
		a.o.duration_ms ? ", for the --duration" : "");
	if (vg_probe_run(s, stop.fd, a.o.interval_ms ? interval_line : NULL, &lv, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	/* Each created only now, and renamed over its path only when
	 * complete: a probe that could not start leaves an earlier report in
	 * place. */
	for (size_t i = 0; i < a.outs.n; i++) {
		struct probe_write pw = { s, sym, &a };

		r = cli_output_write(cli, &a.outs.o[i], a.outs.o[i].path, 0, "probe report",
				     probe_writer, &pw);
		if (r)
			goto out;
	}
	{
		const struct vg_probe_stats *st = vg_probe_stats(s);
		uint64_t calls = 0;

		for (size_t i = 0; i < vg_probe_n_locations(s); i++)
			calls += vg_probe_location(s, i)->calls;
		fprintf(stderr, "# probe: stopped (%s) after %.3f s; %" PRIu64 " calls; %" PRIu64 " records, %" PRIu64
			" lost; probes removed%s\n",
			vg_stop_name(vg_probe_stop_reason(s)), (double)vg_probe_duration_ns(s) / 1e9, calls,
			st->records, st->records_lost,
			vg_probe_stop_reason(s) == VG_STOP_TARGET_EXITED ? "" :
			!st->code_restored ? "; code bytes NOT verified" :
			st->code_foreign_int3 ? ", code bytes verified (another uprobe's int3 still armed there)" :
			", code bytes verified");
	}
	{
		const struct vg_probe_stats *st = vg_probe_stats(s);

		if (st->exec_ns && st->exec_gate_kernel)
			fprintf(stderr, "# probe: pid %d called exec() ('%s'): stopped there, in the kernel; "
				"the counts are the old program's, a lower bound for the process (exit 4)\n",
				(int)cli->target->pid, st->exec_comm);
		else if (st->exec_ns)
			fprintf(stderr, "# probe: pid %d called exec() ('%s'): stopped %.0f us later; the "
				"counts may include calls of the new program made meanwhile (exit 4)\n",
				(int)cli->target->pid, st->exec_comm,
				st->exec_gate_ns > st->exec_ns ? (double)(st->exec_gate_ns - st->exec_ns) / 1e3 : 0.0);
		if (st->children)
			fprintf(stderr, "# probe: %" PRIu64 " child process%s created during the probe "
				"%s not counted: the counts are a lower bound\n", st->children,
				st->children == 1 ? "" : "es", st->children == 1 ? "was" : "were");
	}
	cli_print_target_notes(cli->target);
	r = vg_probe_stop_reason(s) == VG_STOP_TARGET_EXEC ? VG_EXIT_GONE : 0;
out:
	vg_probe_free(s);
	cli_stop_signals_end(&stop);
	vg_symbolizer_free(sym);
	return r;
}
