/* cmd_print.c - `vigil print PID EXPR...`: C expressions over the target's
 * DWARF types, read live (src/expr), printed as gdb prints them
 * (report/print.c).  Every expression is parsed before the target is
 * touched, so a typo costs no attach. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "expr/eval.h"
#include "expr/parse.h"
#include "expr/value.h"
#include "report/print.h"
#include "target/maps.h"
#include "target/mem.h"

static bool any_name_is_type(const char *name, void *ctx)
{
	(void)name;
	(void)ctx;
	return true;
}

const char cmd_print_usage[] =
	"usage: vigil print PID EXPR... [--tid TID] [--depth N] [--max-elements N] [--hex] [--json]\n"
	"\n"
	"Print C expressions over a running process's globals, typed from its DWARF\n"
	"debug info and read live (process_vm_readv), without stopping it.  The\n"
	"layout is gdb's: {port = 8080, name = \"demo\", limits = {max = 100, min = 1}}.\n"
	"\n"
	"EXPR is a C subset:\n"
	"  NAME                a global or file-scope static: the main executable\n"
	"                      first, then the libraries\n"
	"  IMAGE:NAME          the variable of that image (libc.so.6:program_invocation_name)\n"
	"  NS::NAME            a C++ namespace variable (app::g_config) or static data\n"
	"                      member (app::Server::s_count); an anonymous namespace's\n"
	"                      variables go by their bare name\n"
	"  FILE:NAME           the static of that source file, when several files\n"
	"                      define one (conn.c:count)\n"
	"  x.m  p->m  a[i]     members (anonymous structs looked into), elements\n"
	"  *p  &x  (T *)x      dereference, address, casts to integer and pointer types\n"
	"                      (struct conn *, size_t, unsigned long, app::Conn *, ...);\n"
	"                      (T)*p, (T)-x: a cast when the DWARF names T a type,\n"
	"                      else (n) * 2 is a product\n"
	"  sizeof x  sizeof(T)\n"
	"  + - * / % << >> & | ^ ~ !  on integers; pointer +/- integer scales\n"
	"Thread-local variables (errno, __thread) are those of --tid's thread (default:\n"
	"the main thread), found through glibc's libthread_db from memory alone.\n"
	"Not supported (an error says so): local variables (no frame: the target\n"
	"runs on), calls, assignments.\n"
	"\n"
	"A value that cannot be read in part prints what was read and marks the\n"
	"rest <unreadable>; a pointer on the way that is null or unreadable is an\n"
	"error naming it (\"g_head->next: null pointer g_head (read at 0x...)\").\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"options:\n"
	"  --tid TID         the thread whose thread-local variables EXPR names\n"
	"  --depth N         expand nested structs N levels (default 20); deeper: {...}\n"
	"  --max-elements N  array elements and string characters shown (default 200)\n"
	"  --hex             integers in hexadecimal (gdb's print/x)\n"
	"  --json            one JSON document: per expression its type, size, address,\n"
	"                    the pointers read on the way (hops) and the value tree with\n"
	"                    type, size and offset of every member and the bytes that\n"
	"                    could not be read\n"
	"  -h, --help        this help\n"
	"\n"
	"exit codes: 2 bad expression (syntax, unknown name, member or type); 1 a\n"
	"pointer on the way is null or unreadable, or no byte of a value could be read.\n"
	"\n"
	"examples:\n"
	"  vigil print 4242 g_config\n"
	"  vigil print 4242 'g_config.limits' 'g_conns[3].peer->name'\n"
	"  vigil print 4242 '*(struct conn *)0x55d0c3a04a40' --depth 1\n"
	"  vigil print 4242 'sizeof(struct conn)' g_flags --hex --json\n";

struct print_args {
	struct vg_print_opts opts;
	char **exprs;
	int n_exprs;
	const char *pid;
	pid_t tid;                    /* --tid, 0: the main thread */
};

static int parse_uint(struct vg_cli *cli, const char *opt, const char *arg, unsigned max,
		      unsigned *out)
{
	uint64_t v;

	if (vg_parse_u64(arg, 0, &v) < 0 || v > max)
		return cli_usage_error(cli, "invalid %s '%s': expected a number from 0 to %u", opt, arg, max);
	*out = (unsigned)v;
	return 0;
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct print_args *a)
{
	enum { OPT_DEPTH = 256, OPT_MAX_ELEMENTS, OPT_HEX, OPT_JSON, OPT_TID };
	static const struct option opts[] = {
		{ "tid", required_argument, NULL, OPT_TID },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "max-elements", required_argument, NULL, OPT_MAX_ELEMENTS },
		{ "hex", no_argument, NULL, OPT_HEX },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	opterr = 0;
	a->opts = (struct vg_print_opts){ .max_depth = 20, .max_elements = 200 };
	a->exprs = calloc((size_t)argc + 1, sizeof(*a->exprs));
	if (!a->exprs)
		return cli_out_of_memory(cli, "for the arguments");
	/* '-' keeps positionals in order; an expression may start with '-'
	 * or '*' after "--". */
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!a->pid)
				a->pid = optarg;
			else
				a->exprs[a->n_exprs++] = optarg;
			break;
		case OPT_DEPTH:
			if ((r = parse_uint(cli, "--depth", optarg, 1000, &a->opts.max_depth)))
				return r;
			break;
		case OPT_MAX_ELEMENTS:
			if ((r = parse_uint(cli, "--max-elements", optarg, 1u << 20, &a->opts.max_elements)))
				return r;
			break;
		case OPT_HEX:
			a->opts.hex = true;
			break;
		case OPT_TID:
			if ((r = cli_parse_pid(cli, optarg, &a->tid)))
				return r;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case 'h':
			fputs(cmd_print_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (!a->pid)
			a->pid = argv[optind];
		else
			a->exprs[a->n_exprs++] = argv[optind];
	}
	if (!a->pid || a->n_exprs == 0)
		return cli_usage_error(cli, "expected PID and at least one EXPR; usage: vigil print PID EXPR...");
	return 0;
}

int cmd_print(struct vg_cli *cli, int argc, char **argv)
{
	struct print_args a = { 0 };
	struct vg_error err = { 0 };
	struct vg_expr **parsed = NULL;
	struct vg_expr_result *res = NULL;
	struct vg_value **vals = NULL;
	struct vg_print_item *items = NULL;
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	struct vg_expr_env *env = NULL;
	char root[64];
	int r, n_done = 0, rc = 0;

	r = parse_args(cli, argc, argv, &a);
	if (r) {
		free(a.exprs);
		return r < 0 ? 0 : r;
	}
	parsed = calloc((size_t)a.n_exprs, sizeof(*parsed));
	res = calloc((size_t)a.n_exprs, sizeof(*res));
	vals = calloc((size_t)a.n_exprs, sizeof(*vals));
	items = calloc((size_t)a.n_exprs, sizeof(*items));
	if (!parsed || !res || !vals || !items) {
		r = cli_out_of_memory(cli, "for the expressions");
		goto out;
	}
	/* Every expression's syntax before the target is touched: valid
	 * either way a '(NAME)' may read ("(my_t)~x" only if my_t is a type). */
	for (int i = 0; i < a.n_exprs; i++) {
		struct vg_error err2 = { 0 };

		if (vg_expr_parse(a.exprs[i], &parsed[i], &err) < 0 &&
		    vg_expr_parse_typed(a.exprs[i], any_name_is_type, NULL, &parsed[i], &err2) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
		vg_error_clear(&err);
	}
	r = cli_open_target(cli, a.pid, &maps, &mem);
	if (r)
		goto out;
	r = cli_load_images(cli, NULL, false, maps, mem, &imgs, NULL, NULL);
	if (r)
		goto out;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)cli->target->mm_pid);
	env = vg_expr_env_new(imgs, mem, root);
	if (!env) {
		r = cli_out_of_memory(cli, "for the expression environment");
		goto out;
	}
	vg_expr_env_set_thread(env, cli->target->pid, a.tid ? a.tid : cli->target->pid);
	/* Again with the target's type names: "(my_t)*p" is a cast only if
	 * my_t names a type. */
	for (int i = 0; i < a.n_exprs; i++) {
		parsed[i] = vg_expr_free(parsed[i]);
		if (vg_expr_parse_typed(a.exprs[i], vg_expr_env_is_type, env, &parsed[i], &err) < 0) {
			r = cli_fail(cli, &err);
			goto out;
		}
	}
	for (int i = 0; i < a.n_exprs; i++) {
		struct vg_value_opts vo = { .max_depth = a.opts.max_depth,
					    .max_elements = a.opts.max_elements };

		if (vg_expr_eval(env, parsed[i], &res[i], &err) < 0 ||
		    vg_value_fetch(env, &res[i], &vo, &vals[i], &err) < 0) {
			vg_target_explain(cli->target, err.code, &err);
			r = cli_fail(cli, &err);
			goto out;
		}
		items[i] = (struct vg_print_item){ .expr = a.exprs[i], .res = &res[i], .value = vals[i] };
		n_done = i + 1;
		if (vals[i]->size && vals[i]->n_unreadable == vals[i]->size && !rc) {
			rc = VG_EXIT_RUNTIME;
			vg_error_set(&err, -EFAULT, "%s: none of the %" PRIu64 " bytes at 0x%" PRIx64 " could be read",
				     a.exprs[i], vals[i]->size, vals[i]->addr);
		}
		if (!cli->json)
			(void)vg_report_print_text(stdout, &items[i], &a.opts);
	}
	if (cli->json) {
		cJSON *doc = vg_report_print_json(cli->target, items, (size_t)n_done, &a.opts);

		r = doc ? cli_print_json(doc) : cli_out_of_memory(cli, "building the JSON report");
	} else {
		cli_print_target_notes(cli->target);
	}
	if (!r && rc) {
		if (!cli->json) {
			fflush(stdout);
			fprintf(stderr, "vigil: error: %s\n", err.msg);
		}
		r = rc;
	}
out:
	for (int i = 0; i < a.n_exprs; i++) {
		if (parsed)
			vg_expr_free(parsed[i]);
		if (res)
			vg_expr_result_clear(&res[i]);
		if (vals)
			vg_value_free(vals[i]);
	}
	free(parsed);
	free(res);
	free(vals);
	free(items);
	free(a.exprs);
	vg_expr_env_free(env);
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
