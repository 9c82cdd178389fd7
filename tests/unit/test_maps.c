/* test_maps.c - the /proc/PID/maps text parser on recorded and hostile files,
 * find() boundaries, carry_over() ownership, and reads of live processes. */
#include "target/maps.h"

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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#define MAPS_DIR FIXTURES "/maps/"

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;
	long sz;

	snprintf(path, sizeof(path), MAPS_DIR "%s", name);
	f = fopen(path, "rbe");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	assert_true(sz >= 0);
	rewind(f);
	buf = malloc((size_t)sz + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	buf[sz] = '\0';
	*len = (size_t)sz;
	return buf;
}

static struct vg_maps *parse_fixture(const char *name)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	size_t len;
	char *text = slurp(name, &len);
	int r = vg_maps_parse(text, len, &m, &err);

	free(text);
	if (r != 0)
		fail_msg("%s: %s", name, err.msg);
	assert_non_null(m);
	return m;
}

static void expect_region(const struct vg_region *r, uint64_t start, uint64_t end,
			  const char *perms, uint64_t offset, uint32_t maj, uint32_t min,
			  uint64_t inode, const char *path, bool deleted,
			  enum vg_region_kind kind)
{
	assert_int_equal(r->start, start);
	assert_int_equal(r->end, end);
	assert_string_equal(r->perms, perms);
	assert_int_equal(r->offset, offset);
	assert_int_equal(r->dev_major, maj);
	assert_int_equal(r->dev_minor, min);
	assert_int_equal(r->inode, inode);
	assert_string_equal(r->path, path);
	assert_int_equal(r->deleted, deleted);
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->readable, perms[0] == 'r');
	assert_int_equal(r->writable, perms[1] == 'w');
	assert_int_equal(r->executable, perms[2] == 'x');
	assert_int_equal(r->shared, perms[3] == 's');
	assert_null(r->state);
}

static void test_recorded_cat(void **state)
{
	struct vg_maps *m = parse_fixture("cat_self.maps");

	assert_int_equal(m->n, 38);
	expect_region(&m->regions[0], 0x55b4c01d0000, 0x55b4c01d2000, "r--p", 0,
		      0xfe, 0, 247134, "/usr/bin/cat", false, VG_REGION_FILE);
	expect_region(&m->regions[1], 0x55b4c01d2000, 0x55b4c01d7000, "r-xp", 0x2000,
		      0xfe, 0, 247134, "/usr/bin/cat", false, VG_REGION_FILE);
	expect_region(&m->regions[4], 0x55b4c01db000, 0x55b4c01dc000, "rw-p", 0xa000,
		      0xfe, 0, 247134, "/usr/bin/cat", false, VG_REGION_FILE);
	expect_region(&m->regions[5], 0x55b4d53fa000, 0x55b4d541b000, "rw-p", 0,
		      0, 0, 0, "[heap]", false, VG_REGION_HEAP);
	/* anonymous line: "... 0 " with the kernel's trailing space */
	expect_region(&m->regions[6], 0x7fde5a53a000, 0x7fde5a55c000, "rw-p", 0,
		      0, 0, 0, "", false, VG_REGION_ANON);
	expect_region(&m->regions[19], 0x7fde5a78c000, 0x7fde5a790000, "r--p", 0x1cf000,
		      0xfe, 0, 332835, "/usr/lib/x86_64-linux-gnu/libc.so.6", false,
		      VG_REGION_FILE);
	expect_region(&m->regions[28], 0x7fde5a7ac000, 0x7fde5a7b0000, "r--p", 0,
		      0, 0, 0, "[vvar]", false, VG_REGION_VVAR);
	expect_region(&m->regions[29], 0x7fde5a7b0000, 0x7fde5a7b2000, "r--p", 0,
		      0, 0, 0, "[vvar_vclock]", false, VG_REGION_VVAR);
	expect_region(&m->regions[30], 0x7fde5a7b2000, 0x7fde5a7b4000, "r-xp", 0,
		      0, 0, 0, "[vdso]", false, VG_REGION_VDSO);
	expect_region(&m->regions[36], 0x7fff3dd8a000, 0x7fff3ddab000, "rw-p", 0,
		      0, 0, 0, "[stack]", false, VG_REGION_STACK);
	expect_region(&m->regions[37], 0xffffffffff600000, 0xffffffffff601000, "--xp", 0,
		      0, 0, 0, "[vsyscall]", false, VG_REGION_VSYSCALL);
	assert_null(vg_maps_free(m));
}

static void test_hostile(void **state)
{
	struct vg_maps *m = parse_fixture("hostile.maps");

	assert_int_equal(m->n, 11);
	expect_region(&m->regions[0], 0x400000, 0x401000, "r-xp", 0, 0xfe, 0, 1234,
		      "/tmp/dir with spaces/a b.so", false, VG_REGION_FILE);
	expect_region(&m->regions[1], 0x401000, 0x402000, "r--p", 0x1000, 0xfe, 0, 1235,
		      "/tmp/new\nline.so", false, VG_REGION_FILE);
	expect_region(&m->regions[2], 0x402000, 0x403000, "rw-p", 0x2000, 0xfe, 0, 1236,
		      "/tmp/gone.so", true, VG_REGION_FILE);
	expect_region(&m->regions[3], 0x403000, 0x404000, "rw-s", 0, 0, 1, 2048,
		      "/memfd:buf", true, VG_REGION_MEMFD);
	expect_region(&m->regions[4], 0x404000, 0x405000, "rw-p", 0, 0, 0, 0,
		      "[stack:1234]", false, VG_REGION_STACK);
	expect_region(&m->regions[5], 0x405000, 0x406000, "rw-p", 0, 0, 0, 0,
		      "[anon:foo]", false, VG_REGION_SPECIAL);
	expect_region(&m->regions[6], 0x406000, 0x407000, "rw-p", 0, 0, 0, 0,
		      "", false, VG_REGION_ANON);
	expect_region(&m->regions[7], 0x408000, 0x409000, "rw-s", 0, 0, 5, 77,
		      "memfd:x", false, VG_REGION_MEMFD);
	expect_region(&m->regions[8], 0x409000, 0x40a000, "r--p", 0, 0, 0, 0,
		      "[uprobes]", false, VG_REGION_SPECIAL);
	/* a lone backslash stays; "\101" is an octal escape */
	expect_region(&m->regions[9], 0x40a000, 0x40b000, "r--p", 0, 0xfe, 0, 99,
		      "/tmp/back\\slash A", false, VG_REGION_FILE);
	/* last line has no newline but is complete */
	expect_region(&m->regions[10], 0xffffffffff600000, 0xffffffffff601000, "--xp", 0,
		      0, 0, 0, "[vsyscall]", false, VG_REGION_VSYSCALL);
	/* a decoded escape may have been those bytes literally: the kernel
	 * does not escape a backslash */
	for (size_t i = 0; i < m->n; i++)
		assert_int_equal(m->regions[i].name_ambiguous, i == 1 || i == 9);
	vg_maps_free(m);
}

static void test_overlong(void **state)
{
	struct vg_maps *m = parse_fixture("overlong.maps");
	char want[4096];
	size_t n = 0;

	want[n++] = '/';
	for (int i = 0; i < 1000; i++) {
		want[n++] = 'd';
		want[n++] = '/';
	}
	memset(want + n, 'x', 1990);
	n += 1990;
	want[n] = '\0';
	assert_int_equal(m->n, 1);
	expect_region(&m->regions[0], 0x7f0000000000, 0x7f0000001000, "r--p", 0, 8, 1,
		      4242, want, false, VG_REGION_FILE);
	assert_int_equal(strlen(m->regions[0].path), 3991);
	vg_maps_free(m);
}

/* A PATH_MAX path made only of newlines: a 16 KiB line. */
static void test_16k_line(void **state)
{
	const char *head = "7f0000000000-7f0000002000 rw-s 00001000 00:01 7 /";
	size_t hl = strlen(head), n = 4000, len = hl + n * 4 + 11 + 1;
	char *text = malloc(len + 1), *want = malloc(n + 2);
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	char *p = text;

	assert_non_null(text);
	assert_non_null(want);
	memcpy(p, head, hl);
	p += hl;
	want[0] = '/';
	for (size_t i = 0; i < n; i++) {
		memcpy(p, "\\012", 4);
		p += 4;
		want[i + 1] = '\n';
	}
	want[n + 1] = '\0';
	memcpy(p, " (deleted)\n", 11);
	p += 11;
	assert_true((size_t)(p - text) < len);
	assert_int_equal(vg_maps_parse(text, (size_t)(p - text), &m, &err), 0);
	assert_int_equal(m->n, 1);
	expect_region(&m->regions[0], 0x7f0000000000, 0x7f0000002000, "rw-s", 0x1000,
		      0, 1, 7, want, true, VG_REGION_FILE);
	assert_true(m->regions[0].name_ambiguous);
	vg_maps_free(m);
	free(text);
	free(want);
}

static void expect_reject(const char *text, size_t len, const char *needle)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = (struct vg_maps *)0x1;

	assert_int_equal(vg_maps_parse(text, len, &m, &err), -EINVAL);
	assert_null(m);
	assert_int_equal(err.code, -EINVAL);
	if (!strstr(err.msg, needle))
		fail_msg("error '%s' lacks '%s' for input '%.*s'", err.msg, needle,
			 (int)len, text);
}

static void expect_reject_fixture(const char *name, const char *needle)
{
	size_t len;
	char *text = slurp(name, &len);

	expect_reject(text, len, needle);
	free(text);
}

static void test_reject_fixtures(void **state)
{
	expect_reject_fixture("truncated.maps", "line 2: bad permissions");
	expect_reject_fixture("truncated.maps", "truncated last line");
	expect_reject_fixture("mangled_hex.maps", "line 2: expected '-' after the start address");
	expect_reject_fixture("overlap.maps", "line 2: region 401000-403000 overlaps or precedes 400000-402000");
	expect_reject_fixture("unsorted.maps", "line 2: region 400000-401000 overlaps or precedes 500000-501000");
}

static void test_reject_lines(void **state)
{
	static const struct {
		const char *text;
		const char *needle;
	} bad[] = {
		{ "x", "line 1: bad start address" },
		{ "00400000-00401000 r-xq 00000000 fe:00 1 /a\n", "line 1: bad permissions" },
		{ "00400000-00401000 r-x 00000000 fe:00 1 /a\n", "line 1: bad permissions" },
		{ "00400000-00401000  r-xp 00000000 fe:00 1 /a\n", "line 1: bad permissions" },
		{ "00000000000400000-00401000 r-xp 00000000 fe:00 1 /a\n", "line 1: bad start address" },
		{ "00401000-00400000 r-xp 00000000 fe:00 1 /a\n", "line 1: end address not above start" },
		{ "00400000-00400000 r-xp 00000000 fe:00 1 /a\n", "line 1: end address not above start" },
		{ "00400000-00401000 r-xp 00000000 fe:00\n", "line 1: expected ' ' after the device" },
		{ "00400000-00401000 r-xp 00000000 fe:00 \n", "line 1: bad inode" },
		{ "00400000-00401000 r-xp 00000000 fe:00 12a /x\n", "line 1: bad inode" },
		{ "00400000-00401000 r-xp 00000000 fe:00 99999999999999999999 /x\n", "line 1: bad inode" },
		{ "00400000-00401000 r-xp 00000000 fe00 1 /x\n", "line 1: expected ':' in the device" },
		{ "00400000-00401000 r-xp 0000g000 fe:00 1 /x\n", "line 1: expected ' ' after the offset" },
		{ "00400000-00401000 r-xp 00000000 fe:00 1 /x\n\n00402000-00403000 r-xp 00000000 fe:00 1 /x\n", "line 2: empty line" },
		{ "00400000-00401000 r-xp 00000000 fe:00 1 /x\n00402000-0040", "line 2: expected ' ' after the end address (truncated last line?)" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_reject(bad[i].text, strlen(bad[i].text), bad[i].needle);
	/* NUL inside the path: explicit length past it */
	expect_reject("00400000-00401000 r-xp 00000000 fe:00 1 /a\0b\n", 44, "line 1: NUL byte in the path");
}

static void test_minimal_and_empty(void **state)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	const char *t = "1-2 r-xs 0 0:0 0";

	assert_int_equal(vg_maps_parse("", 0, &m, &err), 0);
	assert_int_equal(m->n, 0);
	assert_null(vg_maps_find(m, 0));
	vg_maps_free(m);

	m = parse_fixture("empty.maps");
	assert_int_equal(m->n, 0);
	vg_maps_free(m);

	/* minimal digits, no trailing space, no newline, upper-case hex */
	assert_int_equal(vg_maps_parse(t, strlen(t), &m, &err), 0);
	assert_int_equal(m->n, 1);
	expect_region(&m->regions[0], 1, 2, "r-xs", 0, 0, 0, 0, "", false, VG_REGION_ANON);
	vg_maps_free(m);
	t = "AB-CD ---p FF 1F:2 18446744073709551615 [anon:x y] (deleted)\n";
	assert_int_equal(vg_maps_parse(t, strlen(t), &m, &err), 0);
	/* a bracketed label is never a deleted file */
	expect_region(&m->regions[0], 0xab, 0xcd, "---p", 0xff, 0x1f, 2,
		      UINT64_MAX, "[anon:x y] (deleted)", false, VG_REGION_SPECIAL);
	vg_maps_free(m);
	assert_null(vg_maps_free(NULL));
}

static void test_find(void **state)
{
	struct vg_maps *m = parse_fixture("hostile.maps");

	assert_null(vg_maps_find(m, 0));
	assert_null(vg_maps_find(m, 0x3fffff));
	assert_ptr_equal(vg_maps_find(m, 0x400000), &m->regions[0]);
	assert_ptr_equal(vg_maps_find(m, 0x400fff), &m->regions[0]);
	assert_ptr_equal(vg_maps_find(m, 0x401000), &m->regions[1]);
	assert_ptr_equal(vg_maps_find(m, 0x406fff), &m->regions[6]);
	assert_null(vg_maps_find(m, 0x407000));  /* gap */
	assert_null(vg_maps_find(m, 0x407fff));
	assert_ptr_equal(vg_maps_find(m, 0x408000), &m->regions[7]);
	assert_ptr_equal(vg_maps_find(m, 0x40afff), &m->regions[9]);
	assert_null(vg_maps_find(m, 0x40b000));
	assert_null(vg_maps_find(m, 0xffffffffff5fffff));
	assert_ptr_equal(vg_maps_find(m, 0xffffffffff600000), &m->regions[10]);
	assert_ptr_equal(vg_maps_find(m, 0xffffffffff600fff), &m->regions[10]);
	assert_null(vg_maps_find(m, 0xffffffffff601000));
	assert_null(vg_maps_find(m, UINT64_MAX));
	assert_null(vg_maps_find(NULL, 0x400000));
	/* every region's first and last byte, on a real table */
	vg_maps_free(m);
	m = parse_fixture("cat_self.maps");
	for (size_t i = 0; i < m->n; i++) {
		assert_ptr_equal(vg_maps_find(m, m->regions[i].start), &m->regions[i]);
		assert_ptr_equal(vg_maps_find(m, m->regions[i].end - 1), &m->regions[i]);
	}
	vg_maps_free(m);
}

static int states_freed;

static void count_free(void *p)
{
	states_freed++;
	free(p);
}

static void test_carry_over(void **state)
{
	size_t len;
	char *text = slurp("hostile.maps", &len);
	struct vg_error err = { 0 };
	struct vg_maps *old_m = NULL, *new_m = NULL;
	char *p;

	assert_int_equal(vg_maps_parse(text, len, &old_m, &err), 0);
	old_m->state_free = count_free;
	for (size_t i = 0; i < old_m->n; i++) {
		int *id = malloc(sizeof(*id));

		assert_non_null(id);
		*id = (int)i;
		old_m->regions[i].state = id;
	}
	/* new table: region 1 changed inode, region 5 gone (blanked into a
	 * line of region 4's tail is not possible: drop it), others same */
	p = strstr(text, "1235 ");
	assert_non_null(p);
	p[3] = '6';
	p = strstr(text, "00405000-00406000");
	assert_non_null(p);
	{
		char *nl = strchr(p, '\n');

		memmove(p, nl + 1, strlen(nl + 1) + 1);
		len = strlen(text);
	}
	assert_int_equal(vg_maps_parse(text, len, &new_m, &err), 0);
	assert_int_equal(new_m->n, 10);
	assert_null(new_m->state_free);

	states_freed = 0;
	assert_int_equal(vg_maps_carry_over(new_m, old_m), 9);
	assert_int_equal(states_freed, 2);
	assert_ptr_equal(new_m->state_free, count_free);
	for (size_t i = 0; i < old_m->n; i++)
		assert_null(old_m->regions[i].state);
	assert_int_equal(*(int *)new_m->regions[0].state, 0);
	assert_null(new_m->regions[1].state);
	assert_int_equal(*(int *)new_m->regions[4].state, 4);
	assert_int_equal(*(int *)new_m->regions[5].state, 6);
	assert_int_equal(*(int *)new_m->regions[9].state, 10);
	vg_maps_free(old_m);
	assert_int_equal(states_freed, 2);
	vg_maps_free(new_m);
	assert_int_equal(states_freed, 11);
	assert_int_equal(vg_maps_carry_over(NULL, NULL), 0);
	free(text);
}

/* A live file literally named "lit (deleted)" prints as a deleted "lit";
 * vg_maps_settle_deleted() tells them apart by device and inode. */
static void test_settle_deleted(void **state)
{
	char dir[] = "/tmp/vigil-settle-XXXXXX", lit[128], gone[128], text[2048];
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	struct stat st;
	unsigned maj, min;
	unsigned long long ino;
	int fd, n;

	assert_non_null(mkdtemp(dir));
	snprintf(lit, sizeof(lit), "%s/lit (deleted)", dir);
	snprintf(gone, sizeof(gone), "%s/gone", dir);
	fd = open(lit, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(lit, &st), 0);
	maj = major(st.st_dev);
	min = minor(st.st_dev);
	ino = (unsigned long long)st.st_ino;
	n = snprintf(text, sizeof(text),
		     /* 0: the live file, as the kernel prints it */
		     "1000-2000 r--p 00000000 %x:%x %llu %s\n"
		     /* 1: same name, another inode: a deleted "lit" */
		     "2000-3000 r--p 00000000 %x:%x %llu %s\n"
		     /* 2: same name, another device */
		     "3000-4000 r--p 00000000 %x:%x %llu %s\n"
		     /* 3: really deleted */
		     "4000-5000 r--p 00000000 %x:%x %llu %s (deleted)\n"
		     /* 4: not a file: never looked at */
		     "5000-6000 rw-s 00000000 00:01 %llu /memfd:lit (deleted)\n"
		     /* 5: the live file again, with its suffix deleted too */
		     "6000-7000 r--p 00000000 %x:%x %llu %s (deleted)\n"
		     /* 6: shared anonymous memory */
		     "7000-8000 rw-s 00000000 00:01 77 /dev/zero (deleted)\n",
		     maj, min, ino, lit, maj, min, ino + 1, lit, maj + 1, min, ino, lit,
		     maj, min, ino, gone, ino, maj, min, ino, lit);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(vg_maps_parse(text, (size_t)n, &m, &err), 0);
	assert_int_equal(m->n, 7);
	for (size_t i = 0; i < m->n; i++)
		assert_true(m->regions[i].deleted);
	/* the pure parser reads the live file as a deleted "lit" */
	snprintf(text, sizeof(text), "%s/lit", dir);
	assert_string_equal(m->regions[0].path, text);

	assert_int_equal(vg_maps_settle_deleted(m, ""), 1);
	expect_region(&m->regions[0], 0x1000, 0x2000, "r--p", 0, maj, min, ino, lit,
		      false, VG_REGION_FILE);
	expect_region(&m->regions[1], 0x2000, 0x3000, "r--p", 0, maj, min, ino + 1, text,
		      true, VG_REGION_FILE);
	expect_region(&m->regions[2], 0x3000, 0x4000, "r--p", 0, maj + 1, min, ino, text,
		      true, VG_REGION_FILE);
	expect_region(&m->regions[3], 0x4000, 0x5000, "r--p", 0, maj, min, ino, gone,
		      true, VG_REGION_FILE);
	expect_region(&m->regions[4], 0x5000, 0x6000, "rw-s", 0, 0, 1, ino, "/memfd:lit",
		      true, VG_REGION_MEMFD);
	/* "lit (deleted) (deleted)": the file named "lit (deleted)" was
	 * deleted, and "lit (deleted) (deleted)" does not exist */
	expect_region(&m->regions[5], 0x6000, 0x7000, "r--p", 0, maj, min, ino, lit,
		      true, VG_REGION_FILE);
	expect_region(&m->regions[6], 0x7000, 0x8000, "rw-s", 0, 0, 1, 77, "/dev/zero",
		      true, VG_REGION_FILE);
	/* settled once, nothing left to do; through a root prefix too */
	assert_int_equal(vg_maps_settle_deleted(m, "/proc/self/root"), 0);
	vg_maps_free(m);

	n = snprintf(text, sizeof(text), "1000-2000 r--p 00000000 %x:%x %llu %s\n",
		     maj, min, ino, lit);
	assert_int_equal(vg_maps_parse(text, (size_t)n, &m, &err), 0);
	assert_int_equal(vg_maps_settle_deleted(m, "/proc/self/root"), 1);
	assert_string_equal(m->regions[0].path, lit);
	assert_false(m->regions[0].deleted);
	vg_maps_free(m);

	/* a table built by hand: one malloc per path */
	m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->regions = calloc(2, sizeof(*m->regions));
	assert_non_null(m->regions);
	m->n = 2;
	for (size_t i = 0; i < 2; i++) {
		struct vg_region *r = &m->regions[i];

		r->start = 0x1000 * (i + 1);
		r->end = r->start + 0x1000;
		r->dev_major = maj;
		r->dev_minor = min;
		r->inode = ino + i;
		r->kind = VG_REGION_FILE;
		r->deleted = true;
		r->path = strdup(lit);
		assert_non_null(r->path);
		r->path[strlen(r->path) - strlen(" (deleted)")] = '\0';
	}
	assert_int_equal(vg_maps_settle_deleted(m, ""), 1);
	assert_string_equal(m->regions[0].path, lit);
	assert_false(m->regions[0].deleted);
	assert_true(m->regions[1].deleted);
	vg_maps_free(m);
	assert_int_equal(vg_maps_settle_deleted(NULL, ""), 0);

	assert_int_equal(unlink(lit), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_kind_names(void **state)
{
	assert_string_equal(vg_region_kind_name(VG_REGION_ANON), "anon");
	assert_string_equal(vg_region_kind_name(VG_REGION_FILE), "file");
	assert_string_equal(vg_region_kind_name(VG_REGION_HEAP), "heap");
	assert_string_equal(vg_region_kind_name(VG_REGION_STACK), "stack");
	assert_string_equal(vg_region_kind_name(VG_REGION_VDSO), "vdso");
	assert_string_equal(vg_region_kind_name(VG_REGION_VVAR), "vvar");
	assert_string_equal(vg_region_kind_name(VG_REGION_VSYSCALL), "vsyscall");
	assert_string_equal(vg_region_kind_name(VG_REGION_MEMFD), "memfd");
	assert_string_equal(vg_region_kind_name(VG_REGION_SPECIAL), "special");
	assert_string_equal(vg_region_kind_name((enum vg_region_kind)99), "unknown");
}

static int g_self_marker;

static void test_read_self(void **state)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	const struct vg_region *r;

	assert_int_equal(vg_maps_read(getpid(), &m, &err), 0);
	assert_true(m->n > 5);
	r = vg_maps_find(m, (uint64_t)(uintptr_t)&g_self_marker);
	assert_non_null(r);
	assert_true(r->writable);
	r = vg_maps_find(m, (uint64_t)(uintptr_t)&test_read_self);
	assert_non_null(r);
	assert_true(r->executable);
	assert_int_equal(r->kind, VG_REGION_FILE);
	r = vg_maps_find(m, (uint64_t)(uintptr_t)&err);
	assert_non_null(r);
	assert_int_equal(r->kind, VG_REGION_STACK);
	vg_maps_free(m);
}

static void test_read_errors(void **state)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	pid_t child;
	int st;

	assert_int_equal(vg_maps_read(0, &m, &err), -EINVAL);
	vg_error_clear(&err);
	assert_int_equal(vg_maps_read(-5, &m, &err), -EINVAL);
	vg_error_clear(&err);
	/* beyond pid_max (at most 4194304) */
	assert_int_equal(vg_maps_read(99999999, &m, &err), -ESRCH);
	assert_string_equal(err.msg, "pid 99999999 does not exist or has exited");
	assert_null(m);

	/* a zombie: exited, not reaped, empty maps */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	tu_wait_zombie(child);
	vg_error_clear(&err);
	assert_int_equal(vg_maps_read(child, &m, &err), -ESRCH);
	assert_null(m);
	assert_int_equal(waitpid(child, &st, 0), child);

	/* kthreadd has no mm: an empty table, not an error */
	vg_error_clear(&err);
	assert_int_equal(vg_maps_read(2, &m, &err), 0);
	assert_int_equal(m->n, 0);
	vg_maps_free(m);
}

static int read_init_maps(void)
{
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;

	if (vg_maps_read(1, &m, &err) != -EACCES || m)
		return 1;
	if (!strstr(err.msg, "cannot read /proc/PID/maps of pid 1: permission denied; run as root or as the target's user"))
		return 2;
	return 0;
}

/* Without ptrace rights over the target: -EACCES with the remedy. */
static void test_read_eacces(void **state)
{
	tu_as_nobody(read_init_maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_cat),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_16k_line),
		cmocka_unit_test(test_reject_fixtures),
		cmocka_unit_test(test_reject_lines),
		cmocka_unit_test(test_minimal_and_empty),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_carry_over),
		cmocka_unit_test(test_settle_deleted),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_read_eacces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
