/* symcache.c - the directory of persistent symbol indexes: configuration
 * from the environment, keys, loading (mmap + symindex checks), writing
 * (outfile: temporary file, fsync, rename; 0600) and the size bound
 * (least recently used first, by mtime, which a use touches).  The rules
 * are in symcache.h. */
#include "sym/symcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"
#include "util/vec.h"

#define DEFAULT_MAX (1ull << 30)
#define SUFFIX ".vsx"
/* An index this large is mapped with huge-page advice (vg_symcache_load):
 * one PMD. */
#define VG_SYMCACHE_HUGE_MIN (2u << 20)

static uint64_t parse_size(const char *s, uint64_t dflt)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return dflt;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	return *end ? dflt : v;
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

void vg_symcache_config(struct vg_symcache *c)
{
	const char *d = getenv("VIGIL_CACHE_DIR");
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n = -1;

	memset(c, 0, sizeof(*c));
	c->verbose = env_true("VIGIL_VERBOSE");
	c->max_bytes = parse_size(getenv("VIGIL_CACHE_MAX"), DEFAULT_MAX);
	if (env_true("VIGIL_NO_CACHE"))
		return;
	/* XDG: a relative XDG_CACHE_HOME is invalid and ignored. */
	if (d && *d)
		n = snprintf(c->dir, sizeof(c->dir), "%s", d);
	else if (x && x[0] == '/')
		n = snprintf(c->dir, sizeof(c->dir), "%s/vigil", x);
	else if (home && home[0] == '/')
		n = snprintf(c->dir, sizeof(c->dir), "%s/.cache/vigil", home);
	c->enabled = n > 0 && (size_t)n < sizeof(c->dir);
}

static uint64_t fnv64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

bool vg_symcache_locate(const struct vg_symcache *c, const struct vg_image *di,
			char *key, size_t key_size, char *path, size_t path_size)
{
	struct stat st;
	int n;

	if (!c->enabled || !di || di->via == VG_VIA_MEMORY || !di->open_path ||
	    !di->open_path[0])
		return false;
	if (di->build_id_len) {
		char hex[2 * sizeof(di->build_id) + 1];

		for (size_t i = 0; i < di->build_id_len; i++)
			sprintf(hex + 2 * i, "%02x", di->build_id[i]);
		n = snprintf(key, key_size, "build-id:%s", hex);
		if (n < 0 || (size_t)n >= key_size)
			return false;
		n = snprintf(path, path_size, "%s/%s" SUFFIX, c->dir, hex);
	} else {
		/* No build-id: the file as it is now.  A rebuilt file has
		 * another size, mtime or inode, so another key.  Its name in
		 * the target, not the /proc/PID/... route that opened it,
		 * so that every run of a process finds the same file. */
		if (stat(di->open_path, &st) < 0 || (uint64_t)st.st_ino != di->inode)
			return false;
		n = snprintf(key, key_size, "file:%" PRIu64 ":%" PRIu64 ":%lld.%09ld:%" PRIu64 ":%s",
			     (uint64_t)st.st_dev, (uint64_t)st.st_ino, (long long)st.st_mtim.tv_sec,
			     st.st_mtim.tv_nsec, (uint64_t)st.st_size,
			     di->path && di->path[0] ? di->path : di->open_path);
		if (n < 0 || (size_t)n >= key_size)
			return false;
		n = snprintf(path, path_size, "%s/f-%016" PRIx64 SUFFIX, c->dir, fnv64(key));
	}
	return n > 0 && (size_t)n < path_size;
}

int vg_symcache_load(const struct vg_symcache *c, const char *key,
		     const char *path, struct vg_symcache_entry *e)
{
	struct vg_error err = { 0 };
	struct stat st;
	int fd, rc;

	memset(e, 0, sizeof(*e));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EINVAL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		if (c->verbose)
			fprintf(stderr, "vigil: symbol index %s: empty, or not a regular file: rebuilding it\n",
				path);
		return -EINVAL;
	}
	e->size = (size_t)st.st_size;
	e->map = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (e->map == MAP_FAILED) {
		e->map = NULL;
		close(fd);
		return -EINVAL;
	}
	/* Read from disk in 2 MiB folios and mapped by 2 MiB: a file the
	 * kernel read back in 4 KiB pages (after it left the page cache)
	 * took 374 faults and 14 ms to first touch 24 MB on a VM, one
	 * written or read whole took 14 faults and 2.4 ms.  Advice only:
	 * a kernel or file system without large folios ignores it. */
	if (e->size >= VG_SYMCACHE_HUGE_MIN)
		(void)madvise(e->map, e->size, MADV_HUGEPAGE);
	rc = vg_symindex_open_mem(e->map, e->size, key, 0, &e->index, &err);
	if (rc < 0) {
		if (c->verbose)
			fprintf(stderr, "vigil: symbol index %s: %s: rebuilding it\n", path, err.msg);
		close(fd);
		vg_symcache_entry_free(e);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	/* Used now: the last to be evicted. */
	futimens(fd, NULL);
	close(fd);
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->key, sizeof(e->key), "%s", key);
	return 0;
}

void vg_symcache_entry_free(struct vg_symcache_entry *e)
{
	e->index = vg_symindex_free(e->index);
	if (e->map)
		munmap(e->map, e->size);
	e->map = NULL;
}

/* mkdir -p, 0700 for what is created. */
static int make_dirs(const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

struct cached_file {
	char name[256];
	uint64_t size;
	struct timespec mtime;
};

static int cmp_mtime(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Remove the least recently used indexes (never `keep`, the one about to
 * be replaced) until `incoming` more bytes fit under the bound. */
static void evict(const struct vg_symcache *c, const char *keep, uint64_t incoming)
{
	struct cached_file *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = incoming;
	struct dirent *de;
	int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len <= strlen(SUFFIX) || len >= sizeof(files[0].name) ||
		    strcmp(de->d_name + len - strlen(SUFFIX), SUFFIX) != 0 ||
		    strcmp(de->d_name, keep) == 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (VG_GROW(files, cap, n + 1))
			break;
		memcpy(files[n].name, de->d_name, len + 1);
		files[n].size = (uint64_t)st.st_size;
		files[n].mtime = st.st_mtim;
		total += files[n].size;
		n++;
	}
	if (n)
		qsort(files, n, sizeof(*files), cmp_mtime);
	for (size_t i = 0; i < n && total > c->max_bytes; i++)
		if (unlinkat(dfd, files[i].name, 0) == 0)
			total -= files[i].size;
	free(files);
	closedir(d);
}

int vg_symcache_store(const struct vg_symcache *c, struct vg_dwindex *ix,
		      const struct vg_image *sym_img, uint32_t sym_of,
		      const struct vg_symindex_origin *origin,
		      const char *key, const char *path, size_t *size,
		      struct vg_error *err)
{
	struct vg_outfile o;
	uint8_t *buf;
	size_t len;
	const char *base = strrchr(path, '/');
	int rc;

	*size = 0;
	rc = vg_symindex_serialize(ix, sym_img, sym_of, origin, key, &buf, &len);
	if (rc == -EINVAL)
		return vg_error_set(err, rc, "its DWARF is incomplete or corrupt; not kept");
	if (rc < 0)
		return vg_error_set(err, rc, "out of memory serialising the index");
	if (len > c->max_bytes) {
		free(buf);
		return vg_error_set(err, -EFBIG, "index of %zu bytes exceeds VIGIL_CACHE_MAX (%" PRIu64 " bytes)",
				    len, c->max_bytes);
	}
	rc = make_dirs(c->dir);
	if (rc < 0) {
		free(buf);
		return vg_error_set(err, rc, "cannot create cache directory '%s': %s", c->dir,
				    strerror(-rc));
	}
	evict(c, base ? base + 1 : path, len);
	rc = vg_outfile_open(&o, path, VG_OUTFILE_PRIVATE, err);
	if (rc == 0) {
		vg_outfile_write(&o, buf, len);
		rc = vg_outfile_commit(&o, "symbol index", err);
	}
	free(buf);
	if (rc == 0)
		*size = len;
	return rc;
}

int vg_symcache_restamp(const struct vg_symcache_entry *e, const struct vg_symindex_origin *o,
			struct vg_error *err)
{
	struct vg_outfile out;
	uint8_t *buf;
	int rc;

	if (vg_symindex_restamp(e->map, e->size, o, &buf) < 0)
		return vg_error_set(err, -ENOMEM, "out of memory restamping the index");
	rc = vg_outfile_open(&out, e->path, VG_OUTFILE_PRIVATE, err);
	if (rc == 0) {
		vg_outfile_write(&out, buf, e->size);
		rc = vg_outfile_commit(&out, "symbol index", err);
	}
	free(buf);
	return rc;
}
