/* stack_opts.c - the options profile, probe and stack share: see
 * stack_opts.h.  Only parsing and its messages: what the values do is the
 * command's. */
#include "cli/stack_opts.h"

#include <string.h>

#include "cli/outputs.h"
#include "report/stack_format.h"
#include "util/number.h"

int cli_opt_duration(struct vg_cli *cli, const char *arg, uint64_t *ms)
{
	return cli_parse_duration(cli, "--duration", arg, 1, CLI_MAX_DURATION_MS, ms);
}

int cli_opt_tid(struct vg_cli *cli, const char *arg, pid_t *tids, size_t *n, size_t max)
{
	uint64_t v;

	if (*n == max)
		return cli_usage_error(cli, "at most %zu --tid", max);
	if (vg_parse_u64(arg, 0, &v) < 0 || v == 0 || v > INT32_MAX)
		return cli_usage_error(cli, "invalid --tid '%s': expected a thread id", arg);
	tids[(*n)++] = (pid_t)v;
	return 0;
}

int cli_opt_format(struct vg_cli *cli, const char *arg)
{
	if (!cli_opt_format_known(arg))
		return cli_usage_error(cli, "invalid --format '%s': expected table, folded, pprof, speedscope, svg or json", arg);
	return 0;
}

bool cli_opt_format_known(const char *format)
{
	return strcmp(format, "json") == 0 || vg_stack_format_find(format);
}

int cli_opt_output(struct vg_cli *cli, const char *arg, const char **args, size_t *n)
{
	if (*n == CLI_MAX_OUTPUTS)
		return cli_usage_error(cli, "at most %d -o", CLI_MAX_OUTPUTS);
	args[(*n)++] = arg;
	return 0;
}
