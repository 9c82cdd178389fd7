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
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "elf/addrspec.h"
#include "profile/profile.h"
#include "profile/unwind.h"
#include "report/json.h"
#include "report/stack_format.h"
#include "sym/symbolizer.h"
#include "util/outfile.h"

const char cmd_profile_usage[] =
	"usage: vigil profile PID [--freq HZ] [--duration MS] [--event EVENT] [--tid TID]...\n"
	"                     [--unwind dwarf|fp] [--no-kernel]\n"
	"                     [--format table|folded|pprof|speedscope|svg|json] [-o FILE]\n"
	"\n"
	"Where does this process spend its time?  Samples every thread of a running\n"
	"process, threads created later included, with a clock (cpu-clock by default:\n"
	"it works in VMs without a hardware PMU), takes each sample's kernel stack from\n"
	"the kernel and its user stack by CFI unwinding (--unwind dwarf, the default:\n"
	"correct through code without frame pointers such as Debian's libc) or by frame\n"
	"pointers (--unwind fp: cheaper, wrong through such code), symbolizes every\n"
	"frame with its inline frames, and aggregates the stacks while sampling.\n"
	"Stops at --duration, on Ctrl-C, or when the process exits; the result is\n"
	"written in every case.  Every report says how many samples were lost.\n"
	"\n"
	"options:\n"
	"  --freq HZ         samples per second of running thread (default 999)\n"
	"  --duration MS     stop after MS milliseconds (default: until Ctrl-C)\n"
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
	"  -o FILE           write the result to FILE instead of standard output\n"
	"  --top N           table: functions listed per section (default 25)\n"
	"  --stack-bytes N   dwarf: user stack bytes copied per sample (default 8192;\n"
	"                    deeper stacks end with stack_end in unwind_stops)\n"
	"  --json            same as --format json\n"
	"  -h, --help        this help\n"
	"\n"
	"A progress line on a terminal shows elapsed time, samples and losses.\n"
	"\n"
	"examples:\n"
	"  vigil profile 4242 --duration 5000\n"
	"  vigil profile 4242 --duration 10000 --format svg -o flame.svg\n"
	"  vigil profile 4242 --format pprof -o cpu.pb.gz && go tool pprof -top cpu.pb.gz\n"
	"  vigil profile 4242 --unwind fp --format folded | flamegraph.pl > f.svg\n";

struct profile_args {
	const char *pid;
	struct vg_profile_opts o;
	const struct vg_stack_format *format;   /* NULL: json */
	const char *out_path;
	uint64_t top;
};

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct profile_args *a)
{
	enum { OPT_FREQ = 256, OPT_DURATION, OPT_EVENT, OPT_TID, OPT_UNWIND, OPT_NO_KERNEL,
	       OPT_FORMAT, OPT_TOP, OPT_JSON, OPT_STACK_BYTES };
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, npos = 0;
	uint64_t v;

	a->format = vg_stack_format_find("table");
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
			break;
		case OPT_DURATION:
			if (cli_parse_duration(cli, optarg, &v))
				return VG_EXIT_USAGE;
			a->o.duration_ms = v;
			break;
		case OPT_EVENT:
			a->o.event = optarg;
			break;
		case OPT_TID:
			if (a->o.n_tids == VG_PROFILE_MAX_TIDS)
				return cli_usage_error(cli, "at most %d --tid", VG_PROFILE_MAX_TIDS);
			if (vg_parse_u64(optarg, 0, &v) < 0 || v == 0 || v > INT32_MAX)
				return cli_usage_error(cli, "invalid --tid '%s': expected a thread id", optarg);
			a->o.tids[a->o.n_tids++] = (pid_t)v;
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
			/* json is the profile's own document; the rest are
			 * the stack writers every command shares. */
			if (strcmp(optarg, "json") == 0) {
				a->format = NULL;
				cli->json = true;
				break;
			}
			a->format = vg_stack_format_find(optarg);
			if (!a->format)
				return cli_usage_error(cli, "invalid --format '%s': expected table, folded, pprof, speedscope, svg or json", optarg);
			break;
		case 'o':
			a->out_path = optarg;
			break;
		case OPT_TOP:
			if (vg_parse_u64(optarg, 0, &a->top) < 0)
				return cli_usage_error(cli, "invalid --top '%s': expected a number", optarg);
			break;
		case OPT_JSON:
			cli->json = true;
			a->format = NULL;
			break;
		case OPT_STACK_BYTES:
			if (vg_parse_u64(optarg, 1, &v) < 0 || v % 8 || v > 65528)
				return cli_usage_error(cli, "invalid --stack-bytes '%s': a multiple of 8 up to 65528", optarg);
			a->o.stack_bytes = (uint32_t)v;
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
		return cli_usage_error(cli, "expected PID; usage: vigil profile PID [--duration MS] [--format F] (vigil help profile)");
	if (cli->json && a->format)
		return cli_usage_error(cli, "--json and --format %s disagree", a->format->name);
	if (a->format && a->format->binary && !a->out_path && isatty(STDOUT_FILENO))
		return cli_usage_error(cli, "%s output is binary: give -o FILE or redirect standard output",
				       a->format->name);
	return 0;
}

static void progress_line(const struct vg_profile *p, void *arg)
{
	(void)arg;
	fprintf(stderr, "\r# profiling: %" PRIu64 " s, %" PRIu64 " samples, %" PRIu64 " lost\033[K",
		(vg_perf_now() - vg_profile_start_ns(p)) / 1000000000u, vg_profile_stats(p)->samples,
		vg_profile_perf_stats(p)->lost);
}

static void fill_meta(const struct vg_profile *p, const struct vg_target *t, struct vg_stacks_meta *m)
{
	struct timespec now;
	uint64_t dur = vg_profile_duration_ns(p);

	memset(m, 0, sizeof(*m));
	m->event = vg_profile_event(p);
	m->frequency_hz = vg_profile_freq(p);
	/* A clock sample stands for 1/freq of a second of running. */
	if (strcmp(m->event, "cpu-clock") == 0 || strcmp(m->event, "task-clock") == 0)
		m->sample_ns = 1000000000u / m->frequency_hz;
	clock_gettime(CLOCK_REALTIME, &now);
	m->start_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - dur;
	m->duration_ns = dur;
	m->lost = vg_profile_perf_stats(p)->lost;
	m->throttled = vg_profile_perf_stats(p)->throttled;
	m->pid = t->pid;
	m->comm = t->comm;
}

/* How many stacks ended before their outermost frame, and why, for the
 * table's header (why: "stack_end 12, no_cfi 3, frame limit 1"). */
static void fill_cut(const struct vg_profile *p, struct vg_stacks_meta *m, char *why, size_t size)
{
	const struct vg_profile_stats *st = vg_profile_stats(p);
	size_t len = 0;
	uint64_t n = 0;

	why[0] = '\0';
	if (vg_profile_unwind(p) == VG_UNWIND_MODE_DWARF)
		for (int i = 0; i < 8; i++) {
			if (i == VG_UNWIND_OUTERMOST || !st->unwind_stop[i] || len >= size)
				continue;
			n += st->unwind_stop[i];
			len += (size_t)snprintf(why + len, size - len, "%s%s %" PRIu64, len ? ", " : "",
						vg_unwind_stop_name((enum vg_unwind_stop)i), st->unwind_stop[i]);
		}
	if (st->max_frames_hit && len < size) {
		n += st->max_frames_hit;
		snprintf(why + len, size - len, "%sframe limit %" PRIu64, len ? ", " : "", st->max_frames_hit);
	}
	if (n > st->samples)
		n = st->samples;   /* a sample cut in both its kernel and user part */
	m->stacks_cut = n;
	m->stacks_cut_why = n ? why : NULL;
}

/* Why the counts may be short of the truth: each reason one sentence. */
static void lower_bound_reasons(const struct vg_profile *p, cJSON *arr)
{
	const struct vg_perf_stats *ps = vg_profile_perf_stats(p);
	const struct vg_cover_tid *th;
	size_t n, uncovered = 0, rescan = 0;
	char buf[256];

	if (ps->lost) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " samples lost: the ring buffer was full", ps->lost);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->throttled) {
		snprintf(buf, sizeof(buf), "the kernel throttled sampling %" PRIu64 " times (kernel.perf_event_max_sample_rate)",
			 ps->throttled);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	th = vg_profile_threads(p, &n);
	for (size_t i = 0; i < n; i++) {
		uncovered += th[i].how == VG_COVER_NONE;
		rescan += th[i].how == VG_COVER_RESCAN;
	}
	if (rescan) {
		snprintf(buf, sizeof(buf), "%zu threads created during setup were sampled only from their rescan", rescan);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (uncovered) {
		snprintf(buf, sizeof(buf), "%zu threads were not covered", uncovered);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->undecodable) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " records could not be decoded", ps->undecodable);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	if (ps->exec_ns) {
		snprintf(buf, sizeof(buf), "the process called exec() (new program '%s'): the profile stopped "
			 "there, %" PRIu64 " samples of the new program were left out", ps->exec_comm,
			 ps->after_exec);
		cJSON_AddItemToArray(arr, vg_json_text(buf));
	}
	if (ps->children) {
		snprintf(buf, sizeof(buf), "the process created %" PRIu64 " child process%s during the profile: "
			 "their time is not sampled", ps->children, ps->children == 1 ? "" : "es");
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
}


static cJSON *frame_json(const struct vg_stacks *s, const struct vg_stack_frame *f)
{
	cJSON *j = cJSON_CreateObject();
	const struct vg_stack_image *img = f->image != VG_STACKS_NONE ? vg_stacks_image(s, f->image) : NULL;

	vg_json_add_text(j, "function", vg_stacks_string(s, f->name));
	cJSON_AddBoolToObject(j, "function_known", f->has_function);
	if (img)
		vg_json_add_text(j, "image", vg_stacks_string(s, img->path));
	else
		cJSON_AddNullToObject(j, "image");
	vg_json_add_addr(j, "address", f->address);
	if (f->file)
		vg_json_add_text(j, "file", vg_stacks_string(s, f->file));
	else
		cJSON_AddNullToObject(j, "file");
	cJSON_AddNumberToObject(j, "line", f->line);
	cJSON_AddBoolToObject(j, "inlined", f->inlined);
	cJSON_AddBoolToObject(j, "kernel", f->kernel);
	return j;
}

struct stack_walk {
	const struct vg_stacks *s;
	cJSON *arr;
	uint32_t path[4096];
	size_t depth;
	size_t listed, total, max;
	int32_t tid;
};

/* Depth first: every node with self samples is one stack, root first. */
static void walk_stacks(struct stack_walk *w, uint32_t node)
{
	const struct vg_stack_node *nd = vg_stacks_node(w->s, node);
	uint32_t *kids = NULL;
	size_t nk = 0;

	if (nd->frame != VG_STACKS_NONE) {
		if (w->depth == sizeof(w->path) / sizeof(w->path[0]))
			return;
		w->path[w->depth++] = nd->frame;
	}
	if (nd->self) {
		w->total++;
		if (w->listed < w->max) {
			cJSON *st = cJSON_CreateObject(), *fr;

			cJSON_AddNumberToObject(st, "tid", w->tid);
			cJSON_AddNumberToObject(st, "count", (double)nd->self);
			fr = cJSON_AddArrayToObject(st, "frames");
			for (size_t i = 0; i < w->depth; i++)
				cJSON_AddItemToArray(fr, frame_json(w->s, vg_stacks_frame(w->s, w->path[i])));
			cJSON_AddItemToArray(w->arr, st);
			w->listed++;
		}
	}
	if (vg_stacks_children(w->s, node, &kids, &nk) == 0) {
		for (size_t i = 0; i < nk; i++)
			walk_stacks(w, kids[i]);
		free(kids);
	}
	if (nd->frame != VG_STACKS_NONE)
		w->depth--;
}

static int print_json(struct vg_cli *cli, const struct vg_profile *p, FILE *out)
{
	const struct vg_stacks *s = vg_profile_stacks(p);
	const struct vg_perf_stats *ps = vg_profile_perf_stats(p);
	const struct vg_profile_stats *st = vg_profile_stats(p);
	struct vg_stack_function *fn = NULL;
	size_t nfn = 0, nth;
	uint64_t total = vg_stacks_total(s);
	const struct vg_cover_tid *th;
	const char *why;
	cJSON *doc, *obs, *arr, *reasons, *cov;
	struct stack_walk w;
	struct vg_error err = { 0 };
	char *text;
	int r = 0;

	doc = vg_json_report_new("live_profile", cli->target);
	if (!doc)
		return cli_out_of_memory(cli, "building the JSON report");
	obs = cJSON_AddObjectToObject(doc, "observation");
	cJSON_AddStringToObject(obs, "event", vg_profile_event(p));
	cJSON_AddNumberToObject(obs, "frequency_hz", (double)vg_profile_freq(p));
	cJSON_AddStringToObject(obs, "unwind", vg_unwind_mode_name(vg_profile_unwind(p)));
	cJSON_AddNumberToObject(obs, "duration_ms", (double)vg_profile_duration_ns(p) / 1e6);
	cJSON_AddStringToObject(obs, "stop_reason", vg_stop_name(vg_profile_stop_reason(p)));
	cJSON_AddItemToObject(obs, "process_tree",
			      vg_json_process_tree_perf(vg_profile_perf_stats(p), vg_profile_start_ns(p)));
	cJSON_AddNumberToObject(obs, "samples", (double)total);
	cJSON_AddNumberToObject(obs, "lost", (double)ps->lost);
	cJSON_AddNumberToObject(obs, "throttled", (double)ps->throttled);
	cJSON_AddNumberToObject(obs, "samples_other_threads", (double)st->samples_other_tid);
	cJSON_AddNumberToObject(obs, "samples_after_stop", (double)st->samples_after_stop);
	cJSON_AddNumberToObject(obs, "samples_before_start", (double)st->samples_before_start);
	cJSON_AddNumberToObject(obs, "distinct_addresses", (double)st->addresses);
	cJSON_AddNumberToObject(obs, "symbolizer_refreshes", (double)st->refreshes);
	cJSON_AddStringToObject(obs, "kernel_stacks", vg_profile_kernel_shown(p, &why) ? "shown" : "hidden");
	if (why)
		cJSON_AddStringToObject(obs, "kernel_stacks_reason", why);
	else
		cJSON_AddNullToObject(obs, "kernel_stacks_reason");
	reasons = cJSON_CreateArray();
	lower_bound_reasons(p, reasons);
	cJSON_AddBoolToObject(obs, "counts_are_lower_bound", cJSON_GetArraySize(reasons) > 0);
	cJSON_AddItemToObject(obs, "lower_bound_reasons", reasons);
	th = vg_profile_threads(p, &nth);
	cov = cJSON_AddObjectToObject(obs, "thread_coverage");
	{
		size_t by[4] = { 0 }, exited = 0;

		for (size_t i = 0; i < nth; i++) {
			if ((unsigned)th[i].how < 4)
				by[th[i].how]++;
			exited += th[i].exited;
		}
		cJSON_AddNumberToObject(cov, "threads_total", (double)nth);
		cJSON_AddNumberToObject(cov, "seeded", (double)by[VG_COVER_SEEDED]);
		cJSON_AddNumberToObject(cov, "inherited", (double)by[VG_COVER_INHERITED]);
		cJSON_AddNumberToObject(cov, "attached_on_rescan", (double)by[VG_COVER_RESCAN]);
		cJSON_AddNumberToObject(cov, "not_covered", (double)by[VG_COVER_NONE]);
		cJSON_AddNumberToObject(cov, "exited", (double)exited);
	}
	cJSON_AddNumberToObject(obs, "samples_without_user_stack", (double)st->samples_kernel_only);
	cJSON_AddNumberToObject(obs, "callchains_cut", (double)st->max_frames_hit);
	if (vg_profile_unwind(p) == VG_UNWIND_MODE_DWARF) {
		cJSON *u = cJSON_AddObjectToObject(obs, "unwind_stops");

		for (int i = 0; i < 8; i++)
			if (st->unwind_stop[i])
				cJSON_AddNumberToObject(u, vg_unwind_stop_name((enum vg_unwind_stop)i),
							(double)st->unwind_stop[i]);
	}

	arr = cJSON_AddArrayToObject(doc, "threads");
	for (size_t i = 0; i < vg_stacks_n_threads(s); i++) {
		const struct vg_stack_thread *t = vg_stacks_thread(s, i);
		cJSON *j = cJSON_CreateObject();

		cJSON_AddNumberToObject(j, "tid", t->tid);
		vg_json_add_text(j, "comm", vg_stacks_string(s, t->name));
		cJSON_AddNumberToObject(j, "samples", (double)vg_stacks_node(s, t->root)->total);
		cJSON_AddItemToArray(arr, j);
	}
	arr = cJSON_AddArrayToObject(doc, "functions");
	if (vg_stacks_functions(s, &fn, &nfn, &err) < 0) {
		cJSON_Delete(doc);
		return cli_fail(cli, &err);
	}
	for (size_t i = 0; i < nfn; i++) {
		cJSON *j = cJSON_CreateObject();

		vg_json_add_text(j, "function", vg_stacks_string(s, fn[i].name));
		if (fn[i].file)
			vg_json_add_text(j, "file", vg_stacks_string(s, fn[i].file));
		else
			cJSON_AddNullToObject(j, "file");
		cJSON_AddBoolToObject(j, "inlined", fn[i].inlined);
		cJSON_AddBoolToObject(j, "kernel", fn[i].kernel);
		cJSON_AddNumberToObject(j, "self", (double)fn[i].self);
		cJSON_AddNumberToObject(j, "total", (double)fn[i].total);
		cJSON_AddNumberToObject(j, "self_share", total ? 100.0 * (double)fn[i].self / (double)total : 0);
		cJSON_AddNumberToObject(j, "total_share", total ? 100.0 * (double)fn[i].total / (double)total : 0);
		cJSON_AddItemToArray(arr, j);
	}
	free(fn);
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.arr = cJSON_AddArrayToObject(doc, "stacks");
	w.max = 10000;
	for (size_t i = 0; i < vg_stacks_n_threads(s); i++) {
		w.tid = vg_stacks_thread(s, i)->tid;
		walk_stacks(&w, vg_stacks_thread(s, i)->root);
	}
	cJSON_AddNumberToObject(obs, "stacks_total", (double)w.total);
	cJSON_AddNumberToObject(obs, "stacks_listed", (double)w.listed);
	if (out == stdout)
		return cli_print_json(doc);
	text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!text)
		return cli_out_of_memory(cli, "printing the JSON report");
	if (fputs(text, out) < 0 || fputc('\n', out) < 0)
		r = -EIO;
	cJSON_free(text);
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
	struct vg_outfile of = { .fd = -1 };
	FILE *out = stdout;
	char cut_why[256];
	int r;

	cli->operation = "live_profile";   /* errors and reports say the same */
	memset(&a, 0, sizeof(a));
	r = parse_args(cli, argc, argv, &a);
	if (r)
		return r < 0 ? 0 : r;
	/* A bad -o is refused now, not after the profile it would lose. */
	if (a.out_path && vg_outfile_check(a.out_path, &err) < 0)
		return cli_fail(cli, &err);
	/* Ctrl-C and SIGTERM end the profile, not vigil, from the start: one
	 * during the setup stops it at once, and the report follows. */
	cli_stop_signals_begin(&stop);
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
	if (a.out_path) {
		if (vg_outfile_open(&of, a.out_path, 0, &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		out = vg_outfile_stream(&of);
		if (!out) {
			out = stdout;
			r = cli_out_of_memory(cli, "opening the output file");
			goto out;
		}
	}
	fill_meta(p, cli->target, &meta);
	fill_cut(p, &meta, cut_why, sizeof(cut_why));
	if (a.format) {
		struct vg_stack_write_opts wo = { .meta = &meta, .top = (size_t)a.top };

		r = a.format->write(out, vg_profile_stacks(p), &wo, &err);
	} else {
		r = print_json(cli, p, out);
		if (r > 0)
			goto out;
	}
	if (r < 0 && out != stdout && of.error) {
		/* The file's own errno (ENOSPC), from the commit's sentence. */
		out = stdout;
		vg_outfile_commit(&of, "profile", &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	if (r < 0) {
		if (!err.code)
			vg_error_set(&err, r, "cannot write the %s output: %s",
				     a.format ? a.format->name : "json", strerror(-r));
		r = cli_fail(cli, &err);
		goto out;
	}
	if (out != stdout) {
		out = stdout;
		if (vg_outfile_commit(&of, "profile", &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
	}
	{
		const struct vg_perf_stats *ps = vg_profile_perf_stats(p);

		/* On stderr: stdout may be the folded stacks or pprof. */
		fprintf(stderr, "# %" PRIu64 " samples in %.1f s (%s), %" PRIu64 " lost, %" PRIu64 " throttled%s%s\n",
			vg_stacks_total(vg_profile_stacks(p)), (double)vg_profile_duration_ns(p) / 1e9,
			vg_stop_name(vg_profile_stop_reason(p)), ps->lost, ps->throttled,
			a.out_path ? "; written to " : "", a.out_path ? a.out_path : "");
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
	vg_outfile_abort(&of);
	vg_profile_free(p);
	cli_stop_signals_end(&stop);
	vg_symbolizer_free(sym);
	return r;
}
