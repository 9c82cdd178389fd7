/* outfile.c - the files vigil writes for the user (see outfile.h).
 *
 * The destination is judged with lstat(2), never followed: what is at PATH
 * itself must be a regular file of the user (st_uid == euid) with
 * st_nlink == 1, or nothing.  The new content goes to ".NAME.XXXXXX" in
 * the same directory, created with O_CREAT|O_EXCL (which never follows a
 * symlink planted at that name), then fsync(2) and rename(2), so the
 * replacement is atomic and its errors (ENOSPC on a full disk, EIO) are
 * seen before PATH is touched.  When PATH did not exist, the rename is
 * renameat2(RENAME_NOREPLACE): a file that appears meanwhile is judged
 * again instead of being replaced blindly.  Deliberately not done: keeping
 * the mode or owner of the file replaced (it is a new file), or writing
 * through to a device (`-o /dev/stdout`): standard output is the default
 * destination already. */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* dir: PATH's directory ("." or "/" when it names none); base: the last
 * component.  -ENOMEM. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, (size_t)(slash - path));
	return *dir ? 0 : -ENOMEM;
}

static const char *kind_of(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

static int judge_in(const char *path, const char *dir, const char *base, bool *exists,
		    struct vg_error *err);

/* Judge what is at path now.  *exists says whether anything is. */
static int judge(const char *path, bool *exists, struct vg_error *err)
{
	char *dir = NULL;
	const char *base;
	int r;

	*exists = false;
	if (!*path)
		return vg_error_set(err, -EINVAL, "the output path is empty");
	if (split_path(path, &dir, &base) < 0)
		return vg_error_set(err, -ENOMEM, "out of memory checking '%s'", path);
	r = judge_in(path, dir, base, exists, err);
	free(dir);
	return r;
}

static int judge_in(const char *path, const char *dir, const char *base, bool *exists,
		    struct vg_error *err)
{
	struct stat st;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return vg_error_set(err, -EINVAL, "cannot write '%s': it names a directory; give a file name", path);
	if (lstat(path, &st) == 0) {
		*exists = true;
		if (!S_ISREG(st.st_mode))
			return vg_error_set(err, -EINVAL,
					    "refusing to write '%s': it is %s; vigil replaces only regular files (give a new file name)",
					    path, kind_of(st.st_mode));
		if (st.st_nlink > 1)
			return vg_error_set(err, -EINVAL,
					    "refusing to write '%s': it has %ju hard links, and replacing it would split them (give a new file name)",
					    path, (uintmax_t)st.st_nlink);
		if (st.st_uid != geteuid())
			return vg_error_set(err, -EINVAL,
					    "refusing to write '%s': it belongs to uid %ju, not to you (uid %ju); give a new file name",
					    path, (uintmax_t)st.st_uid, (uintmax_t)geteuid());
	} else if (errno != ENOENT) {
		int e = errno;

		return vg_error_set(err, e == ENOTDIR ? -ENOENT : -e, "cannot write '%s': %s", path, strerror(e));
	}
	if (stat(dir, &st) < 0) {
		int e = errno;

		return vg_error_set(err, e == ENOTDIR ? -ENOENT : -e, "cannot write '%s': directory '%s': %s",
				    path, dir, strerror(e));
	}
	if (!S_ISDIR(st.st_mode))
		return vg_error_set(err, -ENOENT, "cannot write '%s': '%s' is not a directory", path, dir);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		int e = errno;

		return vg_error_set(err, -e, "cannot write '%s': cannot create files in '%s': %s",
				    path, dir, strerror(e));
	}
	return 0;
}

int vg_outfile_check(const char *path, struct vg_error *err)
{
	bool exists;

	return judge(path, &exists, err);
}

static void outfile_free(struct vg_outfile *o)
{
	if (o->stream) {
		/* Its cookie writes to o->fd: nothing is left to flush on abort,
		 * and a commit flushed it first. */
		fclose(o->stream);
		o->stream = NULL;
	}
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
}

int vg_outfile_open(struct vg_outfile *o, const char *path, unsigned flags,
		    struct vg_error *err)
{
	char *dir = NULL;
	const char *base;
	mode_t mode = (flags & VG_OUTFILE_PRIVATE) ? 0600 : 0666;
	bool exists;
	int r;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	r = judge(path, &exists, err);
	if (r < 0)
		return r;
	if (split_path(path, &dir, &base) < 0 || !(o->path = strdup(path))) {
		free(dir);
		return vg_error_set(err, -ENOMEM, "out of memory writing '%s'", path);
	}
	for (int i = 0; i < 100; i++) {
		uint64_t rnd = 0;

		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			rnd = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 16 ^ (uint64_t)i;
		free(o->tmp);
		if (asprintf(&o->tmp, "%s/.%s.%06llx", dir, base,
			     (unsigned long long)(rnd & 0xffffff)) < 0) {
			o->tmp = NULL;
			free(dir);
			outfile_free(o);
			return vg_error_set(err, -ENOMEM, "out of memory writing '%s'", path);
		}
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	free(dir);
	if (o->fd < 0) {
		int e = errno;

		vg_error_set(err, -e, "cannot write '%s': cannot create a temporary file in its directory: %s",
			     path, strerror(e));
		outfile_free(o);
		return -e;
	}
	/* 0600 even under a umask that would have given less (0700 kept). */
	if ((flags & VG_OUTFILE_PRIVATE) && fchmod(o->fd, 0600) < 0) {
		int e = errno;

		vg_outfile_abort(o);
		return vg_error_set(err, -e, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

int vg_outfile_write(struct vg_outfile *o, const void *p, size_t n)
{
	const char *b = p;

	while (n && !o->error) {
		ssize_t k = write(o->fd, b, n);

		if (k < 0) {
			if (errno != EINTR)
				o->error = -errno;
			continue;
		}
		if (k == 0) {
			o->error = -EIO;
			break;
		}
		b += k;
		n -= (size_t)k;
	}
	return o->error;
}

static ssize_t cookie_write(void *c, const char *p, size_t n)
{
	struct vg_outfile *o = c;

	if (vg_outfile_write(o, p, n) < 0) {
		errno = -o->error;
		return -1;
	}
	return (ssize_t)n;
}

FILE *vg_outfile_stream(struct vg_outfile *o)
{
	if (!o->stream) {
		o->stream = fopencookie(o, "w", (cookie_io_functions_t){ .write = cookie_write });
		if (!o->stream && !o->error)
			o->error = -ENOMEM;
	}
	return o->stream;
}

int vg_outfile_commit(struct vg_outfile *o, const char *what, struct vg_error *err)
{
	struct vg_error judged = { 0 };
	bool exists;
	int rc;

	if (o->stream) {
		if (fclose(o->stream) != 0 && !o->error)
			o->error = -EIO;
		o->stream = NULL;
	}
	if (!o->error && fsync(o->fd) < 0 && errno != EINVAL)
		o->error = -errno;
	if (!o->error && close(o->fd) < 0)
		o->error = -errno;
	else if (o->error)
		close(o->fd);
	o->fd = -1;
	if (o->error) {
		rc = vg_error_set(err, o->error, "cannot write %s '%s': %s", what, o->path,
				  strerror(-o->error));
		goto fail;
	}
	/* What is at PATH now, not what was there at the open. */
	rc = judge(o->path, &exists, &judged);
	if (rc < 0) {
		vg_error_set(err, rc, "%s", judged.msg);
		goto fail;
	}
	if (!exists) {
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
			goto done;
		if (errno == EEXIST) {
			rc = judge(o->path, &exists, &judged);
			if (rc < 0) {
				vg_error_set(err, rc, "%s", judged.msg);
				goto fail;
			}
		} else if (errno != EINVAL && errno != ENOSYS) {
			rc = vg_error_set(err, -errno, "cannot write %s '%s': %s", what, o->path, strerror(errno));
			goto fail;
		}
	}
	if (rename(o->tmp, o->path) < 0) {
		rc = vg_error_set(err, -errno, "cannot write %s '%s': %s", what, o->path, strerror(errno));
		goto fail;
	}
done:
	outfile_free(o);
	return 0;
fail:
	unlink(o->tmp);
	outfile_free(o);
	return rc;
}

void vg_outfile_abort(struct vg_outfile *o)
{
	if (o->tmp && o->fd >= 0)
		unlink(o->tmp);
	outfile_free(o);
}
