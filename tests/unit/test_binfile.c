/* test_binfile.c - util/binfile.c: a file written field by field reads
 * back the same with either checksum; a truncated, corrupt, foreign or
 * too new file is refused with the sentence a user sees. */
#include "util/binfile.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/crc32c.h"

static const char MAGIC[8] = { 'V', 'G', 'T', 'E', 'S', 'T', 'B', 'F' };
static char g_dir[64];

static int setup_dir(void **state)
{
	(void)state;
	strcpy(g_dir, "/tmp/vg_binfile_XXXXXX");
	return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes the test fields to path with version and kind; 0 or -errno. */
static int write_fields(const char *path, uint32_t version, enum vg_bin_crc kind)
{
	struct vg_binw w;
	struct vg_error err = { 0 };
	int rc = vg_binw_open(&w, path, MAGIC, version, kind, &err);

	if (rc < 0)
		return rc;
	vg_binw_u8(&w, 0xab);
	vg_binw_u16(&w, 0xbeef);
	vg_binw_u32(&w, 0xdeadbeefu);
	vg_binw_u64(&w, 0x0123456789abcdefull);
	vg_binw_uleb(&w, 0);
	vg_binw_uleb(&w, 300);
	vg_binw_uleb(&w, UINT64_MAX);
	vg_binw_put(&w, "payload", 7);
	vg_binw_put_crc(&w, "given", 5, vg_bin_crc(kind, "given", 5));
	return vg_binw_commit(&w, "test file", &err);
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", g_dir, name);
}

static void test_round_trip(void **state)
{
	static const enum vg_bin_crc kinds[] = { VG_BIN_CRC32, VG_BIN_CRC32C };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct vg_binr r;
		struct vg_error err = { 0 };
		char path[128], text[12] = { 0 };
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64, l0, l1, l2;

		path_of(path, sizeof(path), k ? "c32c" : "c32");
		/* The reader takes the kind from the version: CRC-32C from 2 on. */
		assert_int_equal(write_fields(path, (uint32_t)k + 1, kinds[k]), 0);
		assert_int_equal(vg_binr_open(&r, path, MAGIC, 1, 2, 2, "test file", &err), 0);
		assert_int_equal(r.version, k + 1);
		assert_int_equal(r.crc_kind, kinds[k]);
		assert_true(vg_binr_u8(&r, &u8) && vg_binr_u16(&r, &u16) &&
			    vg_binr_u32(&r, &u32) && vg_binr_u64(&r, &u64));
		assert_int_equal(u8, 0xab);
		assert_int_equal(u16, 0xbeef);
		assert_int_equal(u32, 0xdeadbeefu);
		assert_true(u64 == 0x0123456789abcdefull);
		assert_true(vg_binr_uleb(&r, &l0) && vg_binr_uleb(&r, &l1) &&
			    vg_binr_uleb(&r, &l2));
		assert_true(l0 == 0 && l1 == 300 && l2 == UINT64_MAX);
		assert_int_equal(vg_binr_left(&r), 12);
		assert_true(vg_binr_get(&r, text, 12));
		assert_memory_equal(text, "payloadgiven", 12);
		assert_false(vg_binr_u8(&r, &u8));   /* past the end: corrupt */
		assert_int_equal(vg_binr_finish(&r, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "is corrupt"));

		/* Read exactly: the checksum matches. */
		memset(&err, 0, sizeof(err));
		assert_int_equal(vg_binr_open(&r, path, MAGIC, 1, 2, 2, "test file", &err), 0);
		assert_true(vg_binr_get(&r, text, 1) && vg_binr_u16(&r, &u16));
		{
			uint8_t rest[64];
			uint64_t left = vg_binr_left(&r);

			assert_true(left < sizeof(rest));
			assert_true(vg_binr_get(&r, rest, (size_t)left));
		}
		assert_int_equal(vg_binr_finish(&r, &err), 0);
	}
}

static void test_checksums(void **state)
{
	(void)state;
	assert_int_equal(vg_bin_crc(VG_BIN_CRC32, "123456789", 9), 0xcbf43926u);
	assert_int_equal(vg_bin_crc(VG_BIN_CRC32C, "123456789", 9), 0xe3069283u);
	assert_int_equal(vg_bin_crc(VG_BIN_CRC32C, "abc", 3), vg_crc32c(0, "abc", 3));
}

static void read_all(const char *path, uint8_t *buf, size_t *len)
{
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	*len = fread(buf, 1, 4096, f);
	fclose(f);
}

static void write_bytes(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static int read_through(const char *path, struct vg_error *err)
{
	struct vg_binr r;
	uint8_t b[4096];
	int rc;

	memset(err, 0, sizeof(*err));   /* the first sentence would win */
	rc = vg_binr_open(&r, path, MAGIC, 1, 1, 0, "test file", err);
	if (rc < 0)
		return rc;
	assert_true(vg_binr_get(&r, b, (size_t)vg_binr_left(&r)));
	return vg_binr_finish(&r, err);
}

static void test_refused(void **state)
{
	struct vg_error err = { 0 };
	uint8_t b[4096];
	size_t len;
	char good[128], bad[128];

	(void)state;
	path_of(good, sizeof(good), "good");
	path_of(bad, sizeof(bad), "bad");
	assert_int_equal(write_fields(good, 1, VG_BIN_CRC32), 0);
	assert_int_equal(read_through(good, &err), 0);
	read_all(good, b, &len);
	assert_true(len > VG_BIN_HEADER + 4);

	write_bytes(bad, b, len - 1);
	assert_int_equal(read_through(bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is truncated"));

	write_bytes(bad, b, 10);
	assert_int_equal(read_through(bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is truncated"));

	b[VG_BIN_HEADER + 2] ^= 0x40;
	write_bytes(bad, b, len);
	assert_int_equal(read_through(bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "checksum mismatch"));
	b[VG_BIN_HEADER + 2] ^= 0x40;

	b[0] = 'X';
	write_bytes(bad, b, len);
	assert_int_equal(read_through(bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "wrong magic"));
	b[0] = MAGIC[0];

	b[8] = 7;   /* version 7 */
	write_bytes(bad, b, len);
	assert_int_equal(read_through(bad, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "version 7"));

	path_of(bad, sizeof(bad), "missing");
	assert_int_equal(read_through(bad, &err), -ENOENT);
	assert_int_equal(read_through(g_dir, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_checksums),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
