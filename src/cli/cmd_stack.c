/* cmd_stack.c - `vigil stack PID [--tid TID]... [--no-kernel] [--json]
 * [-o FILE]`: one snapshot of every thread's user stack, without stopping
 * any (src/stack/capture.h says how each is obtained), symbolized as
 * `vigil sym` does, reported by report/stack.c. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/stack_opts.h"
#include "elf/addrspec.h"
#include "report/stack.h"
#include "report/stack_format.h"
#include "stack/capture.h"
#include "stack/facts.h"
#include "stack/waits.h"
#include "stack/wall.h"
#include "sym/symbolizer.h"
#include "target/maps.h"
#include "target/mem.h"
#include "unwind/unwind.h"
#include "util/outfile.h"

#define MAX_TIDS 1024

const char cmd_stack_usage[] =
	"usage: vigil stack PID [--tid TID]... [--no-kernel] [--json] [-o FILE]\n"
	"       vigil stack -p PID,PID... [--no-kernel] [-o FILE]\n"
	"       vigil stack PID --every TIME --duration TIME [--tid TID]...\n"
	"                   [--format table|folded|pprof|speedscope|svg] [-o FILE]\n"
	"\n"
	"Where every thread of a process is, right now: one snapshot of each thread's\n"
	"user stack, unwound by CFI (.eh_frame, .debug_frame), with inline frames,\n"
	"function and file:line:column -- the frames `vigil sym` gives for the same\n"
	"addresses.  Nothing is stopped: no ptrace, no signal; the target runs on\n"
	"while it is read.  Threads whose stacks are identical are shown together\n"
	"(\"3 threads: ...\"), innermost frame first.\n"
	"\n"
	"Each thread says how its registers were obtained:\n"
	"  task_iter     the thread was off the CPU (blocked in a system call, or\n"
	"                preempted): a BPF task iterator read the user registers the\n"
	"                kernel saved when it entered the kernel, and copied the top\n"
	"                of its stack in the same pass; its on-CPU flag and switch\n"
	"                counts before and after prove it did not run in between\n"
	"  perf_sample   the thread was running: one sampled perf event (task clock,\n"
	"                user registers and stack) caught it within a few ms\n"
	"  proc_syscall  neither allowed (no CAP_BPF/CAP_PERFMON): only pc and sp from\n"
	"                /proc/TID/syscall; a frame that needs rbp ends the walk\n"
	"  none          nothing could be read; the reason follows\n"
	"and whether its stack is complete (the walk reached the outermost frame) or\n"
	"where it stopped (stack_end, no_cfi, missing_register, ...).  A thread that\n"
	"ran while it was read is read again; one that moved twice is flagged.\n"
	"\n"
	"What each thread waits for, read right after its stack (/proc/TID/syscall,\n"
	"the glibc frames above a futex, the object's memory):\n"
	"  waits:      mutex, rwlock, cond, semaphore, join (pthread_join), lock (a\n"
	"              glibc-internal lock), futex, io, poll, sleep, signal, child,\n"
	"              io_uring, yield, syscall, running, user (off the CPU outside a\n"
	"              system call); with the object's name (g_lock, or its address),\n"
	"              its owner where glibc records one (a mutex's owner TID, a\n"
	"              write-locked rwlock's writer, the joined thread) and the\n"
	"              owner's state; for I/O, what the fd is (tcp 127.0.0.1:P ->\n"
	"              127.0.0.1:Q (ESTABLISHED), a pipe and its other end, a path)\n"
	"  chain:      the owners followed thread to thread (\"waits for g_lock held\n"
	"              by 1234 (holder), which is sleeping in clock_nanosleep\"); a\n"
	"              chain that comes back is a DEADLOCK, shown first, each\n"
	"              thread with its stack and the line that is taking the lock\n"
	"  syscall:    the call decoded: futex(0x...=g_lock, WAIT_PRIVATE, 2),\n"
	"              read(5 = pipe:[N] ..., 4096), clock_nanosleep(MONOTONIC, 1.5 s)\n"
	"  blocked at: the first frame outside libc, ld.so and the vDSO: the caller\n"
	"              of pthread_mutex_lock, read, ...\n"
	"  kernel stack: /proc/TID/stack, below the user frames ([kernel]); it needs\n"
	"              root (CAP_SYS_ADMIN) and a kernel with CONFIG_STACKTRACE, and\n"
	"              is empty for a thread on a CPU; otherwise the reason is shown\n"
	"\n"
	"Wall-clock profile (--every): one such snapshot of every thread each\n"
	"period (--every) for --duration, running and blocked threads alike, each\n"
	"stack ending in a frame that names what the thread waits for ([mutex\n"
	"g_lock], [read tcp 127.0.0.1:P -> ...], [sleep], [running], ...; kernel\n"
	"stacks are not read): where wall time goes, off-CPU time included,\n"
	"without a scheduler tracer.  Written in the formats of vigil profile\n"
	"(table by default); the table's header and stderr give the samples per\n"
	"state and per wait kind.\n"
	"Resolution: one sample per thread per period; a snapshot that outlasts\n"
	"the period delays the next (counted).\n"
	"\n"
	"options:\n"
	"  --tid TID     only this thread (repeatable); it must belong to PID\n"
	"  --every TIME  wall-clock profile: a snapshot every TIME (10ms, 0.5s; a\n"
	"                bare number is milliseconds; at most 60s)\n"
	"  --duration TIME  how long the wall-clock profile runs (needs --every)\n"
	"  --format F    with --every: table, folded, pprof, speedscope or svg\n"
	"  --no-kernel   do not read kernel stacks (/proc/TID/stack)\n"
	"  --json        JSON document (docs/json-schema/live_stack.json)\n"
	"  -o FILE       write the report to FILE (- is standard output)\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"exit: 0 ok, 1 runtime error, 2 bad input (no such thread), 3 permission,\n"
	"4 the process does not exist or exited.\n"
	"\n"
	"Several processes (-p PID,PID... or -p repeated, as perf record -p takes\n"
	"them): each one's snapshot in turn, as if named alone (the table only).\n"
	"\n"
	"examples:\n"
	"  vigil stack 4242\n"
	"  vigil stack -p 4242,4243\n"
	"  vigil stack 4242 --tid 4250 --json\n"
	"  vigil stack 4242 --every 10ms --duration 5s --format svg -o wall.svg\n";

struct stack_args {
	const char *pid;
	pid_t tids[MAX_TIDS];
	size_t n_tids;
	bool no_kernel;
	const char *out_path;
	uint64_t every_ms, duration_ms;
	const struct vg_stack_format *format;   /* --every only */
};

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct stack_args *a)
{
	enum { OPT_TID = 256, OPT_NO_KERNEL, OPT_JSON, OPT_EVERY, OPT_DURATION, OPT_FORMAT };
	static const struct option opts[] = {
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r, npos = 0;
	uint64_t v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "-ho:", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (npos++)
				return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil stack PID [options]", optarg);
			a->pid = optarg;
			break;
		case OPT_TID:
			if ((r = cli_opt_tid(cli, optarg, a->tids, &a->n_tids, MAX_TIDS)))
				return r;
			break;
		case OPT_NO_KERNEL:
			a->no_kernel = true;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_EVERY:
			if (cli_parse_duration(cli, "--every", optarg, 1, 60000, &v))
				return VG_EXIT_USAGE;
			a->every_ms = v;
			break;
		case OPT_DURATION:
			if ((r = cli_opt_duration(cli, optarg, &a->duration_ms)))
				return r;
			break;
		case OPT_FORMAT:
			a->format = vg_stack_format_find(optarg);
			if (!a->format)
				return cli_usage_error(cli, "invalid --format '%s': expected table, folded, pprof, speedscope or svg", optarg);
			break;
		case 'o':
			a->out_path = cli_output_path(optarg);   /* "-": stdout */
			break;
		case 'h':
			fputs(cmd_stack_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (npos++)
			return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil stack PID [options]", argv[optind]);
		a->pid = argv[optind];
	}
	if (!a->pid)
		return cli_usage_error(cli, "expected PID; usage: vigil stack PID [--tid TID]... [--json] (vigil help stack)");
	if (!a->every_ms && (a->duration_ms || a->format))
		return cli_usage_error(cli, "--duration and --format belong to the wall-clock profile: give --every MS too");
	if (a->every_ms) {
		if (!a->duration_ms)
			return cli_usage_error(cli, "--every needs --duration TIME (how long to sample)");
		if (a->duration_ms < a->every_ms)
			return cli_usage_error(cli, "--duration %" PRIu64 " is shorter than one period (--every %" PRIu64 ")",
					       a->duration_ms, a->every_ms);
		if (cli->json)
			return cli_usage_error(cli, "--every writes the profile formats: use --format, not --json");
		if (!a->format)
			a->format = vg_stack_format_find("table");
		if (a->format->binary && !a->out_path && isatty(STDOUT_FILENO))
			return cli_usage_error(cli, "%s output is binary: give -o FILE or redirect standard output",
					       a->format->name);
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each --tid must be a thread of the process. */
static int check_tids(struct vg_cli *cli, const struct stack_args *a)
{
	for (size_t i = 0; i < a->n_tids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)cli->target->pid, (int)a->tids[i]);
		if (access(path, F_OK) < 0)
			return cli_usage_error(cli, "thread %d is not a thread of pid %d (see /proc/%d/task)",
					       (int)a->tids[i], (int)cli->target->pid, (int)cli->target->pid);
	}
	return 0;
}

static int write_json(struct vg_cli *cli, const struct vg_report_stack *rep, FILE *out)
{
	cJSON *doc = vg_report_stack_json(rep);

	if (!doc)
		return cli_out_of_memory(cli, "building the JSON report");
	return cli_write_json(cli, doc, out);
}

/* --every's one output: the stacks in the --format asked for. */
struct wall_write {
	const struct vg_stacks *stacks;
	const struct vg_stack_write_opts *wo;
	const struct vg_stack_format *format;
};

static int wall_writer(struct vg_cli *cli, FILE *out, const struct cli_output *o, void *arg,
		       struct vg_error *err)
{
	const struct wall_write *ww = arg;

	(void)cli;
	(void)o;
	return ww->format->write(out, ww->stacks, ww->wo, err);
}

/* --every: the wall-clock profile, written like vigil profile writes. */
static int run_wall(struct vg_cli *cli, const struct stack_args *a, struct vg_mem *mem,
		    struct vg_symbolizer *sym, struct vg_stack_capture *cap)
{
	struct vg_stack_wall_opts o = {
		.every_ms = a->every_ms, .duration_ms = a->duration_ms,
		.tids = a->tids, .n_tids = a->n_tids,
		.facts = vg_stack_facts_reader_new(cli->target, mem, sym),
	};
	char totals[512] = "";
	struct vg_stack_wall_stats st;
	struct vg_stacks *stacks = vg_stacks_new();
	struct cli_stop_signals stop = { .fd = -1 };
	struct vg_error err = { 0 };
	char cut_why[256] = "";
	int r;

	if (!stacks || !o.facts) {
		vg_stacks_free(stacks);
		vg_stack_facts_reader_free(o.facts);
		return cli_out_of_memory(cli, "for the stacks");
	}
	cli_stop_signals_begin(&stop);
	fprintf(stderr, "# wall-clock profile of pid %d: every thread every %" PRIu64 " ms for %" PRIu64
		" ms, nothing stopped\n", (int)cli->target->pid, a->every_ms, a->duration_ms);
	r = vg_stack_wall_run(cli->target, sym, cap, &o, stop.fd, stacks, &st, &err);
	cli_stop_signals_end(&stop);
	if (r < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	for (size_t i = 0, len = 0; i < VG_UNWIND_NSTOPS; i++)
		if (st.cut_why[i] && len < sizeof(cut_why))
			len += (size_t)snprintf(cut_why + len, sizeof(cut_why) - len, "%s%s %" PRIu64,
						len ? ", " : "", vg_unwind_stop_name((enum vg_unwind_stop)i),
						st.cut_why[i]);
	for (size_t i = 0, len = 0; i < 8; i++)
		if (st.by_state[i] && len < sizeof(totals))
			len += (size_t)snprintf(totals + len, sizeof(totals) - len, "%s%s %" PRIu64,
						len ? ", " : "by state: ", vg_stack_wall_state_name(i),
						st.by_state[i]);
	for (size_t i = 0, len = strlen(totals), first = 1; i < VG_WAIT_NKINDS; i++)
		if (st.by_wait[i] && len < sizeof(totals)) {
			len += (size_t)snprintf(totals + len, sizeof(totals) - len, "%s%s %" PRIu64,
						first ? (len ? "; by wait: " : "by wait: ") : ", ",
						vg_wait_kind_name((enum vg_wait_kind)i), st.by_wait[i]);
			first = 0;
		}
	{
		struct vg_stacks_meta meta = {
			.event = "wall-clock", .period = 0,
			.frequency_hz = 1000 / a->every_ms,
			.sample_ns = a->every_ms * 1000000u,
			.start_time_ns = st.start_wall_ns, .duration_ns = st.duration_ns,
			.pid = cli->target->pid, .comm = cli->target->comm,
			.stacks_cut = st.cut, .stacks_cut_why = cut_why[0] ? cut_why : NULL,
			.totals = totals[0] ? totals : NULL,
		};
		struct vg_stack_write_opts wo = { .meta = &meta, .top = 25 };
		struct wall_write ww = { stacks, &wo, a->format };
		struct cli_output dest = { a->out_path ? a->out_path : "-", a->out_path, a->format->name };

		r = cli_output_write(cli, &dest, a->out_path, 0, "wall-clock profile", wall_writer, &ww);
		if (r)
			goto out;
	}
	fprintf(stderr, "# %" PRIu64 " snapshots, %" PRIu64 " thread samples in %.1f s (%s); "
		"%" PRIu64 " late ticks, %" PRIu64 " stacks cut%s%s\n# %s\n",
		st.snapshots, st.samples, (double)st.duration_ns / 1e9,
		st.target_exited ? "target exited" : st.interrupted ? "interrupted" : "duration",
		st.late_ticks, st.cut, a->out_path ? "; written to " : "", a->out_path ? a->out_path : "",
		totals[0] ? totals : "no samples");
	cli_print_target_notes(cli->target);
	r = 0;
out:
	vg_stacks_free(stacks);
	vg_stack_facts_reader_free(o.facts);
	return r;
}

/* One process's snapshot, written to out (a table, or with --json the
 * document).  0, or the exit code after printing. */
static int stack_one(struct vg_cli *cli, const struct stack_args *a, const char *pid_arg,
		     FILE *out)
{
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_symbolizer *sym = NULL;
	struct vg_stack_capture *cap = NULL;
	struct vg_thread_stack *threads = NULL;
	struct vg_report_stack_thread *rows = NULL;
	struct vg_stack_facts_reader *reader = NULL;
	struct vg_stack_facts *facts = NULL;
	struct vg_wait *waits = NULL;
	struct vg_wait_graph graph = { 0 };
	pid_t *tids = NULL;
	size_t n = 0;
	uint64_t t0, elapsed;
	int r;

	r = cli_open_target(cli, pid_arg, &maps, &mem);
	if (r)
		goto out;
	r = cli_need_user_memory(cli, "stack");
	if (r)
		goto out;
	r = check_tids(cli, a);
	if (r)
		goto out;
	if (vg_symbolizer_open_target(cli->target, 0, &sym, &err) < 0 ||
	    vg_stack_capture_new(cli->target, maps, vg_symbolizer_images(sym), &cap, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (a->every_ms) {
		r = run_wall(cli, a, mem, sym, cap);
		goto out;
	}
	t0 = now_ns();
	if (a->n_tids) {
		n = a->n_tids;
		tids = malloc(n * sizeof(*tids));
		if (tids)
			memcpy(tids, a->tids, n * sizeof(*tids));
	} else if (vg_target_threads(cli->target, &tids, &n, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	threads = calloc(n ? n : 1, sizeof(*threads));
	rows = calloc(n ? n : 1, sizeof(*rows));
	facts = calloc(n ? n : 1, sizeof(*facts));
	waits = calloc(n ? n : 1, sizeof(*waits));
	reader = vg_stack_facts_reader_new(cli->target, mem, sym);
	if (!tids || !threads || !rows || !facts || !waits || !reader) {
		r = cli_out_of_memory(cli, "for the threads");
		goto out;
	}
	if (vg_stack_capture_take(cap, tids, n, threads, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	/* Right after the registers: each thread's system call and kernel
	 * stack (the snapshot ends there); then what each waits for, and the
	 * owners followed across all of them. */
	vg_stack_facts_read(reader, threads, n, !a->no_kernel, facts);
	elapsed = now_ns() - t0;
	if (vg_stack_facts_classify(reader, threads, n, facts, waits, &err) < 0 ||
	    vg_wait_chains(waits, n, &graph) < 0) {
		r = err.code ? cli_fail(cli, &err) : cli_out_of_memory(cli, "for the wait chains");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct vg_report_stack_thread){ &threads[i], &facts[i], &waits[i] };
	{
		struct vg_report_stack rep = {
			.t = cli->target, .sym = sym, .threads = rows, .n = n,
			.notes = vg_stack_capture_notes(cap), .no_kernel = a->no_kernel,
			.graph = &graph, .elapsed_ns = elapsed,
		};

		if (cli->json) {
			r = write_json(cli, &rep, out);
			if (r > 0)
				goto out;
		} else {
			r = vg_report_stack_table(out, &rep);
		}
		/* A write error: the caller's commit or final flush says it. */
		if (r < 0 && out == stdout) {
			vg_error_set(&err, r, "cannot write the stack report: %s", strerror(-r));
			r = cli_fail(cli, &err);
			goto out;
		}
		if (!cli->json)
			cli_print_target_notes(cli->target);
	}
out:
	vg_wait_graph_release(&graph);
	vg_stack_facts_reader_free(reader);
	vg_stack_capture_free(cap);
	vg_symbolizer_free(sym);
	vg_mem_free(mem);
	vg_maps_free(maps);
	free(threads);
	free(rows);
	free(facts);
	free(waits);
	free(tids);
	return r;
}

/* The report's one output: each process in turn (one, or -p A,B). */
struct stack_write {
	const struct stack_args *a;
	const pid_t *pids;
	size_t n_pids;
};

static int stack_writer(struct vg_cli *cli, FILE *out, const struct cli_output *o, void *arg,
			struct vg_error *err)
{
	const struct stack_write *sw = arg;
	int r = 0;

	(void)o;
	(void)err;
	if (!sw->n_pids)
		return stack_one(cli, sw->a, sw->a->pid, out);
	/* Each process in turn, as if named alone, one after the other. */
	for (size_t i = 0; i < sw->n_pids && !r; i++) {
		char pid_text[16];

		snprintf(pid_text, sizeof(pid_text), "%d", (int)sw->pids[i]);
		if (i)
			fputc('\n', out);
		cli->target = vg_target_free(cli->target);
		r = stack_one(cli, sw->a, pid_text, out);
	}
	return r;
}

int cmd_stack(struct vg_cli *cli, int argc, char **argv)
{
	struct stack_args *a = calloc(1, sizeof(*a));
	struct vg_error err = { 0 };
	pid_t *pids = NULL;
	size_t n_pids = 0;
	int r;

	cli->operation = "live_stack";
	if (!a)
		return cli_out_of_memory(cli, "parsing the arguments");
	r = parse_args(cli, argc, argv, a);
	if (r) {
		r = r < 0 ? 0 : r;
		goto out;
	}
	r = cli_target_pids(cli, a->pid, &pids, &n_pids);
	if (r)
		goto out;
	if (n_pids && (a->every_ms || a->n_tids || cli->json)) {
		r = cli_usage_error(cli, "%s describes one process: give one PID, not %zu",
				    a->every_ms ? "--every" : a->n_tids ? "--tid" : "--json", n_pids);
		goto out;
	}
	if (a->out_path && vg_outfile_check(a->out_path, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (a->every_ms) {
		/* --every writes its own output (the profile formats). */
		r = stack_one(cli, a, a->pid, stdout);
	} else {
		struct stack_write sw = { a, pids, n_pids };
		struct cli_output o = { a->out_path ? a->out_path : "-", a->out_path,
					cli->json ? "json" : "table" };

		r = cli_output_write(cli, &o, a->out_path, 0, "stack report", stack_writer, &sw);
	}
out:
	free(pids);
	free(a);
	return r;
}
