/* pprof.c - profile.proto through protobuf-c, gzipped through zlib.
 *
 * The message is built in memory with ids that pprof insists on: string 0
 * is "", every Mapping, Location and Function id is nonzero and unique,
 * every Location a sample names exists.  The trie's string table is reused
 * as is (its id 0 is "" already, and its ids become pprof's indices); the
 * few strings only pprof needs are appended after it.  Everything
 * allocated for the message goes through one list and is freed at the end,
 * so the error paths are one path. */
#include "report/pprof.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/profile.pb-c.h"
#include "util/vec.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

struct builder {
	const struct vg_stacks *s;
	const struct vg_stacks_meta *meta;
	pb_profile p;
	void **allocs;          /* everything below, freed together */
	size_t n_allocs, cap_allocs;
	char **strings;         /* the trie's, then the extras */
	size_t n_strings, cap_strings;
	uint64_t *fn_keys;      /* (name << 32 | file) + 1, 0 empty */
	uint32_t *fn_ids;
	size_t fn_cap;
	uint64_t *loc_of_group; /* frame id of a depth-0 frame -> location id */
	uint64_t kernel_mapping, unknown_mapping; /* ids, 0 unused */
	uint64_t *image_mapping;  /* image id -> mapping id */
};

static void *zalloc(struct builder *b, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	if (VG_GROW(b->allocs, b->cap_allocs, b->n_allocs + 1) < 0 ||
	    !(p = calloc(n, size)))
		return NULL;
	b->allocs[b->n_allocs++] = p;
	return p;
}

/* Index of an extra string (linear: there are a dozen); -1 on ENOMEM. */
static int64_t str_id(struct builder *b, const char *str)
{
	size_t trie = vg_stacks_n_strings(b->s);
	char *copy;

	for (size_t i = trie; i < b->n_strings; i++)
		if (strcmp(b->strings[i], str) == 0)
			return (int64_t)i;
	if (VG_GROW(b->strings, b->cap_strings, b->n_strings + 1) < 0 ||
	    !(copy = zalloc(b, strlen(str) + 1, 1)))
		return -1;
	memcpy(copy, str, strlen(str));
	b->strings[b->n_strings] = copy;
	return (int64_t)b->n_strings++;
}

static pb_value_type *value_type(struct builder *b, const char *type,
				 const char *unit)
{
	pb_value_type *vt = zalloc(b, 1, sizeof(*vt));
	int64_t t = str_id(b, type), u = str_id(b, unit);

	if (!vt || t < 0 || u < 0)
		return NULL;
	perftools__profiles__value_type__init(vt);
	vt->type = t;
	vt->unit = u;
	return vt;
}

/* The Function id of (name, file), created on first use. */
static uint64_t function_id(struct builder *b, uint32_t name, uint32_t file)
{
	uint64_t key = ((uint64_t)name << 32 | file) + 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 20) & (b->fn_cap - 1);
	pb_function *fn;

	for (; b->fn_keys[i]; i = (i + 1) & (b->fn_cap - 1))
		if (b->fn_keys[i] == key)
			return b->fn_ids[i];
	fn = b->p.function[b->p.n_function];
	perftools__profiles__function__init(fn);
	fn->id = b->p.n_function + 1;
	fn->name = name;
	fn->system_name = name;
	fn->filename = file;
	b->p.n_function++;
	b->fn_keys[i] = key;
	b->fn_ids[i] = (uint32_t)fn->id;
	return fn->id;
}

static int add_comment(struct builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_comment(struct builder *b, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int64_t id;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if ((id = str_id(b, text)) < 0)
		return -ENOMEM;
	b->p.comment[b->p.n_comment++] = id;
	return 0;
}

static int build_header(struct builder *b)
{
	const struct vg_stacks_meta *m = b->meta;
	static const struct vg_stacks_meta none;
	pb_profile *p = &b->p;

	if (!m)
		m = b->meta = &none;
	p->n_sample_type = m->sample_ns ? 2 : 1;
	if (!(p->sample_type = zalloc(b, 2, sizeof(*p->sample_type))) ||
	    !(p->sample_type[0] = value_type(b, "samples", "count")) ||
	    (m->sample_ns && !(p->sample_type[1] = value_type(b, "cpu", "nanoseconds"))))
		return -ENOMEM;
	if (m->sample_ns) {
		p->period_type = value_type(b, "cpu", "nanoseconds");
		p->period = (int64_t)m->sample_ns;
	} else {
		p->period_type = value_type(b, m->event ? m->event : "samples", "count");
		p->period = (int64_t)(m->period ? m->period : 1);
	}
	if (!p->period_type)
		return -ENOMEM;
	p->default_sample_type = p->sample_type[p->n_sample_type - 1]->type;
	p->time_nanos = (int64_t)m->start_time_ns;
	p->duration_nanos = (int64_t)m->duration_ns;
	if (!(p->comment = zalloc(b, 5, sizeof(*p->comment))))
		return -ENOMEM;
	if (add_comment(b, "vigil %s", m->tool_version ? m->tool_version : VG_VERSION) < 0)
		return -ENOMEM;
	if (m->pid && add_comment(b, "pid %" PRId32 " (%s)", m->pid,
				  m->comm ? m->comm : "?") < 0)
		return -ENOMEM;
	if (!m->pid && m->comm && add_comment(b, "%s", m->comm) < 0)
		return -ENOMEM;
	if (m->event && m->frequency_hz &&
	    add_comment(b, "event %s at %" PRIu64 " Hz", m->event, m->frequency_hz) < 0)
		return -ENOMEM;
	if (m->event && !m->frequency_hz &&
	    add_comment(b, "event %s, period %" PRIu64, m->event, m->period) < 0)
		return -ENOMEM;
	if ((m->lost || m->throttled) &&
	    add_comment(b, "counts are a lower bound: %" PRIu64 " samples lost, "
			"throttled %" PRIu64 " times", m->lost, m->throttled) < 0)
		return -ENOMEM;
	return 0;
}

static pb_mapping *new_mapping(struct builder *b, int64_t filename)
{
	pb_mapping *m = zalloc(b, 1, sizeof(*m));

	if (!m)
		return NULL;
	perftools__profiles__mapping__init(m);
	m->id = b->p.n_mapping + 1;
	m->filename = filename;
	/* Lines come from vigil: pprof must not symbolize again. */
	m->has_functions = m->has_filenames = m->has_line_numbers = 1;
	m->has_inline_frames = 1;
	b->p.mapping[b->p.n_mapping++] = m;
	return m;
}

/* Widen m's range to cover address (for mappings whose range is unknown). */
static void cover(pb_mapping *m, uint64_t address)
{
	if (m->memory_start == 0 && m->memory_limit == 0) {
		m->memory_start = address;
		m->memory_limit = address + 1;
		return;
	}
	if (address < m->memory_start)
		m->memory_start = address;
	if (address >= m->memory_limit)
		m->memory_limit = address + 1;
}

/* The image meta->main_path names, or VG_STACKS_NONE. */
static uint32_t main_image(const struct builder *b)
{
	const char *main_path = b->meta ? b->meta->main_path : NULL;
	size_t n_images = vg_stacks_n_images(b->s);

	for (size_t i = 0; main_path && i < n_images; i++) {
		const struct vg_stack_image *img = vg_stacks_image(b->s, (uint32_t)i);

		if (!img->kernel && img->path && strcmp(vg_stacks_string(b->s, img->path), main_path) == 0)
			return (uint32_t)i;
	}
	return VG_STACKS_NONE;
}

static int build_mappings(struct builder *b)
{
	const struct vg_stacks *s = b->s;
	size_t n_images = vg_stacks_n_images(s), n_frames = vg_stacks_n_frames(s);
	uint32_t first = main_image(b);
	bool *known = NULL;
	pb_mapping *kernel = NULL, *unknown = NULL;

	if (!(b->p.mapping = zalloc(b, n_images + 2, sizeof(*b->p.mapping))) ||
	    (n_images && !(known = zalloc(b, n_images, sizeof(*known)))) ||
	    (n_images && !(b->image_mapping = zalloc(b, n_images, sizeof(*b->image_mapping)))))
		return -ENOMEM;
	/* pprof takes Mapping[0] for the program ("File:" in its header):
	 * the main executable first, then the images in the trie's order. */
	for (size_t k = 0; k < n_images; k++) {
		uint32_t i = first == VG_STACKS_NONE ? (uint32_t)k
			     : k == 0 ? first : (uint32_t)(k <= first ? k - 1 : k);
		const struct vg_stack_image *img = vg_stacks_image(s, i);
		pb_mapping *m = new_mapping(b, img->path);

		if (!m)
			return -ENOMEM;
		b->image_mapping[i] = m->id;
		m->build_id = img->build_id;
		known[i] = img->start || img->limit;
		if (known[i]) {
			m->memory_start = img->start;
			m->memory_limit = img->limit;
			m->file_offset = img->file_offset;
		}
	}
	for (size_t i = 0; i < n_frames; i++) {
		const struct vg_stack_frame *f = vg_stacks_frame(s, (uint32_t)i);
		int64_t name;

		if (f->depth || f->retired)
			continue;
		if (f->image != VG_STACKS_NONE) {
			if (!known[f->image])
				cover(b->p.mapping[b->image_mapping[f->image] - 1], f->address);
			continue;
		}
		if (f->kernel && !kernel) {
			if ((name = str_id(b, "[kernel.kallsyms]")) < 0 ||
			    !(kernel = new_mapping(b, name)))
				return -ENOMEM;
			b->kernel_mapping = kernel->id;
		} else if (!f->kernel && !unknown) {
			if ((name = str_id(b, "[unknown]")) < 0 ||
			    !(unknown = new_mapping(b, name)))
				return -ENOMEM;
			b->unknown_mapping = unknown->id;
		}
		cover(f->kernel ? kernel : unknown, f->address);
	}
	return 0;
}

static int build_locations(struct builder *b)
{
	const struct vg_stacks *s = b->s;
	size_t n_frames = vg_stacks_n_frames(s), n_groups = 0;

	for (size_t i = 0; i < n_frames; i++) {
		const struct vg_stack_frame *f = vg_stacks_frame(s, (uint32_t)i);

		n_groups += f->depth == 0 && !f->retired;
	}
	b->fn_cap = 16;
	while (b->fn_cap < 2 * n_frames)
		b->fn_cap *= 2;
	if (!(b->fn_keys = zalloc(b, b->fn_cap, sizeof(*b->fn_keys))) ||
	    !(b->fn_ids = zalloc(b, b->fn_cap, sizeof(*b->fn_ids))) ||
	    (n_frames && !(b->loc_of_group = zalloc(b, n_frames, sizeof(uint64_t)))) ||
	    (n_groups && !(b->p.location = zalloc(b, n_groups, sizeof(pb_location *)))) ||
	    (n_frames && !(b->p.function = zalloc(b, n_frames, sizeof(pb_function *)))))
		return -ENOMEM;
	for (size_t i = 0; i < n_frames; i++)
		if (!(b->p.function[i] = zalloc(b, 1, sizeof(pb_function))))
			return -ENOMEM;
	for (size_t g = 0; g < n_frames; g++) {
		const struct vg_stack_frame *f = vg_stacks_frame(s, (uint32_t)g);
		pb_location *loc;

		if (f->depth || f->retired)
			continue;
		if (!(loc = zalloc(b, 1, sizeof(*loc))))
			return -ENOMEM;
		perftools__profiles__location__init(loc);
		if (!(loc->line = zalloc(b, f->group_size, sizeof(pb_line *))))
			return -ENOMEM;
		loc->id = b->p.n_location + 1;
		loc->address = f->address;
		loc->mapping_id = f->image != VG_STACKS_NONE ? b->image_mapping[f->image]
				  : f->kernel ? b->kernel_mapping : b->unknown_mapping;
		/* Innermost first: the group's last frame, ending with g. */
		for (size_t k = f->group_size; k-- > 0;) {
			const struct vg_stack_frame *in = vg_stacks_frame(s, (uint32_t)(g + k));
			pb_line *line = zalloc(b, 1, sizeof(*line));

			if (!line)
				return -ENOMEM;
			perftools__profiles__line__init(line);
			line->function_id = function_id(b, in->name, in->file);
			line->line = in->line;
			line->column = in->column;   /* 0 (unknown) is not encoded */
			loc->line[loc->n_line++] = line;
		}
		b->p.location[b->p.n_location++] = loc;
		b->loc_of_group[g] = loc->id;
	}
	return 0;
}

/* Walking up from a leaf, whether node is the last (outermost) frame of
 * its address: its depth-0 frame, or a path that did not include the
 * address's outer frames (stacks.h asks for all of them; a caller that
 * cut a chain still gets one Location, with the whole chain as Lines). */
static bool ends_location(const struct vg_stacks *s, const struct vg_stack_node *node)
{
	const struct vg_stack_frame *f = vg_stacks_frame(s, node->frame);
	const struct vg_stack_node *up = vg_stacks_node(s, node->parent);

	return f->depth == 0 || up->frame == VG_STACKS_NONE ||
	       vg_stacks_frame(s, up->frame)->group != f->group ||
	       vg_stacks_frame(s, up->frame)->depth + 1 != f->depth;
}

static int build_samples(struct builder *b)
{
	const struct vg_stacks *s = b->s;
	const struct vg_stacks_meta *m = b->meta;
	size_t n_nodes = vg_stacks_n_nodes(s), n_samples = 0, n_threads = vg_stacks_n_threads(s);
	int32_t *tid_of_root = NULL;
	uint32_t *name_of_root = NULL;
	int64_t tid_key = str_id(b, "tid"), thread_key = str_id(b, "thread");

	if (tid_key < 0 || thread_key < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n_nodes; i++) {
		const struct vg_stack_node *node = vg_stacks_node(s, (uint32_t)i);

		n_samples += node->self && node->frame != VG_STACKS_NONE;
	}
	if ((n_samples && !(b->p.sample = zalloc(b, n_samples, sizeof(pb_sample *)))) ||
	    (n_nodes && !(tid_of_root = zalloc(b, n_nodes, sizeof(*tid_of_root)))) ||
	    (n_nodes && !(name_of_root = zalloc(b, n_nodes, sizeof(*name_of_root)))))
		return -ENOMEM;
	for (size_t t = 0; t < n_threads; t++) {
		const struct vg_stack_thread *th = vg_stacks_thread(s, t);

		tid_of_root[th->root] = th->tid;
		name_of_root[th->root] = th->name;
	}
	for (size_t i = 0; i < n_nodes; i++) {
		const struct vg_stack_node *leaf = vg_stacks_node(s, (uint32_t)i), *node;
		size_t n_locs = 0;
		uint32_t id;
		pb_sample *sample;

		if (!leaf->self || leaf->frame == VG_STACKS_NONE)
			continue;
		for (id = (uint32_t)i; (node = vg_stacks_node(s, id))->frame != VG_STACKS_NONE;
		     id = node->parent)
			n_locs += ends_location(s, node);
		if (!(sample = zalloc(b, 1, sizeof(*sample))))
			return -ENOMEM;
		perftools__profiles__sample__init(sample);
		if (!(sample->location_id = zalloc(b, n_locs, sizeof(uint64_t))) ||
		    !(sample->value = zalloc(b, 2, sizeof(int64_t))) ||
		    !(sample->label = zalloc(b, 2, sizeof(pb_label *))))
			return -ENOMEM;
		/* Leaf first: walking up from the leaf, each address ends at
		 * its depth-0 frame. */
		for (id = (uint32_t)i; (node = vg_stacks_node(s, id))->frame != VG_STACKS_NONE;
		     id = node->parent) {
			if (ends_location(s, node))
				sample->location_id[sample->n_location_id++] =
					b->loc_of_group[vg_stacks_frame(s, node->frame)->group];
		}
		sample->value[sample->n_value++] = (int64_t)leaf->self;
		if (m->sample_ns)
			sample->value[sample->n_value++] = (int64_t)(leaf->self * m->sample_ns);
		/* id is the root now; the merged view's root has tid -1. */
		if (tid_of_root[id] >= 0) {
			pb_label *tid = zalloc(b, 1, sizeof(*tid));
			pb_label *name = zalloc(b, 1, sizeof(*name));

			if (!tid || !name)
				return -ENOMEM;
			perftools__profiles__label__init(tid);
			tid->key = tid_key;
			tid->num = tid_of_root[id];
			sample->label[sample->n_label++] = tid;
			if (name_of_root[id]) {
				perftools__profiles__label__init(name);
				name->key = thread_key;
				name->str = name_of_root[id];
				sample->label[sample->n_label++] = name;
			}
		}
		b->p.sample[b->p.n_sample++] = sample;
	}
	return 0;
}

/* gzip (RFC 1952) of buf to out. */
static int write_gzip(FILE *out, const uint8_t *buf, size_t len)
{
	z_stream z = {0};
	uint8_t chunk[65536];
	int zrc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len; /* checked by the caller: < 4 GiB */
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zrc = deflate(&z, Z_FINISH);
		if (zrc == Z_STREAM_ERROR)
			break;
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			deflateEnd(&z);
			return errno ? -errno : -EIO;
		}
	} while (zrc != Z_STREAM_END);
	deflateEnd(&z);
	return zrc == Z_STREAM_END ? 0 : -EIO;
}

int vg_pprof_write(FILE *out, const struct vg_stacks *s, const struct vg_stack_write_opts *o,
		   struct vg_error *err)
{
	const struct vg_stacks_meta *meta = o ? o->meta : NULL;
	struct builder b = {.s = s, .meta = meta};
	size_t n_trie = vg_stacks_n_strings(s), len;
	uint8_t *buf = NULL;
	int rc = -ENOMEM;

	perftools__profiles__profile__init(&b.p);
	if (VG_GROW(b.strings, b.cap_strings, n_trie) < 0)
		goto out;
	/* pprof never writes through these; protobuf-c wants char *. */
	for (size_t i = 0; i < n_trie; i++)
		b.strings[i] = (char *)vg_stacks_string(s, (uint32_t)i);
	b.n_strings = n_trie;
	if (build_header(&b) < 0 || build_mappings(&b) < 0 ||
	    build_locations(&b) < 0 || build_samples(&b) < 0)
		goto out;
	b.p.string_table = b.strings;
	b.p.n_string_table = b.n_strings;
	len = perftools__profiles__profile__get_packed_size(&b.p);
	if (len > UINT32_MAX) {
		rc = -E2BIG;
		vg_error_set(err, rc, "cannot write the pprof profile: %zu bytes "
			     "exceed the 4 GiB a protobuf message may hold", len);
		goto out;
	}
	if (!(buf = malloc(len ? len : 1)))
		goto out;
	perftools__profiles__profile__pack(&b.p, buf);
	errno = 0;
	rc = write_gzip(out, buf, len);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = errno ? -errno : -EIO;
	if (rc < 0)
		vg_error_set(err, rc, "cannot write the pprof profile: %s", strerror(-rc));
out:
	if (rc == -ENOMEM)
		vg_error_set(err, rc, "cannot build the pprof profile: out of memory");
	free(buf);
	for (size_t i = 0; i < b.n_allocs; i++)
		free(b.allocs[i]);
	free(b.allocs);
	free(b.strings);
	return rc;
}
