/* cmd_read.c - `vigil read PID ADDR [LEN]`: bytes of a live process as an
 * xxd-style dump, a typed value or raw bytes, with the region they lie in and
 * the source that served them.
 *
 * Reads stream in chunks so a 1 GiB --raw read needs a few MiB of memory.  A
 * read that stops early prints what it got, then says where and why it
 * stopped: nothing is padded. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "report/read.h"
#include "sym/dwname.h"
#include "target/maps.h"
#include "target/mem.h"

const char cmd_read_usage[] =
	"usage: vigil read PID ADDR [LEN] [--as TYPE] [--raw] [--bin FILE [--force-bin]] [--json]\n"
	"\n"
	"Read LEN bytes (default 64, or the size of TYPE) at ADDR in a running process\n"
	"without stopping it.  Prints an xxd-style dump headed by the region and the\n"
	"source that served the bytes, and names ADDR by the C expression reaching it\n"
	"where DWARF allows (g_config+24 is g_config.limits.min, g_table+24 is\n"
	"g_table[1].value; a 0xHEX ADDR stays unnamed).  The sources:\n"
	"process_vm_readv, proc_pid_mem (/proc/PID/mem,\n"
	"also reads PROT_NONE pages) or image_file (the mapped file, for a private file\n"
	"mapping the process has not written).  A read that cannot complete shows what\n"
	"it read and says where it stopped; bytes are never made up.\n"
	"A long read to a file or a pipe shows its progress on stderr when that is a\n"
	"terminal.\n"
	"\n"
	"LEN: decimal or 0xHEX, with an optional k, M or G suffix (binary units).\n"
	"\n"
	CLI_TARGET_HELP
	"\n"
	"options:\n"
	"  --as TYPE       decode the bytes: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 ptr\n"
	"                  (little-endian; a LEN of several elements decodes an array,\n"
	"                  one line each), or str (up to the first NUL; LEN defaults to\n"
	"                  256 or the end of the region).  ptr says where it points.\n"
	"  --raw           write the bytes unformatted to stdout (for files and pipes)\n"
	"  --bin FILE      take @0xHEX and symbols from FILE (an unstripped copy of the\n"
	"                  running executable); refused if FILE is not that executable\n"
	"  --force-bin     use --bin FILE even when it does not match (with a warning)\n"
	"  --json          one JSON document: address, length, bytes_read, complete,\n"
	"                  source, segments[], region, hex (and as, value with --as)\n"
	"  -h, --help      this help\n"
	"\n"
	"examples:\n"
	"  vigil read 4242 0x7ffd5e8c1000 128\n"
	"  vigil read 4242 g_config --as str\n"
	"  vigil read 4242 libc.so.6:program_invocation_name --as ptr --json\n"
	"  vigil read 4242 @0x4010 8 --bin ./server.debug\n"
	"  vigil read 4242 0x7f0000000000 1G --raw > heap.bin\n";

/* Streaming unit for table and raw output: 1 MiB keeps the destination in
 * the L2 cache while the kernel copies into it (bench/read.sh, 1 GiB:
 * 6.4 GB/s at 1 MiB, 5.2 at 8 MiB, 5.5 at 256 KiB; dd: 4.0). */
#define CHUNK (1u << 20)
#define JSON_MAX_LEN (16u << 20)     /* --json and --as read whole: bounded */

struct read_opts {
	const struct vg_read_type *as;
	bool raw, force_bin;
	const char *bin_path;
	unsigned sources;
};

static unsigned parse_sources(const char *s)
{
	if (strcmp(s, "process_vm_readv") == 0)
		return VG_MEM_SRC_VM_READV;
	if (strcmp(s, "proc_pid_mem") == 0)
		return VG_MEM_SRC_PROC_MEM;
	if (strcmp(s, "image_file") == 0)
		return VG_MEM_SRC_FILE;
	return 0;
}

/* Read [addr, addr+len) chunk by chunk; sink gets each piece that was read,
 * progress (may be NULL) counts it.  Returns 0 when complete, else the read
 * error (in o->err). */
static int stream_read(struct vg_mem *mem, struct vg_read_outcome *o, unsigned char *buf,
		       size_t bufsize, void (*sink)(uint64_t, const unsigned char *, size_t, void *),
		       void *ctx, struct vg_progress *progress)
{
	vg_progress_start(progress, o->length);
	while (o->bytes_read < o->length) {
		uint64_t want = o->length - o->bytes_read;
		size_t n = want < bufsize ? (size_t)want : bufsize;
		struct vg_mem_result res;
		int r = vg_mem_read(mem, o->addr + o->bytes_read, buf, n, &res, &o->err);

		vg_read_outcome_add(o, &res);
		if (res.bytes_read && sink)
			sink(o->addr + o->bytes_read, buf, res.bytes_read, ctx);
		o->bytes_read += res.bytes_read;
		vg_progress_add(progress, res.bytes_read);
		if (r < 0)
			return r;
		/* Stop at a full disk or a closed pipe rather than read on. */
		if (sink && cli_output_failed())
			return vg_error_set(&o->err, -EIO, "stopped reading: the output could not be written");
	}
	return 0;
}

static void sink_raw(uint64_t addr, const unsigned char *buf, size_t n, void *ctx)
{
	fwrite(buf, 1, n, stdout);
}

static void sink_dump(uint64_t addr, const unsigned char *buf, size_t n, void *ctx)
{
	(void)vg_report_read_dump(stdout, addr, buf, n);
}

/* Page-aligned: the kernel copies into a destination misaligned by 16
 * bytes (what malloc returns for large blocks) at about half the speed
 * (measured with bench/read.sh). */
static unsigned char *alloc_buffer(uint64_t n)
{
	size_t size = ((size_t)n + 4095) & ~(size_t)4095;

	return aligned_alloc(4096, size ? size : 4096);
}

static int parse_args(struct vg_cli *cli, int argc, char **argv, struct read_opts *ro,
		      char **pos, int *npos)
{
	enum { OPT_AS = 256, OPT_RAW, OPT_BIN, OPT_FORCE_BIN, OPT_JSON, OPT_SOURCE };
	static const struct option opts[] = {
		{ "as", required_argument, NULL, OPT_AS },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "bin", required_argument, NULL, OPT_BIN },
		{ "force-bin", no_argument, NULL, OPT_FORCE_BIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "source", required_argument, NULL, OPT_SOURCE },  /* testing aid */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	*npos = 0;
	/* Leading '-' keeps positionals in order among options (ADDR may
	 * follow --as), and lets "-5" reach the PID check. */
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (*npos == 3)
				return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil read PID ADDR [LEN]", optarg);
			pos[(*npos)++] = optarg;
			break;
		case OPT_AS:
			ro->as = vg_read_type_find(optarg);
			if (!ro->as)
				return cli_usage_error(cli, "unknown type '%s' for --as: expected u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 ptr str", optarg);
			break;
		case OPT_RAW:
			ro->raw = true;
			break;
		case OPT_BIN:
			ro->bin_path = optarg;
			break;
		case OPT_FORCE_BIN:
			ro->force_bin = true;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_SOURCE:
			ro->sources = parse_sources(optarg);
			if (!ro->sources)
				return cli_usage_error(cli, "unknown --source '%s': expected process_vm_readv, proc_pid_mem or image_file", optarg);
			break;
		case 'h':
			fputs(cmd_read_usage, stdout);
			return -1;
		default:
			return cli_bad_option(cli, argv[optind - 1]);
		}
	}
	/* After "--" everything is positional (an ADDR may start with '-'). */
	for (; optind < argc; optind++) {
		if (*npos == 3)
			return cli_usage_error(cli, "unexpected argument '%s'; usage: vigil read PID ADDR [LEN]", argv[optind]);
		pos[(*npos)++] = argv[optind];
	}
	if (*npos < 2)
		return cli_usage_error(cli, "expected PID and ADDR; usage: vigil read PID ADDR [LEN]");
	if (ro->raw && (cli->json || ro->as))
		return cli_usage_error(cli, "--raw cannot be combined with --json or --as");
	if (ro->force_bin && !ro->bin_path)
		return cli_usage_error(cli, "--force-bin needs --bin FILE");
	return 0;
}

static int check_length(struct vg_cli *cli, const char *arg, const struct read_opts *ro,
			uint64_t *len)
{
	int r;

	if (!arg) {
		*len = ro->as ? ro->as->size : 64;
		return 0;
	}
	r = vg_parse_u64(arg, 1, len);
	if (r < 0 || *len == 0)
		return cli_usage_error(cli, "invalid length '%s': expected a positive number (decimal, 0xHEX, k/M/G suffix)", arg);
	if (ro->as && ro->as->kind != VG_READ_STR && *len < ro->as->size)
		return cli_usage_error(cli, "length %" PRIu64 " is shorter than --as %s (%zu bytes)",
				       *len, ro->as->name, ro->as->size);
	if ((cli->json || ro->as) && *len > JSON_MAX_LEN)
		return cli_usage_error(cli, "length %" PRIu64 " is too large for %s (at most %u bytes); use --raw or a plain dump",
				       *len, cli->json ? "--json" : "--as", JSON_MAX_LEN);
	return 0;
}

/* Identity without the path: the snapshot's names may have been settled by
 * PROCMAP_QUERY (vg_maps_load), the fresh table's are plainly decoded. */
static bool same_region(const struct vg_region *a, const struct vg_region *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->perms, b->perms) == 0;
}

/* Bytes are only as good as the mapping they came from: a region unmapped
 * or replaced while we read may have served another object's bytes (or
 * none).  Compare every region the read spanned with a fresh table; false
 * (with a warning) if one changed.  An unmap and remap of the very same
 * region between the two looks remain invisible. */
static bool mapping_stable(struct vg_cli *cli, const struct vg_maps *before,
			   const struct vg_read_outcome *o)
{
	struct vg_maps *now = NULL;
	uint64_t at = o->addr, end = o->addr + o->bytes_read;
	bool stable = true;

	if (o->bytes_read == 0 || vg_maps_read(cli->target->mm_pid, &now, NULL) < 0) {
		vg_maps_free(now);
		return true;  /* gone: the read's own error says so */
	}
	while (at < end && stable) {
		const struct vg_region *was = vg_maps_find(before, at);
		const struct vg_region *is = vg_maps_find(now, at);

		stable = was && is && same_region(was, is);
		if (!stable)
			vg_target_warn(cli->target, "the mapping at 0x%" PRIx64 " changed while it was read (unmapped or replaced): the bytes from there on may not come from '%s'",
				       at, was && was->path[0] ? was->path : "the region shown");
		else
			at = was->end;
	}
	vg_maps_free(now);
	return stable;
}

int cmd_read(struct vg_cli *cli, int argc, char **argv)
{
	struct read_opts ro = { 0 };
	struct vg_read_outcome o = { 0 };
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	struct vg_image *bin = NULL;
	const struct vg_region *region;
	const char *bin_match = NULL;
	struct vg_addr a;
	struct vg_read_view v;
	struct vg_progress progress;
	struct vg_dwnamer *namer = NULL;
	char expression[512];
	unsigned char *buf = NULL;
	char *pos[3] = { NULL, NULL, NULL };
	int npos, r, rr = 0;

	r = parse_args(cli, argc, argv, &ro, pos, &npos);
	if (r)
		return r < 0 ? 0 : r;
	/* Validate every argument before touching the target. */
	r = check_length(cli, pos[2], &ro, &o.length);
	if (r)
		return r;
	r = cli_open_target(cli, pos[0], &maps, &mem);
	if (r)
		goto out;
	if (ro.sources)
		vg_mem_set_sources(mem, ro.sources);
	if (!(pos[1][0] == '0' && (pos[1][1] == 'x' || pos[1][1] == 'X')) || ro.bin_path) {
		r = cli_load_images(cli, ro.bin_path, ro.force_bin, maps, mem, &imgs, &bin, &bin_match);
		if (r)
			goto out;
	}
	if (vg_addr_parse(pos[1], imgs, bin, &a, &err) < 0) {
		r = cli_fail(cli, &err);
		goto out;
	}
	o.addr = a.runtime;
	if (a.n_definitions > 1)
		vg_target_warn(cli->target, "'%s' is defined in %u images; this is the one in '%s' (main executable first, then address order); IMAGE:%s names another",
			       a.symbol, a.n_definitions, a.image->path, a.symbol);
	if (maps->n == 0) {
		vg_error_set(&err, -EFAULT, "pid %d has no user memory (a kernel thread)",
			     (int)cli->target->pid);
		r = cli_fail(cli, &err);
		goto out;
	}
	region = vg_maps_find(maps, o.addr);
	if (!region) {
		vg_error_set(&err, -EFAULT, "address 0x%" PRIx64 " is not mapped in pid %d; 'vigil maps %d' lists the regions",
			     o.addr, (int)cli->target->pid, (int)cli->target->pid);
		r = cli_fail(cli, &err);
		goto out;
	}
	if (__builtin_add_overflow(o.addr, o.length, &(uint64_t){ 0 })) {
		r = cli_usage_error(cli, "address 0x%" PRIx64 " + length %" PRIu64 " overflows",
				    o.addr, o.length);
		goto out;
	}

	/* A string with no LEN stops at the end of its region, not in the
	 * unmapped page after it. */
	if (ro.as && ro.as->kind == VG_READ_STR && !pos[2] && o.length > region->end - o.addr)
		o.length = region->end - o.addr;

	if (cli->json || ro.as) {
		/* Decoding and JSON need the whole range (bounded by check_length). */
		buf = alloc_buffer(o.length);
		if (!buf) {
			r = cli_out_of_memory(cli, "for the read buffer");
			goto out;
		}
		rr = stream_read(mem, &o, buf, (size_t)o.length, NULL, NULL, NULL);
	}
	v = (struct vg_read_view){ .o = &o, .addr = &a, .region = region, .maps = maps,
				   .as = ro.as, .bytes = buf, .bin_match = bin_match };
	/* The expression needs the image that resolved ADDR: a 0xHEX read
	 * loads no images and stays unnamed. */
	if (a.image) {
		char root[64];

		snprintf(root, sizeof(root), "/proc/%d/root", (int)cli->target->mm_pid);
		namer = vg_dwnamer_new(root);
		if (vg_dwnamer_name(namer, a.image, o.addr - a.image->bias, o.length, expression,
				    sizeof(expression)) == 1)
			v.expression = expression;
	}
	if (cli->json) {
		cJSON *doc;

		/* Before the header is built: a changed mapping is its warning. */
		v.mapping_stable = mapping_stable(cli, maps, &o);
		doc = vg_report_read_json(cli->target, &v);
		r = doc ? cli_print_json(doc) : cli_out_of_memory(cli, "building the JSON report");
		if (rr < 0)
			r = o.err.exit;
		goto out;
	}
	if (ro.raw) {
		size_t bufsize = o.length < CHUNK ? (size_t)o.length : CHUNK;

		buf = alloc_buffer(bufsize);
		if (!buf) {
			r = cli_out_of_memory(cli, "for the read buffer");
			goto out;
		}
		/* A large --raw read to a file or a pipe shows its progress. */
		rr = stream_read(mem, &o, buf, bufsize, sink_raw, NULL,
				 cli_progress(&progress, isatty(STDOUT_FILENO), "read"));
		cli_progress_done(&progress);
		/* On stderr: stdout has the bytes.  After an error, only its line. */
		if (rr == 0) {
			mapping_stable(cli, maps, &o);
			cli_print_target_notes(cli->target);
		}
	} else {
		/* A failed write shows in cli_output_failed (stream_read, the
		 * end): the parts' own results would add nothing. */
		(void)vg_report_read_header(stdout, cli->target, &v);
		if (ro.as) {
			(void)vg_report_read_values(stdout, &v);
		} else {
			size_t bufsize = o.length < CHUNK ? (size_t)o.length : CHUNK;

			buf = alloc_buffer(bufsize);
			if (!buf) {
				r = cli_out_of_memory(cli, "for the read buffer");
				goto out;
			}
			rr = stream_read(mem, &o, buf, bufsize, sink_dump, NULL,
					 cli_progress(&progress, isatty(STDOUT_FILENO), "read"));
			cli_progress_done(&progress);
		}
		(void)vg_report_read_footer(stdout, &o);
		if (rr == 0) {  /* after an error, only its line */
			mapping_stable(cli, maps, &o);
			cli_print_target_notes(cli->target);
		}
	}
	if (rr < 0) {
		fflush(stdout);
		/* A failed write was reported where it happened. */
		if (!cli_output_failed())
			fprintf(stderr, "vigil: error: %s (read %" PRIu64 " of %" PRIu64 " bytes from 0x%" PRIx64 ")\n",
				o.err.msg, o.bytes_read, o.length, o.addr);
		r = o.err.exit ? (int)o.err.exit : VG_EXIT_RUNTIME;
		if (cli_output_failed())
			r = VG_EXIT_RUNTIME;  /* the write failure is what was reported */
	}
out:
	free(buf);
	vg_dwnamer_free(namer);
	vg_image_free(bin);
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
