/* test_outfile.c - the output file rule: only a regular file of the user
 * with one link is replaced, atomically; symlinks, devices, FIFOs, hard
 * links and directories are refused and left as they were; private files
 * are 0600; a refusal or an abort leaves no temporary file behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/outfile.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/vg-outfile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *name)
{
	static char p[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
	char buf[256] = { 0 };
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	(void)!fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_string_equal(buf, text);
}

/* Nothing but the names given is in the directory (no temporary file). */
static void expect_entries(int n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int k = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			k++;
	closedir(d);
	assert_int_equal(k, n);
}

static void write_file(const char *path, unsigned flags, const char *text)
{
	struct vg_outfile o;
	struct vg_error err = { 0 };

	assert_int_equal(vg_outfile_open(&o, path, flags, &err), 0);
	assert_int_equal(vg_outfile_write(&o, text, strlen(text)), 0);
	assert_int_equal(vg_outfile_commit(&o, "test output", &err), 0);
}

static void test_new_and_replace(void **state)
{
	struct stat st;
	mode_t old = umask(022);

	(void)state;
	write_file(at("plain"), 0, "one\n");
	expect_text(at("plain"), "one\n");
	assert_int_equal(stat(at("plain"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	write_file(at("plain"), 0, "two\n");
	expect_text(at("plain"), "two\n");

	/* Private: 0600, also when it replaces a 0644 file. */
	write_file(at("secret"), VG_OUTFILE_PRIVATE, "key\n");
	assert_int_equal(stat(at("secret"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(chmod(at("secret"), 0644), 0);
	write_file(at("secret"), VG_OUTFILE_PRIVATE, "key2\n");
	assert_int_equal(stat(at("secret"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	umask(old);
	expect_entries(2);
}

static void test_stream(void **state)
{
	struct vg_outfile o;
	struct vg_error err = { 0 };
	FILE *f;

	(void)state;
	assert_int_equal(vg_outfile_open(&o, at("streamed"), 0, &err), 0);
	f = vg_outfile_stream(&o);
	assert_non_null(f);
	fprintf(f, "%d-%s\n", 42, "x");
	assert_int_equal(vg_outfile_commit(&o, "test output", &err), 0);
	expect_text(at("streamed"), "42-x\n");
}

/* Each refused destination is untouched, and no temporary file is left. */
static void refused(const char *path, const char *what)
{
	struct vg_outfile o;
	struct vg_error err = { 0 };
	struct stat before, after;

	assert_int_equal(lstat(path, &before), 0);
	assert_int_equal(vg_outfile_check(path, &err), -EINVAL);
	assert_non_null(strstr(err.msg, what));
	vg_error_clear(&err);
	assert_int_equal(vg_outfile_open(&o, path, VG_OUTFILE_PRIVATE, &err), -EINVAL);
	assert_int_equal(lstat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_mode, after.st_mode);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

static void test_refused(void **state)
{
	(void)state;
	put(at("real"), "real\n");
	assert_int_equal(symlink(at("real"), at("link")), 0);
	refused(at("link"), "symbolic link");
	expect_text(at("real"), "real\n");

	assert_int_equal(symlink(at("nowhere"), at("dangling")), 0);
	refused(at("dangling"), "symbolic link");

	assert_int_equal(link(at("real"), at("hard")), 0);
	refused(at("hard"), "hard links");
	refused(at("real"), "hard links");
	expect_text(at("real"), "real\n");

	assert_int_equal(mkfifo(at("fifo"), 0644), 0);
	refused(at("fifo"), "FIFO");
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	refused(at("sub"), "directory");
	refused("/dev/null", "character device");
	expect_entries(6);
}

static void test_bad_dir(void **state)
{
	struct vg_error err = { 0 };

	(void)state;
	assert_int_equal(vg_outfile_check(at("none/file"), &err), -ENOENT);
	vg_error_clear(&err);
	put(at("afile"), "x");
	assert_int_equal(vg_outfile_check(at("afile/file"), &err), -ENOENT);
	vg_error_clear(&err);
	assert_int_equal(vg_outfile_check("", &err), -EINVAL);
	vg_error_clear(&err);
	assert_int_equal(vg_outfile_check(at("."), &err), -EINVAL);
}

/* A symlink planted at PATH between open and commit is not replaced. */
static void test_planted(void **state)
{
	struct vg_outfile o;
	struct vg_error err = { 0 };
	char buf[PATH_MAX];
	ssize_t n;

	(void)state;
	put(at("victim"), "victim\n");
	assert_int_equal(vg_outfile_open(&o, at("out"), 0, &err), 0);
	assert_int_equal(vg_outfile_write(&o, "new\n", 4), 0);
	assert_int_equal(symlink(at("victim"), at("out")), 0);
	assert_int_equal(vg_outfile_commit(&o, "test output", &err), -EINVAL);
	n = readlink(at("out"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = 0;
	assert_string_equal(buf, at("victim"));
	expect_text(at("victim"), "victim\n");

	/* Abort: nothing of it stays. */
	assert_int_equal(vg_outfile_open(&o, at("aborted"), 0, &err), 0);
	vg_outfile_abort(&o);
	assert_int_equal(access(at("aborted"), F_OK), -1);
	expect_entries(2);
}

/* A full file system: the commit says ENOSPC and leaves PATH as it was.
 * /dev/full cannot be the directory, so an fd of the temp file is swapped
 * for one on /dev/full. */
static void test_enospc(void **state)
{
	struct vg_outfile o;
	struct vg_error err = { 0 };
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC);

	(void)state;
	if (full < 0)
		skip();
	put(at("kept"), "kept\n");
	assert_int_equal(vg_outfile_open(&o, at("kept"), 0, &err), 0);
	assert_int_equal(dup3(full, o.fd, O_CLOEXEC), o.fd);
	close(full);
	fputs("some text", vg_outfile_stream(&o));
	assert_int_equal(vg_outfile_commit(&o, "profile", &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "No space left on device"));
	assert_int_equal(err.exit, VG_EXIT_RUNTIME);
	expect_text(at("kept"), "kept\n");
	expect_entries(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_and_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enospc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
