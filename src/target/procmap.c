/* procmap.c - region table and build-ids through the PROCMAP_QUERY ioctl.
 *
 * PROCMAP_QUERY (Linux 6.11, fs/proc/task_mmu.c do_procmap_query) answers
 * one VMA per ioctl on an open /proc/PID/maps: the one covering an address,
 * or with PROCMAP_QUERY_COVERING_OR_NEXT_VMA the next one above it.  Walking
 * from 0, each query starting at the previous end, yields the whole table
 * without formatting or parsing text, plus the ELF build-id of file-backed
 * mappings, which the kernel reads from the page cache.
 *
 * The result must equal the text parser's, so names go through the same
 * vg_region_classify().  Two things differ at the source and are evened out
 * here: the [vsyscall] gate page is not a VMA and no query returns it (we
 * add it when the text would print it), and a process without an mm
 * answers ESRCH where the text is simply empty.
 *
 * Names come back raw, which the text cannot promise (it escapes a newline
 * but not a backslash), but formatted in at most PATH_MAX bytes: a longer
 * path fails the query with ENAMETOOLONG, and so the whole walk.  This is
 * why vg_maps_load() reads the text by default and uses single queries
 * here only to settle the names the text leaves ambiguous.
 *
 * Successive queries are not atomic: a VMA that grew down (a stack) between
 * two of them can overlap its predecessor.  The walk is then restarted,
 * a few times at most. */
#include "target/procmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "target/target.h"

/* From the kernel UAPI include/uapi/linux/fs.h (6.11+). */
#ifndef PROCMAP_QUERY
#define PROCFS_IOCTL_MAGIC 'f'
enum procmap_query_flags {
	PROCMAP_QUERY_VMA_READABLE = 0x01,
	PROCMAP_QUERY_VMA_WRITABLE = 0x02,
	PROCMAP_QUERY_VMA_EXECUTABLE = 0x04,
	PROCMAP_QUERY_VMA_SHARED = 0x08,
	PROCMAP_QUERY_COVERING_OR_NEXT_VMA = 0x10,
	PROCMAP_QUERY_FILE_BACKED_VMA = 0x20,
};

struct procmap_query {
	uint64_t size;
	uint64_t query_flags;    /* in */
	uint64_t query_addr;     /* in */
	uint64_t vma_start;      /* out */
	uint64_t vma_end;        /* out */
	uint64_t vma_flags;      /* out */
	uint64_t vma_page_size;  /* out */
	uint64_t vma_offset;     /* out */
	uint64_t inode;          /* out */
	uint32_t dev_major;      /* out */
	uint32_t dev_minor;      /* out */
	uint32_t vma_name_size;  /* in/out */
	uint32_t build_id_size;  /* in/out */
	uint64_t vma_name_addr;  /* in */
	uint64_t build_id_addr;  /* in */
};

#define PROCMAP_QUERY _IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query)
#endif

_Static_assert(sizeof(struct procmap_query) == 104, "procmap_query UAPI layout");

#define NAME_BUF_START 4352     /* PATH_MAX plus " (deleted)", rounded */
#define NAME_BUF_MAX (1u << 20)
#define WALK_TRIES 3

static int gone(struct vg_error *err, pid_t pid)
{
	return vg_error_proc(err, ESRCH, pid, "/proc/PID/maps");
}

static int query(int fd, struct procmap_query *q, uint64_t addr, uint64_t flags,
		 char *name, size_t name_size, uint8_t *build_id)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = flags;
	q->query_addr = addr;
	if (name) {
		q->vma_name_addr = (uint64_t)(uintptr_t)name;
		q->vma_name_size = (uint32_t)name_size;
	}
	if (build_id) {
		q->build_id_addr = (uint64_t)(uintptr_t)build_id;
		q->build_id_size = VG_BUILD_ID_MAX;
	}
	if (ioctl(fd, PROCMAP_QUERY, q) < 0)
		return -errno;
	return 0;
}

int vg_procmap_open(pid_t pid, struct vg_procmap *pm, struct vg_error *err)
{
	struct procmap_query q;
	enum vg_mm_holder holder;
	char path[64];
	pid_t tid;
	int r;

	pm->fd = -1;
	pm->pid = pid;
	if (pid <= 0)
		return vg_error_set(err, -EINVAL, "pid %d is not valid; give a positive process id", (int)pid);
	/* The ioctl asks the mm of the task the file belongs to: after the
	 * main thread exited, that is another thread's. */
	holder = vg_proc_mm_holder(pid, &tid);
	if (holder == VG_MM_GONE)
		return gone(err, pid);
	if (holder == VG_MM_THREAD)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	pm->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pm->fd < 0) {
		return vg_error_proc(err, errno, pid, "/proc/PID/maps");
	}
	/* Probe with the cheapest query: no name, no build-id. */
	r = query(pm->fd, &q, 0, PROCMAP_QUERY_COVERING_OR_NEXT_VMA, NULL, 0, NULL);
	if (r == 0 || r == -ENOENT)
		return 0;
	if (r == -ESRCH && holder == VG_MM_KTHREAD)
		return 0;  /* no mm: the walk gives the empty table */
	vg_procmap_close(pm);
	if (r == -ENOTTY || r == -EINVAL)
		return vg_error_set(err, -EOPNOTSUPP, "PROCMAP_QUERY is not supported by this kernel (needs linux 6.11); read the text of /proc/%d/maps instead",
				    (int)pid);
	if (r == -ESRCH)
		return gone(err, pid);
	return vg_error_set(err, r, "cannot query /proc/%d/maps: %s", (int)pid, strerror(-r));
}

void vg_procmap_close(struct vg_procmap *pm)
{
	if (pm && pm->fd >= 0) {
		close(pm->fd);
		pm->fd = -1;
	}
}

static void fill_region(struct vg_region *r, const struct procmap_query *q)
{
	memset(r, 0, sizeof(*r));
	r->start = q->vma_start;
	r->end = q->vma_end;
	r->offset = q->vma_offset;
	r->dev_major = q->dev_major;
	r->dev_minor = q->dev_minor;
	r->inode = q->inode;
	r->perms[0] = (q->vma_flags & PROCMAP_QUERY_VMA_READABLE) ? 'r' : '-';
	r->perms[1] = (q->vma_flags & PROCMAP_QUERY_VMA_WRITABLE) ? 'w' : '-';
	r->perms[2] = (q->vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE) ? 'x' : '-';
	r->perms[3] = (q->vma_flags & PROCMAP_QUERY_VMA_SHARED) ? 's' : 'p';
	r->perms[4] = '\0';
	vg_region_set_perms(r);
}

/* A query with the name, growing the name buffer on E2BIG/ENAMETOOLONG. */
static int query_named(const struct vg_procmap *pm, struct procmap_query *q,
		       uint64_t addr, uint64_t flags, char **name, size_t *name_size,
		       uint8_t *build_id)
{
	for (;;) {
		int r = query(pm->fd, q, addr, flags, *name, *name_size, build_id);
		char *nn;

		if (r != -E2BIG && r != -ENAMETOOLONG)
			return r;
		/* The kernel formats the name in min(PATH_MAX, our size)
		 * bytes: once we offer more, ENAMETOOLONG is final. */
		if (*name_size >= NAME_BUF_MAX || (r == -ENAMETOOLONG && *name_size > PATH_MAX))
			return r;
		nn = realloc(*name, *name_size * 2);
		if (!nn)
			return -ENOMEM;
		*name = nn;
		*name_size *= 2;
	}
}

static int query_error(const struct vg_procmap *pm, int r, uint64_t addr,
		       struct vg_error *err)
{
	if (r == -ESRCH)
		return gone(err, pm->pid);
	if (r == -ENAMETOOLONG)
		return vg_error_set(err, r, "cannot query the mapping at 0x%" PRIx64 " of pid %d: its path is longer than PROCMAP_QUERY can return (PATH_MAX); the text of /proc/%d/maps has it",
				    addr, (int)pm->pid, (int)pm->pid);
	return vg_error_set(err, r, "cannot query the mapping at 0x%" PRIx64 " of pid %d: %s",
			    addr, (int)pm->pid, strerror(-r));
}

int vg_procmap_query(const struct vg_procmap *pm, uint64_t addr,
		     struct vg_region *r, uint8_t *build_id,
		     size_t *build_id_len, struct vg_error *err)
{
	struct procmap_query q;
	size_t name_size = NAME_BUF_START;
	char *name = malloc(name_size);
	int ret;

	memset(r, 0, sizeof(*r));
	if (build_id_len)
		*build_id_len = 0;
	if (!name)
		return vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
	ret = query_named(pm, &q, addr, 0, &name, &name_size, build_id);
	if (ret == -ENOENT) {
		free(name);
		return vg_error_set(err, -ENOENT, "no mapping covers 0x%" PRIx64 " in pid %d; see 'vigil maps %d'",
				    addr, (int)pm->pid, (int)pm->pid);
	}
	if (ret < 0) {
		free(name);
		return query_error(pm, ret, addr, err);
	}
	fill_region(r, &q);
	if (q.vma_name_size == 0)
		name[0] = '\0';
	else
		name[q.vma_name_size - 1] = '\0';
	r->path = name;
	vg_region_classify(r);
	if (build_id && build_id_len)
		*build_id_len = q.build_id_size;
	return 0;
}

/* The [vsyscall] gate page as the text of our own maps shows it: the gate
 * is the same for every 64-bit process of this kernel.  Computed once. */
static struct {
	int known;  /* 0 not yet, 1 absent, 2 present */
	struct vg_region r;
} gate;

static const struct vg_region *gate_region(void)
{
	int k = __atomic_load_n(&gate.known, __ATOMIC_ACQUIRE);
	struct vg_maps *self = NULL;
	struct vg_region r = { 0 };
	bool found = false;

	if (k == 0) {
		if (vg_maps_read(getpid(), &self, NULL) == 0) {
			for (size_t i = 0; i < self->n; i++) {
				if (self->regions[i].kind == VG_REGION_VSYSCALL) {
					r = self->regions[i];
					r.path = NULL;
					found = true;
				}
			}
			vg_maps_free(self);
		}
		gate.r = r;
		k = found ? 2 : 1;
		__atomic_store_n(&gate.known, k, __ATOMIC_RELEASE);
	}
	return k == 2 ? &gate.r : NULL;
}

/* The kernel shows no gate page to a 32-bit process. */
static bool target_is_elf64(pid_t pid)
{
	char path[64];
	unsigned char ident[5];
	ssize_t k;
	int fd;

	pid_t tid;

	/* The leader's exe is gone once it exited: ask the mm holder. */
	if (vg_proc_mm_holder(pid, &tid) == VG_MM_THREAD)
		pid = tid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	k = pread(fd, ident, sizeof(ident), 0);
	close(fd);
	if (k != (ssize_t)sizeof(ident) || memcmp(ident, "\177ELF", 4) != 0)
		return true;
	return ident[4] == 2;  /* ELFCLASS64 */
}

struct table {
	struct vg_region *regions;
	size_t n, cap;
	char *arena;
	size_t used, arena_cap;
};

static int table_add(struct table *t, const struct vg_region *r, const char *name, size_t len)
{
	size_t need;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256, bytes;
		struct vg_region *nr;

		if (__builtin_mul_overflow(cap, sizeof(*nr), &bytes))
			return -ENOMEM;
		nr = realloc(t->regions, bytes);
		if (!nr)
			return -ENOMEM;
		t->regions = nr;
		t->cap = cap;
	}
	if (__builtin_add_overflow(t->used, len + 1, &need))
		return -ENOMEM;
	if (need > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 16384;
		char *na;

		while (cap < need)
			if (__builtin_mul_overflow(cap, 2, &cap))
				return -ENOMEM;
		na = realloc(t->arena, cap);
		if (!na)
			return -ENOMEM;
		t->arena = na;
		t->arena_cap = cap;
	}
	memcpy(t->arena + t->used, name, len);
	t->arena[t->used + len] = '\0';
	t->regions[t->n] = *r;
	/* An offset until the arena stops moving. */
	t->regions[t->n].path = (char *)(uintptr_t)t->used;
	t->used = need;
	t->n++;
	return 0;
}

/* One pass from address 0.  1 = torn by a concurrent change, retry. */
static int walk(const struct vg_procmap *pm, struct table *t, struct vg_error *err)
{
	struct procmap_query q;
	size_t name_size = NAME_BUF_START;
	char *name = malloc(name_size);
	uint64_t addr = 0, prev_end = 0;
	int r;

	if (!name)
		return vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
	for (;;) {
		struct vg_region reg;
		size_t len;

		r = query_named(pm, &q, addr, PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
				&name, &name_size, NULL);
		if (r == -ENOENT) {
			r = 0;
			break;
		}
		if (r == -ESRCH && t->n == 0 &&
		    vg_proc_mm_holder(pm->pid, &(pid_t){ 0 }) == VG_MM_KTHREAD) {
			r = 0;  /* no mm: a kernel thread, its table is empty */
			goto out;
		}
		if (r < 0) {
			r = query_error(pm, r, addr, err);
			goto out;
		}
		if (q.vma_start < prev_end || q.vma_end <= q.vma_start) {
			r = 1;
			goto out;
		}
		fill_region(&reg, &q);
		len = q.vma_name_size ? q.vma_name_size - 1 : 0;
		if (table_add(t, &reg, name, len) < 0) {
			r = vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
			goto out;
		}
		prev_end = addr = q.vma_end;
	}

	{
		const struct vg_region *g = gate_region();

		if (g && g->start >= prev_end && target_is_elf64(pm->pid)) {
			if (table_add(t, g, "[vsyscall]", strlen("[vsyscall]")) < 0)
				r = vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
		}
	}
out:
	free(name);
	return r;
}

int vg_procmap_read_all(const struct vg_procmap *pm, struct vg_maps **out,
			struct vg_error *err)
{
	struct table t = { 0 };
	struct vg_maps *m;
	int r = 1;

	*out = NULL;
	for (int tries = 0; tries < WALK_TRIES && r == 1; tries++) {
		t.n = 0;
		t.used = 0;
		r = walk(pm, &t, err);
	}
	if (r == 1)
		r = vg_error_set(err, -EAGAIN, "cannot read the mappings of pid %d: they changed during %d walks; try again",
				 (int)pm->pid, WALK_TRIES);
	if (r < 0)
		goto fail;
	m = calloc(1, sizeof(*m));
	if (!m) {
		r = vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
		goto fail;
	}
	if (!t.arena) {
		t.arena = malloc(1);
		if (!t.arena) {
			free(m);
			r = vg_error_set(err, -ENOMEM, "cannot query pid %d: out of memory", (int)pm->pid);
			goto fail;
		}
	}
	for (size_t i = 0; i < t.n; i++) {
		t.regions[i].path = t.arena + (uintptr_t)t.regions[i].path;
		vg_region_classify(&t.regions[i]);
	}
	m->regions = t.regions;
	m->n = t.n;
	m->path_arena = t.arena;
	*out = m;
	return 0;
fail:
	free(t.regions);
	free(t.arena);
	return r;
}
