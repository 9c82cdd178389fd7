/* cmd_read.c - `vigil read PID ADDR [LEN]`: bytes of a live process as an
 * xxd-style dump, a typed value or raw bytes, with the region they lie in and
 * the source that served them.
 *
 * Reads stream in chunks so a 1 GiB --raw read needs a few MiB of memory.  A
 * read that stops early prints what it got, then says where and why it
 * stopped: nothing is padded. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "elf/addrspec.h"
#include "elf/image.h"
#include "report/json.h"
#include "target/maps.h"
#include "target/mem.h"

const char cmd_read_usage[] =
	"usage: vigil read PID ADDR [LEN] [--as TYPE] [--raw] [--bin FILE [--force-bin]] [--json]\n"
	"\n"
	"Read LEN bytes (default 64, or the size of TYPE) at ADDR in a running process\n"
	"without stopping it.  Prints an xxd-style dump headed by the region and the\n"
	"source that served the bytes: process_vm_readv, proc_pid_mem (/proc/PID/mem,\n"
	"also reads PROT_NONE pages) or image_file (the mapped file, for a private file\n"
	"mapping the process has not written).  A read that cannot complete shows what\n"
	"it read and says where it stopped; bytes are never made up.\n"
	"\n"
	"LEN: decimal or 0xHEX, with an optional k, M or G suffix (binary units).\n"
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

enum value_kind { V_UNSIGNED, V_SIGNED, V_FLOAT, V_PTR, V_STR };

struct value_type {
	const char *name;
	size_t size;
	enum value_kind kind;
};

static const struct value_type value_types[] = {
	{ "u8", 1, V_UNSIGNED }, { "u16", 2, V_UNSIGNED }, { "u32", 4, V_UNSIGNED },
	{ "u64", 8, V_UNSIGNED }, { "i8", 1, V_SIGNED }, { "i16", 2, V_SIGNED },
	{ "i32", 4, V_SIGNED }, { "i64", 8, V_SIGNED }, { "f32", 4, V_FLOAT },
	{ "f64", 8, V_FLOAT }, { "ptr", 8, V_PTR }, { "str", 256, V_STR },
};

/* Streaming unit for table and raw output: 1 MiB keeps the destination in
 * the L2 cache while the kernel copies into it (bench/read.sh, 1 GiB:
 * 6.4 GB/s at 1 MiB, 5.2 at 8 MiB, 5.5 at 256 KiB; dd: 4.0). */
#define CHUNK (1u << 20)
#define JSON_MAX_LEN (16u << 20)     /* --json and --as read whole: bounded */

struct read_opts {
	const struct value_type *as;
	bool raw, force_bin;
	const char *bin_path;
	unsigned sources;
};

/* What one read produced, accumulated over chunks. */
struct read_outcome {
	uint64_t addr;
	uint64_t length;
	uint64_t bytes_read;
	struct vg_mem_segment seg[VG_MEM_MAX_SEGMENTS];
	size_t n_seg;
	struct vg_error err;
};

static const struct value_type *find_type(const char *name)
{
	for (size_t i = 0; i < sizeof(value_types) / sizeof(value_types[0]); i++)
		if (strcmp(value_types[i].name, name) == 0)
			return &value_types[i];
	return NULL;
}

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

static void add_segments(struct read_outcome *o, const struct vg_mem_result *res)
{
	for (size_t i = 0; i < res->n_seg; i++) {
		struct vg_mem_segment *last = o->n_seg ? &o->seg[o->n_seg - 1] : NULL;

		if (last && last->source == res->seg[i].source &&
		    last->addr + last->len == res->seg[i].addr) {
			last->len += res->seg[i].len;
		} else if (o->n_seg < VG_MEM_MAX_SEGMENTS) {
			o->seg[o->n_seg++] = res->seg[i];
		} else {
			last->len = res->seg[i].addr + res->seg[i].len - last->addr;
		}
	}
}

static const char *source_summary(const struct read_outcome *o)
{
	if (o->n_seg == 0)
		return "none";
	for (size_t i = 1; i < o->n_seg; i++)
		if (o->seg[i].source != o->seg[0].source)
			return "mixed";
	return vg_mem_source_name(o->seg[0].source);
}

static void dump_lines(uint64_t addr, const unsigned char *buf, size_t n)
{
	for (size_t off = 0; off < n; off += 16) {
		size_t k = n - off < 16 ? n - off : 16;
		char hex[48], asc[17];
		size_t h = 0;

		for (size_t i = 0; i < 16; i++) {
			if (i < k)
				h += (size_t)snprintf(hex + h, sizeof(hex) - h, "%02x", buf[off + i]);
			else
				h += (size_t)snprintf(hex + h, sizeof(hex) - h, "  ");
			if (i % 2 == 1 && i != 15)
				hex[h++] = ' ';
			asc[i] = i < k ? (isprint(buf[off + i]) ? (char)buf[off + i] : '.') : '\0';
		}
		hex[h] = '\0';
		asc[k] = '\0';
		printf("0x%012" PRIx64 ": %s  %s\n", addr + off, hex, asc);
	}
}

/* Read [addr, addr+len) chunk by chunk; sink gets each piece that was read.
 * Returns 0 when complete, else the read error (in o->err). */
static int stream_read(struct vg_mem *mem, struct read_outcome *o, unsigned char *buf,
		       size_t bufsize, void (*sink)(uint64_t, const unsigned char *, size_t, void *),
		       void *ctx)
{
	while (o->bytes_read < o->length) {
		uint64_t want = o->length - o->bytes_read;
		size_t n = want < bufsize ? (size_t)want : bufsize;
		struct vg_mem_result res;
		int r = vg_mem_read(mem, o->addr + o->bytes_read, buf, n, &res, &o->err);

		add_segments(o, &res);
		if (res.bytes_read && sink)
			sink(o->addr + o->bytes_read, buf, res.bytes_read, ctx);
		o->bytes_read += res.bytes_read;
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
	dump_lines(addr, buf, n);
}

/* Page-aligned: the kernel copies into a destination misaligned by 16
 * bytes (what malloc returns for large blocks) at about half the speed
 * (measured with bench/read.sh). */
static unsigned char *alloc_buffer(uint64_t n)
{
	size_t size = ((size_t)n + 4095) & ~(size_t)4095;

	return aligned_alloc(4096, size ? size : 4096);
}

static uint64_t load_le(const unsigned char *p, size_t size)
{
	uint64_t v = 0;

	for (size_t i = size; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static int64_t sign_extend(uint64_t v, size_t size)
{
	unsigned shift = (unsigned)(64 - 8 * size);

	return (int64_t)(v << shift) >> shift;
}

/* The string up to the first NUL, non-printable bytes as \xNN. */
static char *printable_string(const unsigned char *p, size_t n, bool *terminated)
{
	char *s = malloc(4 * n + 1);
	size_t j = 0;

	*terminated = false;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\0') {
			*terminated = true;
			break;
		}
		if (isprint(p[i]) && p[i] != '\\' && p[i] != '"')
			s[j++] = (char)p[i];
		else
			j += (size_t)sprintf(s + j, "\\x%02x", p[i]);
	}
	s[j] = '\0';
	return s;
}

/* One element of an --as array as text. */
static void element_text(const struct value_type *t, const unsigned char *p,
			 char *text, size_t size)
{
	uint64_t v = load_le(p, t->size);

	switch (t->kind) {
	case V_UNSIGNED:
		snprintf(text, size, "%" PRIu64, v);
		break;
	case V_SIGNED:
		snprintf(text, size, "%" PRId64, sign_extend(v, t->size));
		break;
	case V_FLOAT:
		if (t->size == 4) {
			float f;

			memcpy(&f, p, 4);
			snprintf(text, size, "%.9g", (double)f);
		} else {
			double d;

			memcpy(&d, p, 8);
			snprintf(text, size, "%.17g", d);
		}
		break;
	case V_PTR:
	case V_STR:
		snprintf(text, size, "0x%" PRIx64, v);
		break;
	}
}

static cJSON *element_json(const struct value_type *t, const unsigned char *p)
{
	char text[64];

	element_text(t, p, text, sizeof(text));
	/* 64-bit integers do not survive a JSON double: strings. */
	if (t->size == 8 && t->kind != V_FLOAT)
		return cJSON_CreateString(text);
	/* Floats as printed with round-trip precision (cJSON would cut them
	 * to 15 digits); JSON has no inf or nan: those are strings. */
	if (t->kind == V_FLOAT)
		return isfinite(strtod(text, NULL)) ? cJSON_CreateRaw(text) : cJSON_CreateString(text);
	return cJSON_CreateNumber(strtod(text, NULL));
}

/* Where a pointer value points, as "rw-p [heap]", or NULL if unmapped. */
static const char *pointee(const struct vg_maps *maps, uint64_t v, char *buf, size_t size)
{
	const struct vg_region *r = vg_maps_find(maps, v);

	if (!r)
		return NULL;
	snprintf(buf, size, "%s %s", r->perms, r->path[0] ? r->path : vg_region_kind_name(r->kind));
	return buf;
}

/* The decoded values of n bytes: "value" (the first element or the
 * string), "values" when LEN holds more than one element. */
static void values_json(cJSON *doc, const struct value_type *t, const unsigned char *p,
			size_t n, const struct vg_maps *maps)
{
	size_t count = t->kind == V_STR ? 0 : n / t->size;
	char where[4200];

	cJSON_AddStringToObject(doc, "as", t->name);
	if (t->kind == V_STR) {
		size_t len = strnlen((const char *)p, n);
		char *str = strndup((const char *)p, len);

		/* UTF-8 stays readable; invalid bytes are escaped, value_hex
		 * then has them exactly. */
		vg_json_add_text(doc, "value", str ? str : "");
		cJSON_AddBoolToObject(doc, "nul_terminated", len < n);
		free(str);
		return;
	}
	if (count == 0) {
		cJSON_AddNullToObject(doc, "value");
		return;
	}
	cJSON_AddItemToObject(doc, "value", element_json(t, p));
	if (t->kind == V_PTR && pointee(maps, load_le(p, 8), where, sizeof(where)))
		vg_json_add_text(doc, "points_to", where);
	if (count > 1) {
		cJSON *arr = cJSON_AddArrayToObject(doc, "values");

		for (size_t i = 0; arr && i < count; i++)
			cJSON_AddItemToArray(arr, element_json(t, p + i * t->size));
	}
	if (n % t->size)
		cJSON_AddNumberToObject(doc, "undecoded_bytes", (double)(n % t->size));
}

/* Table form: one line per element, "ADDR  TYPE[i]  VALUE". */
static void values_print(const struct value_type *t, uint64_t addr, const unsigned char *p,
			 size_t n, const struct vg_maps *maps)
{
	char text[64], where[4200];

	if (t->kind == V_STR) {
		bool term;
		char *str = printable_string(p, n, &term);

		printf("0x%012" PRIx64 "  str  \"%s\"%s\n", addr, str ? str : "",
		       term ? "" : "  (no NUL within the length read)");
		free(str);
		return;
	}
	for (size_t i = 0; i + t->size <= n; i++) {
		if (i % t->size)
			continue;
		element_text(t, p + i, text, sizeof(text));
		if (n >= 2 * t->size)
			printf("0x%012" PRIx64 "  %s[%zu]  %s", addr + i, t->name, i / t->size, text);
		else
			printf("0x%012" PRIx64 "  %s  %s", addr + i, t->name, text);
		if (t->kind == V_PTR) {
			uint64_t v = load_le(p + i, 8);

			if (pointee(maps, v, where, sizeof(where))) {
				fputs("  -> ", stdout);
				cli_put_text(stdout, where);
			}
			else if (v)
				printf("  -> not mapped");
		}
		printf("\n");
	}
	if (n % t->size)
		printf("# %zu trailing bytes do not make a whole %s\n", n % t->size, t->name);
}

static cJSON *segments_json(const struct read_outcome *o)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < o->n_seg; i++) {
		cJSON *s = cJSON_CreateObject();

		vg_json_add_addr(s, "address", o->seg[i].addr);
		cJSON_AddNumberToObject(s, "length", (double)o->seg[i].len);
		cJSON_AddStringToObject(s, "source", vg_mem_source_name(o->seg[i].source));
		cJSON_AddItemToArray(arr, s);
	}
	return arr;
}

static void print_header(const struct vg_target *t, const struct read_outcome *o,
			 const struct vg_addr *a, const struct vg_region *region)
{
	printf("# pid %d: %" PRIu64 " byte%s at 0x%" PRIx64, (int)t->pid, o->length,
	       o->length == 1 ? "" : "s", o->addr);
	if (a->symbol) {
		fputs(" (", stdout);
		cli_put_text(stdout, a->symbol);  /* a name from the target's ELF */
		if (a->symbol_offset)
			printf("+%" PRIu64, a->symbol_offset);
		fputc(')', stdout);
	}
	printf(" in %s 0x%" PRIx64 "-0x%" PRIx64 " ", region->perms, region->start, region->end);
	if (region->path[0])
		cli_put_path(stdout, region->path, region->deleted);
	else
		fputs(vg_region_kind_name(region->kind), stdout);
	fputc('\n', stdout);
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
			ro->as = find_type(optarg);
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
	if (ro->as && ro->as->kind != V_STR && *len < ro->as->size)
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
			   const struct read_outcome *o)
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

static int print_json(struct vg_cli *cli, const struct read_opts *ro,
		      const struct read_outcome *o, const struct vg_addr *a,
		      const struct vg_region *region, const struct vg_maps *maps,
		      const unsigned char *buf, const char *bin_match, bool stable)
{
	cJSON *doc = vg_json_report_new("read", cli->target);
	char *hex = vg_hex_string(buf, (size_t)o->bytes_read);

	if (!doc || !hex) {
		cJSON_Delete(doc);
		free(hex);
		return cli_out_of_memory(cli, "building the JSON report");
	}
	vg_json_add_addr(doc, "address", o->addr);
	cJSON_AddNumberToObject(doc, "length", (double)o->length);
	cJSON_AddNumberToObject(doc, "bytes_read", (double)o->bytes_read);
	cJSON_AddBoolToObject(doc, "complete", o->bytes_read == o->length);
	cJSON_AddBoolToObject(doc, "mapping_stable", stable);
	cJSON_AddStringToObject(doc, "source", source_summary(o));
	cJSON_AddItemToObject(doc, "segments", segments_json(o));
	cJSON_AddItemToObject(doc, "region", vg_json_region(region));
	if (a->symbol) {
		vg_json_add_text(doc, "symbol", a->symbol);
		cJSON_AddNumberToObject(doc, "symbol_offset", (double)a->symbol_offset);
	}
	if (a->image)
		vg_json_add_text(doc, "image", a->image->path);
	if (bin_match)
		cJSON_AddStringToObject(doc, "binary_match", bin_match);
	cJSON_AddStringToObject(doc, "hex", hex);
	free(hex);
	if (ro->as)
		values_json(doc, ro->as, buf, (size_t)o->bytes_read, maps);
	if (o->err.code) {
		cJSON *e = cJSON_AddObjectToObject(doc, "error");

		vg_json_add_text(e, "message", o->err.msg);
		cJSON_AddNumberToObject(e, "errno", -o->err.code);
		cJSON_AddNumberToObject(e, "exit_code", o->err.exit);
	}
	return cli_print_json(doc);
}

int cmd_read(struct vg_cli *cli, int argc, char **argv)
{
	struct read_opts ro = { 0 };
	struct read_outcome o = { 0 };
	struct vg_error err = { 0 };
	struct vg_maps *maps = NULL;
	struct vg_mem *mem = NULL;
	struct vg_images *imgs = NULL;
	struct vg_image *bin = NULL;
	const struct vg_region *region;
	const char *bin_match = NULL;
	struct vg_addr a;
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
	if (ro.as && ro.as->kind == V_STR && !pos[2] && o.length > region->end - o.addr)
		o.length = region->end - o.addr;

	if (cli->json || ro.as) {
		/* Decoding and JSON need the whole range (bounded by check_length). */
		buf = alloc_buffer(o.length);
		if (!buf) {
			r = cli_out_of_memory(cli, "for the read buffer");
			goto out;
		}
		rr = stream_read(mem, &o, buf, (size_t)o.length, NULL, NULL);
	}
	if (cli->json) {
		r = print_json(cli, &ro, &o, &a, region, maps, buf, bin_match,
			       mapping_stable(cli, maps, &o));
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
		rr = stream_read(mem, &o, buf, bufsize, sink_raw, NULL);
		/* On stderr: stdout has the bytes.  After an error, only its line. */
		if (rr == 0) {
			mapping_stable(cli, maps, &o);
			cli_print_target_notes(cli->target);
		}
	} else {
		print_header(cli->target, &o, &a, region);
		if (ro.as) {
			values_print(ro.as, o.addr, buf, (size_t)o.bytes_read, maps);
		} else {
			size_t bufsize = o.length < CHUNK ? (size_t)o.length : CHUNK;

			buf = alloc_buffer(bufsize);
			if (!buf) {
				r = cli_out_of_memory(cli, "for the read buffer");
				goto out;
			}
			rr = stream_read(mem, &o, buf, bufsize, sink_dump, NULL);
		}
		printf("# %" PRIu64 " of %" PRIu64 " byte%s via %s\n", o.bytes_read,
		       o.length, o.length == 1 ? "" : "s", source_summary(&o));
		for (size_t i = 0; o.n_seg > 1 && i < o.n_seg; i++)
			printf("#   0x%" PRIx64 " +%zu via %s\n", o.seg[i].addr, o.seg[i].len,
			       vg_mem_source_name(o.seg[i].source));
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
	vg_image_free(bin);
	vg_images_free(imgs);
	vg_mem_free(mem);
	vg_maps_free(maps);
	return r;
}
