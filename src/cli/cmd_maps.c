/* cmd_maps.c - `vigil maps PID`: every region of the process and, per ELF
 * image, its build-id, load bias and how the bias was derived. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/image.h"
#include "report/json.h"
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

static cJSON *images_json(const struct vg_images *imgs)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		cJSON *o = cJSON_CreateObject();
		char bid[160];

		vg_json_add_text(o, "path", img->path);
		cJSON_AddStringToObject(o, "build_id", vg_image_build_id_hex(img, bid, sizeof(bid)));
		vg_json_add_addr(o, "load_bias", img->bias);
		cJSON_AddStringToObject(o, "bias_method", vg_bias_method_name(img->bias_method));
		cJSON_AddStringToObject(o, "open_via", vg_image_via_name(img->via));
		vg_json_add_text(o, "opened_path", img->open_path);
		cJSON_AddBoolToObject(o, "is_main", img->is_main);
		cJSON_AddBoolToObject(o, "deleted", img->deleted);
		cJSON_AddStringToObject(o, "elf_type", img->e_type == 2 ? "exec" : "dyn");
		vg_json_add_addr(o, "low", img->lo);
		vg_json_add_addr(o, "high", img->hi);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The document with the regions streamed, one compact line each, instead of
 * a tree of them all: 10,000 regions would touch ~16 MB of nodes
 * (bench/maps.sh).  cJSON still writes every value; the framing around
 * the regions is the only text written here. */
static int print_json(struct vg_cli *cli, const struct vg_maps *maps,
		      const struct vg_images *imgs, const char *method)
{
	cJSON *doc = vg_json_report_new("maps", cli->target);
	char line[8192], *head;
	size_t n;

	if (!doc)
		return cli_out_of_memory(cli, "building the JSON report");
	cJSON_AddStringToObject(doc, "maps_source", method);
	cJSON_AddNumberToObject(doc, "region_count", (double)maps->n);
	cJSON_AddItemToObject(doc, "images", images_json(imgs));
	head = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!head)
		return cli_out_of_memory(cli, "building the JSON report");
	/* cJSON ends the object with "\n}": the regions go before that. */
	n = strlen(head);
	while (n && (head[n - 1] == '}' || head[n - 1] == '\n'))
		n--;
	fwrite(head, 1, n, stdout);
	cJSON_free(head);
	fputs(",\n\t\"regions\":\t[", stdout);
	for (size_t i = 0; i < maps->n && !cli_output_failed(); i++) {
		cJSON *o = vg_json_region(&maps->regions[i]);
		char *big = NULL;

		fputs(i ? ",\n\t\t" : "\n\t\t", stdout);
		if (o && cJSON_PrintPreallocated(o, line, sizeof(line), false))
			fputs(line, stdout);
		else if (o && (big = cJSON_PrintUnformatted(o)))  /* a very long path */
			fputs(big, stdout);
		else {
			cJSON_Delete(o);
			return cli_out_of_memory(cli, "printing a region");
		}
		cJSON_free(big);
		cJSON_Delete(o);
	}
	fputs(maps->n ? "\n\t]\n}\n" : "]\n}\n", stdout);
	return 0;
}

static void print_table(const struct vg_target *t, const struct vg_maps *maps,
			const struct vg_images *imgs, const char *method)
{
	printf("pid %d (", (int)t->pid);
	cli_put_text(stdout, t->comm);
	printf("): %zu regions, %zu ELF images (maps via %s)\n", maps->n, imgs->n, method);
	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];

		printf("%012" PRIx64 "-%012" PRIx64 " %s %08" PRIx64 " %02x:%02x %-8" PRIu64 " ",
		       r->start, r->end, r->perms, r->offset, r->dev_major,
		       r->dev_minor, r->inode);
		cli_put_path(stdout, r->path, r->deleted);
		fputc('\n', stdout);
	}
	printf("\nimages:\n");
	for (size_t i = 0; i < imgs->n; i++) {
		const struct vg_image *img = imgs->images[i];
		char bid[160];

		vg_image_build_id_hex(img, bid, sizeof(bid));
		fputs("  ", stdout);
		cli_put_path(stdout, img->path, img->deleted);
		printf("%s  bias 0x%" PRIx64 " (%s)  build-id %s  via %s\n",
		       img->is_main ? " [main]" : "",
		       img->bias, vg_bias_method_name(img->bias_method),
		       bid[0] ? bid : "none", vg_image_via_name(img->via));
	}
}

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
		r = print_json(cli, maps, imgs, method);
	} else {
		print_table(cli->target, maps, imgs, method);
		cli_print_target_notes(cli->target);
	}
out:
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
