/* cli.c - the parts of every subcommand that must sound the same: errors,
 * warnings, PID parsing, attaching, JSON output and the final flush. */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/addrspec.h"
#include "elf/image.h"
#include "report/json.h"
#include "report/text.h"
#include "target/findproc.h"
#include "target/maps.h"
#include "target/mem.h"
#include "util/duration.h"

int cli_fail(struct vg_cli *cli, const struct vg_error *err)
{
	int code = err->exit ? (int)err->exit : VG_EXIT_RUNTIME;
	const char *msg = err->msg[0] ? err->msg : strerror(-err->code);

	if (cli->json) {
		cJSON *doc = vg_json_error_new(cli->operation, cli->target, msg,
					       err->code, code);
		cli_print_json(doc);
	} else {
		fputs("vigil: error: ", stderr);
		cli_put_text(stderr, msg);
		fputc('\n', stderr);
	}
	return code;
}

int cli_usage_error(struct vg_cli *cli, const char *fmt, ...)
{
	struct vg_error err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	err.code = -EINVAL;
	err.exit = VG_EXIT_USAGE;
	return cli_fail(cli, &err);
}

int cli_out_of_memory(struct vg_cli *cli, const char *what)
{
	struct vg_error err = { .code = -ENOMEM, .exit = VG_EXIT_RUNTIME };

	snprintf(err.msg, sizeof(err.msg), "out of memory %s", what);
	return cli_fail(cli, &err);
}

int cli_bad_option(struct vg_cli *cli, const char *arg)
{
	return cli_usage_error(cli, "unknown or incomplete option '%s' for '%s'; see 'vigil help %s'",
			       arg ? arg : "?", cli->command, cli->command);
}

void cli_warn(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("vigil: warning: ", stderr);
	cli_put_text(stderr, msg);
	fputc('\n', stderr);
}

int cli_parse_pid(struct vg_cli *cli, const char *s, pid_t *pid)
{
	uint64_t v;

	if (!s || s[0] < '0' || s[0] > '9' || vg_parse_u64(s, 0, &v) < 0 ||
	    strncmp(s, "0x", 2) == 0 || v == 0 || v > INT_MAX)
		return cli_usage_error(cli, "invalid PID '%s': expected a positive decimal number",
				       s ? s : "");
	*pid = (pid_t)v;
	return 0;
}

int cli_parse_duration(struct vg_cli *cli, const char *opt, const char *arg, uint64_t min_ms,
		       uint64_t max_ms, uint64_t *ms)
{
	uint64_t v;

	if (vg_parse_duration_ms(arg, &v) < 0 || v < min_ms || v > max_ms)
		return cli_usage_error(cli, "invalid %s '%s': expected a duration from %llu ms to %llu ms, with a unit (500ms, 2s, 1.5s, 1m, 1h) or a number of milliseconds",
				       opt, arg, (unsigned long long)min_ms, (unsigned long long)max_ms);
	*ms = v;
	return 0;
}

/* The program "-- CMD" started (0: none), for cli_print_target_notes. */
static pid_t launched_pid;

/* The placeholder "-- CMD" puts where the PID goes; never printed. */
static char launch_placeholder[] = "(the program after --)";

/* From the start of a command that launches: a SIGINT, SIGTERM or SIGHUP
 * that reaches vigil stays pending until the observation reads it (the
 * stop signals) or cli_launch_finish passes it on to the program, never
 * killing vigil in between and leaving the program behind.  The child
 * unblocks them before its exec. */
static void block_for_launch(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
}

static bool is_pid_opt(const char *opt)
{
	return strcmp(opt, "-p") == 0 || strcmp(opt, "--pid") == 0;
}

int cli_take_target_args(struct vg_cli *cli, const struct vg_cmd *cmd, int argc, char **argv,
			 int *out_argc, char ***out_argv)
{
	const char *how = NULL, *value = NULL;
	int in = 1, out = 1, n = argc;
	char **rest = NULL, **o;
	int n_rest = 0;

	/* One more slot than argv: the target goes in as a positional. */
	o = calloc((size_t)argc + 2, sizeof(*o));
	if (!o)
		return cli_out_of_memory(cli, "parsing the command line");
	*out_argv = o;
	o[0] = argv[0];

	while (in < n) {
		const char *a = argv[in];
		const char *opt = NULL, *v = NULL;
		bool by_name = false;

		if (strcmp(a, "--") == 0) {
			if (cmd->launches) {
				if (in + 1 == n)
					return cli_usage_error(cli, "'--' must be followed by the command to run; usage: vigil %s [options] -- CMD [ARGS...]",
							       cmd->name);
				cli->launch_argv = &argv[in + 1];
				block_for_launch();
				opt = "--";
				v = launch_placeholder;
				n = in;        /* the command's argv ends here */
			} else {
				rest = &argv[in];
				n_rest = n - in;
				n = in;
			}
			if (!opt)
				break;
		} else if (strcmp(a, "-p") == 0 || strcmp(a, "--pid") == 0 ||
			   strcmp(a, "--name") == 0) {
			if (in + 1 >= n)
				return cli_usage_error(cli, "%s needs a value; see 'vigil help %s'", a, cmd->name);
			opt = a;
			v = argv[++in];
			by_name = strcmp(a, "--name") == 0;
		} else if (strncmp(a, "--pid=", 6) == 0) {
			opt = "--pid";
			v = a + 6;
		} else if (strncmp(a, "--name=", 7) == 0) {
			opt = "--name";
			v = a + 7;
			by_name = true;
		} else if (strncmp(a, "-p", 2) == 0 && a[2]) {
			opt = "-p";
			v = a + 2;
		}
		if (!opt) {
			o[out++] = argv[in++];
			continue;
		}
		if (how && cmd->several && is_pid_opt(how) && is_pid_opt(opt)) {
			/* -p A -p B: one list, as -p A,B (perf, py-spy). */
			char *j = malloc(strlen(value) + strlen(v) + 2);

			if (!j)
				return cli_out_of_memory(cli, "parsing the command line");
			sprintf(j, "%s,%s", value, v);
			free(cli->target_joined);
			cli->target_joined = j;
			value = j;
			in++;
			continue;
		}
		if (how && is_pid_opt(how) && is_pid_opt(opt))
			return cli_usage_error(cli, "-p is given twice: %s observes one process: give one PID (" CLI_SEVERAL_COMMANDS " several: -p PID,PID...)",
					       cmd->name);
		if (how)
			return cli_usage_error(cli, "the target is given twice (%s and %s): name one process, by -p PID, --name NAME, a positional PID or NAME, or -- CMD",
					       how, opt);
		if (by_name && !*v)
			return cli_usage_error(cli, "--name needs a process name");
		how = opt;
		value = v;
		cli->target_by_name = by_name;
		in++;
		if (strcmp(opt, "--") == 0)
			break;
	}
	if (value) {
		memmove(&o[2], &o[1], (size_t)(out - 1) * sizeof(*o));
		o[1] = (char *)value;
		cli->target_arg = value;
		out++;
	}
	for (int i = 0; i < n_rest; i++)
		o[out++] = rest[i];
	o[out] = NULL;
	*out_argc = out;
	return 0;
}

static int attach_pid(struct vg_cli *cli, pid_t pid)
{
	struct vg_error err = { 0 };

	if (vg_target_open(pid, &cli->target, &err) < 0)
		return cli_fail(cli, &err);
	return 0;
}

/* A name: exactly one process, or none (exit 4), or the candidates (exit 2). */
static int attach_name(struct vg_cli *cli, const char *name)
{
	struct vg_error err = { 0 };
	struct vg_proc_match *m = NULL;
	size_t n = 0, len;
	int r;

	if (vg_proc_find_by_name(name, &m, &n, &err) < 0)
		return cli_fail(cli, &err);
	if (n == 1) {
		pid_t pid = m[0].pid;

		free(m);
		return attach_pid(cli, pid);
	}
	if (n == 0) {
		vg_error_set(&err, -ESRCH, "no process named '%s' (compared with each process's comm, executable file name and argv[0])",
			     name);
		return cli_fail(cli, &err);
	}
	len = (size_t)snprintf(err.msg, sizeof(err.msg), "%zu processes are named '%s'; give one with -p PID:", n, name);
	for (size_t i = 0; i < n && i < 10 && len < sizeof(err.msg); i++)
		len += (size_t)snprintf(err.msg + len, sizeof(err.msg) - len, "%s %d %s (%.40s)",
					i ? "," : "", (int)m[i].pid, m[i].comm, m[i].cmdline);
	if (n > 10 && len < sizeof(err.msg))
		snprintf(err.msg + len, sizeof(err.msg) - len, ", and %zu more", n - 10);
	free(m);
	err.code = -EINVAL;
	err.exit = VG_EXIT_USAGE;
	r = cli_fail(cli, &err);
	return r;
}

/* "-- CMD ARGS": the child asks to be traced and execs, so the kernel
 * stops it with SIGTRAP right after the exec, at the program's first
 * instruction (the dynamic loader's entry), before it ran any of its own
 * code.  Stopping is allowed here only because vigil started it; it runs
 * once the command has armed (cli_launch_release).  An exec failure comes
 * back through a close-on-exec pipe. */
static int launch(struct vg_cli *cli)
{
	struct vg_error err = { 0 };
	int pfd[2], st, child_errno = 0;
	pid_t c;

	fflush(NULL);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return cli_fail(cli, &(struct vg_error){ .code = -errno, .exit = VG_EXIT_RUNTIME,
							 .msg = "cannot make a pipe to start the program" });
	c = fork();
	if (c < 0) {
		vg_error_set(&err, -errno, "cannot start '%s': fork: %s", cli->launch_argv[0], strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return cli_fail(cli, &err);
	}
	if (c == 0) {
		sigset_t none;
		int e;

		close(pfd[0]);
		/* vigil blocks SIGINT and SIGTERM while observing; the program
		 * must get them (Ctrl-C reaches it as it would without vigil). */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(cli->launch_argv[0], cli->launch_argv);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	if (read(pfd[0], &child_errno, sizeof(child_errno)) != (ssize_t)sizeof(child_errno))
		child_errno = 0;
	close(pfd[0]);
	if (child_errno || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		if (WIFSTOPPED(st)) {
			kill(c, SIGKILL);
			ptrace(PTRACE_DETACH, c, NULL, NULL);
			waitpid(c, &st, 0);
		}
		if (child_errno)
			vg_error_set(&err, -child_errno, "cannot run '%s': %s", cli->launch_argv[0],
				     strerror(child_errno));
		else
			vg_error_set(&err, -ECHILD, "'%s' did not reach its first instruction (wait status 0x%x)",
				     cli->launch_argv[0], (unsigned)st);
		/* A missing or non-executable program is bad input. */
		vg_error_set_exit(&err, child_errno == ENOENT || child_errno == ENOEXEC ||
				  child_errno == EACCES ? VG_EXIT_USAGE : VG_EXIT_RUNTIME);
		return cli_fail(cli, &err);
	}
	cli->launched = c;
	launched_pid = c;
	return attach_pid(cli, c);
}

int cli_launch_release(struct vg_cli *cli)
{
	struct vg_error err = { 0 };

	if (!cli->launched || cli->launch_released)
		return 0;
	if (ptrace(PTRACE_DETACH, cli->launched, NULL, NULL) < 0) {
		vg_error_set(&err, -errno, "cannot let '%s' (pid %d) run: %s", cli->launch_argv[0],
			     (int)cli->launched, strerror(errno));
		return cli_fail(cli, &err);
	}
	cli->launch_released = true;
	return 0;
}

/* The program may outlive the observation (a --duration, a SIGTERM sent
 * to vigil alone): wait for it, passing SIGINT, SIGTERM and SIGHUP on to
 * it, so that vigil neither dies before it nor leaves it behind. */
static int wait_forwarding(pid_t pid, int *st)
{
	sigset_t mask, old;
	siginfo_t si;
	pid_t w;
	int sig;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);   /* blocked, so kept pending: wakes the wait */
	sigprocmask(SIG_BLOCK, &mask, &old);
	while ((w = waitpid(pid, st, WNOHANG)) != pid) {
		if (w < 0 && errno != EINTR) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			return -1;
		}
		sig = sigtimedwait(&mask, &si, &(struct timespec){ 0, 200000000 });
		if (sig > 0 && sig != SIGCHLD)
			kill(pid, sig);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int cli_launch_finish(struct vg_cli *cli, int rc)
{
	int st;

	if (!cli->launched)
		return rc;
	if (!cli->launch_released) {
		/* vigil failed before the program ran a single instruction. */
		kill(cli->launched, SIGKILL);
		while (waitpid(cli->launched, &st, 0) < 0 && errno == EINTR)
			;
		cli->launched = 0;
		return rc ? rc : VG_EXIT_RUNTIME;
	}
	if (wait_forwarding(cli->launched, &st) < 0)
		return rc ? rc : VG_EXIT_RUNTIME;
	cli->launched = 0;
	if (rc)
		return rc;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* "A,B" from -p or as a positional that starts like a PID. */
static bool is_pid_list(const struct vg_cli *cli, const char *pid_arg)
{
	return pid_arg && strchr(pid_arg, ',') &&
	       ((*pid_arg >= '0' && *pid_arg <= '9') || pid_arg == cli->target_arg);
}

int cli_target_pids(struct vg_cli *cli, const char *pid_arg, pid_t **pids, size_t *n)
{
	size_t cap = 1, k = 0;
	char *copy, *tok, *save = NULL;
	pid_t *out;
	int r = 0;

	*pids = NULL;
	*n = 0;
	if ((cli->target_by_name && pid_arg == cli->target_arg) || !is_pid_list(cli, pid_arg))
		return 0;
	for (const char *c = pid_arg; *c; c++)
		cap += *c == ',';
	copy = strdup(pid_arg);
	out = calloc(cap, sizeof(*out));
	if (!copy || !out) {
		free(copy);
		free(out);
		return cli_out_of_memory(cli, "parsing the PID list");
	}
	/* strtok would skip an empty item ("1,,2"): each one is checked. */
	for (tok = copy; tok && !r; tok = save) {
		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		r = cli_parse_pid(cli, tok, &out[k]);
		for (size_t i = 0; i < k && !r; i++)
			if (out[i] == out[k])
				r = cli_usage_error(cli, "pid %d is given twice in '%s'", (int)out[k], pid_arg);
		k++;
	}
	free(copy);
	if (r) {
		free(out);
		return r;
	}
	*pids = out;
	*n = k;
	return 0;
}

int cli_attach(struct vg_cli *cli, const char *pid_arg)
{
	bool by_name;
	pid_t pid;
	int r;

	if (cli->launch_argv && pid_arg == cli->target_arg)
		return launch(cli);
	by_name = cli->target_by_name && pid_arg == cli->target_arg;
	if (!by_name && is_pid_list(cli, pid_arg))
		return cli_usage_error(cli, "'%s' names several processes: %s observes one process: give one PID (" CLI_SEVERAL_COMMANDS " several: -p PID,PID...)",
				       pid_arg, cli->command);
	/* -p is always a PID; a positional word that cannot be one is a name. */
	if (by_name || (pid_arg != cli->target_arg && pid_arg && *pid_arg &&
			(*pid_arg < '0' || *pid_arg > '9')))
		return attach_name(cli, pid_arg);
	r = cli_parse_pid(cli, pid_arg, &pid);
	if (r)
		return r;
	return attach_pid(cli, pid);
}

const char *cli_output_path(const char *arg)
{
	return strcmp(arg, "-") == 0 ? NULL : arg;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

const char *cli_format_for_path(const char *path)
{
	static const struct { const char *ext, *format; } by_ext[] = {
		/* longest first: .speedscope.json before .json */
		{ ".speedscope.json", "speedscope" }, { ".pb.gz", "pprof" }, { ".pprof", "pprof" },
		{ ".pb", "pprof" }, { ".svg", "svg" }, { ".folded", "folded" },
		{ ".collapsed", "folded" }, { ".json", "json" }, { ".txt", "table" },
	};

	for (size_t i = 0; i < sizeof(by_ext) / sizeof(by_ext[0]); i++)
		if (ends_with(path, by_ext[i].ext))
			return by_ext[i].format;
	return NULL;
}

static bool output_failed;

bool cli_output_failed(void)
{
	if (!output_failed && ferror(stdout)) {
		output_failed = true;
		fprintf(stderr, "vigil: error: cannot write output: %s; the output is incomplete\n",
			strerror(errno));
	}
	return output_failed;
}

int cli_print_json(cJSON *doc)
{
	char *text;

	if (!doc)
		return VG_EXIT_RUNTIME;
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text) {
		fprintf(stderr, "vigil: error: out of memory formatting JSON\n");
		return VG_EXIT_RUNTIME;
	}
	fputs(text, stdout);
	fputc('\n', stdout);
	cJSON_free(text);
	return 0;
}

int cli_write_json(struct vg_cli *cli, cJSON *doc, FILE *out)
{
	char *text;
	int r = 0;

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

int cli_finish_output(void)
{
	if (output_failed)
		return VG_EXIT_RUNTIME;  /* already reported */
	/* A truncated JSON document is a bug: check the last write and the
	 * close, where a full disk or a closed pipe finally shows. */
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "vigil: error: cannot write output: %s; the output is incomplete\n",
			strerror(errno));
		return VG_EXIT_RUNTIME;
	}
	return 0;
}

void cli_prescan_json(struct vg_cli *cli, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--json") == 0)
			cli->json = true;
	}
}

int cli_load_maps(struct vg_cli *cli, struct vg_maps **maps, const char **method)
{
	struct vg_error err = { 0 };
	const char *src = getenv("VIGIL_MAPS_SOURCE");
	unsigned flags = 0;
	int r;

	if (src && strcmp(src, "text") == 0)
		flags |= VG_MAPS_FORCE_TEXT;
	else if (src && strcmp(src, "query") == 0)
		flags |= VG_MAPS_FORCE_QUERY;
	else if (src && *src)
		return cli_usage_error(cli, "invalid VIGIL_MAPS_SOURCE '%s': expected 'text' or 'query'", src);
	r = vg_maps_load(cli->target->pid, flags, maps, method, &err);
	if (r < 0)
		return cli_fail(cli, &err);
	return 0;
}

void cli_print_target_notes(const struct vg_target *t)
{
	bool alive, changed;

	for (size_t i = 0; i < t->n_warnings; i++)
		cli_warn("%s", t->warnings[i]);
	vg_target_recheck(t, &alive, &changed);
	if (changed)
		cli_warn("pid %d now belongs to another process: what was shown may mix both", (int)t->pid);
	else if (!alive && t->pid != launched_pid)   /* -- CMD: its end is expected */
		cli_warn("pid %d exited during the observation", (int)t->pid);
}

void cli_put_text(FILE *f, const char *s)
{
	vg_text_put(f, s);
}

void cli_put_path(FILE *f, const char *path, bool deleted)
{
	vg_text_put_path(f, path, deleted);
}

int cli_load_images(struct vg_cli *cli, const char *bin_path, bool force_bin,
		    const struct vg_maps *maps, struct vg_mem *mem, struct vg_images **imgs,
		    struct vg_image **bin, const char **bin_match)
{
	struct vg_error err = { 0 };
	const struct vg_image *running;
	const char *how;
	enum vg_bin_match m;
	char a[160], b[160];

	if (vg_images_load(cli->target, maps, mem, imgs, &err) < 0)
		return cli_fail(cli, &err);
	if (!bin_path)
		return 0;
	if (vg_image_open_path(bin_path, bin, &err) < 0)
		return cli_fail(cli, &err);
	running = vg_images_main(*imgs);
	if (!running)
		return cli_usage_error(cli, "cannot check --bin '%s': the main executable of pid %d is not known",
				       bin_path, (int)cli->target->pid);
	m = vg_image_compare(*bin, running, mem, &how);
	*bin_match = vg_bin_match_name(m);
	vg_image_build_id_hex(*bin, a, sizeof(a));
	vg_image_build_id_hex(running, b, sizeof(b));
	if (m == VG_BIN_MISMATCH && !force_bin)
		return cli_usage_error(cli, "--bin '%s' is not the running executable '%s' (build-id %s vs %s, compared by %s); --force-bin uses it anyway",
				       bin_path, running->path, a[0] ? a : "none",
				       b[0] ? b : "none", how);
	if (m == VG_BIN_MISMATCH)
		vg_target_warn(cli->target, "--bin '%s' does not match the running executable (build-id %s vs %s): addresses may be wrong",
			       bin_path, a[0] ? a : "none", b[0] ? b : "none");
	else if (m == VG_BIN_UNKNOWN)
		vg_target_warn(cli->target, "cannot tell whether --bin '%s' is the running executable (no build-id, no comparable bytes)",
			       bin_path);
	return 0;
}

int cli_stop_signals_begin(struct cli_stop_signals *s)
{
	sigemptyset(&s->mask);
	sigaddset(&s->mask, SIGINT);
	sigaddset(&s->mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &s->mask, &s->old);
	s->fd = signalfd(-1, &s->mask, SFD_CLOEXEC);
	if (s->fd < 0)
		sigprocmask(SIG_SETMASK, &s->old, NULL);
	return s->fd;
}

void cli_stop_signals_end(struct cli_stop_signals *s)
{
	if (s->fd < 0)
		return;
	while (sigtimedwait(&s->mask, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	close(s->fd);
	s->fd = -1;
	sigprocmask(SIG_SETMASK, &s->old, NULL);
}

int cli_need_user_memory(struct vg_cli *cli, const char *verb)
{
	struct vg_error err = { 0 };
	pid_t tid;

	if (vg_proc_mm_holder(cli->target->pid, &tid) != VG_MM_KTHREAD)
		return 0;
	vg_error_set(&err, -EINVAL, "pid %d (%s) is a kernel thread: it has no user memory or code to %s; give the PID of a user process",
		     (int)cli->target->pid, cli->target->comm, verb);
	return cli_fail(cli, &err);
}

int cli_open_target(struct vg_cli *cli, const char *pid_arg, struct vg_maps **maps,
		    struct vg_mem **mem)
{
	struct vg_error err = { 0 };
	int r = cli_attach(cli, pid_arg);

	if (r)
		return r;
	r = cli_load_maps(cli, maps, NULL);
	if (r)
		return r;
	if (vg_mem_open(cli->target, *maps, mem, &err) < 0)
		return cli_fail(cli, &err);
	return 0;
}
