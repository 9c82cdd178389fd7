/* test_scanset.c - scan set files (round trips, truncation, corruption,
 * versions) and snapshots of a forked child compared with its live memory
 * after it changed one field, unmapped a region, and holds a value across
 * a page and a chunk boundary. */
#include "scan/scanset.h"
#include "scan/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/maps.h"
#include "target/target.h"
#include "testutil.h"

static char g_dir[64];

static int setup_dir(void **state)
{
	(void)state;
	strcpy(g_dir, "/tmp/vg_scanset_XXXXXX");
	return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void file_in_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", g_dir, name);
}

static void *read_file(const char *path, size_t *len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	b = malloc((size_t)sb.st_size + 1);
	assert_non_null(b);
	assert_int_equal(read(fd, b, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return b;
}

static void write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	close(fd);
}

static void meta_fill(struct vg_scanset_meta *m, enum vg_scan_type t,
		      const char *text)
{
	memset(m, 0, sizeof(*m));
	m->id.pid = 4242;
	m->id.start_time = 123456789012ull;
	strcpy(m->id.comm, "fifteen-chars-x");
	m->type = t;
	snprintf(m->value_text, sizeof(m->value_text), "%s", text);
	m->created_ns = 1700000000123456789ull;
	m->generation = 3;
}

static void assert_sets_equal(const struct vg_match_set *a,
			      const struct vg_match_set *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->value_size, b->value_size);
	assert_int_equal(a->n, b->n);
	if (a->n == 0)
		return;
	assert_memory_equal(a->addr, b->addr, a->n * sizeof(*a->addr));
	assert_memory_equal(a->value, b->value, a->n * a->value_size);
	if (a->type == VG_SCAN_STR || a->type == VG_SCAN_BYTES)
		assert_memory_equal(a->variant, b->variant, a->n);
}

static void assert_meta_equal(const struct vg_scanset_meta *a,
			      const struct vg_scanset_meta *b)
{
	assert_int_equal(a->id.pid, b->id.pid);
	assert_int_equal(a->id.start_time, b->id.start_time);
	assert_string_equal(a->id.comm, b->id.comm);
	assert_int_equal(a->type, b->type);
	assert_string_equal(a->value_text, b->value_text);
	assert_int_equal(a->created_ns, b->created_ns);
	assert_int_equal(a->generation, b->generation);
}

static void round_trip(const struct vg_scanset_meta *meta,
		       const struct vg_match_set *set, const char *name)
{
	struct vg_scanset_meta m2;
	struct vg_match_set s2;
	struct vg_error err = { 0 };
	char path[128];

	file_in_dir(path, sizeof(path), name);
	assert_int_equal(vg_scanset_save(path, meta, set, &err), 0);
	assert_int_equal(vg_scanset_load(path, &m2, &s2, &err), 0);
	assert_meta_equal(meta, &m2);
	assert_sets_equal(set, &s2);
	vg_match_set_clear(&s2);
	/* It holds the target's memory: 0600, whatever the umask. */
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
}

static void test_round_trip_numbers(void **state)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	const uint64_t addrs[] = { 0x1000, 0x1004, 0x1008, 0x55d0c0de0000,
				   0x7ffd12345678, 0xffffffffff600000 };

	(void)state;
	meta_fill(&meta, VG_SCAN_I32, "-7");
	vg_match_set_init(&set, VG_SCAN_I32, 4);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		int32_t v = -7 - (int32_t)i * 1000;

		assert_int_equal(vg_match_set_push(&set, addrs[i], &v, 0), 0);
	}
	round_trip(&meta, &set, "i32.set");
	vg_match_set_clear(&set);
}

static void test_round_trip_str(void **state)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	/* "héllo": 6 UTF-8 bytes, 10 UTF-16LE bytes; the UTF-8 match is
	 * zero-padded to the value size. */
	const uint8_t utf8[10] = { 'h', 0xc3, 0xa9, 'l', 'l', 'o' };
	const uint8_t utf16[10] = { 'h', 0, 0xe9, 0, 'l', 0, 'l', 0, 'o', 0 };

	(void)state;
	meta_fill(&meta, VG_SCAN_STR, "h\xc3\xa9llo");
	vg_match_set_init(&set, VG_SCAN_STR, 10);
	assert_int_equal(vg_match_set_push(&set, 0x400000, utf8, 0), 0);
	assert_int_equal(vg_match_set_push(&set, 0x400100, utf16, 1), 0);
	assert_int_equal(vg_match_set_push(&set, 0x7f0000000001, utf8, 0), 0);
	round_trip(&meta, &set, "str.set");
	vg_match_set_clear(&set);
}

static void test_round_trip_empty(void **state)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;

	(void)state;
	meta_fill(&meta, VG_SCAN_F64, "3.25");
	vg_match_set_init(&set, VG_SCAN_F64, 8);
	round_trip(&meta, &set, "empty.set");
	vg_match_set_clear(&set);
}

static void test_round_trip_million(void **state)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	uint64_t a = 0x55d000000000ull, x = 88172645463325252ull;
	char path[128];
	struct stat sb;

	(void)state;
	meta_fill(&meta, VG_SCAN_U32, "100");
	vg_match_set_init(&set, VG_SCAN_U32, 4);
	for (size_t i = 0; i < 1000000; i++) {
		uint32_t v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Mostly dense (4..64 bytes apart), now and then a far jump. */
		a += (i % 1000 == 999) ? (x & 0xffffffffull) : 4 + (x % 16) * 4;
		v = (uint32_t)(x >> 32);
		assert_int_equal(vg_match_set_push(&set, a, &v, 0), 0);
	}
	round_trip(&meta, &set, "million.set");
	file_in_dir(path, sizeof(path), "million.set");
	assert_int_equal(stat(path, &sb), 0);
	/* 4 value bytes + 1-2 address bytes per match. */
	assert_true(sb.st_size < 6 * 1000000 + 1000);
	vg_match_set_clear(&set);
}

/* A small valid file, its path and bytes. */
static uint8_t *small_file(char *path, size_t size, size_t *len)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	struct vg_error err = { 0 };

	meta_fill(&meta, VG_SCAN_U16, "513");
	vg_match_set_init(&set, VG_SCAN_U16, 2);
	for (uint64_t a = 0x10000; a < 0x10000 + 5 * 0x1002; a += 0x1002) {
		uint16_t v = 513;

		assert_int_equal(vg_match_set_push(&set, a, &v, 0), 0);
	}
	file_in_dir(path, size, "small.set");
	assert_int_equal(vg_scanset_save(path, &meta, &set, &err), 0);
	vg_match_set_clear(&set);
	return read_file(path, len);
}

static int load_bytes(const uint8_t *b, size_t len, struct vg_error *err)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	char path[128];
	int rc;

	file_in_dir(path, sizeof(path), "mangled.set");
	write_file(path, b, len);
	memset(err, 0, sizeof(*err));
	rc = vg_scanset_load(path, &meta, &set, err);
	if (rc)
		assert_int_equal(set.n, 0);   /* never half-loaded */
	vg_match_set_clear(&set);
	return rc;
}

static void test_truncated(void **state)
{
	struct vg_error err;
	char path[128];
	size_t len;
	uint8_t *b = small_file(path, sizeof(path), &len);

	(void)state;
	assert_int_equal(load_bytes(b, len, &err), 0);
	for (size_t cut = 0; cut < len; cut++) {
		assert_int_equal(load_bytes(b, cut, &err), -EINVAL);
		if (!strstr(err.msg, "is truncated"))
			fail_msg("cut at %zu: %s", cut, err.msg);
	}
	free(b);
}

static void test_flipped_byte(void **state)
{
	struct vg_error err;
	char path[128];
	size_t len;
	uint8_t *b = small_file(path, sizeof(path), &len);

	(void)state;
	for (size_t i = 0; i < len; i++) {
		int rc;

		b[i] ^= 0x10;
		rc = load_bytes(b, len, &err);
		b[i] ^= 0x10;
		if (rc == 0)
			fail_msg("flipping byte %zu was not noticed", i);
		/* Past the header every flip is caught as corruption. */
		if (i >= 24 && !strstr(err.msg, "is corrupt"))
			fail_msg("byte %zu: %s", i, err.msg);
	}
	/* Byte 30 is inside the pid: the CRC is what catches it. */
	b[30] ^= 1;
	assert_int_equal(load_bytes(b, len, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "checksum mismatch"));
	free(b);
}

static void test_wrong_magic_and_version(void **state)
{
	struct vg_scanset_meta meta;
	struct vg_match_set set;
	struct vg_error err;
	char path[128];
	size_t len;
	uint8_t *b = small_file(path, sizeof(path), &len);
	uint32_t v = 2;

	(void)state;
	b[0] = 'X';
	assert_int_equal(load_bytes(b, len, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a vigil scan set"));
	b[0] = 'V';
	memcpy(b + 8, &v, 4);
	assert_int_equal(load_bytes(b, len, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "format version 2"));
	free(b);

	memset(&err, 0, sizeof(err));
	file_in_dir(path, sizeof(path), "does-not-exist.set");
	assert_int_equal(vg_scanset_load(path, &meta, &set, &err), -ENOENT);
	vg_match_set_clear(&set);
}

/* ---- snapshots of a live child ---- */

struct probe {
	uint32_t before[4];
	uint32_t field;          /* the one that changes */
	uint32_t after[4];
};

/* What the child tells the parent. */
struct child_addrs {
	uint64_t probe;           /* a 64 KiB region, struct probe at its start */
	uint64_t doomed;          /* a 64 KiB region unmapped on command */
	uint64_t shrunk;          /* a 64 KiB region that loses its end */
	uint64_t big;             /* 4 MiB + 2 pages: values across boundaries */
	uint64_t file;            /* 3 pages mapped over a 1-page file */
	size_t big_len;
};

#define BIG_LEN ((4u << 20) + 8192u)
#define AT_PAGE (4096u - 2)           /* a u32 across pages 0 and 1 */
#define AT_CHUNK ((4u << 20) - 1)     /* a u32 across the first chunk's end */

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void child_main(int out, int in)
{
	struct child_addrs ca = { .big_len = BIG_LEN };
	struct probe *p;
	uint8_t *doomed, *shrunk, *big, *file;
	char path[128], c;
	int fd;

	/* PROT_NONE pages between the regions, or the kernel would merge
	 * the anonymous mappings into one. */
	uint8_t *res = mmap(NULL, 3 * 65536 + BIG_LEN + 5 * 4096, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (res == MAP_FAILED)
		_exit(1);
	p = (struct probe *)(res + 4096);
	doomed = res + 4096 + 65536 + 4096;
	shrunk = doomed + 65536 + 4096;
	big = shrunk + 65536 + 4096;
	if (mprotect(p, 65536, PROT_READ | PROT_WRITE) < 0 ||
	    mprotect(shrunk, 65536, PROT_READ | PROT_WRITE) < 0 ||
	    mprotect(doomed, 65536, PROT_READ | PROT_WRITE) < 0 ||
	    mprotect(big, BIG_LEN, PROT_READ | PROT_WRITE) < 0)
		_exit(1);
	file_in_dir(path, sizeof(path), "one-page");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		_exit(1);
	/* Pages 1 and 2 lie past the end of the file: reading them faults. */
	file = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED)
		_exit(1);
	memset(file, 0x5a, 4096);
	for (int i = 0; i < 4; i++) {
		p->before[i] = 0x1000u + (uint32_t)i;
		p->after[i] = 0x2000u + (uint32_t)i;
	}
	p->field = 41;
	memset(doomed, 0x77, 65536);
	memset(big + 8192, 0x33, 100);        /* some non-zero pages */
	put_u32(big + AT_PAGE, 0x11111111u);
	put_u32(big + AT_CHUNK, 0x11111111u);
	ca.probe = (uintptr_t)p;
	ca.doomed = (uintptr_t)doomed;
	ca.shrunk = (uintptr_t)shrunk;
	ca.big = (uintptr_t)big;
	ca.file = (uintptr_t)file;
	if (write(out, &ca, sizeof(ca)) != sizeof(ca))
		_exit(1);
	while (read(in, &c, 1) == 1) {
		if (c == 'c') {
			p->field = 42;
			put_u32(big + AT_PAGE, 0x22222222u);
			put_u32(big + AT_CHUNK, 0x22222222u);
			munmap(doomed, 65536);
			munmap(shrunk + 49152, 16384);
			/* Now page 0 of the file mapping faults too. */
			if (ftruncate(fd, 0) < 0)
				_exit(1);
		}
		if (write(out, "k", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

struct child {
	pid_t pid;
	int from, to;
	struct child_addrs ca;
};

static void child_start(struct child *c)
{
	int cmd[2], fd;

	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	c->pid = tu_fork_pipe(&fd);
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(cmd[1]);
		child_main(fd, cmd[0]);
	}
	close(cmd[0]);
	c->from = fd;
	c->to = cmd[1];
	assert_int_equal(read(c->from, &c->ca, sizeof(c->ca)), sizeof(c->ca));
}

static void child_command(struct child *c, char cmd)
{
	char k;

	assert_int_equal(write(c->to, &cmd, 1), 1);
	assert_int_equal(read(c->from, &k, 1), 1);
	assert_int_equal(k, 'k');
}

static void child_stop(struct child *c)
{
	int st;

	close(c->to);
	close(c->from);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The child's maps cut down to the regions the test made (plus its
 * stack, for a plausible bystander), so that a sanitizer's terabytes of
 * shadow mappings are not read.  Regions are shallow copies. */
static struct vg_maps *child_regions(struct vg_maps *all,
				     const struct child_addrs *ca)
{
	struct vg_maps *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->regions = calloc(all->n, sizeof(*m->regions));
	assert_non_null(m->regions);
	for (size_t i = 0; i < all->n; i++) {
		const struct vg_region *r = &all->regions[i];

		if (r->start == ca->probe || r->start == ca->doomed ||
		    r->start == ca->big || r->start == ca->file ||
		    r->start == ca->shrunk ||
		    r->kind == VG_REGION_STACK)
			m->regions[m->n++] = *r;
	}
	return m;
}

static void child_regions_free(struct vg_maps *m)
{
	free(m->regions);
	free(m);
}

static size_t count_in(const struct vg_match_set *s, uint64_t lo, uint64_t hi)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		k += s->addr[i] >= lo && s->addr[i] < hi;
	return k;
}

static bool has_addr(const struct vg_match_set *s, uint64_t a)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->addr[i] == a)
			return true;
	return false;
}

static void narrow_op(struct vg_narrow *n, enum vg_narrow_op op)
{
	memset(n, 0, sizeof(*n));
	n->op = op;
}

static void test_snapshot_compare(void **state)
{
	struct vg_scan_select sel = { .set = VG_SCAN_REGIONS_ALL };
	struct vg_scan_identity id = { 0 }, id2;
	struct vg_snapshot_stats sst;
	struct vg_scan_stats st;
	struct vg_match_set out;
	struct vg_narrow n;
	struct vg_error err = { 0 };
	struct vg_proc_stat ps;
	struct vg_maps *all, *some, *after;
	const struct vg_region *stack;
	struct child c;
	char path[128];
	uint64_t field, big;

	(void)state;
	child_start(&c);
	field = c.ca.probe + offsetof(struct probe, field);
	big = c.ca.big;
	assert_int_equal(vg_maps_read(c.pid, &all, &err), 0);
	some = child_regions(all, &c.ca);
	assert_int_equal(some->n, 6);
	stack = &some->regions[5];
	assert_int_equal(stack->kind, VG_REGION_STACK);
	assert_int_equal(vg_proc_stat_read(c.pid, &ps), 0);
	id.pid = c.pid;
	id.start_time = ps.starttime;
	strcpy(id.comm, "scanset-child");

	file_in_dir(path, sizeof(path), "child.snap");
	assert_int_equal(vg_snapshot_save(c.pid, some, &sel, &id, path, NULL, NULL,
					  &sst, &err), 0);
	assert_true(vg_snapshot_is(path));
	assert_int_equal(sst.regions, 6);
	assert_int_equal(sst.regions_skipped, 0);
	/* The two pages of the file mapping past its end. */
	assert_int_equal(sst.bytes_skipped, 2 * 4096);
	assert_false(sst.interrupted);
	/* Mostly zero: the 4 MiB region costs next to nothing. */
	assert_true(sst.bytes_compressed < sst.bytes / 20);

	child_command(&c, 'c');
	assert_int_equal(vg_maps_read(c.pid, &after, &err), 0);

	/* pid 0: the identity only. */
	assert_int_equal(vg_snapshot_compare(path, 0, after, VG_SCAN_U32, true,
					     NULL, &id2, &out, &st, &err), 0);
	assert_int_equal(id2.pid, c.pid);
	assert_int_equal(id2.start_time, ps.starttime);
	assert_string_equal(id2.comm, "scanset-child");
	assert_int_equal(out.n, 0);
	vg_match_set_clear(&out);

	narrow_op(&n, VG_NARROW_CHANGED);
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_U32,
					     true, &n, &id2, &out, &st, &err), 0);
	assert_int_equal(count_in(&out, c.ca.probe, c.ca.probe + 65536), 1);
	assert_true(has_addr(&out, field));
	for (size_t i = 0; i < out.n; i++)
		if (out.addr[i] == field)
			assert_int_equal(*(uint32_t *)(out.value + i * 4), 42);
	/* Aligned: the two values across boundaries are at odd offsets; the
	 * aligned words they touch changed. */
	assert_int_equal(count_in(&out, big, big + BIG_LEN), 4);
	assert_true(has_addr(&out, big + 4092) && has_addr(&out, big + 4096));
	assert_true(has_addr(&out, big + 4194300) &&
		    has_addr(&out, big + 4194304));
	/* Elsewhere only the child's stack may have moved. */
	assert_true(out.n < 2000);
	assert_int_equal(count_in(&out, stack->start, stack->end),
			 out.n - 1 - 4);
	/* The unmapped and the shrunk region are skipped, whole; so is the
	 * file mapping, now unreadable to its first page. */
	assert_int_equal(count_in(&out, c.ca.file, c.ca.file + 3 * 4096), 0);
	assert_int_equal(st.regions_skipped, 3);
	assert_int_equal(st.bytes_skipped, 2 * 65536 + 3 * 4096);
	assert_int_equal(st.regions_scanned, 3);
	assert_int_equal(st.matches, out.n);
	assert_int_equal(st.bytes_total, 3 * 65536 + BIG_LEN + 3 * 4096 +
			 stack->end - stack->start);
	vg_match_set_clear(&out);

	narrow_op(&n, VG_NARROW_UNCHANGED);
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_U32,
					     true, &n, &id2, &out, &st, &err), 0);
	for (int i = 0; i < 4; i++) {
		assert_true(has_addr(&out, c.ca.probe + offsetof(struct probe,
								before) + 4u * (unsigned)i));
		assert_true(has_addr(&out, c.ca.probe + offsetof(struct probe,
								after) + 4u * (unsigned)i));
	}
	assert_false(has_addr(&out, field));
	/* Every other word of the probe region. */
	assert_int_equal(count_in(&out, c.ca.probe, c.ca.probe + 65536),
			 65536 / 4 - 1);
	vg_match_set_clear(&out);

	/* 41 -> 42: increased, not decreased. */
	narrow_op(&n, VG_NARROW_INCREASED);
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_U32,
					     true, &n, &id2, &out, &st, &err), 0);
	assert_int_equal(count_in(&out, c.ca.probe, c.ca.probe + 65536), 1);
	assert_true(has_addr(&out, field));
	vg_match_set_clear(&out);
	narrow_op(&n, VG_NARROW_DECREASED);
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_U32,
					     true, &n, &id2, &out, &st, &err), 0);
	assert_int_equal(count_in(&out, c.ca.probe, c.ca.probe + 65536), 0);
	vg_match_set_clear(&out);

	/* Unaligned: every u32 window touching a changed byte changed, across
	 * the page boundary and across the 4 MiB chunk boundary. */
	narrow_op(&n, VG_NARROW_CHANGED);
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_U32,
					     false, &n, &id2, &out, &st, &err), 0);
	assert_int_equal(count_in(&out, big, big + BIG_LEN), 14);
	for (int d = -3; d <= 3; d++) {
		assert_true(has_addr(&out, big + AT_PAGE + (uint64_t)(int64_t)d));
		assert_true(has_addr(&out, big + AT_CHUNK + (uint64_t)(int64_t)d));
	}
	for (size_t i = 0; i < out.n; i++)
		if (out.addr[i] == big + AT_CHUNK)
			assert_int_equal(*(uint32_t *)(out.value + i * 4),
					 0x22222222u);
	vg_match_set_clear(&out);

	/* A numeric type is required. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(vg_snapshot_compare(path, c.pid, after, VG_SCAN_STR,
					     false, &n, &id2, &out, &st, &err),
			 -EINVAL);
	vg_match_set_clear(&out);

	child_stop(&c);
	child_regions_free(some);
	vg_maps_free(all);
	vg_maps_free(after);
}

/* A damaged snapshot is refused and yields no matches. */
static void test_snapshot_damaged(void **state)
{
	struct vg_scan_select sel = { .set = VG_SCAN_REGIONS_ALL };
	struct vg_scan_identity id = { .pid = 1 }, id2;
	struct vg_snapshot_stats sst;
	struct vg_scan_stats st;
	struct vg_match_set out;
	struct vg_narrow n;
	struct vg_error err = { 0 };
	struct vg_maps *all, *some;
	struct child c;
	char path[128], bad[128];
	uint8_t *b;
	size_t len;

	(void)state;
	child_start(&c);
	assert_int_equal(vg_maps_read(c.pid, &all, &err), 0);
	some = child_regions(all, &c.ca);
	file_in_dir(path, sizeof(path), "damaged.snap");
	file_in_dir(bad, sizeof(bad), "bad.snap");
	assert_int_equal(vg_snapshot_save(c.pid, some, &sel, &id, path, NULL, NULL,
					  &sst, &err), 0);
	b = read_file(path, &len);
	narrow_op(&n, VG_NARROW_UNCHANGED);

	/* Untouched: most words match. */
	assert_int_equal(vg_snapshot_compare(path, c.pid, all, VG_SCAN_U32,
					     true, &n, &id2, &out, &st, &err), 0);
	assert_true(out.n > 65536 / 4);
	vg_match_set_clear(&out);

	write_file(bad, b, len - 5);
	assert_int_equal(vg_snapshot_compare(bad, c.pid, all, VG_SCAN_U32, true,
					     &n, &id2, &out, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is truncated"));
	assert_int_equal(out.n, 0);
	vg_match_set_clear(&out);

	/* A byte of a compressed chunk near the end. */
	b[len - 200] ^= 0x40;
	write_file(bad, b, len);
	memset(&err, 0, sizeof(err));
	assert_int_equal(vg_snapshot_compare(bad, c.pid, all, VG_SCAN_U32, true,
					     &n, &id2, &out, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is corrupt"));
	assert_int_equal(out.n, 0);
	vg_match_set_clear(&out);

	/* Interrupted before the first chunk: a valid file in which nothing
	 * was captured, so nothing compares. */
	{
		volatile sig_atomic_t stop = 1;

		assert_int_equal(vg_snapshot_save(c.pid, some, &sel, &id, bad,
						  &stop, NULL, &sst, &err), 0);
		assert_true(sst.interrupted);
		assert_int_equal(sst.bytes, 0);
		assert_int_equal(sst.regions, 0);
		assert_int_equal(sst.regions_skipped, some->n);
		assert_int_equal(vg_snapshot_compare(bad, c.pid, all, VG_SCAN_U32,
						     true, &n, &id2, &out, &st,
						     &err), 0);
		assert_int_equal(out.n, 0);
		assert_int_equal(st.regions_skipped, some->n);
		assert_int_equal(st.bytes_skipped, st.bytes_total);
		vg_match_set_clear(&out);
	}

	/* A region over VG_SCAN_MAX_REGION (a sanitizer's shadow) is left
	 * out and counted, not read: this one is not even mapped. */
	{
		struct vg_maps huge = { 0 };
		struct vg_snapshot_stats base;

		huge.regions = calloc(some->n + 1, sizeof(*huge.regions));
		assert_non_null(huge.regions);
		memcpy(huge.regions, some->regions, some->n * sizeof(*huge.regions));
		huge.regions[some->n] = some->regions[0];
		huge.regions[some->n].start = 0x400000000000ull;
		huge.regions[some->n].end = 0x400000000000ull + VG_SCAN_MAX_REGION + 4096;
		huge.n = some->n + 1;
		assert_int_equal(vg_snapshot_save(c.pid, some, &sel, &id, bad, NULL, NULL,
						  &base, &err), 0);
		assert_int_equal(vg_snapshot_save(c.pid, &huge, &sel, &id, bad, NULL, NULL,
						  &sst, &err), 0);
		assert_int_equal(sst.regions, base.regions);
		assert_int_equal(sst.regions_skipped, base.regions_skipped + 1);
		assert_int_equal(sst.bytes, base.bytes);
		assert_int_equal(sst.bytes_skipped, base.bytes_skipped);
		free(huge.regions);
	}

	/* A scan set is not a snapshot, and the other way round. */
	assert_false(vg_snapshot_is("/dev/null"));
	assert_false(vg_snapshot_is(g_dir));
	{
		struct vg_scanset_meta meta;

		memset(&err, 0, sizeof(err));
		assert_int_equal(vg_scanset_load(path, &meta, &out, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "is not a vigil scan set"));
		vg_match_set_clear(&out);
	}
	free(b);
	child_stop(&c);
	child_regions_free(some);
	vg_maps_free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_numbers),
		cmocka_unit_test(test_round_trip_str),
		cmocka_unit_test(test_round_trip_empty),
		cmocka_unit_test(test_round_trip_million),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_flipped_byte),
		cmocka_unit_test(test_wrong_magic_and_version),
		cmocka_unit_test(test_snapshot_compare),
		cmocka_unit_test(test_snapshot_damaged),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
