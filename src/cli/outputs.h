/* outputs.h - the -o outputs of one run (profile, probe, stack): which
 * format each gets, checked before the observation, and each written
 * through one sequence: opened (a file: a new temporary file beside it),
 * written by the command's writer, committed (renamed over the path only
 * when complete; util/outfile.h: only a regular file of the user is ever
 * replaced) or removed. */
#ifndef VG_CLI_OUTPUTS_H
#define VG_CLI_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"

#define CLI_MAX_OUTPUTS 8

/* One result of the run: where it goes and in which format. */
struct cli_output {
	const char *arg;       /* -o as given ("-": standard output) */
	const char *path;      /* NULL: standard output */
	const char *format;    /* "table", "json", "folded", "pprof", ... */
};

struct cli_outputs {
	struct cli_output o[CLI_MAX_OUTPUTS];
	size_t n;
};

/* One output per -o (args[0..n_args); none: standard output), each in the
 * format its extension names (cli_format_for_path); format (--format,
 * NULL: none) for a single -o or for one whose extension says nothing,
 * and it must not contradict an extension when there are several;
 * standard output without either gets dflt.  Refused (printed, exit
 * code returned): a format the command does not write (known() false),
 * "-" twice, a path twice, a binary stack format to a terminal. */
int cli_outputs_plan(struct vg_cli *cli, const char *const *args, size_t n_args,
		     const char *format, const char *dflt, bool (*known)(const char *format),
		     struct cli_outputs *outs);

/* Every file of outs may be written (vg_outfile_check): called before the
 * observation, so that a bad path does not lose it.  0 or the exit code
 * after printing. */
int cli_outputs_check(struct vg_cli *cli, const struct cli_outputs *outs);

/* Writes one output's content to out.  0; a negative errno (a write
 * failed: err may say more); or a positive exit code already reported. */
typedef int cli_output_writer(struct vg_cli *cli, FILE *out, const struct cli_output *o,
			      void *arg, struct vg_error *err);

/* One output: path (o->path, or a name made from it: profile --every)
 * opened as a temporary file (flags: util/outfile.h, VG_OUTFILE_PRIVATE
 * for the target's memory), written by w, committed; NULL path: standard
 * output.  what names it in errors ("profile").  0, or the exit code
 * after printing (the path then keeps what it held). */
int cli_output_write(struct vg_cli *cli, const struct cli_output *o, const char *path,
		     unsigned flags, const char *what, cli_output_writer *w, void *arg);

#endif
