/* test_procmap.c - PROCMAP_QUERY against the text of /proc/PID/maps on a
 * live child that maps hostile names, and build-ids against the ELF note. */
#include "target/procmap.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "target/maps.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#define CHILD_SMALL_MAPS 3000

struct fixture {
	pid_t child;
	char dir[64];
	char spaced[PATH_MAX];   /* "a b\nc.bin" */
	char gone[PATH_MAX];     /* unlinked after mapping */
	uint64_t named_anon;     /* address of the [anon:vigil test] VMA, 0 if unsupported */
};

static int write_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0)
		return -1;
	return fd;
}

/* The child: maps everything, reports "ok <named anon addr>", waits. */
static void child_main(struct fixture *fx, int wfd)
{
	char msg[64];
	void *p;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = write_file(fx->spaced, 3 * 4096);
	if (fd < 0 || mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		_exit(10);
	/* a second mapping of the same file at an offset */
	if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096) == MAP_FAILED)
		_exit(11);
	close(fd);
	fd = write_file(fx->gone, 4096);
	if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		_exit(12);
	close(fd);
	if (unlink(fx->gone) < 0)
		_exit(13);
	fd = memfd_create("vigil test", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 8192) < 0 ||
	    mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
		_exit(14);
	close(fd);
	/* shared anonymous memory is a "/dev/zero (deleted)" file */
	if (mmap(NULL, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		_exit(15);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(16);
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, 4096, "vigil test") < 0)
		p = NULL;
	/* many small VMAs that cannot merge: alternate the protection */
	for (int i = 0; i < CHILD_SMALL_MAPS; i++) {
		if (mmap(NULL, 4096, (i & 1) ? PROT_READ : PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
			_exit(17);
	}
	snprintf(msg, sizeof(msg), "ok %llx\n", (unsigned long long)(uintptr_t)p);
	if (write(wfd, msg, strlen(msg)) < 0)
		_exit(18);
	for (;;)
		pause();
}

static int setup_child(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char msg[64] = "";
	unsigned long long addr;
	int fd;
	ssize_t k;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/vigil-procmap-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->spaced, sizeof(fx->spaced), "%s/a b\nc.bin", fx->dir);
	snprintf(fx->gone, sizeof(fx->gone), "%s/gone.bin", fx->dir);
	fx->child = tu_fork_pipe(&fd);
	if (fx->child < 0)
		return -1;
	if (fx->child == 0)
		child_main(fx, fd);
	*state = fx;
	k = read(fd, msg, sizeof(msg) - 1);
	close(fd);
	if (k <= 0 || sscanf(msg, "ok %llx", &addr) != 1) {
		fprintf(stderr, "# child failed to set up: '%s'\n", msg);
		return -1;
	}
	fx->named_anon = addr;
	return 0;
}

static int teardown_child(void **state)
{
	struct fixture *fx = *state;
	int st;

	if (!fx)
		return 0;
	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, &st, 0);
	}
	unlink(fx->spaced);
	unlink(fx->gone);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void assert_same_region(const struct vg_region *a, const struct vg_region *b, size_t i)
{
	if (a->start != b->start || a->end != b->end || a->offset != b->offset ||
	    a->dev_major != b->dev_major || a->dev_minor != b->dev_minor ||
	    a->inode != b->inode || strcmp(a->perms, b->perms) != 0 ||
	    strcmp(a->path, b->path) != 0 || a->deleted != b->deleted ||
	    a->kind != b->kind || a->readable != b->readable ||
	    a->writable != b->writable || a->executable != b->executable ||
	    a->shared != b->shared)
		fail_msg("region %zu differs:\n query %llx-%llx %s %llx %x:%x %llu '%s' del=%d kind=%d\n text  %llx-%llx %s %llx %x:%x %llu '%s' del=%d kind=%d",
			 i, (unsigned long long)a->start, (unsigned long long)a->end, a->perms,
			 (unsigned long long)a->offset, a->dev_major, a->dev_minor,
			 (unsigned long long)a->inode, a->path, a->deleted, a->kind,
			 (unsigned long long)b->start, (unsigned long long)b->end, b->perms,
			 (unsigned long long)b->offset, b->dev_major, b->dev_minor,
			 (unsigned long long)b->inode, b->path, b->deleted, b->kind);
}

static const struct vg_region *find_path(const struct vg_maps *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->regions[i].path, path) == 0)
			return &m->regions[i];
	return NULL;
}

static const struct vg_region *find_mapping(const struct vg_maps *m, const char *path,
					    const char *perms, uint64_t offset)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->regions[i].path, path) == 0 &&
		    strcmp(m->regions[i].perms, perms) == 0 &&
		    m->regions[i].offset == offset)
			return &m->regions[i];
	return NULL;
}

static void test_query_equals_text(void **state)
{
	struct fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_maps *q = NULL, *t = NULL;
	const struct vg_region *r;
	char memfd_path[] = "/memfd:vigil test";

	assert_int_equal(vg_procmap_open(fx->child, &pm, &err), 0);
	assert_int_equal(vg_procmap_read_all(&pm, &q, &err), 0);
	vg_procmap_close(&pm);
	assert_int_equal(pm.fd, -1);
	assert_int_equal(vg_maps_read(fx->child, &t, &err), 0);

	assert_true(t->n > CHILD_SMALL_MAPS);
	assert_int_equal(q->n, t->n);
	for (size_t i = 0; i < t->n; i++)
		assert_same_region(&q->regions[i], &t->regions[i], i);

	/* the hostile names came through both ways */
	r = find_mapping(t, fx->spaced, "r--p", 0);
	assert_non_null(r);
	assert_int_equal(r->kind, VG_REGION_FILE);
	assert_false(r->deleted);
	assert_int_equal(r->end - r->start, 3 * 4096);
	r = find_mapping(t, fx->spaced, "rw-s", 4096);
	assert_non_null(r);
	assert_int_equal(r->end - r->start, 4096);
	r = find_path(t, fx->gone);
	assert_non_null(r);
	assert_true(r->deleted);
	assert_int_equal(r->kind, VG_REGION_FILE);
	assert_string_equal(r->perms, "r--s");
	r = find_path(t, memfd_path);
	assert_non_null(r);
	assert_true(r->deleted);
	assert_int_equal(r->kind, VG_REGION_MEMFD);
	r = find_path(t, "/dev/zero");
	assert_non_null(r);
	assert_true(r->deleted);
	assert_non_null(find_path(t, "[heap]") ? find_path(t, "[heap]") : find_path(t, "[stack]"));
	if (fx->named_anon) {
		r = vg_maps_find(t, fx->named_anon);
		assert_non_null(r);
		assert_string_equal(r->path, "[anon:vigil test]");
		assert_int_equal(r->kind, VG_REGION_SPECIAL);
	}
	vg_maps_free(q);
	vg_maps_free(t);
}

static void test_load_methods(void **state)
{
	struct fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_maps *d = NULL, *q = NULL, *t = NULL;
	const struct vg_region *r;
	const char *method = NULL;

	/* the default reads the text; "a b\nc.bin" printed as "a b\012c.bin"
	 * is ambiguous, and this machine runs Linux 6.18: the ioctl settles it */
	assert_int_equal(vg_maps_load(fx->child, 0, &d, &method, &err), 0);
	assert_string_equal(method, "text+procmap_query");
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_QUERY, &q, &method, &err), 0);
	assert_string_equal(method, "procmap_query");
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_TEXT, &t, &method, &err), 0);
	assert_string_equal(method, "text");
	assert_int_equal(q->n, t->n);
	assert_int_equal(d->n, t->n);
	for (size_t i = 0; i < t->n; i++) {
		assert_same_region(&q->regions[i], &t->regions[i], i);
		assert_same_region(&d->regions[i], &t->regions[i], i);
		assert_false(d->regions[i].name_ambiguous);
		assert_false(q->regions[i].name_ambiguous);
	}
	r = find_mapping(t, fx->spaced, "r--p", 0);
	assert_non_null(r);
	assert_true(r->name_ambiguous);
	vg_maps_free(d);
	vg_maps_free(q);
	vg_maps_free(t);
	assert_int_equal(vg_maps_load(99999999, 0, &q, &method, &err), -ESRCH);
	assert_null(q);
	vg_error_clear(&err);
	assert_int_equal(vg_maps_load(99999999, VG_MAPS_FORCE_QUERY, &q, &method, &err), -ESRCH);
	assert_null(q);
	vg_error_clear(&err);
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_TEXT | VG_MAPS_FORCE_QUERY,
				      &q, &method, &err), -EINVAL);
	assert_null(q);
}

/* ---- names the text prints ambiguously -------------------------------- */

#define LONG_LEVELS 21   /* 21 components of 200 bytes: past PATH_MAX */
#define LONG_COMPONENT 200

enum { N_BACKSLASH, N_NEWLINE, N_LIT, N_GONE, N_LONG, N_NAMES };

struct names_fixture {
	pid_t child;
	bool long_only;          /* map only the long path */
	bool leader_exit;        /* the child's main thread exits */
	char dir[64];
	char path[N_NAMES][PATH_MAX];  /* N_LONG unused: see long_path */
	char *long_path;         /* absolute, longer than PATH_MAX */
	int dirfd[LONG_LEVELS + 1];
	uint64_t addr[N_NAMES];
};

static void *park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void names_child(struct names_fixture *fx, int wfd)
{
	char msg[256] = "ok";
	int n = 2;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < N_NAMES; i++) {
		void *p;
		int fd;

		fx->addr[i] = 0;
		if (fx->long_only && i != N_LONG)
			continue;
		/* the long path only opens relative to a directory fd */
		if (i == N_LONG)
			fd = openat(fx->dirfd[LONG_LEVELS], "long.bin", O_RDONLY | O_CLOEXEC);
		else
			fd = open(fx->path[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(10 + i);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(20 + i);
		close(fd);
		fx->addr[i] = (uint64_t)(uintptr_t)p;
	}
	if (!fx->long_only && unlink(fx->path[N_GONE]) < 0)
		_exit(30);
	for (int i = 0; i < N_NAMES; i++)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %llx",
			      (unsigned long long)fx->addr[i]);
	if (fx->leader_exit) {
		pthread_t th;

		if (pthread_create(&th, NULL, park, NULL) != 0)
			_exit(31);
	}
	if (n + 2 > (int)sizeof(msg))
		_exit(32);
	msg[n++] = '\n';
	if (write(wfd, msg, (size_t)n) != n)
		_exit(33);
	if (fx->leader_exit)
		pthread_exit(NULL);
	for (;;)
		pause();
}

static int make_file(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown_names(void **state);

static int names_setup(void **state, bool long_only, bool leader_exit)
{
	static const char *const names[N_NAMES] = {
		[N_BACKSLASH] = "back\\012slash",  /* a backslash, '0', '1', '2' */
		[N_NEWLINE] = "new\nline",
		[N_LIT] = "lit (deleted)",
		[N_GONE] = "gone.bin",
	};
	struct names_fixture *fx = calloc(1, sizeof(*fx));
	char comp[LONG_COMPONENT + 1], msg[256] = "";
	unsigned long long a[N_NAMES];
	size_t n;
	int fd;
	ssize_t k;

	*state = fx;
	if (!fx)
		return -1;
	fx->long_only = long_only;
	fx->leader_exit = leader_exit;
	for (int i = 0; i <= LONG_LEVELS; i++)
		fx->dirfd[i] = -1;
	strcpy(fx->dir, "/tmp/vigil-names-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	for (int i = 0; i < N_NAMES; i++) {
		if (i == N_LONG)
			continue;
		snprintf(fx->path[i], sizeof(fx->path[i]), "%s/%s", fx->dir, names[i]);
		if (make_file(AT_FDCWD, fx->path[i]) < 0)
			return -1;
	}
	/* dir/ddd.../ddd.../long.bin, built one component at a time */
	memset(comp, 'd', LONG_COMPONENT);
	comp[LONG_COMPONENT] = '\0';
	fx->long_path = malloc(sizeof(fx->dir) + LONG_LEVELS * (LONG_COMPONENT + 1) + 16);
	if (!fx->long_path)
		return -1;
	n = (size_t)sprintf(fx->long_path, "%s", fx->dir);
	fx->dirfd[0] = open(fx->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fx->dirfd[0] < 0)
		return -1;
	for (int i = 1; i <= LONG_LEVELS; i++) {
		if (mkdirat(fx->dirfd[i - 1], comp, 0700) < 0)
			return -1;
		fx->dirfd[i] = openat(fx->dirfd[i - 1], comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fx->dirfd[i] < 0)
			return -1;
		n += (size_t)sprintf(fx->long_path + n, "/%s", comp);
	}
	sprintf(fx->long_path + n, "/long.bin");
	if (strlen(fx->long_path) <= PATH_MAX || make_file(fx->dirfd[LONG_LEVELS], "long.bin") < 0)
		return -1;

	fx->child = tu_fork_pipe(&fd);
	if (fx->child < 0)
		return -1;
	if (fx->child == 0)
		names_child(fx, fd);
	k = read(fd, msg, sizeof(msg) - 1);
	close(fd);
	if (k <= 0 || sscanf(msg, "ok %llx %llx %llx %llx %llx", &a[0], &a[1], &a[2],
			     &a[3], &a[4]) != N_NAMES) {
		fprintf(stderr, "# child failed to set up: '%s'\n", msg);
		return -1;
	}
	for (int i = 0; i < N_NAMES; i++)
		fx->addr[i] = a[i];
	if (leader_exit)
		tu_wait_zombie(fx->child);
	return 0;
}

/* cmocka runs no teardown after a failed setup */
static int names_setup_or_clean(void **state, bool long_only, bool leader_exit)
{
	if (names_setup(state, long_only, leader_exit) == 0)
		return 0;
	teardown_names(state);
	*state = NULL;
	return -1;
}

static int setup_names(void **state)
{
	return names_setup_or_clean(state, false, false);
}

static int setup_long_only(void **state)
{
	return names_setup_or_clean(state, true, false);
}

static int setup_names_leader_exit(void **state)
{
	return names_setup_or_clean(state, false, true);
}

static int teardown_names(void **state)
{
	struct names_fixture *fx = *state;
	char comp[LONG_COMPONENT + 1];
	int st;

	if (!fx)
		return 0;
	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, &st, 0);
	}
	memset(comp, 'd', LONG_COMPONENT);
	comp[LONG_COMPONENT] = '\0';
	if (fx->dirfd[LONG_LEVELS] >= 0)
		unlinkat(fx->dirfd[LONG_LEVELS], "long.bin", 0);
	for (int i = LONG_LEVELS; i >= 1; i--) {
		if (fx->dirfd[i] >= 0) {
			close(fx->dirfd[i]);
			unlinkat(fx->dirfd[i - 1], comp, AT_REMOVEDIR);
		}
	}
	if (fx->dirfd[0] >= 0)
		close(fx->dirfd[0]);
	for (int i = 0; i < N_NAMES; i++)
		if (fx->path[i][0])
			unlink(fx->path[i]);
	rmdir(fx->dir);
	free(fx->long_path);
	free(fx);
	return 0;
}

static const struct vg_region *at(const struct vg_maps *m, const struct names_fixture *fx, int i)
{
	const struct vg_region *r = vg_maps_find(m, fx->addr[i]);

	assert_non_null(r);
	assert_int_equal(r->start, fx->addr[i]);
	assert_int_equal(r->end, fx->addr[i] + 4096);
	assert_int_equal(r->kind, VG_REGION_FILE);
	return r;
}

/* Every name exactly as the file system has it. */
static void expect_raw_names(const struct vg_maps *m, const struct names_fixture *fx)
{
	const struct vg_region *r;

	r = at(m, fx, N_BACKSLASH);
	assert_string_equal(r->path, fx->path[N_BACKSLASH]);
	assert_int_equal(r->path[strlen(fx->dir) + 5], '\\');
	assert_false(r->deleted);
	assert_false(r->name_ambiguous);
	r = at(m, fx, N_NEWLINE);
	assert_string_equal(r->path, fx->path[N_NEWLINE]);
	assert_false(r->deleted);
	assert_false(r->name_ambiguous);
	r = at(m, fx, N_LIT);
	assert_string_equal(r->path, fx->path[N_LIT]);
	assert_false(r->deleted);
	r = at(m, fx, N_GONE);
	assert_string_equal(r->path, fx->path[N_GONE]);
	assert_true(r->deleted);
	r = at(m, fx, N_LONG);
	assert_string_equal(r->path, fx->long_path);
	assert_true(strlen(r->path) > PATH_MAX);
	assert_false(r->deleted);
	for (size_t i = 0; i < m->n; i++)
		assert_false(m->regions[i].name_ambiguous);
}

static void test_load_ambiguous_names(void **state)
{
	struct names_fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_maps *d = NULL, *q = NULL, *t = NULL;
	const struct vg_region *r;
	const char *method = NULL;
	char want[PATH_MAX];

	assert_int_equal(vg_maps_load(fx->child, 0, &d, &method, &err), 0);
	assert_string_equal(method, "text+procmap_query");
	expect_raw_names(d, fx);

	/* the walk stops at the long path; the text has it */
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_QUERY, &q, &method, &err), 0);
	assert_string_equal(method, "text+procmap_query (procmap_query failed: name too long)");
	assert_int_equal(err.code, 0);
	expect_raw_names(q, fx);
	assert_int_equal(q->n, d->n);
	for (size_t i = 0; i < d->n; i++)
		assert_same_region(&q->regions[i], &d->regions[i], i);

	/* The text alone cannot tell "back\012slash" (those bytes) from
	 * "back<newline>slash": it decodes the escape, and says so. */
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_TEXT, &t, &method, &err), 0);
	assert_string_equal(method, "text");
	r = at(t, fx, N_BACKSLASH);
	snprintf(want, sizeof(want), "%s/back\nslash", fx->dir);
	assert_string_equal(r->path, want);
	assert_true(r->name_ambiguous);
	r = at(t, fx, N_NEWLINE);
	assert_string_equal(r->path, fx->path[N_NEWLINE]);
	assert_true(r->name_ambiguous);
	/* deleted or not is settled without the ioctl, so here too */
	r = at(t, fx, N_LIT);
	assert_string_equal(r->path, fx->path[N_LIT]);
	assert_false(r->deleted);
	r = at(t, fx, N_GONE);
	assert_true(r->deleted);
	r = at(t, fx, N_LONG);
	assert_string_equal(r->path, fx->long_path);

	vg_maps_free(d);
	vg_maps_free(q);
	vg_maps_free(t);
}

static void test_load_long_path(void **state)
{
	struct names_fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_maps *m = NULL;
	const char *method = NULL;
	struct vg_region r;

	/* the ioctl alone: the walk fails, a single query too */
	assert_int_equal(vg_procmap_open(fx->child, &pm, &err), 0);
	assert_int_equal(vg_procmap_read_all(&pm, &m, &err), -ENAMETOOLONG);
	assert_null(m);
	assert_non_null(strstr(err.msg, "its path is longer than PROCMAP_QUERY can return (PATH_MAX)"));
	vg_error_clear(&err);
	assert_int_equal(vg_procmap_query(&pm, fx->addr[N_LONG], &r, NULL, NULL, &err), -ENAMETOOLONG);
	vg_procmap_close(&pm);

	vg_error_clear(&err);
	assert_int_equal(vg_maps_load(fx->child, VG_MAPS_FORCE_QUERY, &m, &method, &err), 0);
	assert_string_equal(method, "text (procmap_query failed: name too long)");
	assert_int_equal(err.code, 0);
	assert_string_equal(at(m, fx, N_LONG)->path, fx->long_path);
	vg_maps_free(m);
	assert_int_equal(vg_maps_load(fx->child, 0, &m, &method, &err), 0);
	assert_string_equal(method, "text");
	assert_string_equal(at(m, fx, N_LONG)->path, fx->long_path);
	assert_false(at(m, fx, N_LONG)->deleted);
	vg_maps_free(m);
}

/* The main thread exited: the map, the ioctl and the root are a live
 * thread's (/proc/PID/root of the zombie leader cannot be followed). */
static void test_load_leader_exited(void **state)
{
	struct names_fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_maps *m = NULL;
	const char *method = NULL;
	struct stat st;
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root/", (int)fx->child);
	if (stat(root, &st) == 0)
		fail_msg("%s is reachable: the leader of %d has not exited", root, (int)fx->child);
	assert_int_equal(vg_maps_load(fx->child, 0, &m, &method, &err), 0);
	assert_string_equal(method, "text+procmap_query");
	expect_raw_names(m, fx);
	vg_maps_free(m);
}

static void test_query_single(void **state)
{
	struct fixture *fx = *state;
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_maps *t = NULL;
	struct vg_region r;
	uint8_t bid[VG_BUILD_ID_MAX];
	size_t bid_len = 99;
	size_t gaps = 0;

	assert_int_equal(vg_maps_read(fx->child, &t, &err), 0);
	assert_int_equal(vg_procmap_open(fx->child, &pm, &err), 0);
	for (size_t i = 0; i < t->n; i++) {
		const struct vg_region *e = &t->regions[i];

		if (e->kind == VG_REGION_VSYSCALL)
			continue;  /* not a VMA: no query sees it */
		assert_int_equal(vg_procmap_query(&pm, e->end - 1, &r, bid, &bid_len, &err), 0);
		assert_same_region(&r, e, i);
		free(r.path);
		if (i + 1 < t->n && e->end < t->regions[i + 1].start && gaps < 20) {
			gaps++;
			vg_error_clear(&err);
			assert_int_equal(vg_procmap_query(&pm, e->end, &r, NULL, NULL, &err), -ENOENT);
			assert_int_equal(err.code, -ENOENT);
			assert_null(r.path);
		}
	}
	assert_true(gaps > 0);
	vg_error_clear(&err);
	assert_int_equal(vg_procmap_query(&pm, 0, &r, NULL, NULL, &err), -ENOENT);
	vg_procmap_close(&pm);
	vg_procmap_close(&pm);  /* twice is harmless */
	vg_maps_free(t);
}

/* The GNU build-id note of a file, via libelf. */
static size_t elf_build_id(const char *path, uint8_t *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t found = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0 &&
			    nh.n_descsz <= size) {
				memcpy(out, (char *)d->d_buf + doff, nh.n_descsz);
				found = nh.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static void test_build_id_self(void **state)
{
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_region r;
	uint8_t bid[VG_BUILD_ID_MAX], want[64];
	size_t bid_len = 0, want_len;
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(k > 0);
	exe[k] = '\0';
	want_len = elf_build_id(exe, want, sizeof(want));
	if (want_len == 0)
		skip();  /* linked without --build-id: nothing to compare */
	assert_int_equal(vg_procmap_open(getpid(), &pm, &err), 0);
	assert_int_equal(vg_procmap_query(&pm, (uint64_t)(uintptr_t)&test_build_id_self,
					  &r, bid, &bid_len, &err), 0);
	assert_string_equal(r.path, exe);
	assert_int_equal(r.kind, VG_REGION_FILE);
	assert_true(r.executable);
	assert_int_equal(bid_len, want_len);
	assert_memory_equal(bid, want, want_len);
	free(r.path);

	/* anonymous memory has no build-id */
	bid_len = 99;
	assert_int_equal(vg_procmap_query(&pm, (uint64_t)(uintptr_t)&err, &r, bid, &bid_len, &err), 0);
	assert_int_equal(r.kind, VG_REGION_STACK);
	assert_int_equal(bid_len, 0);
	free(r.path);
	vg_procmap_close(&pm);
}

static void test_open_errors(void **state)
{
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_maps *m = NULL;
	pid_t child;
	int st;

	assert_int_equal(vg_procmap_open(0, &pm, &err), -EINVAL);
	assert_int_equal(pm.fd, -1);
	vg_error_clear(&err);
	assert_int_equal(vg_procmap_open(99999999, &pm, &err), -ESRCH);
	assert_string_equal(err.msg, "pid 99999999 does not exist or has exited");
	vg_procmap_close(&pm);

	/* kthreadd has no mm: an empty table as from the text */
	vg_error_clear(&err);
	assert_int_equal(vg_procmap_open(2, &pm, &err), 0);
	assert_int_equal(vg_procmap_read_all(&pm, &m, &err), 0);
	assert_int_equal(m->n, 0);
	vg_maps_free(m);
	vg_procmap_close(&pm);

	/* a zombie */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	tu_wait_zombie(child);
	vg_error_clear(&err);
	assert_int_equal(vg_maps_load(child, 0, &m, NULL, &err), -ESRCH);
	assert_null(m);
	assert_int_equal(waitpid(child, &st, 0), child);
}

static int open_init_maps(void)
{
	struct vg_error err = { 0 };
	struct vg_procmap pm;
	struct vg_maps *m = NULL;

	if (vg_procmap_open(1, &pm, &err) != -EACCES || pm.fd != -1)
		return 1;
	vg_error_clear(&err);
	if (vg_maps_load(1, 0, &m, NULL, &err) != -EACCES || m)
		return 2;
	if (!strstr(err.msg, "cannot read /proc/PID/maps of pid 1: permission denied; run as root or as the target's user"))
		return 3;
	return 0;
}

static void test_open_eacces(void **state)
{
	tu_as_nobody(open_init_maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_query_equals_text, setup_child, teardown_child),
		cmocka_unit_test_setup_teardown(test_load_methods, setup_child, teardown_child),
		cmocka_unit_test_setup_teardown(test_query_single, setup_child, teardown_child),
		cmocka_unit_test_setup_teardown(test_load_ambiguous_names, setup_names, teardown_names),
		cmocka_unit_test_setup_teardown(test_load_long_path, setup_long_only, teardown_names),
		cmocka_unit_test_setup_teardown(test_load_leader_exited, setup_names_leader_exit,
						teardown_names),
		cmocka_unit_test(test_build_id_self),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_eacces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
