/* outputs.c - the -o outputs of profile, probe and stack: see outputs.h.
 * One sequence for all, so that every command refuses the same paths,
 * names the same errors and never leaves half a file. */
#include "cli/outputs.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "report/stack_format.h"
#include "util/outfile.h"

int cli_outputs_plan(struct vg_cli *cli, const char *const *args, size_t n_args,
		     const char *format, const char *dflt, bool (*known)(const char *format),
		     struct cli_outputs *outs)
{
	size_t n = n_args ? n_args : 1, to_stdout = 0;

	if (n > CLI_MAX_OUTPUTS)
		return cli_usage_error(cli, "at most %d -o", CLI_MAX_OUTPUTS);
	for (size_t i = 0; i < n; i++) {
		struct cli_output *o = &outs->o[i];
		const struct vg_stack_format *sf;
		const char *ext;

		o->arg = n_args ? args[i] : "-";
		o->path = cli_output_path(o->arg);
		ext = o->path ? cli_format_for_path(o->path) : NULL;
		if (n == 1)
			o->format = format ? format : ext ? ext : dflt;
		else if (ext && format && strcmp(ext, format) != 0)
			return cli_usage_error(cli, "--format %s contradicts -o '%s' (a %s file); with several -o, each output's format comes from its extension",
					       format, o->arg, ext);
		else if (!(o->format = ext ? ext : format ? format : !o->path ? dflt : NULL))
			return cli_usage_error(cli, "cannot tell the format of -o '%s' from its extension (.svg .pb.gz .folded .speedscope.json .json .txt); with several -o, name each file by its format",
					       o->arg);
		if (!known(o->format))
			return cli_usage_error(cli, "%s cannot write %s (-o '%s')", cli->command, o->format,
					       o->arg);
		if (!o->path && to_stdout++)
			return cli_usage_error(cli, "-o - is given twice: one output can go to standard output");
		for (size_t j = 0; j < i && o->path; j++)
			if (outs->o[j].path && strcmp(outs->o[j].path, o->path) == 0)
				return cli_usage_error(cli, "-o '%s' is given twice", o->arg);
		sf = vg_stack_format_find(o->format);
		if (sf && sf->binary && !o->path && isatty(STDOUT_FILENO))
			return cli_usage_error(cli, "%s output is binary: give -o FILE or redirect standard output",
					       sf->name);
	}
	outs->n = n;
	return 0;
}

int cli_outputs_check(struct vg_cli *cli, const struct cli_outputs *outs)
{
	struct vg_error err = { 0 };

	for (size_t i = 0; i < outs->n; i++)
		if (outs->o[i].path && vg_outfile_check(outs->o[i].path, &err) < 0)
			return cli_fail(cli, &err);
	return 0;
}

int cli_output_write(struct vg_cli *cli, const struct cli_output *o, const char *path,
		     unsigned flags, const char *what, cli_output_writer *w, void *arg)
{
	struct vg_error err = { 0 };
	struct vg_outfile of = { .fd = -1 };
	FILE *out = stdout;
	int r;

	if (path) {
		if (vg_outfile_open(&of, path, flags, &err) < 0)
			return cli_fail(cli, &err);
		out = vg_outfile_stream(&of);
		if (!out) {
			vg_outfile_abort(&of);
			return cli_out_of_memory(cli, "opening the output file");
		}
	}
	r = w(cli, out, o, arg, &err);
	if (r > 0) {
		vg_outfile_abort(&of);
		return r;
	}
	if (r < 0 && path && of.error) {
		/* The file's own errno (ENOSPC), from the commit's sentence. */
		vg_outfile_commit(&of, what, &err);
		vg_outfile_abort(&of);
		return cli_fail(cli, &err);
	}
	if (r < 0) {
		if (!err.code)
			vg_error_set(&err, r, "cannot write the %s output: %s", o->format, strerror(-r));
		vg_outfile_abort(&of);
		return cli_fail(cli, &err);
	}
	if (path && vg_outfile_commit(&of, what, &err) < 0) {
		vg_outfile_abort(&of);
		return cli_fail(cli, &err);
	}
	vg_outfile_abort(&of);
	return 0;
}
