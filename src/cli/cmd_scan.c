/* cmd_scan.c - `vigil scan`: find where a value lives in a live process,
 * narrow the matches down, compare with a snapshot when the value is not
 * known, and find static pointer chains to an address.
 *
 * Every mode reads the target with process_vm_readv only: the target is
 * never stopped (ptrace) and never written.  Results name a form `vigil
 * watch` takes, so the hunt goes on with one command. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "report/scan.h"
#include "scan/pointers.h"
#include "scan/scan.h"
#include "scan/scanset.h"
#include "scan/snapshot.h"
#include "target/maps.h"
#include "target/mem.h"
#include "util/outfile.h"

const char cmd_scan_usage[] =
	"usage: vigil scan PID VALUE --type TYPE [--aligned] [--regions SET] [--save FILE] [--json]\n"
	"       vigil scan PID --from FILE (--eq V | --changed | --unchanged | --increased\n"
	"                  | --decreased | --increased-by D | --decreased-by D | --range A..B)\n"
	"                  [--type TYPE] [--aligned] [--save FILE] [--json]\n"
	"       vigil scan PID --snapshot FILE [--regions SET]\n"
	"       vigil scan PID --pointers-to ADDR [--depth N] [--max-offset BYTES] [--json]\n"
	"\n"
	"Where does this value live?  A first scan reads every selected region of a\n"
	"running process (process_vm_readv in large chunks, on every CPU, without\n"
	"stopping it) and lists each place holding VALUE.  Save the matches with\n"
	"--save, let the value change, and narrow them with --from FILE and a test:\n"
	"narrowing re-reads only the saved addresses.  When the value is unknown,\n"
	"--snapshot FILE captures the memory (compressed); --from FILE --type T\n"
	"--changed later compares it with the live memory.  --pointers-to finds\n"
	"chains of pointers from a static location (a global of an image) to ADDR,\n"
	"which survive a restart of the program, ranked as a program's own data\n"
	"would form them: inner pointers to 8-aligned objects, a named global of\n"
	"the executable as base, small offsets, short chains first.  Each match\n"
	"says its region, image and static offset, the global it lies in (by C\n"
	"expression where DWARF allows: g_stats.ticks, g_table[3].count), and the\n"
	"ADDR to give `vigil watch`.\n"
	"\n"
	"TYPE: i8 i16 i32 i64 u8 u16 u32 u64 (decimal or 0xHEX), f32 f64 (within\n"
	"--epsilon), str (UTF-8 and UTF-16LE), bytes (hex, '?\?' matches any byte:\n"
	"\"de ad ?? ef\").  Numbers match at every byte offset unless --aligned.\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"options:\n"
	"  --type TYPE        the value's type (required for a first scan and with a\n"
	"                     snapshot; a scan set knows its own)\n"
	"  --aligned          only offsets that are a multiple of the type's size\n"
	"  --regions SET      writable (default: readable and writable), all (every\n"
	"                     readable region), heap ([heap] and anonymous rw memory),\n"
	"                     stack ([stack]), anon, or an image's file name or path\n"
	"  --epsilon E        float tolerance (default 1e-6 for f32, 1e-9 for f64)\n"
	"  --save FILE        write the matches to FILE (a scan set) for --from\n"
	"  --from FILE        narrow a scan set or compare with a snapshot\n"
	"  --eq V             keep matches now equal to V\n"
	"  --changed          keep matches whose value changed since the last scan\n"
	"  --unchanged        ... did not change\n"
	"  --increased        ... grew (numbers)\n"
	"  --decreased        ... shrank\n"
	"  --increased-by D   ... grew by exactly D (--decreased-by D: shrank by D)\n"
	"  --range A..B       keep matches now in [A, B]\n"
	"  --snapshot FILE    capture the selected memory to FILE (zlib)\n"
	"  --pointers-to ADDR find pointer chains to ADDR (ADDR forms below)\n"
	"  --depth N          pointer levels to search, 1-8 (default 5)\n"
	"  --max-offset B     largest offset added after a dereference (default 4096);\n"
	"                     offsets <= 64 are searched first, then 4 times wider\n"
	"  --max-chains N     chains to keep, the best ranked (default 1000)\n"
	"  --max-list N       matches or chains listed (default 20, with --json 1000);\n"
	"                     the counts are always complete\n"
	"  --json             one JSON document (docs/json-schema/live_scan.json)\n"
	"  -h, --help         this help\n"
	"\n"
	"A scan set remembers the process it came from (PID and start time): one\n"
	"from an earlier process that had the same PID is refused (exit 4).\n"
	"Ctrl-C stops a long scan; what was found so far is listed, not saved.\n"
	"On a terminal, a first scan, a snapshot and a pointer scan's memory read show\n"
	"their progress on stderr.\n"
	"\n"
	"examples:\n"
	"  vigil scan 4242 1500 --type i32 --save hp.set\n"
	"  vigil scan 4242 --from hp.set --decreased --save hp.set\n"
	"  vigil scan 4242 --from hp.set --eq 1480\n"
	"  vigil scan 4242 \"hello\" --type str --regions heap\n"
	"  vigil scan 4242 --snapshot mem.snap; vigil scan 4242 --from mem.snap --type u32 --aligned --changed\n"
	"  vigil scan 4242 --pointers-to 0x55d0c2a1c2e8 --depth 2 --max-offset 256\n";

enum scan_mode { MODE_FIRST = 1, MODE_NARROW, MODE_SNAPSHOT, MODE_POINTERS };

struct scan_args {
	enum scan_mode mode;
	const char *pid, *value, *type, *regions, *save, *from, *snapshot, *pointers_to;
	bool aligned, have_op, have_epsilon, have_max_list;
	enum vg_narrow_op op;
	const char *operand;        /* --eq V, --increased-by D, --range A..B */
	double epsilon;
	uint64_t max_list, depth, max_offset, max_chains;
	char **argv_copy;           /* parse_args' reordered argv (array only) */
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int set_op(struct vg_cli *cli, struct scan_args *a, enum vg_narrow_op op,
		  const char *operand)
{
	if (a->have_op)
		return cli_usage_error(cli, "give one narrowing test (--eq, --changed, --unchanged, --increased, --decreased, --increased-by, --decreased-by or --range)");
	a->have_op = true;
	a->op = op;
	a->operand = operand;
	return 0;
}

static int parse_count(struct vg_cli *cli, const char *opt, const char *s, uint64_t lo,
		       uint64_t hi, uint64_t *out)
{
	if (vg_parse_u64(s, 1, out) < 0 || *out < lo || *out > hi)
		return cli_usage_error(cli, "invalid %s '%s': expected a number from %" PRIu64 " to %" PRIu64,
				       opt, s, lo, hi);
	return 0;
}

/* A negative number ("-129", "-1.5", "-.5") that is not an option's
 * argument is a VALUE, not the options -1 -2 -9: it goes behind a "--",
 * after which getopt hands every word over as a positional, in order (the
 * PID, never negative, stays first).  Returns a new argv (free the array,
 * not the strings) or NULL when out of memory. */
static char **negatives_last(int argc, char **argv, const struct option *opts)
{
	char **out = calloc((size_t)argc + 2, sizeof(*out));
	int n = 0, end = argc;

	if (!out)
		return NULL;
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			end = i;
			break;
		}
	out[n++] = argv[0];
	for (int i = 1; i < end; i++) {
		const char *w = argv[i];
		bool neg = w[0] == '-' && (isdigit((unsigned char)w[1]) ||
					   (w[1] == '.' && isdigit((unsigned char)w[2])));

		if (neg)
			continue;
		out[n++] = argv[i];
		if (strncmp(w, "--", 2) == 0 && w[2] && !strchr(w, '=') && i + 1 < end) {
			/* --increased-by -5: its argument, wherever it points. */
			size_t len = strlen(w + 2);

			for (const struct option *o = opts; o->name; o++)
				if (o->has_arg == required_argument && strncmp(o->name, w + 2, len) == 0) {
					out[n++] = argv[++i];
					break;
				}
		}
	}
	out[n++] = "--";
	for (int i = 1; i < end; i++) {
		const char *w = argv[i];

		if (strncmp(w, "--", 2) == 0 && w[2] && !strchr(w, '=') && i + 1 < end) {
			size_t len = strlen(w + 2);

			for (const struct option *o = opts; o->name; o++)
				if (o->has_arg == required_argument && strncmp(o->name, w + 2, len) == 0) {
					i++;
					break;
				}
			continue;
		}
		if (w[0] == '-' && (isdigit((unsigned char)w[1]) ||
				    (w[1] == '.' && isdigit((unsigned char)w[2]))))
			out[n++] = argv[i];
	}
	for (int i = end + 1; i < argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return out;
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct scan_args *a)
{
	enum {
		OPT_TYPE = 256, OPT_ALIGNED, OPT_REGIONS, OPT_EPSILON, OPT_SAVE, OPT_FROM,
		OPT_EQ, OPT_CHANGED, OPT_UNCHANGED, OPT_INCREASED, OPT_DECREASED,
		OPT_INCREASED_BY, OPT_DECREASED_BY, OPT_RANGE, OPT_SNAPSHOT, OPT_POINTERS,
		OPT_DEPTH, OPT_MAX_OFFSET, OPT_MAX_CHAINS, OPT_MAX_LIST, OPT_JSON,
	};
	static const struct option opts[] = {
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "aligned", no_argument, NULL, OPT_ALIGNED },
		{ "regions", required_argument, NULL, OPT_REGIONS },
		{ "epsilon", required_argument, NULL, OPT_EPSILON },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "eq", required_argument, NULL, OPT_EQ },
		{ "changed", no_argument, NULL, OPT_CHANGED },
		{ "unchanged", no_argument, NULL, OPT_UNCHANGED },
		{ "increased", no_argument, NULL, OPT_INCREASED },
		{ "decreased", no_argument, NULL, OPT_DECREASED },
		{ "increased-by", required_argument, NULL, OPT_INCREASED_BY },
		{ "decreased-by", required_argument, NULL, OPT_DECREASED_BY },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ "snapshot", required_argument, NULL, OPT_SNAPSHOT },
		{ "pointers-to", required_argument, NULL, OPT_POINTERS },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "max-offset", required_argument, NULL, OPT_MAX_OFFSET },
		{ "max-chains", required_argument, NULL, OPT_MAX_CHAINS },
		{ "max-list", required_argument, NULL, OPT_MAX_LIST },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pos[2] = { NULL, NULL };
	int npos = 0, c, r = 0;

	a->argv_copy = negatives_last(argc, argv, opts);
	if (!a->argv_copy)
		return cli_out_of_memory(cli, "parsing the command line");
	argv = a->argv_copy;
	for (argc = 0; argv[argc]; argc++)
		;

	a->depth = 5;
	a->max_offset = 4096;
	a->max_chains = 1000;
	opterr = 0;
	/* Leading '-': positionals keep their place among options, and a
	 * negative VALUE ("-5") reaches the value parser as one. */
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (npos == 2)
				return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil scan PID VALUE --type TYPE", optarg);
			pos[npos++] = optarg;
			break;
		case OPT_TYPE: a->type = optarg; break;
		case OPT_ALIGNED: a->aligned = true; break;
		case OPT_REGIONS: a->regions = optarg; break;
		case OPT_EPSILON: {
			char *end;

			errno = 0;
			a->epsilon = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(a->epsilon) || a->epsilon < 0)
				return cli_usage_error(cli, "invalid --epsilon '%s': expected a finite number >= 0", optarg);
			a->have_epsilon = true;
			break;
		}
		case OPT_SAVE: a->save = optarg; break;
		case OPT_FROM: a->from = optarg; break;
		case OPT_EQ: r = set_op(cli, a, VG_NARROW_EQ, optarg); break;
		case OPT_CHANGED: r = set_op(cli, a, VG_NARROW_CHANGED, NULL); break;
		case OPT_UNCHANGED: r = set_op(cli, a, VG_NARROW_UNCHANGED, NULL); break;
		case OPT_INCREASED: r = set_op(cli, a, VG_NARROW_INCREASED, NULL); break;
		case OPT_DECREASED: r = set_op(cli, a, VG_NARROW_DECREASED, NULL); break;
		case OPT_INCREASED_BY: r = set_op(cli, a, VG_NARROW_INCREASED_BY, optarg); break;
		case OPT_DECREASED_BY: r = set_op(cli, a, VG_NARROW_DECREASED_BY, optarg); break;
		case OPT_RANGE: r = set_op(cli, a, VG_NARROW_RANGE, optarg); break;
		case OPT_SNAPSHOT: a->snapshot = optarg; break;
		case OPT_POINTERS: a->pointers_to = optarg; break;
		case OPT_DEPTH: r = parse_count(cli, "--depth", optarg, 1, VG_PTR_MAX_DEPTH, &a->depth); break;
		case OPT_MAX_OFFSET: r = parse_count(cli, "--max-offset", optarg, 0, 1u << 30, &a->max_offset); break;
		case OPT_MAX_CHAINS: r = parse_count(cli, "--max-chains", optarg, 1, 10000000, &a->max_chains); break;
		case OPT_MAX_LIST:
			r = parse_count(cli, "--max-list", optarg, 0, UINT32_MAX, &a->max_list);
			a->have_max_list = true;
			break;
		case OPT_JSON: cli->json = true; break;
		case 'h':
			fputs(cmd_scan_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
		if (r)
			return r;
	}
	for (; optind < argc; optind++) {
		if (npos == 2)
			return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil scan PID VALUE --type TYPE", argv[optind]);
		pos[npos++] = argv[optind];
	}
	if (npos == 0)
		return cli_usage_error(cli, "expected PID; usage: vigil scan PID VALUE --type TYPE (vigil help scan)");
	a->pid = pos[0];
	a->value = pos[1];

	/* Exactly one mode, and only the options that mean something in it. */
	{
		int modes = !!a->value + !!a->from + !!a->snapshot + !!a->pointers_to;

		if (modes != 1)
			return cli_usage_error(cli, modes ? "give one of VALUE, --from FILE, --snapshot FILE or --pointers-to ADDR"
						    : "expected VALUE, --from FILE, --snapshot FILE or --pointers-to ADDR after the PID");
	}
	a->mode = a->value ? MODE_FIRST : a->from ? MODE_NARROW : a->snapshot ? MODE_SNAPSHOT : MODE_POINTERS;
	if (a->mode == MODE_FIRST && !a->type)
		return cli_usage_error(cli, "a first scan needs --type (i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 str bytes)");
	if (a->mode == MODE_NARROW && !a->have_op)
		return cli_usage_error(cli, "--from FILE needs a test: --eq V, --changed, --unchanged, --increased, --decreased, --increased-by D, --decreased-by D or --range A..B");
	if (a->mode != MODE_NARROW && a->have_op)
		return cli_usage_error(cli, "narrowing tests (--eq, --changed, ...) go with --from FILE");
	if ((a->mode == MODE_SNAPSHOT || a->mode == MODE_POINTERS) && (a->save || a->type || a->aligned))
		return cli_usage_error(cli, "--save, --type and --aligned do not apply to %s",
				       a->mode == MODE_SNAPSHOT ? "--snapshot" : "--pointers-to");
	if (a->mode != MODE_POINTERS && a->regions == NULL)
		a->regions = "writable";
	if (a->mode == MODE_NARROW && a->regions && strcmp(a->regions, "writable") != 0)
		return cli_usage_error(cli, "--regions applies to a first scan or a snapshot, not to --from");
	if (a->mode == MODE_POINTERS && a->regions)
		return cli_usage_error(cli, "--regions does not apply to --pointers-to (every writable region is searched)");
	if (!a->have_max_list)
		a->max_list = cli->json ? 1000 : 20;
	return 0;
}

static double default_epsilon(enum vg_scan_type t)
{
	return t == VG_SCAN_F32 ? 1e-6 : 1e-9;
}

/* Parse the operands of the narrowing test for type t. */
static int parse_narrow(struct vg_cli *cli, const struct scan_args *a, enum vg_scan_type t,
			struct vg_narrow *n)
{
	struct vg_error err = { 0 };
	double eps = a->have_epsilon ? a->epsilon : default_epsilon(t);
	char *lo = NULL;
	int r = 0;

	n->op = a->op;
	if (a->op == VG_NARROW_RANGE) {
		const char *dots = strstr(a->operand, "..");

		if (!dots || dots == a->operand || !dots[2])
			return cli_usage_error(cli, "invalid --range '%s': expected A..B", a->operand);
		lo = strndup(a->operand, (size_t)(dots - a->operand));
		if (!lo)
			return cli_out_of_memory(cli, "parsing --range");
		if (vg_scan_value_parse(t, lo, eps, &n->a, &err) < 0 ||
		    vg_scan_value_parse(t, dots + 2, eps, &n->b, &err) < 0)
			r = cli_fail(cli, &err);
		free(lo);
		if (r)
			return r;
	} else if (a->operand && vg_scan_value_parse(t, a->operand, eps, &n->a, &err) < 0) {
		return cli_fail(cli, &err);
	}
	/* After the operands: the check covers their types too. */
	if (vg_narrow_check(t, n, &err) < 0)
		return cli_fail(cli, &err);
	return 0;
}

static double rate_gbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
}

/* The table view's progress line, on a terminal only.  Called from the
 * scanning threads (stdio locks the stream). */
static void progress_line(void *arg, const struct vg_scan_stats *s)
{
	(void)arg;
	fprintf(stderr, "\r# scanning: %.1f of %.1f MiB, %" PRIu64 " matches, %.2f GB/s\033[K",
		(double)s->bytes_scanned / 1048576.0, (double)s->bytes_total / 1048576.0,
		s->matches, rate_gbps(s->bytes_scanned, s->seconds));
}

static void progress_done(void)
{
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
}

/* VIGIL_SCAN_SYNC=PATH (tests): after the maps were read and before the
 * memory is, create PATH.ready and wait up to 10 s for PATH.go, so a test
 * can change the target's mappings at exactly that point. */
static void test_sync_point(void)
{
	const char *base = getenv("VIGIL_SCAN_SYNC");
	char path[4096];
	struct stat st;
	FILE *f;

	if (!base || !*base)
		return;
	snprintf(path, sizeof(path), "%s.ready", base);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s.go", base);
	for (int i = 0; i < 1000 && stat(path, &st) < 0; i++)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
}

static void identity_of(const struct vg_target *t, struct vg_scan_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->pid = t->pid;
	id->start_time = t->starttime;
	snprintf(id->comm, sizeof(id->comm), "%.16s", t->comm);
}

/* A scan set or snapshot names the process it came from; addresses of
 * another process, even one that got the same PID, mean nothing here. */
static int check_identity(struct vg_cli *cli, const char *file, const struct vg_scan_identity *id)
{
	const struct vg_target *t = cli->target;
	struct vg_error err = { 0 };

	if (id->pid != t->pid) {
		vg_error_set(&err, -EINVAL, "'%s' was taken from pid %d (%s), not pid %d: use it with pid %d, or scan pid %d again",
			     file, (int)id->pid, id->comm, (int)t->pid, (int)id->pid, (int)t->pid);
		return cli_fail(cli, &err);
	}
	if (id->start_time != t->starttime) {
		vg_error_set(&err, -ESRCH, "refused: '%s' was taken from an earlier process with pid %d (%s, started at tick %" PRIu64 "); pid %d is now a different process (%s, started at tick %llu): its addresses mean nothing here, scan again",
			     file, (int)id->pid, id->comm, id->start_time, (int)t->pid, t->comm, t->starttime);
		return cli_fail(cli, &err);
	}
	return 0;
}

/* Save (unless interrupted), then report.  A partial result is shown but
 * never saved: a later narrowing would take it for the whole truth. */
static int finish_matches(struct vg_cli *cli, const struct scan_args *a,
			  struct vg_report_scan_meta *sm, const struct vg_match_set *set,
			  const struct vg_scan_value *pattern, const struct vg_scan_stats *st,
			  const struct vg_maps *maps, struct vg_mem *mem)
{
	struct vg_images *imgs = NULL;
	struct vg_error err = { 0 };
	int r;

	if (a->save && !st->interrupted) {
		struct vg_scanset_meta meta;

		memset(&meta, 0, sizeof(meta));
		identity_of(cli->target, &meta.id);
		meta.type = sm->type;
		if (sm->value_text)
			snprintf(meta.value_text, sizeof(meta.value_text), "%s", sm->value_text);
		meta.created_ns = (uint64_t)time(NULL) * 1000000000u;
		meta.generation = sm->generation;
		if (vg_scanset_save(a->save, &meta, set, &err) < 0)
			return cli_fail(cli, &err);
	}
	/* Locations need the images; their failure leaves matches unnamed,
	 * not unreported. */
	r = cli_load_images(cli, NULL, false, maps, mem, &imgs, NULL, NULL);
	if (r)
		return r;
	/* A narrowing re-reads the saved addresses only: no regions. */
	sm->regions = a->mode == MODE_NARROW ? NULL : a->regions;
	sm->from = a->from;
	sm->saved_to = a->save;
	sm->max_list = (size_t)a->max_list;
	if (cli->json) {
		cJSON *doc = vg_report_scan_matches_json(cli->target, sm, set, pattern, st, maps, imgs,
							 &err);

		r = doc ? cli_print_json(doc) : cli_fail(cli, &err);
	} else {
		/* A write error is cli_finish_output's to report. */
		(void)vg_report_scan_matches_table(stdout, cli->target, sm, set, pattern, st, maps,
						   imgs);
		cli_print_target_notes(cli->target);
	}
	vg_images_free(imgs);
	if (r == 0 && st->interrupted) {
		if (!cli->json)
			fprintf(stderr, "vigil: interrupted: the scan is incomplete%s\n",
				a->save ? "; nothing was saved" : "");
		return VG_EXIT_RUNTIME;
	}
	return r;
}

/* v: the VALUE, parsed (and so checked) before the target was touched. */
static int run_first(struct vg_cli *cli, const struct scan_args *a, const struct vg_scan_value *v,
		     const struct vg_maps *maps, struct vg_mem *mem)
{
	struct vg_error err = { 0 };
	struct vg_match_set set = { 0 };
	struct vg_scan_stats st = { 0 };
	struct vg_scan_opts o = { 0 };
	struct vg_report_scan_meta sm = { .mode = "first", .type = v->type, .value_text = a->value,
					  .aligned = a->aligned };
	int r;

	o.value = v;
	o.aligned = a->aligned;
	vg_scan_select_parse(a->regions, &o.select);
	if (vg_scan_select_check(&o.select, maps, &err) < 0)
		return cli_fail(cli, &err);
	o.stop = &stop_requested;
	if (isatty(STDERR_FILENO) && !cli->json)
		o.progress = progress_line;
	test_sync_point();
	r = vg_scan_first(cli->target->mm_pid, maps, &o, &set, &st, &err);
	progress_done();
	if (r < 0) {
		vg_target_explain(cli->target, r, &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	r = finish_matches(cli, a, &sm, &set, v, &st, maps, mem);
out:
	vg_match_set_clear(&set);
	return r;
}

static int run_narrow_set(struct vg_cli *cli, const struct scan_args *a, const struct vg_maps *maps,
			  struct vg_mem *mem)
{
	struct vg_error err = { 0 };
	struct vg_scanset_meta meta;
	struct vg_match_set set = { 0 };
	struct vg_scan_stats st = { 0 };
	struct vg_scan_value pattern = { 0 };
	struct vg_narrow n;
	struct vg_report_scan_meta sm = { .mode = "narrow" };
	enum vg_scan_type t;
	int r;

	memset(&n, 0, sizeof(n));
	if (vg_scanset_load(a->from, &meta, &set, &err) < 0)
		return cli_fail(cli, &err);
	r = check_identity(cli, a->from, &meta.id);
	if (r)
		goto out;
	if (a->type) {
		if (vg_scan_type_parse(a->type, &t, &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		if (t != meta.type) {
			r = cli_usage_error(cli, "--type %s does not match the scan set '%s', which holds %s values",
					    a->type, a->from, vg_scan_type_name(meta.type));
			goto out;
		}
	}
	t = meta.type;
	sm.type = t;
	sm.value_text = meta.value_text[0] ? meta.value_text : NULL;
	sm.op = vg_narrow_op_name(a->op);
	sm.operand = a->operand;
	sm.generation = meta.generation + 1;
	r = parse_narrow(cli, a, t, &n);
	if (r)
		goto out;
	/* str and bytes sets re-match their own pattern. */
	if (vg_scan_type_is_pattern(t) && meta.value_text[0] &&
	    vg_scan_value_parse(t, meta.value_text, 0, &pattern, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	test_sync_point();
	/* A set saved without its VALUE text has no pattern to re-match. */
	r = vg_scan_narrow(cli->target->mm_pid, &set, pattern.npat ? &pattern : NULL, &n, &st, &err);
	if (r < 0) {
		vg_target_explain(cli->target, r, &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	r = finish_matches(cli, a, &sm, &set, pattern.npat ? &pattern : NULL, &st, maps, mem);
out:
	vg_scan_value_clear(&n.a);
	vg_scan_value_clear(&n.b);
	vg_scan_value_clear(&pattern);
	vg_match_set_clear(&set);
	return r;
}

static int run_narrow_snapshot(struct vg_cli *cli, const struct scan_args *a,
			       const struct vg_maps *maps, struct vg_mem *mem)
{
	struct vg_error err = { 0 };
	struct vg_scan_identity id;
	struct vg_match_set set = { 0 };
	struct vg_scan_stats st = { 0 };
	struct vg_narrow n;
	struct vg_report_scan_meta sm = { .mode = "snapshot_compare", .aligned = a->aligned,
					  .generation = 1 };
	enum vg_scan_type t;
	int r;

	memset(&n, 0, sizeof(n));
	if (!a->type)
		return cli_usage_error(cli, "'%s' is a memory snapshot: give the value's --type to compare it (e.g. --type u32 --aligned)",
				       a->from);
	if (vg_scan_type_parse(a->type, &t, &err) < 0)
		return cli_fail(cli, &err);
	if (vg_scan_type_is_pattern(t))
		return cli_usage_error(cli, "a snapshot compares numbers: --type %s is not one (use a first scan for str and bytes)",
				       a->type);
	sm.type = t;
	sm.op = vg_narrow_op_name(a->op);
	sm.operand = a->operand;
	r = parse_narrow(cli, a, t, &n);
	if (r)
		goto out;
	/* The identity first: comparing another process's memory would
	 * report every byte as changed. */
	if (vg_snapshot_compare(a->from, 0, NULL, t, a->aligned, &n, &id, &set, &st, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	r = check_identity(cli, a->from, &id);
	if (r)
		goto out;
	test_sync_point();
	if (vg_snapshot_compare(a->from, cli->target->mm_pid, maps, t, a->aligned, &n, &id, &set,
				&st, &err) < 0) {
		vg_target_explain(cli->target, -EFAULT, &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	r = finish_matches(cli, a, &sm, &set, NULL, &st, maps, mem);
out:
	vg_scan_value_clear(&n.a);
	vg_scan_value_clear(&n.b);
	vg_match_set_clear(&set);
	return r;
}

static int run_snapshot(struct vg_cli *cli, const struct scan_args *a, const struct vg_maps *maps)
{
	struct vg_error err = { 0 };
	struct vg_scan_select sel;
	struct vg_scan_identity id;
	struct vg_snapshot_stats st = { 0 };
	struct vg_progress progress;
	int r;

	vg_scan_select_parse(a->regions, &sel);
	if (vg_scan_select_check(&sel, maps, &err) < 0)
		return cli_fail(cli, &err);
	identity_of(cli->target, &id);
	test_sync_point();
	r = vg_snapshot_save(cli->target->mm_pid, maps, &sel, &id, a->snapshot, &stop_requested,
			     cli_progress(&progress, cli->json, "snapshot"), &st, &err);
	cli_progress_done(&progress);
	if (r < 0) {
		vg_target_explain(cli->target, r, &err);
		return cli_fail(cli, &err);
	}
	if (cli->json) {
		cJSON *doc = vg_report_scan_snapshot_json(cli->target, a->regions, a->snapshot, &st, &err);

		r = doc ? cli_print_json(doc) : cli_fail(cli, &err);
	} else {
		(void)vg_report_scan_snapshot_table(stdout, cli->target, a->snapshot, &st);
		cli_print_target_notes(cli->target);
	}
	if (r == 0 && st.interrupted) {
		/* A snapshot missing its last regions would pass for whole. */
		unlink(a->snapshot);
		fprintf(stderr, "vigil: interrupted: the snapshot is incomplete and was not kept\n");
		return VG_EXIT_RUNTIME;
	}
	return r;
}

static int run_pointers(struct vg_cli *cli, const struct scan_args *a, const struct vg_maps *maps,
			struct vg_mem *mem)
{
	struct vg_error err = { 0 };
	struct vg_images *imgs = NULL;
	struct vg_ptr_chain *chains = NULL;
	struct vg_ptr_stats st = { 0 };
	struct vg_ptr_opts o = { 0 };
	struct vg_report_scan_ptr_meta m = {
		.target_input = a->pointers_to, .opts = &o, .max_list = (size_t)a->max_list,
	};
	struct vg_addr addr;
	struct vg_progress progress;
	char what[96];
	size_t n = 0;
	int r;

	r = cli_load_images(cli, NULL, false, maps, mem, &imgs, NULL, NULL);
	if (r)
		return r;
	if (vg_addr_parse(a->pointers_to, imgs, NULL, &addr, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (!vg_maps_find(maps, addr.runtime)) {
		vg_error_set(&err, -EFAULT, "address 0x%" PRIx64 " is not mapped in pid %d; 'vigil maps %d' lists the regions",
			     addr.runtime, (int)cli->target->pid, (int)cli->target->pid);
		r = cli_fail(cli, &err);
		goto out;
	}
	o.target = addr.runtime;
	o.depth = (unsigned)a->depth;
	o.max_offset = a->max_offset;
	o.max_chains = (size_t)a->max_chains;
	o.stop = &stop_requested;
	if (isatty(STDERR_FILENO) && !cli->json)
		fprintf(stderr, "# searching pointer chains to 0x%" PRIx64 " (depth %u, offsets <= %" PRIu64 ")...",
			o.target, o.depth, o.max_offset);
	/* Over that line, while the memory is read: how much (the search
	 * after it has no total to show). */
	snprintf(what, sizeof(what), "searching pointer chains to 0x%" PRIx64 ", memory read", o.target);
	o.progress = cli_progress(&progress, cli->json, what);
	test_sync_point();
	r = vg_ptr_scan(cli->target->mm_pid, maps, imgs, &o, &chains, &n, &st, &err);
	progress_done();
	if (r < 0) {
		vg_target_explain(cli->target, r, &err);
		r = cli_fail(cli, &err);
		goto out;
	}
	if (cli->json) {
		cJSON *doc = vg_report_scan_pointers_json(cli->target, &m, chains, n, &st, mem, &err);

		r = doc ? cli_print_json(doc) : cli_fail(cli, &err);
	} else {
		(void)vg_report_scan_pointers_table(stdout, cli->target, &m, chains, n, &st, mem);
		cli_print_target_notes(cli->target);
	}
	if (r == 0 && st.interrupted)
		r = VG_EXIT_RUNTIME;
out:
	free(chains);
	vg_images_free(imgs);
	return r;
}

int cmd_scan(struct vg_cli *cli, int argc, char **argv)
{
	struct scan_args a;
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_scan_value first = { 0 };
	struct sigaction sa, old_int, old_term;
	int r;

	cli->operation = "live_scan";   /* errors and reports say the same */
	memset(&a, 0, sizeof(a));
	r = parse_args(cli, argc, argv, &a);
	free(a.argv_copy);
	a.argv_copy = NULL;
	if (r)
		return r < 0 ? 0 : r;
	/* Every argument is checked before the target is touched: a bad
	 * VALUE is a usage error whatever the PID. */
	if (a.mode == MODE_FIRST) {
		enum vg_scan_type t;

		if (vg_scan_type_parse(a.type, &t, &err) < 0 ||
		    vg_scan_value_parse(t, a.value, a.have_epsilon ? a.epsilon : default_epsilon(t),
					&first, &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
	}
	if (a.mode == MODE_NARROW && access(a.from, R_OK) < 0) {
		vg_error_set(&err, -ENOENT, "cannot read '%s': %s", a.from, strerror(errno));
		r = cli_fail(cli, &err);
		goto out;
	}
	/* The output path too: a scan is not done for nothing. */
	if ((a.save && vg_outfile_check(a.save, &err) < 0) ||
	    (a.snapshot && vg_outfile_check(a.snapshot, &err) < 0)) {
		r = cli_fail(cli, &err);
		goto out;
	}
	r = cli_open_target(cli, a.pid, &maps, &mem);
	if (r)
		goto out;
	r = cli_need_user_memory(cli, "scan");
	if (r)
		goto out;
	/* Ctrl-C ends a long scan with what was found so far. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	switch (a.mode) {
	case MODE_FIRST:
		r = run_first(cli, &a, &first, maps, mem);
		break;
	case MODE_NARROW:
		r = vg_snapshot_is(a.from) ? run_narrow_snapshot(cli, &a, maps, mem)
					   : run_narrow_set(cli, &a, maps, mem);
		break;
	case MODE_SNAPSHOT:
		r = run_snapshot(cli, &a, maps);
		break;
	case MODE_POINTERS:
		r = run_pointers(cli, &a, maps, mem);
		break;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
out:
	vg_scan_value_clear(&first);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
