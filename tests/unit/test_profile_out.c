/* test_profile_out.c - the output formats of vigil profile, from one trie
 * with a known 70/30 split: main -> work -> hot (square() inlined) 70
 * samples in thread 100, main -> cold 30 samples in thread 101.
 *
 * Each format is read back by what its users read it with where that is
 * installed: `go tool pprof` for pprof (Debian's golang-go), xmllint for
 * the SVG, cJSON for speedscope; folded and the table are compared as
 * exact text.  A missing reader skips that test with the reason. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "stacktrie/stacks.h"
#include "report/folded.h"
#include "report/pprof.h"
#include "report/profile.pb-c.h"
#include "report/speedscope.h"
#include "report/stack_format.h"
#include "report/svg.h"
#include "report/table_profile.h"

static struct vg_stacks *s;
static const struct vg_stacks_meta meta = {
	.event = "cpu-clock", .frequency_hz = 1000, .sample_ns = 1000000,
	.duration_ns = 100000000, .lost = 0, .pid = 4242, .comm = "target",
	.tool_version = "0.1.0",
};

static uint32_t intern(uint32_t image, uint64_t addr, bool kernel,
		       const struct vg_stack_frame_in *fr, size_t n)
{
	struct vg_stack_site site = {addr, kernel ? 0 : addr - 0x400000, image, kernel};
	uint32_t first, count;

	assert_int_equal(vg_stacks_intern_address(s, &site, fr, n, &first, &count, NULL), 0);
	return first;
}

static int setup(void **state)
{
	static const struct vg_stack_frame_in f_main = {"main", "/src/main.c", 10};
	static const struct vg_stack_frame_in f_work = {"work", "/src/work.c", 20};
	static const struct vg_stack_frame_in f_cold = {"cold", "/src/cold.c", 30};
	static const struct vg_stack_frame_in f_hot[] = {
		{"square", "/src/math.h", 3}, {"hot", "/src/hot.c", 40},
	};
	uint32_t img, m1, m2, w, c, h1, h2;

	(void)state;
	s = vg_stacks_new();
	assert_non_null(s);
	assert_int_equal(vg_stacks_intern_image(s, "/usr/bin/target", "0123abcd", 0x400000,
						0x500000, 0, false, &img, NULL), 0);
	m1 = intern(img, 0x401000, false, &f_main, 1);
	m2 = intern(img, 0x401008, false, &f_main, 1);
	w = intern(img, 0x401100, false, &f_work, 1);
	c = intern(img, 0x401300, false, &f_cold, 1);
	h1 = intern(img, 0x401200, false, f_hot, 2);
	h2 = intern(img, 0x401204, false, f_hot, 2);
	uint32_t p1[] = {m1, w, h1, h1 + 1}, p2[] = {m1, w, h2, h2 + 1}, p3[] = {m2, c};

	assert_int_equal(vg_stacks_set_thread_name(s, 100, "worker", NULL), 0);
	assert_int_equal(vg_stacks_set_thread_name(s, 101, "helper", NULL), 0);
	assert_int_equal(vg_stacks_add(s, 100, p1, 4, 60, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 101, p3, 2, 30, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 100, p2, 4, 10, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vg_stacks_free(s);
	s = NULL;
	return 0;
}

/* What a writer wrote, as a malloc'ed string (NUL-terminated). */
static char *capture(int (*write)(FILE *, void *), void *arg, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	assert_int_equal(write(f, arg), 0);
	assert_int_equal(fclose(f), 0);
	if (len)
		*len = size;
	return buf;
}

static const struct vg_stack_write_opts with_meta = { .meta = &meta };

static int folded_merged(FILE *f, void *arg) { return vg_folded_write(f, arg, NULL, NULL); }
static int folded_threads(FILE *f, void *arg)
{
	return vg_folded_write(f, arg, &(struct vg_stack_write_opts){ .per_thread = true }, NULL);
}
static int table_all(FILE *f, void *arg) { return vg_table_profile_write(f, arg, &with_meta, NULL); }
static int table_top2(FILE *f, void *arg)
{
	return vg_table_profile_write(f, arg, &(struct vg_stack_write_opts){ .top = 2 }, NULL);
}
static int speedscope(FILE *f, void *arg) { return vg_speedscope_write(f, arg, &with_meta, NULL); }
static int pprof(FILE *f, void *arg) { return vg_pprof_write(f, arg, &with_meta, NULL); }
static int svg(FILE *f, void *arg) { return vg_svg_write(f, arg, &with_meta, NULL); }

static void test_folded(void **state)
{
	char *text;

	(void)state;
	text = capture(folded_merged, s, NULL);
	assert_string_equal(text, "main;cold 30\n"
				  "main;work;hot;square_[i] 70\n");
	free(text);
	text = capture(folded_threads, s, NULL);
	assert_string_equal(text, "worker-100;main;work;hot;square_[i] 70\n"
				  "helper-101;main;cold 30\n");
	free(text);
}

/* Kernel frames end in _[k]; a ';' in a name cannot split a frame. */
static void test_folded_kernel(void **state)
{
	struct vg_stack_frame_in sys = {"do_syscall_64", NULL, 0};
	struct vg_stack_frame_in odd = {"a;b\nc", NULL, 0};
	uint32_t path[2];
	char *text;

	(void)state;
	vg_stacks_free(s);
	s = vg_stacks_new();
	path[0] = intern(VG_STACKS_NONE, 0x401000, false, &odd, 1);
	path[1] = intern(VG_STACKS_NONE, 0xffffffff81000000, true, &sys, 1);
	assert_int_equal(vg_stacks_add(s, 1, path, 2, 3, NULL), 0);
	text = capture(folded_merged, s, NULL);
	assert_string_equal(text, "a?b?c;do_syscall_64_[k] 3\n");
	free(text);
}

static void test_table(void **state)
{
	char *text;

	(void)state;
	text = capture(table_all, s, NULL);
	assert_string_equal(text,
		"100 samples of cpu-clock, 2 threads, 5 functions\n"
		"by self:\n"
		"self  70.00%       70  total  70.00%       70  square (inlined)\n"
		"self  30.00%       30  total  30.00%       30  cold\n"
		"self   0.00%        0  total 100.00%      100  main\n"
		"self   0.00%        0  total  70.00%       70  hot\n"
		"self   0.00%        0  total  70.00%       70  work\n"
		"by total:\n"
		"self   0.00%        0  total 100.00%      100  main\n"
		"self  70.00%       70  total  70.00%       70  square (inlined)\n"
		"self   0.00%        0  total  70.00%       70  work\n"
		"self   0.00%        0  total  70.00%       70  hot\n"
		"self  30.00%       30  total  30.00%       30  cold\n");
	free(text);
	text = capture(table_top2, s, NULL);
	assert_string_equal(text,
		"100 samples, 2 threads, 5 functions\n"
		"by self:\n"
		"self  70.00%       70  total  70.00%       70  square (inlined)\n"
		"self  30.00%       30  total  30.00%       30  cold\n"
		"by total:\n"
		"self   0.00%        0  total 100.00%      100  main\n"
		"self  70.00%       70  total  70.00%       70  square (inlined)\n");
	free(text);
}

static int frame_index(const cJSON *frames, const char *name)
{
	int i = 0;
	const cJSON *f;

	cJSON_ArrayForEach(f, frames) {
		if (strcmp(cJSON_GetObjectItem(f, "name")->valuestring, name) == 0)
			return i;
		i++;
	}
	fail_msg("no speedscope frame %s", name);
	return -1;
}

/* One profile: its single stack (frame names root first) and weight. */
static void check_profile(const cJSON *p, const cJSON *frames, const char *name,
			  const char *const *stack, size_t depth, double weight)
{
	const cJSON *samples = cJSON_GetObjectItem(p, "samples");
	const cJSON *weights = cJSON_GetObjectItem(p, "weights");
	const cJSON *first;

	assert_string_equal(cJSON_GetObjectItem(p, "type")->valuestring, "sampled");
	assert_string_equal(cJSON_GetObjectItem(p, "name")->valuestring, name);
	assert_string_equal(cJSON_GetObjectItem(p, "unit")->valuestring, "nanoseconds");
	assert_int_equal(cJSON_GetArraySize(samples), 1);
	assert_int_equal(cJSON_GetArraySize(weights), 1);
	first = cJSON_GetArrayItem(samples, 0);
	assert_int_equal(cJSON_GetArraySize(first), depth);
	for (size_t i = 0; i < depth; i++)
		assert_int_equal(cJSON_GetArrayItem(first, (int)i)->valueint,
				 frame_index(frames, stack[i]));
	assert_true(cJSON_GetArrayItem(weights, 0)->valuedouble == weight);
	assert_true(cJSON_GetObjectItem(p, "startValue")->valuedouble == 0);
	assert_true(cJSON_GetObjectItem(p, "endValue")->valuedouble == weight);
}

static void test_speedscope(void **state)
{
	static const char *const hot[] = {"main", "work", "hot", "square [inlined]"};
	static const char *const cold[] = {"main", "cold"};
	char *text = capture(speedscope, s, NULL);
	cJSON *doc = cJSON_Parse(text), *frames, *profiles;

	(void)state;
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "$schema")->valuestring,
			    "https://www.speedscope.app/file-format-schema.json");
	assert_string_equal(cJSON_GetObjectItem(doc, "exporter")->valuestring, "vigil 0.1.0");
	assert_string_equal(cJSON_GetObjectItem(doc, "name")->valuestring,
			    "pid 4242 (target) cpu-clock");
	frames = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "shared"), "frames");
	/* One frame per function: main's two call sites are one frame. */
	assert_int_equal(cJSON_GetArraySize(frames), 5);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(frames,
			    frame_index(frames, "square [inlined]")), "file")->valuestring,
			    "/src/math.h");
	profiles = cJSON_GetObjectItem(doc, "profiles");
	assert_int_equal(cJSON_GetArraySize(profiles), 2);
	/* 70 and 30 samples of 1 ms: the 70/30 split in nanoseconds. */
	check_profile(cJSON_GetArrayItem(profiles, 0), frames, "worker (tid 100)", hot, 4, 70e6);
	check_profile(cJSON_GetArrayItem(profiles, 1), frames, "helper (tid 101)", cold, 2, 30e6);
	cJSON_Delete(doc);
	free(text);
}

/* ---- pprof ------------------------------------------------------------ */

static char *write_temp(const char *suffix, int (*write)(FILE *, void *))
{
	char path[64];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/vigil-test-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(write(f, s), 0);
	assert_int_equal(fclose(f), 0);
	return strdup(path);
}

/* The decompressed file (really gzipped, not stored as is). */
static uint8_t *gunzip(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);
	int n;

	assert_non_null(gz);
	assert_int_equal(gzdirect(gz), 0);
	n = gzread(gz, buf, 1 << 20);
	assert_true(n >= 0 && n < (1 << 20));
	gzclose(gz);
	*len = (size_t)n;
	return buf;
}

static const char *pb_string(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const char *pb_function_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return pb_string(p, p->function[i]->name);
	fail_msg("no function id %" PRIu64, id);
	return NULL;
}

/* The message itself: the ids and tables pprof insists on. */
static void test_pprof_message(void **state)
{
	char *path = write_temp(".pb.gz", pprof);
	size_t len;
	uint8_t *buf = gunzip(path, &len);
	Perftools__Profiles__Profile *p =
		perftools__profiles__profile__unpack(NULL, len, buf);
	uint64_t samples = 0, cpu = 0;

	(void)state;
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pb_string(p, p->sample_type[0]->type), "samples");
	assert_string_equal(pb_string(p, p->sample_type[0]->unit), "count");
	assert_string_equal(pb_string(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(pb_string(p, p->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(pb_string(p, p->period_type->type), "cpu");
	assert_int_equal(p->period, 1000000);
	assert_int_equal(p->duration_nanos, 100000000);
	assert_int_equal(p->n_mapping, 1);
	assert_int_equal(p->mapping[0]->id, 1);
	assert_int_equal(p->mapping[0]->memory_start, 0x400000);
	assert_int_equal(p->mapping[0]->memory_limit, 0x500000);
	assert_string_equal(pb_string(p, p->mapping[0]->filename), "/usr/bin/target");
	assert_string_equal(pb_string(p, p->mapping[0]->build_id), "0123abcd");
	/* One location per address: 2 of main, work, cold, 2 of hot. */
	assert_int_equal(p->n_location, 6);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *loc = p->location[i];

		assert_int_equal(loc->id, i + 1);
		assert_int_equal(loc->mapping_id, 1);
		if (loc->address == 0x401200 || loc->address == 0x401204) {
			/* Inlined square first, hot (the caller) last. */
			assert_int_equal(loc->n_line, 2);
			assert_string_equal(pb_function_name(p, loc->line[0]->function_id), "square");
			assert_int_equal(loc->line[0]->line, 3);
			assert_string_equal(pb_function_name(p, loc->line[1]->function_id), "hot");
			assert_int_equal(loc->line[1]->line, 40);
		} else {
			assert_int_equal(loc->n_line, 1);
		}
	}
	assert_int_equal(p->n_function, 5);
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sm = p->sample[i];

		assert_int_equal(sm->n_value, 2);
		assert_int_equal(sm->value[1], sm->value[0] * 1000000);
		samples += (uint64_t)sm->value[0];
		cpu += (uint64_t)sm->value[1];
		assert_int_equal(sm->n_label, 2);
		assert_string_equal(pb_string(p, sm->label[0]->key), "tid");
		assert_int_equal(sm->label[0]->num, sm->value[0] == 30 ? 101 : 100);
		assert_string_equal(pb_string(p, sm->label[1]->str),
				    sm->value[0] == 30 ? "helper" : "worker");
		/* Leaf first: a hot location, then work, then main. */
		if (sm->value[0] != 30) {
			assert_int_equal(sm->n_location_id, 3);
			assert_int_equal(p->location[sm->location_id[0] - 1]->n_line, 2);
			assert_int_equal(p->location[sm->location_id[2] - 1]->address, 0x401000);
		}
	}
	assert_int_equal(samples, 100);
	assert_int_equal(cpu, 100000000);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	unlink(path);
	free(path);
}

/* pprof reads Mapping[0] as the profiled program ("File:" in its
 * header): the main executable goes first even when the trie met a
 * library first, and every location keeps its own image's mapping.
 * Lines carry the column where there is one. */
static const struct vg_stacks_meta meta_main = {
	.event = "cpu-clock", .frequency_hz = 1000, .sample_ns = 1000000,
	.pid = 4242, .comm = "target", .tool_version = "0.1.0",
	.main_path = "/usr/bin/target",
};
static int pprof_main(FILE *f, void *arg)
{
	return vg_pprof_write(f, arg, &(struct vg_stack_write_opts){ .meta = &meta_main }, NULL);
}

static void test_pprof_main_first(void **state)
{
	static const struct vg_stack_frame_in f_memset = {"memset", NULL, 0};
	static const struct vg_stack_frame_in f_main = {"main", "/src/main.c", 10};
	static const struct vg_stack_frame_in f_vdso = {"__vdso_clock_gettime", NULL, 0};
	struct vg_stacks *saved = s;
	uint32_t libc, exe, vdso, a, b, c, first, count;
	size_t len;
	char *path;
	uint8_t *buf;
	Perftools__Profiles__Profile *p;

	(void)state;
	s = vg_stacks_new();
	assert_non_null(s);
	assert_int_equal(vg_stacks_intern_image(s, "/usr/lib/libc.so.6", NULL, 0x7f0000000000,
						0x7f0000100000, 0, false, &libc, NULL), 0);
	assert_int_equal(vg_stacks_intern_image(s, "[vdso]", NULL, 0x7fff0000,
						0x7fff2000, 0, false, &vdso, NULL), 0);
	assert_int_equal(vg_stacks_intern_image(s, "/usr/bin/target", NULL, 0x400000,
						0x500000, 0, false, &exe, NULL), 0);
	assert_int_equal(vg_stacks_intern_address(s, &(struct vg_stack_site){ 0x7f0000000100, 0x100, libc, false },
						  &f_memset, 1, &first, &count, NULL), 0);
	a = first;
	assert_int_equal(vg_stacks_intern_address(s, &(struct vg_stack_site){ 0x401000, 0x1000, exe, false },
						  &f_main, 1, &first, &count, NULL), 0);
	b = first;
	vg_stacks_set_columns(s, b, 1, (const uint32_t[]){ 7 });
	assert_int_equal(vg_stacks_intern_address(s, &(struct vg_stack_site){ 0x7fff0100, 0x100, vdso, false },
						  &f_vdso, 1, &first, &count, NULL), 0);
	c = first;
	uint32_t st1[] = {b, a}, st2[] = {b, c};

	assert_int_equal(vg_stacks_add(s, 1, st1, 2, 5, NULL), 0);
	assert_int_equal(vg_stacks_add(s, 1, st2, 2, 3, NULL), 0);
	path = write_temp(".pb.gz", pprof_main);
	buf = gunzip(path, &len);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(p);
	assert_int_equal(p->n_mapping, 3);
	assert_string_equal(pb_string(p, p->mapping[0]->filename), "/usr/bin/target");
	assert_string_equal(pb_string(p, p->mapping[1]->filename), "/usr/lib/libc.so.6");
	assert_string_equal(pb_string(p, p->mapping[2]->filename), "[vdso]");
	for (size_t i = 0; i < p->n_mapping; i++)
		assert_int_equal(p->mapping[i]->id, i + 1);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *loc = p->location[i];
		const char *want = loc->address == 0x401000 ? "/usr/bin/target"
				   : loc->address == 0x7fff0100 ? "[vdso]" : "/usr/lib/libc.so.6";

		assert_true(loc->mapping_id >= 1 && loc->mapping_id <= p->n_mapping);
		assert_string_equal(pb_string(p, p->mapping[loc->mapping_id - 1]->filename), want);
		/* The column DWARF gave (Line.column), none where it gave none. */
		assert_int_equal(loc->n_line, 1);
		assert_int_equal(loc->line[0]->column, loc->address == 0x401000 ? 7 : 0);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	unlink(path);
	free(path);
	vg_stacks_free(s);
	s = saved;
}

struct top_row {
	double flat, flat_pct, cum, cum_pct;
	char name[128];
};

/* `go tool pprof -top` rows: "flat flat% sum% cum cum% name". */
static size_t pprof_top(const char *path, const char *index, struct top_row *rows,
			size_t max)
{
	char cmd[512], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "HOME=/tmp go tool pprof -top -sample_index=%s '%s' 2>&1",
		 index, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		double v[5];
		char *pos = line, *end;
		int k;

		fputs(line, stderr); /* shown on failure, harmless in TAP */
		/* Five numbers (strtod stops at a unit or '%'), then the name. */
		for (k = 0; k < 5; k++) {
			v[k] = strtod(pos, &end);
			if (end == pos || (*end != ' ' && *end != '%' && !(*end >= 'a' && *end <= 'z')))
				break;
			while (*end && *end != ' ')
				end++;
			pos = end;
		}
		if (k < 5 || n >= max)
			continue;
		while (*pos == ' ')
			pos++;
		pos[strcspn(pos, "\n")] = '\0';
		rows[n] = (struct top_row){v[0], v[1], v[3], v[4], ""};
		snprintf(rows[n].name, sizeof(rows[n].name), "%.127s", pos);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

static const struct top_row *row(const struct top_row *rows, size_t n, const char *prefix)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(rows[i].name, prefix, strlen(prefix)) == 0)
			return &rows[i];
	fail_msg("go tool pprof -top shows no %s", prefix);
	return NULL;
}

/* The reader the format is for: the file loads, and the split reads back. */
static void test_pprof_go(void **state)
{
	struct top_row rows[16];
	char *path;
	size_t n;

	(void)state;
	if (access("/usr/bin/go", X_OK) != 0 && system("command -v go >/dev/null 2>&1") != 0) {
		print_message("skip: go is not installed (Debian golang-go), cannot read pprof back\n");
		skip();
	}
	path = write_temp(".pb.gz", pprof);
	n = pprof_top(path, "samples", rows, 16);
	assert_int_equal(n, 5);
	assert_true(row(rows, n, "square")->flat == 70);
	assert_true(row(rows, n, "square")->flat_pct == 70.0);
	/* pprof marks an inlined function "(inline)". */
	assert_string_equal(row(rows, n, "square")->name, "square (inline)");
	assert_true(row(rows, n, "cold")->flat == 30);
	assert_true(row(rows, n, "cold")->flat_pct == 30.0);
	assert_true(row(rows, n, "hot")->flat == 0);
	assert_true(row(rows, n, "hot")->cum_pct == 70.0);
	assert_true(row(rows, n, "main")->cum_pct == 100.0);
	/* The cpu values: 70 ms and 30 ms. */
	n = pprof_top(path, "cpu", rows, 16);
	assert_true(row(rows, n, "square")->flat == 70);
	assert_true(row(rows, n, "cold")->flat == 30);
	unlink(path);
	free(path);
}

/* ---- svg -------------------------------------------------------------- */

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_svg(void **state)
{
	char *text = capture(svg, s, NULL);

	(void)state;
	assert_true(strncmp(text, "<?xml", 5) == 0);
	/* all, main, work, hot, square, cold */
	assert_int_equal(count(text, "<g class=\"f"), 6);
	assert_int_equal(count(text, "<g class=\"f inl\""), 1);
	assert_non_null(strstr(text, "<title>square [inlined] \xe2\x80\x94 /src/math.h "
				     "(70 samples, 70.00%)</title>"));
	assert_non_null(strstr(text, "<title>cold \xe2\x80\x94 /src/cold.c "
				     "(30 samples, 30.00%)</title>"));
	assert_non_null(strstr(text, "<title>all (100 samples, 100.00%)</title>"));
	/* No external resource: no href, no url(). */
	assert_null(strstr(text, "href"));
	assert_null(strstr(text, "url("));
	assert_non_null(strstr(text, "id=\"search\""));
	free(text);
}

/* Names with markup characters, control characters and invalid UTF-8
 * still make well-formed XML (xmllint, libxml2's own checker). */
static void test_svg_xml(void **state)
{
	static const struct vg_stack_frame_in tmpl = {
		"std::map<int, std::pair<A&, B>>::operator\"\" _q'x'", "/src/a&b.h", 1};
	static const struct vg_stack_frame_in bad = {"bad\xff\xfe\x01name", NULL, 0};
	uint32_t a = intern(VG_STACKS_NONE, 0x402000, false, &tmpl, 1);
	uint32_t b = intern(VG_STACKS_NONE, 0x402100, false, &bad, 1);
	uint32_t path[] = {a, b};
	char *file, cmd[256], *text;

	(void)state;
	assert_int_equal(vg_stacks_add(s, 100, path, 2, 50, NULL), 0);
	text = capture(svg, s, NULL);
	assert_non_null(strstr(text, "std::map&lt;int, std::pair&lt;A&amp;, B&gt;&gt;::operator&quot;&quot; _q&apos;x&apos;"));
	assert_non_null(strstr(text, "bad\\xff\\xfe\\001name"));
	free(text);
	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		print_message("skip: xmllint is not installed (Debian libxml2-utils)\n");
		skip();
	}
	file = write_temp(".svg", svg);
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", file);
	assert_int_equal(system(cmd), 0);
	/* and the check can fail: a raw '<' in a name is refused */
	snprintf(cmd, sizeof(cmd), "sed -i 's/&lt;int/<int/' '%s' && "
		 "xmllint --noout '%s' 2>/dev/null", file, file);
	assert_int_not_equal(system(cmd), 0);
	unlink(file);
	free(file);
}

/* No samples at all (a target that slept): every writer still writes a
 * valid, empty document. */
static void test_empty(void **state)
{
	char *text, *file, cmd[256];
	size_t len;
	uint8_t *buf;
	cJSON *doc;
	Perftools__Profiles__Profile *p;

	(void)state;
	vg_stacks_free(s);
	s = vg_stacks_new();
	text = capture(folded_merged, s, NULL);
	assert_string_equal(text, "");
	free(text);
	text = capture(table_top2, s, NULL);
	assert_string_equal(text, "0 samples, 0 threads, 0 functions\nby self:\nby total:\n");
	free(text);
	text = capture(speedscope, s, NULL);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "profiles")), 0);
	cJSON_Delete(doc);
	free(text);
	file = write_temp(".pb.gz", pprof);
	buf = gunzip(file, &len);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 0);
	assert_string_equal(p->string_table[0], "");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	unlink(file);
	free(file);
	file = write_temp(".svg", svg);
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", file);
	if (system("command -v xmllint >/dev/null 2>&1") == 0)
		assert_int_equal(system(cmd), 0);
	unlink(file);
	free(file);
}

/* A path that holds only the inlined frame of an address (a caller that
 * cut the chain) still names a Location whose Lines are the whole chain. */
static void test_pprof_cut_chain(void **state)
{
	static const struct vg_stack_frame_in chain[] = {
		{"inner", NULL, 1}, {"outer", NULL, 2},
	};
	uint32_t first, path[3];
	char *file;
	size_t len;
	uint8_t *buf;
	Perftools__Profiles__Profile *p;

	(void)state;
	vg_stacks_free(s);
	s = vg_stacks_new();
	first = intern(VG_STACKS_NONE, 0x7000, false, chain, 2);
	path[0] = path[2] = first + 1;
	path[1] = first;
	assert_int_equal(vg_stacks_add(s, 1, path, 3, 4, NULL), 0);
	file = write_temp(".pb.gz", pprof);
	buf = gunzip(file, &len);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(p);
	assert_int_equal(p->n_sample, 1);
	/* inner (cut), then outer+inner: two locations, both the same. */
	assert_int_equal(p->sample[0]->n_location_id, 2);
	assert_int_equal(p->sample[0]->location_id[0], p->sample[0]->location_id[1]);
	assert_int_equal(p->n_location, 1);
	assert_int_equal(p->location[0]->n_line, 2);
	/* no image: the "[unknown]" mapping covers the address */
	assert_int_equal(p->n_mapping, 1);
	assert_string_equal(pb_string(p, p->mapping[0]->filename), "[unknown]");
	assert_int_equal(p->mapping[0]->memory_start, 0x7000);
	assert_int_equal(p->mapping[0]->memory_limit, 0x7001);
	assert_int_equal(p->location[0]->mapping_id, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	unlink(file);
	free(file);
}

/* After an unresolved address is symbolized again with a longer chain,
 * pprof has no "[unknown]" mapping and no Location for the retired frame. */
static void test_pprof_reinterned(void **state)
{
	struct vg_stack_site lib = {0x7000, 0, VG_STACKS_NONE, false};
	static const struct vg_stack_frame_in chain[] = {
		{"inl", "/src/lib.h", 2}, {"lib_fn", "/src/lib.c", 8},
	};
	uint32_t x, nx, path[1];
	char *file;
	size_t len;
	uint8_t *buf;
	Perftools__Profiles__Profile *p;

	(void)state;
	vg_stacks_free(s);
	s = vg_stacks_new();
	assert_int_equal(vg_stacks_intern_address(s, &lib, NULL, 0, &x, &nx, NULL), 0);
	path[0] = x;
	assert_int_equal(vg_stacks_add(s, 1, path, 1, 9, NULL), 0);
	assert_int_equal(vg_stacks_intern_image(s, "/lib/libx.so", NULL, 0x7000, 0x8000, 0,
						false, &lib.image, NULL), 0);
	assert_int_equal(vg_stacks_reintern_address(s, &lib, chain, 2, NULL), 0);
	file = write_temp(".pb.gz", pprof);
	buf = gunzip(file, &len);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(p);
	assert_int_equal(p->n_mapping, 1);
	assert_string_equal(pb_string(p, p->mapping[0]->filename), "/lib/libx.so");
	assert_int_equal(p->n_location, 1);
	assert_int_equal(p->location[0]->n_line, 2);
	assert_string_equal(pb_function_name(p, p->location[0]->line[0]->function_id), "inl");
	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->value[0], 9);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	unlink(file);
	free(file);
}

/* Writers report a failed write instead of returning 0. */
static void test_write_error(void **state)
{
	FILE *full = fopen("/dev/full", "w");
	struct vg_error err = {0};

	(void)state;
	if (!full)
		skip();
	setvbuf(full, NULL, _IONBF, 0);
	assert_int_equal(vg_folded_write(full, s, NULL, &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "folded"));
	vg_error_clear(&err);
	assert_int_equal(vg_pprof_write(full, s, &with_meta, &err), -ENOSPC);
	vg_error_clear(&err);
	assert_int_equal(vg_speedscope_write(full, s, &with_meta, &err), -ENOSPC);
	vg_error_clear(&err);
	assert_int_equal(vg_svg_write(full, s, &with_meta, &err), -ENOSPC);
	vg_error_clear(&err);
	assert_int_equal(vg_table_profile_write(full, s, &with_meta, &err), -ENOSPC);
	fclose(full);
}

/* --format NAME finds the row of each writer, and only those. */
static void test_format_table(void **state)
{
	static const struct {
		const char *name;
		vg_stack_writer *write;
	} want[] = {
		{ "table", vg_table_profile_write }, { "folded", vg_folded_write },
		{ "pprof", vg_pprof_write }, { "speedscope", vg_speedscope_write },
		{ "svg", vg_svg_write },
	};
	size_t n = 0;

	(void)state;
	for (const struct vg_stack_format *f = vg_stack_formats; f->name; f++, n++) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(f->name, want[n].name);
		assert_ptr_equal(f->write, want[n].write);
		assert_ptr_equal(vg_stack_format_find(f->name), f);
		assert_int_equal(f->binary, strcmp(f->name, "pprof") == 0);
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_null(vg_stack_format_find("json"));
	assert_null(vg_stack_format_find(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_table),
		cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_go, setup, teardown),
		cmocka_unit_test(test_pprof_main_first),
		cmocka_unit_test_setup_teardown(test_svg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_svg_xml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_cut_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof_reinterned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
