/* stack_opts.h - the options that the commands writing call stacks
 * (profile, probe, stack) share, parsed in one place so that each keeps
 * one meaning, one range and one error message wherever it is taken:
 * --duration, --tid, --format and -o.  Each function parses one
 * occurrence, from the command's getopt switch.
 *
 * What only looks alike stays with its command: --top and --stack-bytes
 * (probe copies stacks in its eBPF program, 512-byte steps up to 16 KiB;
 * profile asks perf, 8-byte steps up to 65528), --json and what
 * --format json means to each, and stack's --format, which has no JSON
 * form. */
#ifndef VG_CLI_STACK_OPTS_H
#define VG_CLI_STACK_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/cli.h"

/* --duration TIME: 1 ms to CLI_MAX_DURATION_MS, in *ms.  0, or
 * VG_EXIT_USAGE after printing. */
int cli_opt_duration(struct vg_cli *cli, const char *arg, uint64_t *ms);

/* --tid TID, repeatable: a thread id (1 to INT32_MAX) appended to
 * tids[*n], at most max of them.  0, or VG_EXIT_USAGE after printing. */
int cli_opt_tid(struct vg_cli *cli, const char *arg, pid_t *tids, size_t *n, size_t max);

/* --format F: "json" or a stack writer's name (report/stack_format.h);
 * the command decides what json means to it.  0, or VG_EXIT_USAGE after
 * printing. */
int cli_opt_format(struct vg_cli *cli, const char *arg);

/* The formats --format takes, as cli_outputs_plan's known(): json (the
 * command's report) or a stack format. */
bool cli_opt_format_known(const char *format);

/* -o FILE, repeatable: arg appended to args[*n], at most
 * CLI_MAX_OUTPUTS (cli/outputs.h) of them; cli_outputs_plan reads them.
 * 0, or VG_EXIT_USAGE after printing. */
int cli_opt_output(struct vg_cli *cli, const char *arg, const char **args, size_t *n);

#endif
