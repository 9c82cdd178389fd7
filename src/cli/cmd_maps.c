/* cmd_maps.c - `vigil maps PID`: every region of the process and, per ELF
 * image, its build-id, load bias and how the bias was derived. */
#include <getopt.h>

#include "cli/cli.h"
#include "elf/image.h"
#include "report/maps.h"
#include "target/maps.h"
#include "target/mem.h"

const char cmd_maps_usage[] =
	"usage: vigil maps PID [--json]\n"
	"\n"
	"List the memory regions of a running process (as /proc/PID/maps, with paths\n"
	"decoded: escaped newlines, ' (deleted)' stripped into a flag) and one line per\n"
	"mapped ELF image: build-id, load bias (runtime = static + bias) and how the bias\n"
	"was derived: 'exact' (the kernel's own PT_LOAD relation) or 'heuristic'.\n"
	"The process is not stopped.\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"options:\n"
	"  --json      one JSON document: regions[] and images[]\n"
	"  -h, --help  this help\n"
	"\n"
	"environment:\n"
	"  VIGIL_MAPS_SOURCE=query  walk the regions with the PROCMAP_QUERY ioctl\n"
	"                           (Linux 6.11+) instead of reading the text\n"
	"  VIGIL_MAPS_SOURCE=text   the text alone, without the ioctl that settles\n"
	"                           names the text cannot say exactly (a '\\012')\n"
	"\n"
	"examples:\n"
	"  vigil maps 4242\n"
	"  vigil maps 4242 --json | jq '.images[] | {path, load_bias}'\n";

int cmd_maps(struct vg_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	const char *method = "text";
	const char *pid_arg = NULL;
	int c, r, npos = 0;

	opterr = 0;
	/* Leading '-': options may follow the PID, and "-5" reaches the PID check. */
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (npos++ == 0)
				pid_arg = optarg;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			fputs(cmd_maps_usage, stdout);
			return 0;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++)  /* after "--" */
		if (npos++ == 0)
			pid_arg = argv[optind];
	if (npos != 1)
		return cli_usage_error(cli, "expected exactly one PID; usage: vigil maps PID [--json]");
	r = cli_attach(cli, pid_arg);
	if (r)
		return r;
	r = cli_load_maps(cli, &maps, &method);
	if (r)
		goto out;
	if (maps->n == 0)
		vg_target_warn(cli->target, "pid %d is a kernel thread: it has no user memory",
			       (int)cli->target->pid);
	if (vg_mem_open(cli->target, maps, &mem, &err) < 0 ||
	    vg_images_load(cli->target, maps, mem, &imgs, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	if (cli->json) {
		r = vg_report_maps_json(stdout, cli->target, maps, imgs, method, &err);
		/* A failed write is said once, in cli_output_failed's words. */
		if (r < 0)
			r = cli_output_failed() ? VG_EXIT_RUNTIME : cli_fail(cli, &err);
	} else {
		/* A failed write is reported by cli_finish_output, after the
		 * notes: stdout is checked once, at the end. */
		(void)vg_report_maps_table(stdout, cli->target, maps, imgs, method);
		cli_print_target_notes(cli->target);
	}
out:
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
