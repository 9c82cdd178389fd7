/* cli.h - what every subcommand shares: the command table entry, the
 * one-voice error path, strict argument parsing and checked output.
 * Only src/cli/ prints or exits. */
#ifndef VG_CLI_H
#define VG_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "target/target.h"
#include "util/error.h"

struct vg_cli {
	const char *operation;       /* "maps", "read", "symbolize": the JSON operation */
	const char *command;         /* "maps", "read", "sym": what the user typed */
	bool json;
	struct vg_target *target;    /* set once attached; used by error reports */
	/* Naming the target other than by a positional PID (cli_take_target_args):
	 * -p/--pid and --name put their value where the PID goes (target_arg,
	 * known by its address); "-- CMD ARGS" puts a placeholder there and
	 * cli_attach starts the program instead. */
	const char *target_arg;
	bool target_by_name;         /* --name: a name even if it looks like a PID */
	char **launch_argv;          /* "-- CMD ARGS" of profile, probe, watch */
	pid_t launched;              /* the program vigil started (0: none) */
	bool launch_released;        /* cli_launch_release ran: it is running */
	char *target_joined;         /* repeated -p A -p B as "A,B" (owned) */
};

struct vg_cmd {
	const char *name;
	int (*run)(struct vg_cli *cli, int argc, char **argv);
	const char *summary;         /* one line for `vigil --help` */
	const char *usage;           /* full text for `vigil help NAME` */
	bool takes_addr;             /* help also explains the ADDR forms */
	bool launches;               /* "-- CMD ARGS" starts the program to observe */
	bool several;                /* -p PID,PID... observes several processes */
};

/* The ways of naming the target, in every command's help (one text). */
#define CLI_TARGET_HELP \
	"PID: a process ID, or -p PID / --pid PID anywhere on the line, or a process\n" \
	"name (a word that does not start with a digit, or --name NAME): the one\n" \
	"process whose comm, executable file name or argv[0] is NAME (several: exit 2\n" \
	"with the candidates; none: exit 4).\n"
#define CLI_LAUNCH_HELP \
	"-- CMD [ARGS...] instead of PID: start CMD, stopped at its first instruction\n" \
	"until vigil is ready, observe it from there, and exit with its exit status\n" \
	"(128 + N when killed by signal N), as perf record -- CMD does.\n"

int cmd_maps(struct vg_cli *cli, int argc, char **argv);
int cmd_read(struct vg_cli *cli, int argc, char **argv);
int cmd_sym(struct vg_cli *cli, int argc, char **argv);
int cmd_watch(struct vg_cli *cli, int argc, char **argv);
int cmd_scan(struct vg_cli *cli, int argc, char **argv);
int cmd_profile(struct vg_cli *cli, int argc, char **argv);
int cmd_probe(struct vg_cli *cli, int argc, char **argv);
int cmd_stack(struct vg_cli *cli, int argc, char **argv);
int cmd_print(struct vg_cli *cli, int argc, char **argv);
extern const char cmd_maps_usage[];
extern const char cmd_read_usage[];
extern const char cmd_sym_usage[];
extern const char cmd_watch_usage[];
extern const char cmd_scan_usage[];
extern const char cmd_profile_usage[];
extern const char cmd_probe_usage[];
extern const char cmd_stack_usage[];
extern const char cmd_print_usage[];

/* Report err in one voice (one stderr line, or a JSON error document on
 * stdout with --json) and return the exit code to use. */
int cli_fail(struct vg_cli *cli, const struct vg_error *err);
/* Same for a usage error with a formatted message; returns VG_EXIT_USAGE. */
int cli_usage_error(struct vg_cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "out of memory <what>", exit 1, in the usual voice. */
int cli_out_of_memory(struct vg_cli *cli, const char *what);
/* getopt_long's own complaint already printed? This prints the hint line. */
int cli_bad_option(struct vg_cli *cli, const char *arg);

void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* vg_text_put and vg_text_put_path (report/text.h), for the commands
 * whose tables are still written here. */
void cli_put_text(FILE *f, const char *s);
void cli_put_path(FILE *f, const char *path, bool deleted);

/* Strict PID: decimal, > 0, fits pid_t. */
int cli_parse_pid(struct vg_cli *cli, const char *s, pid_t *pid);

/* A duration option (--duration of watch, profile and probe, probe's
 * --interval): "2s", "500ms", "1m", "1.5s", or a bare number of
 * milliseconds (util/duration.h), from min_ms to max_ms.  Prints and
 * returns VG_EXIT_USAGE otherwise.  A year at most: a larger value would
 * overflow the deadline in nanoseconds and stop at once. */
#define CLI_MAX_DURATION_MS (365ull * 86400 * 1000)
int cli_parse_duration(struct vg_cli *cli, const char *opt, const char *arg, uint64_t min_ms,
		       uint64_t max_ms, uint64_t *ms);

/* Before the command parses its options: take -p/--pid PID, --name NAME
 * and (for a command that launches) "-- CMD ARGS" out of argv, and put
 * the target where the command expects its PID, as the first positional
 * argument.  Every command then names its target the same ways without a
 * line of its own.  The command's argv is a new array (*out_argv, to
 * free; NULL-terminated) pointing into argv, which stays as it was
 * (cli->launch_argv points into it).  0, or the exit code after printing. */
int cli_take_target_args(struct vg_cli *cli, const struct vg_cmd *cmd, int argc, char **argv,
			 int *out_argc, char ***out_argv);

/* The commands that take several processes (-p PID,PID or -p repeated),
 * for the sentence that refuses a list elsewhere. */
#define CLI_SEVERAL_COMMANDS "profile and stack take"
#define CLI_SEVERAL_HELP \
	"Several processes: -p PID,PID... or -p repeated, as perf record -p takes\n" \
	"them.\n"

/* pid_arg as a list of processes: "PID,PID..." (from -p, or a positional
 * PID list), each a strict PID, none twice.  *n = 0 when pid_arg names
 * one target (then cli_attach it); else *pids (malloc'ed, the caller
 * frees) holds the n >= 2 PIDs in the order given.  0, or the exit code
 * after printing. */
int cli_target_pids(struct vg_cli *cli, const char *pid_arg, pid_t **pids, size_t *n);

/* Attach to the target given on the command line: a PID, a process name
 * (a word that does not start with a digit, or --name), or the program of
 * "-- CMD ARGS", started and stopped at its first instruction (see
 * cli_launch_release).  A list "PID,PID" is refused with the commands
 * that take one (cli_target_pids).  On failure prints and returns the
 * exit code (> 0), else 0 with cli->target set. */
int cli_attach(struct vg_cli *cli, const char *pid_arg);

/* Let the program started by "-- CMD" run, once the command has armed
 * what must see its first instruction.  No-op when nothing was launched.
 * 0, or the exit code after printing. */
int cli_launch_release(struct vg_cli *cli);

/* main's last word on a launched program: never released (vigil failed
 * before it ran) -> killed and reaped; else waited for.  Returns the exit
 * code vigil gives: rc when not 0 (vigil's own failure), else the
 * program's exit status (128 + N for signal N). */
int cli_launch_finish(struct vg_cli *cli, int rc);

/* -o PATH: "-" is standard output (NULL), anything else the path, which
 * vg_outfile_check then judges (only a regular file is ever replaced). */
const char *cli_output_path(const char *arg);

/* The output format a file name asks for by its extension, as perf and
 * pprof users name their files: .svg svg, .pb.gz/.pb/.pprof pprof,
 * .folded/.collapsed folded, .speedscope.json speedscope, .json json,
 * .txt table.  NULL when the extension says nothing. */
const char *cli_format_for_path(const char *path);

/* Print a JSON document to stdout (consumes doc).  Returns 0 or exit code. */
int cli_print_json(cJSON *doc);

/* A command's JSON report (consumes doc): pretty on standard output, as
 * cli_print_json; one line in an -o file, which a machine reads.  0, an
 * exit code (reported), or -EIO (out's error, for the caller's commit). */
int cli_write_json(struct vg_cli *cli, cJSON *doc, FILE *out);

/* Set cli->json when --json is anywhere in argv before "--", so that even
 * an error in an earlier argument is reported as JSON.  main() calls it
 * once on the whole command line, for every command. */
void cli_prescan_json(struct vg_cli *cli, int argc, char **argv);

/* A kernel thread (pid 2, kworkers) has no user memory: scan, watch and
 * probe refuse it (exit 2, with what to do) instead of reporting nothing
 * found.  0, or the exit code after printing. */
int cli_need_user_memory(struct vg_cli *cli, const char *verb);

struct vg_maps;
/* Load the target's maps, honouring VIGIL_MAPS_SOURCE=text|query.  Prints
 * and returns the exit code on failure. */
int cli_load_maps(struct vg_cli *cli, struct vg_maps **maps, const char **method);

struct vg_images;
struct vg_image;
struct vg_mem;
/* cli_attach, cli_load_maps and a memory reader over them: what every
 * command that reads the target starts with.  Prints and returns the exit
 * code on failure (*maps and *mem are then whatever was made: the caller
 * frees them as usual). */
int cli_open_target(struct vg_cli *cli, const char *pid_arg, struct vg_maps **maps,
		    struct vg_mem **mem);
/* Load the target's images and, with bin_path (--bin FILE), open that file
 * and check it against the running executable: a mismatch is a usage
 * error unless force_bin, then a warning.  Prints and returns the exit
 * code on failure. */
int cli_load_images(struct vg_cli *cli, const char *bin_path, bool force_bin,
		    const struct vg_maps *maps, struct vg_mem *mem, struct vg_images **imgs,
		    struct vg_image **bin, const char **bin_match);

/* Ctrl-C and SIGTERM end an observation, not vigil: block them and
 * return a signalfd that reports them (-1 if none could be made: they
 * then still kill vigil).  end: consume any that came after the stop (a
 * signal still pending when unblocked would kill vigil after the report),
 * close the fd and restore the mask. */
struct cli_stop_signals {
	sigset_t mask, old;
	int fd;
};
int cli_stop_signals_begin(struct cli_stop_signals *s);
void cli_stop_signals_end(struct cli_stop_signals *s);

/* Table mode: print the target's warnings and whether it exited or changed
 * while observed (JSON carries the same in its process header). */
void cli_print_target_notes(const struct vg_target *t);

/* True once a write to stdout has failed (reported once, on the spot):
 * long outputs check it to stop instead of working for nothing. */
bool cli_output_failed(void);

/* Flush and close stdout and report a failed write (ENOSPC, EIO; EPIPE
 * only when SIGPIPE is ignored, since by default a closed pipe ends vigil
 * with status 141 like other Unix tools); called on every exit path. */
int cli_finish_output(void);

#endif
