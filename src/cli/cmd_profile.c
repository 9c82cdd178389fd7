/* cmd_profile.c - `vigil profile PID`: where a live process spends its
 * time, as a table, collapsed stacks, pprof, speedscope, an SVG flame graph
 * or JSON.  Samples are symbolized while they arrive, so the report is
 * written right at the stop (duration, Ctrl-C or the target's exit). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/stack_opts.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "report/profile.h"
#include "report/push.h"
#include "report/stack_format.h"
#include "sym/symbolizer.h"
#include "util/outfile.h"

const char cmd_profile_usage[] =
	"usage: vigil profile PID|NAME|-p PID,PID...|-- CMD [--freq HZ] [--duration TIME] [--event EVENT] [--tid TID]...\n"
	"                     [--unwind dwarf|fp] [--no-kernel]\n"
	"                     [--format table|folded|pprof|speedscope|svg|json] [-o FILE]...\n"
	"                     [--every TIME [--keep N] [--push URL [--service NAME] [--label K=V]...]]\n"
	"\n"
	"Where does this process spend its time?  Samples every thread of a running\n"
	"process, threads created later included, with a clock (cpu-clock by default:\n"
	"it works in VMs without a hardware PMU), takes each sample's kernel stack from\n"
	"the kernel and its user stack by CFI unwinding (--unwind dwarf, the default:\n"
	"correct through code without frame pointers such as Debian's libc) or by frame\n"
	"pointers (--unwind fp: cheaper, wrong through such code), symbolizes every\n"
	"frame with its inline frames, and aggregates the stacks while sampling.\n"
	"JIT code is named from the /tmp/perf-PID.map its runtime writes (node\n"
	"--perf-basic-prof, perf-map-agent, .NET, LuaJIT) and unwound by its frame\n"
	"pointers.\n"
	"Stops at --duration, on Ctrl-C, or when the process exits; the result is\n"
	"written in every case.  Every report says how many samples were lost.\n"
	"\n"
	CLI_TARGET_HELP
	CLI_LAUNCH_HELP
	CLI_SEVERAL_HELP
	"With several, each process is sampled with its own maps and symbols, every\n"
	"stack starts at a root frame COMM-PID naming its process (in every format),\n"
	"the table says each one's share (\"by process:\") and the JSON lists them\n"
	"(processes[]); one that exits is reported and the others go on.\n"
	"\n"
	"options:\n"
	"  --freq HZ         samples per second of running thread (default 999;\n"
	"                    19 with --every)\n"
	"  --duration TIME   stop after TIME: 2s, 500ms, 1.5s, 1m (a bare number is\n"
	"                    milliseconds; default: until Ctrl-C)\n"
	"  --event EVENT     cpu-clock (default), task-clock, or with a hardware PMU\n"
	"                    cycles, instructions, cache-misses, branch-misses\n"
	"  --tid TID         only this thread (repeatable)\n"
	"  --unwind MODE     dwarf (default) or fp\n"
	"  --no-kernel       no kernel frames (kernel time is charged to the user\n"
	"                    stack that entered the kernel)\n"
	"  --format F        table (default): top functions by self and total share;\n"
	"                    folded: one line per stack, for flamegraph.pl/speedscope;\n"
	"                    pprof: gzipped profile.proto for go tool pprof;\n"
	"                    speedscope: speedscope.app JSON, one profile per thread;\n"
	"                    svg: interactive flame graph (hover, click to zoom, search);\n"
	"                    json: docs/json-schema/live_profile.json\n"
	"  -o FILE           write the result to FILE (-: standard output) in the\n"
	"                    format its extension names (.svg .pb.gz .folded\n"
	"                    .speedscope.json .json .txt), else --format's (table);\n"
	"                    repeat it for several outputs of one run\n"
	"  --top N           table: functions listed per section (default 25)\n"
	"  --stack-bytes N   dwarf: user stack bytes copied per sample (default 8192;\n"
	"                    deeper stacks end with stack_end in unwind_stops)\n"
	"  --json            same as --format json\n"
	"\n"
	"continuous profiling:\n"
	"  --every TIME      one profile per TIME (at least 1s) until --duration or\n"
	"                    Ctrl-C; the sampling never pauses between periods.  -o\n"
	"                    is then a strftime pattern of the period's start\n"
	"                    ('cpu-%Y%m%dT%H%M%S.pb.gz') or a directory (files\n"
	"                    cpu-YYYYmmddTHHMMSS.EXT in --format's format, pprof by\n"
	"                    default); each file appears whole (written, then renamed)\n"
	"  --keep N          keep only the last N files of each -o pattern\n"
	"  --push URL        POST each period's pprof to a Pyroscope-compatible server\n"
	"                    (http://HOST:4040: its /ingest API); a failed push is\n"
	"                    reported with its HTTP status and the next period is\n"
	"                    pushed as usual\n"
	"  --service NAME    the application name pushed (default: the process's\n"
	"                    name)\n"
	"  --label K=V       a label of every pushed profile (repeatable)\n"
	"  -h, --help        this help\n"
	"\n"
	"A progress line on a terminal shows elapsed time, samples and losses.\n"
	"\n"
	"examples:\n"
	"  vigil profile 4242 --duration 5s\n"
	"  vigil profile 4242 --duration 10s -o flame.svg\n"
	"  vigil profile 4242 --duration 10s -o flame.svg -o cpu.pb.gz -o cpu.folded\n"
	"  vigil profile 4242 --format pprof -o cpu.pb.gz && go tool pprof -top cpu.pb.gz\n"
	"  vigil profile 4242 --unwind fp --format folded | flamegraph.pl > f.svg\n"
	"  vigil profile redis-server --duration 30s -o cpu.pb.gz\n"
	"  vigil profile -p 4242,4243 --duration 10s -o flame.svg -o cpu.pb.gz\n"
	"  vigil profile -o flame.svg -- ./build/myprog --input big.txt\n"
	"  vigil profile 4242 --every 10s -o '/var/lib/vigil/cpu-%Y%m%dT%H%M%S.pb.gz' --keep 360\n"
	"  vigil profile redis-server --every 10s --push http://pyroscope:4040 --label env=prod\n";

#define PROFILE_MAX_OUTPUTS CLI_MAX_OUTPUTS

struct profile_args {
	const char *pid;
	struct vg_profile_opts o;
	const char *format_name;                /* --format or --json; NULL: none */
	const char *out_args[PROFILE_MAX_OUTPUTS];
	size_t n_out_args;
	struct cli_outputs outs;
	uint64_t top;
	bool freq_given;
	uint64_t every_ms;                      /* --every; 0: one profile */
	uint64_t keep;                          /* --keep; 0: all */
	struct vg_push_opts push;               /* --push: url set */
	char dir_pattern[PROFILE_MAX_OUTPUTS][4096];
};

/* One output per -o (standard output without any), each in the format
 * its extension names; --format for one -o, or for the -o whose
 * extension says nothing ("-": the table by default). */
static int plan_outputs(struct vg_cli *cli, struct profile_args *a)
{
	return cli_outputs_plan(cli, a->out_args, a->n_out_args, a->format_name, "table",
				cli_opt_format_known, &a->outs);
}

/* The file name extension of each stack format, for -o DIRECTORY. */
static const char *format_extension(const char *format)
{
	static const struct { const char *format, *ext; } exts[] = {
		{ "pprof", ".pb.gz" }, { "svg", ".svg" }, { "folded", ".folded" },
		{ "speedscope", ".speedscope.json" }, { "table", ".txt" },
	};

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (strcmp(exts[i].format, format) == 0)
			return exts[i].ext;
	return NULL;
}

/* --every: each -o is a strftime pattern of the period's start, or a
 * directory that gets cpu-%Y%m%dT%H%M%S.EXT files; the JSON document
 * describes a whole run and is not written per period.  A low default
 * frequency: continuous profiling runs for days next to the service. */
static int plan_continuous(struct vg_cli *cli, struct profile_args *a)
{
	int r;

	if (a->format_name && strcmp(a->format_name, "json") == 0)
		return cli_usage_error(cli, "--every writes stack profiles (table, folded, pprof, speedscope, svg), not the JSON report");
	if (!a->freq_given)
		a->o.freq = 19;
	if (a->push.url) {
		struct vg_error err = { 0 };

		struct vg_push_opts check = a->push;

		/* The URL and labels now; a default service (the process's
		 * name) once attached. */
		if (!check.service)
			check.service = "service";
		if (vg_push_check(&check, &err) < 0)
			return cli_usage_error(cli, "%s", err.msg);
		if (!a->push.service)
			a->push.service = "";
	} else if (a->push.service || a->push.n_labels) {
		return cli_usage_error(cli, "--%s needs --push", a->push.service ? "service" : "label");
	}
	for (size_t i = 0; i < a->n_out_args; i++) {
		const char *arg = a->out_args[i], *ext;
		struct stat st;

		if (strcmp(arg, "-") == 0 || stat(arg, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		ext = format_extension(a->format_name ? a->format_name : "pprof");
		snprintf(a->dir_pattern[i], sizeof(a->dir_pattern[i]), "%s%scpu-%%Y%%m%%dT%%H%%M%%S%s",
			 arg, arg[strlen(arg) - 1] == '/' ? "" : "/", ext);
		a->out_args[i] = a->dir_pattern[i];   /* its extension names its format */
	}
	/* Pushing alone writes nothing locally. */
	if (a->push.url && a->n_out_args == 0) {
		a->outs.n = 0;
		return a->keep ? cli_usage_error(cli, "--keep needs -o") : 0;
	}
	r = plan_outputs(cli, a);
	if (r)
		return r;
	for (size_t i = 0; i < a->outs.n; i++) {
		if (a->outs.o[i].path && !strchr(a->outs.o[i].path, '%'))
			return cli_usage_error(cli, "with --every, -o '%s' must be a directory or a strftime pattern such as 'cpu-%%Y%%m%%dT%%H%%M%%S.pb.gz' (one file per period)",
					       a->outs.o[i].arg);
		if (strcmp(a->outs.o[i].format, "json") == 0)
			return cli_usage_error(cli, "--every writes stack profiles, not the JSON report (-o '%s')",
					       a->outs.o[i].arg);
	}
	return 0;
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct profile_args *a)
{
	enum { OPT_FREQ = 256, OPT_DURATION, OPT_EVENT, OPT_TID, OPT_UNWIND, OPT_NO_KERNEL,
	       OPT_FORMAT, OPT_TOP, OPT_JSON, OPT_STACK_BYTES, OPT_EVERY, OPT_KEEP, OPT_PUSH,
	       OPT_SERVICE, OPT_LABEL };
	static const struct option opts[] = {
		{ "freq", required_argument, NULL, OPT_FREQ },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "service", required_argument, NULL, OPT_SERVICE },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r, npos = 0;
	uint64_t v;

	a->o.freq = 999;
	a->o.unwind = VG_UNWIND_MODE_DWARF;
	a->top = 25;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-ho:", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (npos++)
				return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil profile PID [options]", optarg);
			a->pid = optarg;
			break;
		case OPT_FREQ:
			if (vg_parse_u64(optarg, 1, &v) < 0 || v == 0 || v > 100000)
				return cli_usage_error(cli, "invalid --freq '%s': expected 1 to 100000 (Hz)", optarg);
			a->o.freq = v;
			a->freq_given = true;
			break;
		case OPT_DURATION:
			if ((r = cli_opt_duration(cli, optarg, &a->o.duration_ms)))
				return r;
			break;
		case OPT_EVENT:
			a->o.event = optarg;
			break;
		case OPT_TID:
			if ((r = cli_opt_tid(cli, optarg, a->o.tids, &a->o.n_tids, VG_PROFILE_MAX_TIDS)))
				return r;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "dwarf") == 0)
				a->o.unwind = VG_UNWIND_MODE_DWARF;
			else if (strcmp(optarg, "fp") == 0)
				a->o.unwind = VG_UNWIND_MODE_FP;
			else
				return cli_usage_error(cli, "invalid --unwind '%s': expected dwarf or fp", optarg);
			break;
		case OPT_NO_KERNEL:
			a->o.no_kernel = true;
			break;
		case OPT_FORMAT:
			if ((r = cli_opt_format(cli, optarg)))
				return r;
			/* json is the profile's own document; the rest are
			 * the stack writers every command shares. */
			if (strcmp(optarg, "json") == 0) {
				a->format_name = "json";
				cli->json = true;
				break;
			}
			if (cli->json)
				return cli_usage_error(cli, "--json and --format %s disagree", optarg);
			a->format_name = optarg;
			break;
		case 'o':
			if ((r = cli_opt_output(cli, optarg, a->out_args, &a->n_out_args)))
				return r;
			break;
		case OPT_TOP:
			if (vg_parse_u64(optarg, 0, &a->top) < 0)
				return cli_usage_error(cli, "invalid --top '%s': expected a number", optarg);
			break;
		case OPT_JSON:
			if (a->format_name && strcmp(a->format_name, "json") != 0)
				return cli_usage_error(cli, "--json and --format %s disagree", a->format_name);
			cli->json = true;
			a->format_name = "json";
			break;
		case OPT_STACK_BYTES:
			if (vg_parse_u64(optarg, 1, &v) < 0 || v % 8 || v > 65528)
				return cli_usage_error(cli, "invalid --stack-bytes '%s': a multiple of 8 up to 65528", optarg);
			a->o.stack_bytes = (uint32_t)v;
			break;
		case OPT_EVERY:
			if (cli_parse_duration(cli, "--every", optarg, 1000, CLI_MAX_DURATION_MS, &v))
				return VG_EXIT_USAGE;
			a->every_ms = v;
			break;
		case OPT_KEEP:
			if (vg_parse_u64(optarg, 0, &v) < 0 || v == 0 || v > 1000000)
				return cli_usage_error(cli, "invalid --keep '%s': expected 1 to 1000000 (files)", optarg);
			a->keep = v;
			break;
		case OPT_PUSH:
			a->push.url = optarg;
			break;
		case OPT_SERVICE:
			a->push.service = optarg;
			break;
		case OPT_LABEL:
			if (a->push.n_labels == VG_PUSH_MAX_LABELS)
				return cli_usage_error(cli, "at most %d --label", VG_PUSH_MAX_LABELS);
			a->push.labels[a->push.n_labels++] = optarg;
			break;
		case 'h':
			fputs(cmd_profile_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (npos++)
			return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil profile PID [options]", argv[optind]);
		a->pid = argv[optind];
	}
	if (!a->pid)
		return cli_usage_error(cli, "expected PID; usage: vigil profile PID [--duration TIME] [--format F] (vigil help profile)");
	/* --json before "profile" or after "--" is seen by the prescan only. */
	if (cli->json && !a->format_name)
		a->format_name = "json";
	if (cli->json && strcmp(a->format_name, "json") != 0)
		return cli_usage_error(cli, "--json and --format %s disagree", a->format_name);
	if (a->every_ms)
		return plan_continuous(cli, a);
	if (a->keep || a->push.url || a->push.service || a->push.n_labels)
		return cli_usage_error(cli, "--%s needs --every", a->keep ? "keep" : a->push.url ? "push"
				       : a->push.service ? "service" : "label");
	return plan_outputs(cli, a);
}

static void progress_line(const struct vg_profile *p, void *arg)
{
	(void)arg;
	fprintf(stderr, "\r# profiling: %" PRIu64 " s, %" PRIu64 " samples, %" PRIu64 " lost\033[K",
		(vg_perf_now() - vg_profile_start_ns(p)) / 1000000000u, vg_profile_stats(p)->samples,
		vg_profile_perf_stats(p)->lost);
}

/* The JSON document: pretty on standard output, as every command's; one
 * line in a file (-o).  0, an exit code (reported), or -EIO. */
static int write_json(struct vg_cli *cli, const struct vg_profile *p, FILE *out)
{
	struct vg_error err = { 0 };
	cJSON *doc = vg_report_profile_json(p, cli->target, &err);

	if (!doc)
		return cli_fail(cli, &err);
	return cli_write_json(cli, doc, out);
}

/* Several processes (-p A,B): what the JSON document of the run needs. */
struct several {
	struct vg_profile **ps;
	struct vg_target **ts;
	size_t n;
	struct vg_stacks *merged;   /* every process under its root frame */
	enum vg_stop stop;
	uint64_t duration_ns;
};

/* What one output of the profile is written from. */
struct profile_write {
	const struct vg_profile *p;
	const struct vg_stacks *stacks;
	const struct profile_args *a;
	const struct vg_stacks_meta *meta;
	const struct several *sv;           /* several processes, else NULL */
};

static int profile_writer(struct vg_cli *cli, FILE *out, const struct cli_output *o, void *arg,
			  struct vg_error *err)
{
	const struct profile_write *pw = arg;
	const struct vg_stack_format *f = vg_stack_format_find(o->format);

	if (f) {
		struct vg_stack_write_opts wo = { .meta = pw->meta, .top = (size_t)pw->a->top };

		return f->write(out, pw->stacks, &wo, err);
	}
	if (pw->sv) {
		cJSON *doc = vg_report_profiles_json((const struct vg_profile *const *)pw->sv->ps,
						     (const struct vg_target *const *)pw->sv->ts,
						     pw->sv->n, pw->sv->merged, pw->sv->stop,
						     pw->sv->duration_ns, err);

		return doc ? cli_write_json(cli, doc, out) : cli_fail(cli, err);
	}
	return write_json(cli, pw->p, out);
}

/* One output: opened (a file only now, renamed over its path only when
 * complete), written, committed.  0, or the exit code after printing. */
static int write_output(struct vg_cli *cli, const struct vg_profile *p,
			const struct vg_stacks *stacks, const struct profile_args *a,
			const struct cli_output *o, const char *path,
			const struct vg_stacks_meta *meta, const struct several *sv)
{
	struct profile_write pw = { p, stacks, a, meta, sv };

	return cli_output_write(cli, o, path, 0, "profile", profile_writer, &pw);
}

/* The file name of a period from its -o pattern; 0 when the pattern
 * makes an empty or too long name. */
static size_t period_name(char *buf, size_t size, const char *pattern, time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	/* The pattern is the user's -o: a format string is what it is for. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	return strftime(buf, size, pattern, &tm);
#pragma GCC diagnostic pop
}

/* --every: what the period callback needs and what it tells at the end. */
struct continuous {
	struct vg_cli *cli;
	const struct profile_args *a;
	const struct vg_stacks_meta *base;  /* the run's meta; per period: times, losses */
	int64_t wall_minus_mono;            /* one offset: consecutive windows share bounds */
	uint64_t lost_before, throttled_before;
	uint64_t periods, pushes, pushes_failed, writes_failed;
	/* --keep: the files written per output, oldest first */
	char **kept[PROFILE_MAX_OUTPUTS];
	size_t n_kept[PROFILE_MAX_OUTPUTS];
};

static void keep_file(struct continuous *c, size_t i, const char *path)
{
	char *copy = strdup(path), **grown;

	if (!copy)
		return;
	/* The same name twice (two periods in one second of a coarse
	 * pattern): the file was replaced, it is one file. */
	if (c->n_kept[i] && strcmp(c->kept[i][c->n_kept[i] - 1], path) == 0) {
		free(copy);
		return;
	}
	grown = realloc(c->kept[i], (c->n_kept[i] + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return;
	}
	c->kept[i] = grown;
	c->kept[i][c->n_kept[i]++] = copy;
	while (c->n_kept[i] > c->a->keep) {
		/* Only a file this run wrote is removed. */
		if (unlink(c->kept[i][0]) < 0 && errno != ENOENT)
			fprintf(stderr, "vigil: warning: cannot remove '%s' (--keep): %s\n",
				c->kept[i][0], strerror(errno));
		free(c->kept[i][0]);
		memmove(c->kept[i], c->kept[i] + 1, --c->n_kept[i] * sizeof(*grown));
	}
}

static void push_period(struct continuous *c, const struct vg_stacks *s,
			const struct vg_stacks_meta *m, uint64_t from_s, uint64_t until_s, char *said,
			size_t size)
{
	const struct vg_stack_format *pprof = vg_stack_format_find("pprof");
	struct vg_stack_write_opts wo = { .meta = m };
	struct vg_error err = { 0 };
	char *body = NULL;
	size_t len = 0;
	long status = 0;
	FILE *f = open_memstream(&body, &len);
	int r = f ? pprof->write(f, s, &wo, &err) : -ENOMEM;

	if (f && fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = vg_push_pprof(&c->a->push, body, len, from_s, until_s, m->frequency_hz, &status, &err);
	free(body);
	c->pushes++;
	if (r < 0) {
		c->pushes_failed++;
		/* Never the end of the profiling: the next period is pushed. */
		fprintf(stderr, "vigil: warning: %s\n", err.msg[0] ? err.msg : strerror(-r));
		snprintf(said, size, "; push failed (HTTP %ld)", status);
		return;
	}
	snprintf(said, size, "; pushed (HTTP %ld)", status);
}

/* One period's profile: to every -o (the name from the period's start)
 * and to the --push server. */
static void write_period(struct continuous *c, const struct vg_profile *p,
			 const struct vg_stacks *s, uint64_t start_ns, uint64_t end_ns)
{
	struct vg_stacks_meta m = *c->base;
	const struct vg_perf_stats *ps = vg_profile_perf_stats(p);
	uint64_t wall_start = (uint64_t)((int64_t)start_ns + c->wall_minus_mono);
	uint64_t wall_end = (uint64_t)((int64_t)end_ns + c->wall_minus_mono);
	time_t t = (time_t)(wall_start / 1000000000u);
	char written[1024] = "", pushed[64] = "";
	size_t wlen = 0;

	m.start_time_ns = wall_start;
	m.duration_ns = end_ns - start_ns;
	m.lost = ps->lost - c->lost_before;
	m.throttled = ps->throttled - c->throttled_before;
	c->lost_before = ps->lost;
	c->throttled_before = ps->throttled;
	c->periods++;
	for (size_t i = 0; i < c->a->outs.n; i++) {
		const struct cli_output *o = &c->a->outs.o[i];
		char path[4096];

		if (o->path && period_name(path, sizeof(path), o->path, t) == 0) {
			fprintf(stderr, "vigil: warning: -o '%s' makes an empty or too long name\n", o->path);
			c->writes_failed++;
			continue;
		}
		if (write_output(c->cli, p, s, c->a, o, o->path ? path : NULL, &m, NULL)) {
			c->writes_failed++;   /* said by write_output; the next period tries again */
			continue;
		}
		if (!o->path) {
			fflush(stdout);
			continue;
		}
		if (c->a->keep)
			keep_file(c, i, path);
		if (wlen < sizeof(written))
			wlen += (size_t)snprintf(written + wlen, sizeof(written) - wlen, "%s%s",
						 wlen ? ", " : "; written to ", path);
	}
	if (c->a->push.url)
		push_period(c, s, &m, wall_start / 1000000000u, wall_end / 1000000000u, pushed,
			    sizeof(pushed));
	fprintf(stderr, "# period %" PRIu64 ": %" PRIu64 " samples in %.1f s, %" PRIu64 " lost%s%s\n",
		c->periods, vg_stacks_total(s), (double)m.duration_ns / 1e9, m.lost, written, pushed);
}

static void on_period(struct vg_profile *p, struct vg_stacks *s, uint64_t start_ns,
		      uint64_t end_ns, void *arg)
{
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	write_period(arg, p, s, start_ns, end_ns);
}

static void continuous_free(struct continuous *c)
{
	for (size_t i = 0; i < PROFILE_MAX_OUTPUTS; i++) {
		for (size_t k = 0; k < c->n_kept[i]; k++)
			free(c->kept[i][k]);
		free(c->kept[i]);
	}
}

static void progress_several(void *arg)
{
	const struct several *sv = arg;
	uint64_t samples = 0, lost = 0;

	for (size_t i = 0; i < sv->n; i++) {
		samples += vg_profile_stats(sv->ps[i])->samples;
		lost += vg_profile_perf_stats(sv->ps[i])->lost;
	}
	fprintf(stderr, "\r# profiling %zu processes: %" PRIu64 " s, %" PRIu64 " samples, %" PRIu64
		" lost\033[K", sv->n, (vg_perf_now() - vg_profile_start_ns(sv->ps[0])) / 1000000000u,
		samples, lost);
}

/* The table's line of per-process totals, and the stack cuts of all. */
static void several_meta(const struct several *sv, struct vg_stacks_meta *m, char *totals,
			 size_t tsize, char *why, size_t wsize, char *names, size_t nsize)
{
	uint64_t total = vg_stacks_total(sv->merged);
	size_t tl = 0, wl = 0, nl = 0;

	why[0] = totals[0] = names[0] = '\0';
	for (size_t i = 0; i < sv->n && nl < nsize; i++)
		nl += (size_t)snprintf(names + nl, nsize - nl, "%s%d (%s)", i ? ", " : "pids ",
				       (int)sv->ts[i]->pid, sv->ts[i]->comm);
	for (size_t i = 0; i < sv->n; i++) {
		struct vg_stacks_meta one;
		char one_why[256];
		uint64_t samples = vg_stacks_total(vg_profile_stacks(sv->ps[i]));
		enum vg_stop st = vg_profile_stop_reason(sv->ps[i]);

		vg_report_profile_meta(sv->ps[i], sv->ts[i], &one, one_why, sizeof(one_why));
		if (i == 0) {
			*m = one;
			m->lost = m->throttled = m->stacks_cut = 0;
		}
		m->lost += one.lost;
		m->throttled += one.throttled;
		m->stacks_cut += one.stacks_cut;
		if (one.stacks_cut && wl < wsize)
			wl += (size_t)snprintf(why + wl, wsize - wl, "%spid %d: %s", wl ? "; " : "",
					       (int)sv->ts[i]->pid, one_why);
		if (tl < tsize)
			tl += (size_t)snprintf(totals + tl, tsize - tl, "%s%s-%d %" PRIu64 " (%.1f%%%s%s)",
					       tl ? ", " : "by process: ", sv->ts[i]->comm,
					       (int)sv->ts[i]->pid, samples,
					       total ? 100.0 * (double)samples / (double)total : 0.0,
					       st == VG_STOP_TARGET_EXITED ? ", exited" :
					       st == VG_STOP_TARGET_EXEC ? ", exec'd" : "", "");
	}
	/* Several programs: the headers name them all, by comm. */
	m->pid = 0;
	m->comm = names;
	m->main_path = NULL;
	m->duration_ns = sv->duration_ns;
	m->stacks_cut_why = m->stacks_cut ? why : NULL;
	m->totals = totals;
}

/* vigil profile -p A,B: every process sampled in one run, each with its
 * own events, symbolizer and trie; the outputs get one trie in which each
 * stack starts at its process ("comm-pid"). */
static int profile_several(struct vg_cli *cli, struct profile_args *a, const pid_t *pids,
			   size_t n, struct cli_stop_signals *stop)
{
	struct vg_error err = { 0 };
	struct vg_symbolizer **syms = calloc(n, sizeof(*syms));
	struct several sv = { .ps = calloc(n, sizeof(*sv.ps)), .ts = calloc(n, sizeof(*sv.ts)), .n = n };
	struct vg_stacks_meta meta;
	char totals[2048], cut_why[1024], names[512], written[1024] = "";
	uint64_t first_start = UINT64_MAX, last_end = 0;
	size_t wlen = 0;
	bool exec_seen = false;
	int r = 0;

	if (a->every_ms || a->o.n_tids) {
		r = cli_usage_error(cli, "%s observes one process: give one PID, not %zu",
				    a->every_ms ? "--every" : "--tid", n);
		goto out;
	}
	if (!syms || !sv.ps || !sv.ts) {
		r = cli_out_of_memory(cli, "for the profiles");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (vg_target_open(pids[i], &sv.ts[i], &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		if (i == 0)
			cli->target = sv.ts[0];   /* errors and the JSON header name it */
		if (vg_symbolizer_open_target(sv.ts[i], 0, &syms[i], &err) < 0 ||
		    vg_profile_new(sv.ts[i], syms[i], &a->o, &sv.ps[i], &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		if (vg_profile_start(sv.ps[i], &err) < 0) {
			vg_target_explain(sv.ts[i], err.code, &err);
			r = cli_fail(cli, &err);
			goto out;
		}
	}
	fprintf(stderr, "# profiling %zu processes:", n);
	for (size_t i = 0; i < n; i++) {
		size_t nt;

		vg_profile_threads(sv.ps[i], &nt);
		fprintf(stderr, "%s pid %d (", i ? "," : "", (int)sv.ts[i]->pid);
		cli_put_text(stderr, sv.ts[i]->comm);
		fprintf(stderr, ") %zu thread%s", nt, nt == 1 ? "" : "s");
	}
	{
		const char *why;
		bool shown = vg_profile_kernel_shown(sv.ps[0], &why);

		fprintf(stderr, "; %s at %" PRIu64 " Hz, %s unwinding%s%s\n", vg_profile_event(sv.ps[0]),
			vg_profile_freq(sv.ps[0]), a->o.unwind == VG_UNWIND_MODE_DWARF ? "dwarf" : "fp",
			shown ? "" : "; kernel frames hidden: ", shown ? "" : why);
	}
	if (vg_profile_run_all(sv.ps, n, stop->fd, isatty(STDERR_FILENO) ? progress_several : NULL,
			       &sv, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	sv.merged = vg_stacks_new();
	if (!sv.merged) {
		r = cli_out_of_memory(cli, "merging the stacks");
		goto out;
	}
	sv.stop = VG_STOP_TARGET_EXITED;
	for (size_t i = 0; i < n; i++) {
		char label[96];

		vg_profile_stop(sv.ps[i]);
		/* perf's "comm-pid": which process each stack is of. */
		snprintf(label, sizeof(label), "%s-%d", sv.ts[i]->comm, (int)sv.ts[i]->pid);
		if (vg_stacks_graft(sv.merged, vg_profile_stacks(sv.ps[i]), label, &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		if (vg_profile_start_ns(sv.ps[i]) < first_start)
			first_start = vg_profile_start_ns(sv.ps[i]);
		if (vg_profile_end_ns(sv.ps[i]) > last_end)
			last_end = vg_profile_end_ns(sv.ps[i]);
		/* The run's stop: any process still running saw it. */
		if (vg_profile_stop_reason(sv.ps[i]) != VG_STOP_TARGET_EXITED &&
		    vg_profile_stop_reason(sv.ps[i]) != VG_STOP_TARGET_EXEC)
			sv.stop = vg_profile_stop_reason(sv.ps[i]);
		exec_seen |= vg_profile_stop_reason(sv.ps[i]) == VG_STOP_TARGET_EXEC;
	}
	sv.duration_ns = last_end > first_start ? last_end - first_start : 0;
	several_meta(&sv, &meta, totals, sizeof(totals), cut_why, sizeof(cut_why), names,
		     sizeof(names));
	for (size_t i = 0; i < a->outs.n; i++) {
		r = write_output(cli, sv.ps[0], sv.merged, a, &a->outs.o[i], a->outs.o[i].path, &meta, &sv);
		if (r)
			goto out;
		if (a->outs.o[i].path && wlen < sizeof(written))
			wlen += (size_t)snprintf(written + wlen, sizeof(written) - wlen, "%s%s",
						 wlen ? ", " : "; written to ", a->outs.o[i].path);
	}
	for (size_t i = 0; i < n; i++) {
		const struct vg_profile *p = sv.ps[i];

		fprintf(stderr, "# pid %d (", (int)sv.ts[i]->pid);
		cli_put_text(stderr, sv.ts[i]->comm);
		fprintf(stderr, "): %" PRIu64 " samples in %.1f s (%s), %" PRIu64 " lost\n",
			vg_stacks_total(vg_profile_stacks(p)), (double)vg_profile_duration_ns(p) / 1e9,
			vg_stop_name(vg_profile_stop_reason(p)), vg_profile_perf_stats(p)->lost);
	}
	fprintf(stderr, "# %" PRIu64 " samples of %zu processes in %.1f s (%s), %" PRIu64 " lost, %"
		PRIu64 " throttled%s\n", vg_stacks_total(sv.merged), n, (double)sv.duration_ns / 1e9,
		vg_stop_name(sv.stop), meta.lost, meta.throttled, written);
	for (size_t i = 0; i < n; i++)
		cli_print_target_notes(sv.ts[i]);
	r = exec_seen ? VG_EXIT_GONE : 0;
out:
	for (size_t i = 0; i < n; i++) {
		if (sv.ps)
			vg_profile_free(sv.ps[i]);
		if (syms)
			vg_symbolizer_free(syms[i]);
		if (sv.ts && i > 0)
			vg_target_free(sv.ts[i]);   /* the first is cli->target: main frees it */
	}
	if (sv.ts && sv.ts[0] && cli->target != sv.ts[0])
		vg_target_free(sv.ts[0]);
	vg_stacks_free(sv.merged);
	free(sv.ps);
	free(sv.ts);
	free(syms);
	return r;
}

int cmd_profile(struct vg_cli *cli, int argc, char **argv)
{
	struct profile_args a;
	struct vg_error err = { 0 };
	struct vg_symbolizer *sym = NULL;
	struct vg_profile *p = NULL;
	struct vg_stacks_meta meta;
	struct cli_stop_signals stop = { .fd = -1 };
	struct vg_stacks_meta base;
	struct continuous cont = { 0 };
	char cut_why[256], written[1024] = "";
	size_t wlen = 0;
	int r;

	cli->operation = "live_profile";   /* errors and reports say the same */
	memset(&a, 0, sizeof(a));
	r = parse_args(cli, argc, argv, &a);
	if (r)
		return r < 0 ? 0 : r;
	/* A bad -o is refused now, not after the profile it would lose (a
	 * pattern: the name it makes now). */
	for (size_t i = 0; i < a.outs.n; i++) {
		char now_path[4096];
		const char *path = a.outs.o[i].path;

		if (path && a.every_ms) {
			if (period_name(now_path, sizeof(now_path), path, time(NULL)) == 0)
				return cli_usage_error(cli, "-o '%s' makes an empty or too long file name", path);
			path = now_path;
		}
		if (path && vg_outfile_check(path, &err) < 0)
			return cli_fail(cli, &err);
	}
	/* Ctrl-C and SIGTERM end the profile, not vigil, from the start: one
	 * during the setup stops it at once, and the report follows. */
	cli_stop_signals_begin(&stop);
	{
		pid_t *pids;
		size_t n;

		r = cli_target_pids(cli, a.pid, &pids, &n);
		if (!r && n) {
			r = profile_several(cli, &a, pids, n, &stop);
			free(pids);
			goto out;
		}
		if (r)
			goto out;
	}
	r = cli_attach(cli, a.pid);
	if (r)
		goto out;
	if (vg_symbolizer_open_target(cli->target, 0, &sym, &err) < 0 ||
	    vg_profile_new(cli->target, sym, &a.o, &p, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (vg_profile_start(p, &err) < 0) {
		vg_target_explain(cli->target, err.code, &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	if (a.push.url && !a.push.service[0]) {
		a.push.service = cli->target->comm;
		if (vg_push_check(&a.push, &err) < 0) {
			vg_error_reset(&err, -EINVAL, "the process's name '%s' cannot be a service name: give --service NAME",
				       cli->target->comm);
			r = cli_fail(cli, &err);
			goto out;
		}
	}
	if (a.every_ms) {
		struct timespec wall;
		const struct vg_image *main_img = vg_images_main(vg_symbolizer_images(sym));

		vg_report_profile_meta(p, cli->target, &base, cut_why, sizeof(cut_why));
		base.stacks_cut = 0;   /* counted over the whole run, not per period */
		base.stacks_cut_why = NULL;
		base.main_path = main_img ? main_img->path : NULL;
		clock_gettime(CLOCK_REALTIME, &wall);
		cont = (struct continuous){ .cli = cli, .a = &a, .base = &base };
		cont.wall_minus_mono = (int64_t)((uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec) -
				       (int64_t)vg_perf_now();
		vg_profile_set_period(p, a.every_ms * 1000000u, on_period, &cont);
	}
	r = cli_launch_release(cli);   /* "-- CMD": sampled from its first instruction */
	if (r)
		goto out;
	{
		size_t nt;
		const char *why;

		vg_profile_threads(p, &nt);
		fprintf(stderr, "# profiling pid %d: %zu thread%s, %s at %" PRIu64 " Hz, %s unwinding%s%s\n",
			(int)cli->target->pid, nt, nt == 1 ? "" : "s", vg_profile_event(p),
			vg_profile_freq(p), a.o.unwind == VG_UNWIND_MODE_DWARF ? "dwarf" : "fp",
			vg_profile_kernel_shown(p, &why) ? "" : "; kernel frames hidden: ",
			vg_profile_kernel_shown(p, &why) ? "" : why);
	}
	if (vg_profile_run(p, stop.fd, isatty(STDERR_FILENO) ? progress_line : NULL, NULL, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	vg_profile_stop(p);
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (a.every_ms) {
		const struct vg_perf_stats *ps = vg_profile_perf_stats(p);

		/* The last period, cut by the stop. */
		write_period(&cont, p, vg_profile_stacks(p), vg_profile_period_start_ns(p),
			     vg_profile_end_ns(p));
		fprintf(stderr, "# %" PRIu64 " samples in %.1f s (%s) over %" PRIu64 " period%s, %" PRIu64
			" lost, %" PRIu64 " throttled",
			vg_profile_stats(p)->samples, (double)vg_profile_duration_ns(p) / 1e9,
			vg_stop_name(vg_profile_stop_reason(p)), cont.periods, cont.periods == 1 ? "" : "s",
			ps->lost, ps->throttled);
		if (a.push.url)
			fprintf(stderr, "; %" PRIu64 " push%s, %" PRIu64 " failed", cont.pushes,
				cont.pushes == 1 ? "" : "es", cont.pushes_failed);
		fputc('\n', stderr);
		cli_print_target_notes(cli->target);
		r = cont.writes_failed ? VG_EXIT_RUNTIME
		    : vg_profile_stop_reason(p) == VG_STOP_TARGET_EXEC ? VG_EXIT_GONE : 0;
		goto out;
	}
	vg_report_profile_meta(p, cli->target, &meta, cut_why, sizeof(cut_why));
	{
		const struct vg_image *main_img = vg_images_main(vg_symbolizer_images(sym));

		meta.main_path = main_img ? main_img->path : NULL;
	}
	for (size_t i = 0; i < a.outs.n; i++) {
		r = write_output(cli, p, vg_profile_stacks(p), &a, &a.outs.o[i], a.outs.o[i].path, &meta, NULL);
		if (r)
			goto out;
		if (a.outs.o[i].path && wlen < sizeof(written))
			wlen += (size_t)snprintf(written + wlen, sizeof(written) - wlen, "%s%s",
						 wlen ? ", " : "; written to ", a.outs.o[i].path);
	}
	{
		const struct vg_perf_stats *ps = vg_profile_perf_stats(p);

		/* On stderr: stdout may be the folded stacks or pprof. */
		fprintf(stderr, "# %" PRIu64 " samples in %.1f s (%s), %" PRIu64 " lost, %" PRIu64 " throttled%s\n",
			vg_stacks_total(vg_profile_stacks(p)), (double)vg_profile_duration_ns(p) / 1e9,
			vg_stop_name(vg_profile_stop_reason(p)), ps->lost, ps->throttled, written);
		if (ps->exec_ns)
			fprintf(stderr, "# profile: pid %d called exec() ('%s'): stopped there; the new "
				"program was not sampled (exit 4)\n", (int)cli->target->pid, ps->exec_comm);
		if (ps->children)
			fprintf(stderr, "# profile: %" PRIu64 " child process%s created during the profile "
				"%s not sampled\n", ps->children, ps->children == 1 ? "" : "es",
				ps->children == 1 ? "was" : "were");
	}
	cli_print_target_notes(cli->target);
	r = vg_profile_stop_reason(p) == VG_STOP_TARGET_EXEC ? VG_EXIT_GONE : 0;
out:
	continuous_free(&cont);
	vg_profile_free(p);
	cli_stop_signals_end(&stop);
	vg_symbolizer_free(sym);
	return r;
}
