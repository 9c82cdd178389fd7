/* cmd_sym.c - `vigil sym PID ADDR...` and `vigil sym --bin FILE ADDR...`:
 * addresses to image, symbol, inline frames and file:line:column.
 *
 * With no ADDR it is a pipeline filter: one answer per input line, in
 * order.  Input is read with read(2) in large blocks; the lines of one
 * read are looked up in address order (answer_batch) and written in input
 * order, and stdout is flushed only before a read that may block, so a
 * coprocess gets each answer at once and a 100,000-line batch costs a few
 * dozen writes. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "elf/addrspec.h"
#include "report/sym.h"
#include "sym/symbolizer.h"
#include "util/radix.h"
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
	int failure;             /* exit code of a failure that ends the run */
	struct vg_report_sym_table table;  /* the table view's state */
	struct vg_sym_result *res;         /* one answer at a time */
	/* A large batch's second thread (answer_batch): its answers are
	 * composed here, its scratch answer is its own. */
	struct vg_report_sym_table table2;
	struct vg_sym_result *res2;
	/* A batch's answers gathered in input order, OUT_CHUNK bytes at a
	 * time, and written past stdio (out_direct) when stdout is a file
	 * or pipe (direct_out); NULL until the first batch. */
	char *out;
	bool direct_out;
	/* That thread: started at the first such batch and kept for the
	 * next (one started per batch began 1-4 ms late on a loaded
	 * machine, a tenth of a batch).  go hands it a part (NULL: exit),
	 * done says the part is answered. */
	struct {
		pthread_t thread;
		bool started;
		sem_t go, done;
		struct batch_part *part;
	} worker;
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

/* ------------------------------------------------------------------ */
/* addresses                                                            */

static bool is_hex_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/* The value of s when it is 1 to 16 hex digits and nothing else. */
static bool short_hex(const char *s, uint64_t *value)
{
	/* 1 + a digit's value, 0 for anything else: one load per character. */
	static const uint8_t digit[256] = {
		['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
		['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
		['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
		['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
	};
	const unsigned char *p = (const unsigned char *)s;
	uint64_t v = 0;
	size_t n;

	for (n = 0; n < 16 && digit[p[n]]; n++)
		v = v << 4 | (uint64_t)(digit[p[n]] - 1);
	if (n == 0 || p[n])
		return false;   /* no digit, more than 16, or not a digit */
	*value = v;
	return true;
}

/* A batch's line, 0xHEX or bare hex (and @0xHEX offline), read here:
 * through vg_addr_parse (and the 0x prepended to bare hex) it was a
 * tenth of a 100,000-address batch.  Same values, same lines accepted;
 * false for anything else, which takes the general path.  Touches
 * nothing shared: a batch's second thread reads its lines with it. */
static bool resolve_hex(const struct sym_run *r, const char *spec, bool from_stdin,
			uint64_t *addr)
{
	const char *hex;

	if (r->o.bin_path && spec[0] == '@')
		spec++;
	if (spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X'))
		hex = spec + 2;
	else
		hex = r->o.bin_path || from_stdin ? spec : NULL;
	return hex && short_hex(hex, addr);
}

/* ADDR as every command takes it; offline, also bare hex (addr2line) and
 * @0xHEX, which are the same thing there: the file's own addresses. */
static int resolve(struct sym_run *r, const char *spec, bool from_stdin,
		   uint64_t *addr, struct vg_error *err)
{
	const struct vg_images *imgs;
	struct vg_addr a;
	char buf[64];

	if (resolve_hex(r, spec, from_stdin, addr))
		return 0;
	if (r->o.bin_path && spec[0] == '@')
		spec++;
	imgs = vg_symbolizer_images(r->s);
	/* Bare hex is an address where only addresses are expected: with
	 * --bin (addr2line's habit) and on standard input (perf script -F ip
	 * prints IPs so).  A live command-line ADDR needs 0x: "add" or
	 * "cafe" may be symbols there. */
	if ((r->o.bin_path || from_stdin) && strlen(spec) <= 16 &&
	    is_hex_digits(spec)) {
		snprintf(buf, sizeof(buf), "0x%s", spec);
		spec = buf;
	}
	if (vg_addr_parse(spec, imgs, NULL, &a, err) < 0)
		return -1;
	*addr = a.runtime;
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

	if (resolve(r, input, from_stdin, &addr, &err) < 0)
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

		if (resolve(r, addrs[i], false, &addr, &err) < 0)
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

/* One line of a batch read from standard input. */
struct pending {
	char *input;
	const char *bad;          /* not an address: why */
};

/* Where a line's answer is in r->table.text (or r->table2.text: the
 * SPAN_SECOND bit of note), written in address order and read in input
 * order: small, so that neither walk misses the cache much (the 48-byte
 * line records did, at a tenth of a batch). */
struct span {
	uint64_t off;
	uint32_t len;             /* UINT32_MAX: not answered */
	uint32_t note;            /* 1 + index into the table's notes; 0: none */
};

#define SPAN_SECOND (1u << 31)

/* A batch this large (lines) is looked up on two threads when the
 * persistent index answers (answer_batch). */
#define BATCH_TWO_THREADS 4096

/* Keys a thread claims at a time from a part of a two-thread batch. */
#define BATCH_BLOCK 256

enum { PART_PENDING, PART_RUNNING, PART_TAKEN };

/* Part of a batch: keys[lo, hi) not yet claimed, sorted by address,
 * looked up and composed into the table of the thread that claims them.
 * Two threads (answer_batch): each reads and sorts its half of the lines,
 * then claims its keys by blocks from the highest down; the one done
 * first claims the other's from the lowest up, or answers the other half
 * whole when its thread has not begun (a thread of a loaded machine
 * starts late or is preempted: fixed halves left one waiting for it). */
struct batch_part {
	struct sym_run *r;
	const struct pending *p;
	struct vg_radix_item *keys;
	size_t lo, hi;
	struct span *spans;
	struct vg_report_sym_table *tb;
	struct vg_sym_result *res;
	uint32_t tag;             /* SPAN_SECOND, or 0 */
	/* The second thread's part that only helps with other's keys, from
	 * the bottom (lookup_sorted): no lines of its own. */
	bool help;
	bool failed;              /* a lookup failed: err says why */
	struct vg_error err;
	/* Two threads: the lines [first, end), the other half, and the lock
	 * over both halves' state, sorted, lo and hi. */
	size_t first, end;
	struct batch_part *other;
	pthread_mutex_t *claim;
	int state;
	bool sorted;
};

/* keys[lo, hi) looked up and composed by exec, from the highest down. */
static void lookup_keys(struct batch_part *exec, const struct vg_radix_item *keys,
			size_t lo, size_t hi)
{
	struct vg_report_sym_table *tb = exec->tb;
	bool llvm = tb->style == VG_REPORT_SYM_LLVM;

	/* The block under one hold of the symbolizer's shared lock. */
	vg_sym_hold(exec->r->s);
	for (size_t k = hi; k-- > lo;) {
		size_t i = keys[k].index;
		uint64_t start = tb->len;
		uint32_t note = 0;

		if (vg_sym_lookup_held(exec->r->s, keys[k].key, exec->res, &exec->err) < 0) {
			exec->failed = true;
			break;
		}
		/* only vigil's style echoes a symbolic input */
		vg_report_sym_compose(tb, llvm ? NULL : exec->p[i].input, exec->res);
		for (size_t j = 0; tb->note_of && j < tb->n_notes; j++)
			if (tb->notes[j].img == tb->note_of)
				note = (uint32_t)j + 1;
		exec->spans[i] = (struct span){ start, (uint32_t)(tb->len - start), note | exec->tag };
	}
	vg_sym_release(exec->r->s);
}

/* b's lines' addresses (0xHEX and bare hex; any other line is left
 * unanswered for the main thread), sorted, ready to be claimed. */
static void part_read(struct batch_part *b)
{
	size_t n_keys = 0;

	for (size_t i = b->first; i < b->end; i++) {
		uint64_t addr;

		b->spans[i].len = UINT32_MAX;
		if (!b->p[i].bad && resolve_hex(b->r, b->p[i].input, true, &addr))
			b->keys[n_keys++] = (struct vg_radix_item){ addr, i };
	}
	vg_radix_sort(b->keys, b->keys + n_keys, n_keys);
	pthread_mutex_lock(b->claim);
	b->lo = 0;
	b->hi = n_keys;
	b->sorted = true;
	pthread_mutex_unlock(b->claim);
}

/* Blocks of v's keys, looked up by exec until none is left: from the
 * top when they are exec's own, from the bottom when exec helps. */
static void claim_blocks(struct batch_part *exec, struct batch_part *v)
{
	for (;;) {
		size_t lo, hi;

		pthread_mutex_lock(exec->claim);
		if (!v->sorted || v->lo == v->hi || exec->failed) {
			pthread_mutex_unlock(exec->claim);
			return;
		}
		if (exec == v) {
			hi = v->hi;
			lo = hi - v->lo > BATCH_BLOCK ? hi - BATCH_BLOCK : v->lo;
			v->hi = lo;
		} else {
			lo = v->lo;
			hi = v->hi - lo > BATCH_BLOCK ? lo + BATCH_BLOCK : v->hi;
			v->lo = hi;
		}
		pthread_mutex_unlock(exec->claim);
		lookup_keys(exec, v->keys, lo, hi);
	}
}

/* One thread's share of a two-thread batch: its own half (unless the
 * other thread took it whole), then the other half, whole if its thread
 * has not begun, else block by block. */
static void part_run(struct batch_part *self)
{
	struct batch_part *o = self->other;
	bool mine, whole;

	pthread_mutex_lock(self->claim);
	mine = self->state == PART_PENDING;
	if (mine)
		self->state = PART_RUNNING;
	pthread_mutex_unlock(self->claim);
	if (!mine)
		return;
	part_read(self);
	claim_blocks(self, self);
	pthread_mutex_lock(self->claim);
	whole = o->state == PART_PENDING;
	if (whole)
		o->state = PART_TAKEN;
	pthread_mutex_unlock(self->claim);
	if (whole) {
		/* As o's thread would: into o's table. */
		part_read(o);
		claim_blocks(o, o);
	} else {
		claim_blocks(self, o);
	}
}

static void sem_wait_intr(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

static void *worker_main(void *arg)
{
	struct sym_run *r = arg;

	for (;;) {
		sem_wait_intr(&r->worker.go);
		if (!r->worker.part)
			return NULL;
		if (r->worker.part->help)
			claim_blocks(r->worker.part, r->worker.part->other);
		else
			part_run(r->worker.part);
		sem_post(&r->worker.done);
	}
}

/* The second thread answers b (started first if need be): false when it
 * cannot be started. */
static bool worker_give(struct sym_run *r, struct batch_part *b)
{
	if (!r->worker.started) {
		if (sem_init(&r->worker.go, 0, 0) < 0)
			return false;
		if (sem_init(&r->worker.done, 0, 0) < 0 ||
		    pthread_create(&r->worker.thread, NULL, worker_main, r) != 0) {
			sem_destroy(&r->worker.go);
			return false;
		}
		r->worker.started = true;
	}
	r->worker.part = b;
	sem_post(&r->worker.go);
	return true;
}

static void worker_stop(struct sym_run *r)
{
	if (!r->worker.started)
		return;
	r->worker.part = NULL;
	sem_post(&r->worker.go);
	pthread_join(r->worker.thread, NULL);
	sem_destroy(&r->worker.go);
	sem_destroy(&r->worker.done);
	r->worker.started = false;
}

/* Is the batch large enough for two threads, and is there a second CPU
 * to run one?  Restricted to one CPU (taskset), a second thread only
 * costs. */
static bool batch_may_split(struct sym_run *r, size_t n)
{
	cpu_set_t cpus;

	if (n < BATCH_TWO_THREADS ||
	    (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < 2))
		return false;
	return r->res2 || (r->res2 = malloc(sizeof(*r->res2)));
}

/* Is the batch for two threads?  Large, and its lookups take the
 * symbolizer's lock shared (the persistent index answers, or an
 * in-memory index of every CU).  The first lookup in an image finds its
 * debug info and maps its index: before the first batch has looked
 * anything up, one of its addresses is looked up alone to know. */
static bool two_threads(struct sym_run *r, const struct pending *p, size_t n)
{
	struct vg_error err = { 0 };
	uint64_t addr;

	if (!batch_may_split(r, n))
		return false;
	if (vg_symbolizer_lookups_shared(r->s))
		return true;
	for (size_t i = 0; i < n && i < 64; i++) {
		if (p[i].bad || !resolve_hex(r, p[i].input, true, &addr))
			continue;
		if (vg_sym_lookup(r->s, addr, r->res, &err) < 0)
			return false;  /* the batch says it, in its place */
		return vg_symbolizer_lookups_shared(r->s);
	}
	return false;
}

/* one's n_keys sorted keys, highest first, block by block, on this
 * thread: the cold path, whose lookups take the lock exclusive while
 * CUs are indexed.  Once they take it shared (the prefetch thread and
 * this one have indexed the last CU: vg_symbolizer_lookups_shared), the
 * second thread claims the keys left from the bottom while this one goes
 * on from the top, into two's table (the cold batch's answering thread
 * had two thirds of its samples after the other had run out of CUs).
 * True when the second thread helped. */
static bool lookup_sorted(struct sym_run *r, struct batch_part *one,
			  struct batch_part *two, size_t n_keys, bool may_help)
{
	pthread_mutex_t claim = PTHREAD_MUTEX_INITIALIZER;
	size_t hi = n_keys;
	bool helped = false;

	while (hi > 0 && !one->failed) {
		size_t lo = hi > BATCH_BLOCK ? hi - BATCH_BLOCK : 0;

		lookup_keys(one, one->keys, lo, hi);
		hi = lo;
		if (!may_help || hi < 2 * BATCH_BLOCK || one->failed ||
		    !vg_symbolizer_lookups_shared(r->s))
			continue;
		one->claim = &claim;
		one->lo = 0;
		one->hi = hi;
		one->sorted = true;
		*two = (struct batch_part){ .r = r, .p = one->p, .keys = one->keys,
					    .spans = one->spans, .tb = &r->table2,
					    .res = r->res2, .tag = SPAN_SECOND, .help = true,
					    .other = one, .claim = &claim };
		r->table2.style = r->table.style;
		if (!worker_give(r, two)) {
			may_help = false;
			continue;
		}
		helped = true;
		claim_blocks(one, one);
		sem_wait_intr(&r->worker.done);
		break;
	}
	pthread_mutex_destroy(&claim);
	return helped;
}

/* The bytes gathered for stdout per write (answer_batch). */
#define OUT_CHUNK (256u << 10)

/* p[0, n) to stdout after what stdio holds, in write(2)s of its own
 * (through fwrite, each answer was copied once more, and the calls were
 * a tenth of the main thread's share of an indexed batch).  A failed
 * write gives the rest to stdio, which meets the same error and keeps
 * it for ferror (cli_output_failed). */
static void out_direct(const char *p, size_t n)
{
	if (fflush(stdout) != 0)
		return;
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fwrite_unlocked(p, 1, n, stdout);
			(void)fflush(stdout);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* The lines read so far, looked up in address order (neighbouring
 * addresses share the index's cache lines: 100,000 random addresses of a
 * 37 MB index took twice as long in input order) and written in input
 * order.  The text view only: JSON collects results in order anyway.
 *
 * Two threads when the batch is large and the persistent index answers
 * (two_threads): the machine's second core otherwise idles while one
 * looks up and composes, 80% of an indexed batch's instructions.  Each
 * thread reads, sorts, looks up and composes half of the lines into a
 * table of its own (the halves of the sorted keys were tried first: the
 * reading and the sort, 10% more, stayed on one core); lines that are
 * not plain hex are answered after, by this thread; the answers still go
 * out in input order, byte for byte.  Without the index (the cold path)
 * the prefetch thread has the other core while CUs are indexed: this
 * thread answers alone until the index is complete, then the second
 * helps (lookup_sorted), and later batches take the two-thread path. */
static int answer_batch(struct sym_run *r, struct pending *p, size_t n)
{
	struct vg_radix_item *keys = malloc(2 * (n ? n : 1) * sizeof(*keys));
	struct span *spans = malloc((n ? n : 1) * sizeof(*spans));
	struct vg_report_sym_table *tb = &r->table, *tb2 = &r->table2;
	struct batch_part one = { .r = r, .p = p, .keys = keys, .spans = spans,
				  .tb = tb, .res = r->res }, two;
	const struct vg_image *notes2[sizeof(tb2->notes) / sizeof(tb2->notes[0])];
	struct vg_error err = { 0 };
	bool second = false;
	size_t n_keys = 0;
	int rc = 0;

	if (!keys || !spans) {
		free(keys);
		free(spans);
		return cli_out_of_memory(r->cli, "for the input");
	}
	tb->len = tb2->len = 0;
	/* Before any lookup (two_threads makes the first): a large batch
	 * starts indexing the DWARF in the background as it is opened. */
	vg_symbolizer_expect_lookups(r->s, n);
	if (two_threads(r, p, n)) {
		pthread_mutex_t claim = PTHREAD_MUTEX_INITIALIZER;

		one.claim = &claim;
		two = one;
		two.tb = tb2;
		two.res = r->res2;
		two.tag = SPAN_SECOND;
		two.first = n / 2;
		two.end = n;
		two.keys = keys + 2 * (n / 2);  /* its keys and the sort's scratch */
		one.end = n / 2;
		one.other = &two;
		two.other = &one;
		tb2->style = tb->style;
		second = worker_give(r, &two);
		if (!second)
			one.end = n;   /* all of it on this thread, then */
		if (second) {
			part_run(&one);
			sem_wait_intr(&r->worker.done);
		} else {
			part_read(&one);
			claim_blocks(&one, &one);
		}
		pthread_mutex_destroy(&claim);
		/* The lines left: not plain hex (symbolic, or not an address),
		 * in input order. */
		for (size_t i = 0; i < n && !one.failed && !(second && two.failed); i++) {
			uint64_t addr = 0;

			if (spans[i].len != UINT32_MAX)
				continue;
			if (!p[i].bad && resolve(r, p[i].input, true, &addr, &err) == 0) {
				keys[0] = (struct vg_radix_item){ addr, i };
				lookup_keys(&one, keys, 0, 1);
				continue;
			}
			spans[i].off = tb->len;
			vg_report_sym_compose_bad(tb, p[i].input, p[i].bad ? p[i].bad : err.msg);
			vg_error_clear(&err);
			r->n_bad_input++;
			spans[i].len = (uint32_t)(tb->len - spans[i].off);
			spans[i].note = 0;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			uint64_t addr = 0, start = tb->len;

			if (!p[i].bad && resolve(r, p[i].input, true, &addr, &err) == 0) {
				keys[n_keys++] = (struct vg_radix_item){ addr, i };
				spans[i].len = UINT32_MAX;
				continue;
			}
			vg_report_sym_compose_bad(tb, p[i].input, p[i].bad ? p[i].bad : err.msg);
			vg_error_clear(&err);
			r->n_bad_input++;
			spans[i] = (struct span){ start, (uint32_t)(tb->len - start), 0 };
		}
		/* Small keys, sorted without indirect compares (qsort was a
		 * tenth of a batch). */
		vg_radix_sort(keys, keys + n_keys, n_keys);
		/* Highest address first: without a persistent index, the
		 * prefetch thread indexes CUs from the last down (file order
		 * is mostly address order), and this thread follows right
		 * behind it, indexing the next CU itself rather than wait
		 * (dwindex.c's ensure_indexed); the rest on two threads once
		 * every CU is indexed. */
		second = lookup_sorted(r, &one, &two, n_keys, batch_may_split(r, n));
	}
	if (second) {
		/* The second table's notes, by image, for the writes below
		 * (vg_report_sym_note finds each by image in tb). */
		for (size_t j = 0; j < tb2->n_notes; j++)
			notes2[j] = tb2->notes[j].img;
		vg_report_sym_merge_notes(tb, tb2);
	}
	if (one.failed)
		rc = cli_fail(r->cli, &one.err);
	else if (second && two.failed)
		rc = cli_fail(r->cli, &two.err);
	if ((tb->oom || tb2->oom) && !rc)
		rc = cli_out_of_memory(r->cli, "for the answers");
	if (r->direct_out && !r->out && !(r->out = malloc(OUT_CHUNK)))
		r->direct_out = false;
	/* In input order, up to the first line a failure left unanswered. */
	for (size_t i = 0, out_len = 0; i < n && spans[i].len != UINT32_MAX && !tb->oom && !tb2->oom; i++) {
		const struct span *sp = &spans[i];
		const char *text = sp->note & SPAN_SECOND ? tb2->text : tb->text;
		uint32_t note = sp->note & ~SPAN_SECOND;

		if (r->direct_out && sp->len <= OUT_CHUNK) {
			if (out_len + sp->len > OUT_CHUNK) {
				out_direct(r->out, out_len);
				out_len = 0;
			}
			memcpy(r->out + out_len, text + sp->off, sp->len);
			out_len += sp->len;
		} else {
			if (out_len)
				out_direct(r->out, out_len);
			out_len = 0;
			fwrite_unlocked(text + sp->off, 1, sp->len, stdout);
		}
		if (note) {
			if (out_len)
				out_direct(r->out, out_len);
			out_len = 0;
			(void)vg_report_sym_note(stdout, tb, sp->note & SPAN_SECOND ? notes2[note - 1]
										: tb->notes[note - 1].img);
		}
		if (out_len && (i + 1 == n || spans[i + 1].len == UINT32_MAX))
			out_direct(r->out, out_len);
	}
	tb->len = tb2->len = 0;
	tb->oom = tb2->oom = false;
	free(keys);
	free(spans);
	return rc;
}

static int answer_stdin(struct sym_run *r)
{
	size_t cap = 1 << 18, len = 0;
	struct pending *p = NULL;
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

		/* Answers so far go out before a read that may wait. */
		if (fflush(stdout) != 0 || cli_output_failed()) {
			rc = VG_EXIT_RUNTIME;
			break;
		}
		if (len == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
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
				rc = cli_out_of_memory(r->cli, "for the input");
				break;
			}
			p[n_p++] = (struct pending){ .input = line, .bad = bad };
		}
		if (!rc && n_p)
			rc = answer_batch(r, p, n_p);
		memmove(buf, buf + start, len - start);
		len -= start;
		if (nul_from != SIZE_MAX)
			nul_from = memchr(buf, '\0', len) ? 0 : SIZE_MAX;
	}
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
		if (vg_symbolizer_open_target(cli->target, r.o.flags, &r.s, &err) < 0) {
			rc = cli_fail(cli, &err);
			goto out;
		}
	}
	r.table.style = r.o.style;
	r.res = malloc(sizeof(*r.res));
	if (!r.res) {
		rc = cli_out_of_memory(cli, "for an answer");
		goto out;
	}
	rc = check_args(&r, addrs, n);
	if (rc)
		goto out;
	if (cli->json && !(r.results = cJSON_CreateArray())) {
		rc = cli_out_of_memory(cli, "for the JSON results");
		goto out;
	}
	/* vigil writes stdout from this thread only: no lock per putchar
	 * (a tenth of a 100,000-address batch). */
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);
	/* Into a file or pipe, a batch's answers go out in large writes (the
	 * answers are flushed before every read that may wait anyway); a
	 * terminal keeps its line buffering.  The buffer is given: with
	 * NULL, glibc ignores the size and allocates st_blksize (4 KiB), and
	 * 100,000 answers took 3,500 write(2)s. */
	if (n == 0 && !cli->json && !isatty(STDOUT_FILENO)) {
		static char out_buf[1 << 20];

		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
		r.direct_out = true;
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
	if (!rc && r.n_bad_input) {
		fprintf(stderr, "vigil: error: %zu input line%s not an address (answered with an error in place)\n",
			r.n_bad_input, r.n_bad_input == 1 ? " was" : "s were");
		rc = VG_EXIT_USAGE;
	}
out:
	worker_stop(&r);
	cJSON_Delete(r.results);
	vg_report_sym_table_free(&r.table);
	vg_report_sym_table_free(&r.table2);
	free(r.res);
	free(r.res2);
	free(r.out);
	/* Freeing may write persistent indexes (sym/symcache.h): the answers
	 * reach their reader first. */
	fflush(stdout);
	vg_symbolizer_free(r.s);
	free(pos);
	return rc;
}
