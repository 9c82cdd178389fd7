/* cmd_sym.c - `vigil sym PID ADDR...` and `vigil sym --bin FILE ADDR...`:
 * addresses to image, symbol, inline frames and file:line:column.
 *
 * With no ADDR it is a pipeline filter: one answer per input line, in
 * order.  Input is read with read(2) in 64 KiB blocks; the lines of one
 * read are looked up in address order (sym_batch.c) and written in input
 * order, and stdout is flushed only before a read that may block, so a
 * coprocess gets each answer at once and a 100,000-line batch costs a few
 * dozen writes. */
#include <errno.h>
#include <getopt.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sym_addr.h"
#include "cli/sym_batch.h"
#include "report/sym.h"
#include "sym/symbolizer.h"
#include "util/vec.h"

const char cmd_sym_usage[] =
	"usage: vigil sym PID [ADDR...] [--json] [--no-demangle] [--style vigil|llvm]\n"
	"       vigil sym --bin FILE [ADDR...] [options]\n"
	"       vigil sym --index FILE...\n"
	"\n"
	"Turn addresses into image, symbol, inline frames and file:line:column.\n"
	"With PID, addresses are the running process's (libraries loaded later are\n"
	"found: an address no image covers re-reads the maps, at most once a second);\n"
	"kernel addresses are looked up in /proc/kallsyms, JIT code in the\n"
	"/tmp/perf-PID.map the process writes (node --perf-basic-prof, perf-map-agent,\n"
	".NET, LuaJIT; source perf-map).  With --bin FILE, addresses are FILE's own\n"
	"virtual addresses, as for addr2line -e FILE.\n"
	"\n"
	"With no ADDR, addresses are read from standard input, one per line, and the\n"
	"answers to the lines read so far are written, in input order, before vigil\n"
	"waits for more (blank lines are skipped); hex without\n"
	"0x is taken as an address there, as perf script -F ip prints it.  A line\n"
	"that is not an address gets an error answer in its place and vigil exits 2\n"
	"after the last line.\n"
	"\n"
	"Frames are innermost first: each inlined function with the line it is at,\n"
	"then the function it was inlined into, at the call site.  Debug info comes\n"
	"from the image itself (source dwarf), /usr/lib/debug/.build-id (build-id-dir),\n"
	".gnu_debuglink (debuglink, CRC checked), debuginfod when DEBUGINFOD_URLS is set,\n"
	"or .gnu_debugdata (minidebuginfo: symbols only); else the symbol tables (symtab,\n"
	"dynsym).  An address in the padding between two functions has no symbol: the\n"
	"answer gives the nearest symbol below as a hint, and the line if the line table\n"
	"covers it.\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"options:\n"
	"  --bin FILE       symbolize FILE's own addresses (no process); ADDR may also\n"
	"                   be hex without 0x, as addr2line takes it, or @0xHEX\n"
	"  --json           one JSON document: results[] in input order\n"
	"  --no-demangle    print C++ and Rust names as they are in the symbol table\n"
	"  --no-debuginfod  do not ask debuginfod servers even if DEBUGINFOD_URLS is set\n"
	"  --index          build the persistent index of each FILE now (see below) and\n"
	"                   print where it is and its size; nothing is symbolized\n"
	"  --no-cache       (every command) neither read nor write persistent indexes\n"
	"  --style STYLE    vigil (default): one line per address, one per frame;\n"
	"                   llvm: exactly llvm-symbolizer --inlining's output (function\n"
	"                   line, file:line:column line, per frame; a blank line after\n"
	"                   each address)\n"
	"  -h, --help       this help\n"
	"\n"
	"A run that looks up an address in an image with DWARF keeps an index of all of\n"
	"it in the cache directory, one file per debug file (by build-id), written after\n"
	"its answers (at a terminal by a detached process: the prompt returns at once);\n"
	"every later run of every command maps it instead of reading the DWARF again.\n"
	"A damaged or foreign index file is rebuilt, never believed.\n"
	"  VIGIL_CACHE_DIR   the directory (default $XDG_CACHE_HOME/vigil, ~/.cache/vigil)\n"
	"  VIGIL_CACHE_MAX   its bound in bytes, K/M/G suffixes (default 1G): the least\n"
	"                    recently used indexes are removed when one is written\n"
	"  VIGIL_NO_CACHE=1  as --no-cache;  VIGIL_VERBOSE=1  say when an index is rebuilt\n"
	"\n"
	"examples:\n"
	"  vigil sym 4242 0x55d0c3a011c9 0x7f1e2a39e567\n"
	"  vigil sym 4242 handle_request+0x40 --json\n"
	"  perf script -F ip | vigil sym 4242\n"
	"  vigil sym --bin ./server 0x11c9 --style llvm\n"
	"  vigil sym --index /usr/lib/debug/.build-id/*/*.debug ./server\n";

struct sym_opts {
	const char *bin_path;
	bool index;              /* --index FILE... */
	unsigned flags;
	enum vg_report_sym_style style;
};

struct sym_run {
	struct vg_cli *cli;
	struct sym_opts o;
	struct vg_symbolizer *s;
	cJSON *results;          /* --json */
	size_t n_bad_input;
	struct vg_report_sym_table table;  /* the table view's state */
	struct vg_sym_result *res;         /* one answer at a time */
	struct sym_batch batch;            /* standard input's lines */
};

static int parse_args(struct vg_cli *cli, int argc, char **argv,
		      struct sym_opts *o, char ***pos, int *npos)
{
	enum { OPT_BIN = 256, OPT_JSON, OPT_NO_DEMANGLE, OPT_STYLE, OPT_NO_DEBUGINFOD, OPT_INDEX };
	static const struct option opts[] = {
		{ "bin", required_argument, NULL, OPT_BIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "index", no_argument, NULL, OPT_INDEX },
		{ "style", required_argument, NULL, OPT_STYLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char **p = calloc((size_t)argc + 1, sizeof(*p));
	int c;

	if (!p)
		return cli_out_of_memory(cli, "for the arguments");
	*pos = p;
	*npos = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			p[(*npos)++] = optarg;
			break;
		case OPT_BIN:
			o->bin_path = optarg;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_NO_DEMANGLE:
			o->flags |= VG_SYM_NO_DEMANGLE;
			break;
		case OPT_NO_DEBUGINFOD:
			o->flags |= VG_SYM_NO_DEBUGINFOD;
			break;
		case OPT_INDEX:
			o->index = true;
			break;
		case OPT_STYLE:
			if (strcmp(optarg, "vigil") == 0)
				o->style = VG_REPORT_SYM_VIGIL;
			else if (strcmp(optarg, "llvm") == 0)
				o->style = VG_REPORT_SYM_LLVM;
			else
				return cli_usage_error(cli, "unknown --style '%s': expected vigil or llvm", optarg);
			break;
		case 'h':
			fputs(cmd_sym_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++)
		p[(*npos)++] = argv[optind];
	if (o->index) {
		if (o->bin_path || *npos < 1)
			return cli_usage_error(cli, "expected FILE...; usage: vigil sym --index FILE...");
		if (cli->json)
			return cli_usage_error(cli, "--index prints one line per file; it cannot be combined with --json");
		return 0;
	}
	if (!o->bin_path && *npos < 1)
		return cli_usage_error(cli, "expected PID (or --bin FILE); usage: vigil sym PID [ADDR...]");
	if (cli->json && o->style == VG_REPORT_SYM_LLVM)
		return cli_usage_error(cli, "--style llvm cannot be combined with --json");
	return 0;
}

/* An input that is not an address: answered with the error in its place
 * (exit 2 once every line was answered). */
static int answer_bad(struct sym_run *r, const char *input, const char *msg)
{
	r->n_bad_input++;
	if (r->results) {
		cJSON *o = vg_report_sym_result_json(input, NULL, msg);

		if (!o || !cJSON_AddItemToArray(r->results, o))
			return cli_out_of_memory(r->cli, "for the JSON results");
	} else {
		/* A write error shows at the next flush or the end. */
		(void)vg_report_sym_bad_input(stdout, &r->table, input, msg);
	}
	return 0;
}

/* One input: resolve, look up, print (or collect).  Returns 0, or the
 * exit code of a failure that ends the run (target gone, OOM). */
static int answer(struct sym_run *r, const char *input, bool from_stdin)
{
	struct vg_error err = { 0 };
	struct vg_sym_result *res = NULL;
	uint64_t addr;
	int rc = 0;

	if (sym_addr_resolve(r->s, r->o.bin_path != NULL, input, from_stdin, &addr, &err) < 0)
		return answer_bad(r, input, err.msg);
	res = malloc(sizeof(*res));
	if (!res)
		return cli_out_of_memory(r->cli, "for an answer");
	if (vg_sym_lookup(r->s, addr, res, &err) < 0) {
		rc = cli_fail(r->cli, &err);
	} else if (r->results) {
		cJSON *o = vg_report_sym_result_json(input, res, NULL);

		if (!o || !cJSON_AddItemToArray(r->results, o))
			rc = cli_out_of_memory(r->cli, "for the JSON results");
	} else {
		(void)vg_report_sym_answer(stdout, &r->table, input, res);
	}
	free(res);
	return rc;
}

/* Validate every argument before any answer: a typo gives exit 2 and no
 * output that could be taken for complete. */
static int check_args(struct sym_run *r, char **addrs, int n)
{
	for (int i = 0; i < n; i++) {
		struct vg_error err = { 0 };
		uint64_t addr;

		if (sym_addr_resolve(r->s, r->o.bin_path != NULL, addrs[i], false, &addr, &err) < 0)
			return cli_fail(r->cli, &err);
	}
	return 0;
}

/* The line [s, e) without its leading and trailing blanks, ended with
 * NUL (at e or before). */
static char *trim(char *s, char *e)
{
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*e = '\0';
	return s;
}

static int answer_stdin(struct sym_run *r)
{
	/* 64 KiB, some 7,000 addresses: a batch's keys, answer tables and
	 * spans stay in the cache between the lookups and the writes in
	 * input order (a 100,000-address run with the index took 18% less
	 * time than with 256 KiB blocks, and had half the page faults). */
	size_t cap = 1 << 16, len = 0;
	struct sym_pending *p = NULL;
	size_t n_p = 0, cap_p = 0;
	/* From here on buf may hold a NUL byte; SIZE_MAX: it holds none. */
	size_t nul_from = SIZE_MAX;
	char *buf = malloc(cap);
	int rc = 0;
	bool eof = false;

	if (!buf)
		return cli_out_of_memory(r->cli, "for the input");
	while (!eof && !rc) {
		ssize_t n;
		size_t start = 0;

		/* Answers so far go out before a read that may wait (the
		 * second thread may still be writing the last batch: its
		 * failure is seen here once it is over). */
		sym_batch_reap(&r->batch);
		if (fflush(stdout) != 0 || cli_output_failed()) {
			rc = VG_EXIT_RUNTIME;
			break;
		}
		if (len == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				sym_batch_flush(&r->batch);
				rc = cli_usage_error(r->cli, "input line longer than %zu bytes", cap);
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			struct vg_error err = { 0 };

			vg_error_set(&err, -errno, "cannot read standard input: %s", strerror(errno));
			sym_batch_flush(&r->batch);
			rc = cli_fail(r->cli, &err);
			break;
		}
		if (n == 0) {
			eof = true;
			if (len && buf[len - 1] != '\n')
				buf[len++] = '\n';  /* cap > len: room was made */
		}
		/* NUL bytes are looked for per line only when the read
		 * brought one (a search per line was a tenth of the main
		 * thread's share of reading a batch). */
		if (n > 0 && memchr(buf + len, '\0', (size_t)n))
			nul_from = nul_from < len ? nul_from : len;
		len += (size_t)n;
		n_p = 0;
		for (char *nl; !rc && (nl = memchr(buf + start, '\n', len - start));) {
			char *line;
			const char *bad = NULL;
			char *end = nl, *nul;

			/* "0x1000\0junk" is not the address 0x1000; what is
			 * shown of it ends at its first NUL. */
			if ((size_t)(nl - buf) >= nul_from &&
			    (nul = memchr(buf + start, '\0', (size_t)(nl - (buf + start))))) {
				bad = "the line contains a NUL byte";
				end = nul;
			}
			line = trim(buf + start, end);
			start = (size_t)(nl - buf) + 1;
			if (!*line && !bad)
				continue;
			if (r->results) {
				rc = bad ? answer_bad(r, line, bad) : answer(r, line, true);
				continue;
			}
			if (n_p == cap_p && VG_GROW(p, cap_p, n_p + 1)) {
				sym_batch_flush(&r->batch);
				rc = cli_out_of_memory(r->cli, "for the input");
				break;
			}
			p[n_p++] = (struct sym_pending){ .input = line, .bad = bad };
		}
		if (!rc && n_p)
			rc = sym_batch_answer(&r->batch, p, n_p);
		memmove(buf, buf + start, len - start);
		len -= start;
		if (nul_from != SIZE_MAX)
			nul_from = memchr(buf, '\0', len) ? 0 : SIZE_MAX;
	}
	/* Every answer out before anything else is said (warnings, the
	 * count of bad lines), and a failed last write fails the run as
	 * one seen before a read does. */
	sym_batch_flush(&r->batch);
	if (!rc && (fflush(stdout) != 0 || cli_output_failed()))
		rc = VG_EXIT_RUNTIME;
	free(p);
	free(buf);
	return rc;
}

static int print_document(struct sym_run *r)
{
	struct vg_error err = { 0 };
	cJSON *doc = vg_report_sym_json(r->s, r->cli->target, r->o.bin_path != NULL, r->results, &err);

	r->results = NULL;
	return doc ? cli_print_json(doc) : cli_fail(r->cli, &err);
}

static void print_warnings(struct sym_run *r)
{
	/* The answers leave first: before the target's recheck (a read of
	 * /proc/PID/stat), and before the warnings on a shared stream. */
	fflush(stdout);
	for (const char *const *p = vg_symbolizer_warnings(r->s); *p; p++)
		cli_warn("%s", *p);
	if (r->cli->target)
		cli_print_target_notes(r->cli->target);
}

/* --index FILE...: each file's persistent index, built now or found
 * valid.  Every file is tried; the exit code is the first failure's. */
static int build_indexes(struct vg_cli *cli, const struct sym_opts *o,
			 char **files, int n)
{
	int first = 0;

	for (int i = 0; i < n; i++) {
		struct vg_symbolizer *s = NULL;
		struct vg_error err = { 0 };
		const char *path;
		size_t size;
		bool written;
		int rc = vg_symbolizer_open_file(files[i], o->flags, &s, &err);

		if (rc == 0)
			rc = vg_symbolizer_build_index(s, &path, &size, &written, &err);
		if (rc == 0)
			printf("%s: %s %s (%zu bytes)\n", files[i],
			       written ? "wrote" : "up to date:", path, size);
		else {
			struct vg_error named = { 0 };

			vg_error_set(&named, err.code, "%s: %s", files[i], err.msg);
			if (err.exit)
				vg_error_set_exit(&named, err.exit);
			rc = cli_fail(cli, &named);
			if (!first)
				first = rc;
		}
		vg_symbolizer_free(s);
	}
	return first;
}

/* The live target's symbolizer.  When every ADDR is a plain 0xHEX, only
 * the images holding them are opened: the rest of the process's
 * libraries are neither read nor warned about.  A symbol name, an
 * IMAGE:OFFSET or standard input needs them all. */
static int open_target(struct sym_run *r, char **addrs, int n, struct vg_error *err)
{
	struct vg_target *t = r->cli->target;
	uint64_t *only;
	int rc, k = 0;

	if (n <= 0)
		return vg_symbolizer_open_target(t, r->o.flags, &r->s, err);
	only = malloc((size_t)n * sizeof(*only));
	if (!only)
		return vg_error_set(err, -ENOMEM, "out of memory");
	while (k < n && sym_addr_hex(false, addrs[k], false, &only[k]))
		k++;
	if (k == n)
		rc = vg_symbolizer_open_target_only(t, r->o.flags, only, (size_t)n, &r->s, err);
	else
		rc = vg_symbolizer_open_target(t, r->o.flags, &r->s, err);
	free(only);
	return rc;
}

int cmd_sym(struct vg_cli *cli, int argc, char **argv)
{
	struct sym_run r = { .cli = cli };
	struct vg_error err = { 0 };
	char **pos = NULL, **addrs;
	int npos = 0, n, rc;

	cli->operation = "symbolize";
	rc = parse_args(cli, argc, argv, &r.o, &pos, &npos);
	if (rc) {
		free(pos);
		return rc < 0 ? 0 : rc;
	}
	if (r.o.index) {
		rc = build_indexes(cli, &r.o, pos, npos);
		free(pos);
		return rc;
	}
	/* Standard input is a batch: every CU of a big binary will likely
	 * be needed, so the index is built on two threads. */
	if (npos == (r.o.bin_path ? 0 : 1))
		r.o.flags |= VG_SYM_PREFETCH;
	/* A person at a terminal gets the prompt back as soon as the answers
	 * are out: the first run's index is written by a detached process
	 * (scripts and pipelines keep the write before exit, so the index is
	 * there when the command returns). */
	if (isatty(STDOUT_FILENO))
		r.o.flags |= VG_SYM_DETACH_INDEX;
	if (r.o.bin_path) {
		addrs = pos;
		n = npos;
		if (vg_symbolizer_open_file(r.o.bin_path, r.o.flags, &r.s, &err) < 0) {
			rc = cli_fail(cli, &err);
			goto out;
		}
	} else {
		addrs = pos + 1;
		n = npos - 1;
		rc = cli_attach(cli, pos[0]);
		if (rc)
			goto out;
		if (open_target(&r, addrs, n, &err) < 0) {
			rc = cli_fail(cli, &err);
			goto out;
		}
	}
	r.table.style = r.o.style;
	r.batch = (struct sym_batch){ .cli = cli, .s = r.s, .offline = r.o.bin_path != NULL,
				      .table = &r.table };
	r.res = malloc(sizeof(*r.res));
	if (!r.res) {
		rc = cli_out_of_memory(cli, "for an answer");
		goto out;
	}
	r.batch.res = r.res;
	rc = check_args(&r, addrs, n);
	if (rc)
		goto out;
	if (cli->json && !(r.results = cJSON_CreateArray())) {
		rc = cli_out_of_memory(cli, "for the JSON results");
		goto out;
	}
	/* stdio's stdout is used from this thread only (the batch's second
	 * thread writes its answers to the descriptor, never through
	 * stdio): no lock per putchar (a tenth of a 100,000-address
	 * batch). */
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);
	/* Into a file or pipe, a batch's answers go out in large writes (the
	 * answers are flushed before every read that may wait anyway); a
	 * terminal keeps its line buffering.  The buffer is given: with
	 * NULL, glibc ignores the size and allocates st_blksize (4 KiB), and
	 * 100,000 answers took 3,500 write(2)s. */
	if (n == 0 && !cli->json && !isatty(STDOUT_FILENO)) {
		static char out_buf[1 << 20];

		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
		r.batch.direct_out = true;
	}
	if (n == 0) {
		rc = answer_stdin(&r);
	} else {
		for (int i = 0; i < n && !rc; i++)
			rc = answer(&r, addrs[i], false);
	}
	if (rc)
		goto out;
	if (cli->json) {
		rc = print_document(&r);
	} else {
		print_warnings(&r);
	}
	r.n_bad_input += r.batch.n_bad_input;
	if (!rc && r.n_bad_input) {
		fprintf(stderr, "vigil: error: %zu input line%s not an address (answered with an error in place)\n",
			r.n_bad_input, r.n_bad_input == 1 ? " was" : "s were");
		rc = VG_EXIT_USAGE;
	}
out:
	sym_batch_free(&r.batch);
	cJSON_Delete(r.results);
	vg_report_sym_table_free(&r.table);
	free(r.res);
	/* Freeing may write persistent indexes (sym/symcache.h): the answers
	 * reach their reader first. */
	fflush(stdout);
	vg_symbolizer_free(r.s);
	free(pos);
	return rc;
}
