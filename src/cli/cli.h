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
};

struct vg_cmd {
	const char *name;
	int (*run)(struct vg_cli *cli, int argc, char **argv);
	const char *summary;         /* one line for `vigil --help` */
	const char *usage;           /* full text for `vigil help NAME` */
	bool takes_addr;             /* help also explains the ADDR forms */
};

int cmd_maps(struct vg_cli *cli, int argc, char **argv);
int cmd_read(struct vg_cli *cli, int argc, char **argv);
int cmd_sym(struct vg_cli *cli, int argc, char **argv);
int cmd_watch(struct vg_cli *cli, int argc, char **argv);
int cmd_scan(struct vg_cli *cli, int argc, char **argv);
int cmd_profile(struct vg_cli *cli, int argc, char **argv);
int cmd_probe(struct vg_cli *cli, int argc, char **argv);
int cmd_stack(struct vg_cli *cli, int argc, char **argv);
extern const char cmd_maps_usage[];
extern const char cmd_read_usage[];
extern const char cmd_sym_usage[];
extern const char cmd_watch_usage[];
extern const char cmd_scan_usage[];
extern const char cmd_profile_usage[];
extern const char cmd_probe_usage[];
extern const char cmd_stack_usage[];

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

/* --duration MS of watch, profile and probe: decimal or 0xHEX, 1 ms to a
 * year (a larger value would overflow the deadline in nanoseconds and
 * stop at once).  Prints and returns VG_EXIT_USAGE when out of range. */
#define CLI_MAX_DURATION_MS (365ull * 86400 * 1000)
int cli_parse_duration(struct vg_cli *cli, const char *arg, uint64_t *ms);

/* Attach to the PID given on the command line; on failure prints and
 * returns the exit code (> 0), else 0 with cli->target set. */
int cli_attach(struct vg_cli *cli, const char *pid_arg);

/* Print a JSON document to stdout (consumes doc).  Returns 0 or exit code. */
int cli_print_json(cJSON *doc);

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
