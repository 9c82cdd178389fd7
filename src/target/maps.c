/* maps.c - the region table of a process, from the text of /proc/PID/maps.
 *
 * The kernel prints one VMA per line (fs/proc/task_mmu.c, show_map_vma):
 *   start-end perms offset major:minor inode   path
 * with hex numbers, the path padded to a column and escaped by
 * seq_file_path(..., "\n"), so only a newline is escaped, as "\012".  We
 * decode any "\ooo" octal escape, keep every other byte (spaces included),
 * strip a trailing " (deleted)" and classify the name.
 *
 * Speed: the whole file is read with large read()s into one buffer, parsed
 * without sscanf, and every path goes into one arena, so a table costs three
 * allocations whatever its size.  A line that does not match the format is an
 * error naming the line, and no table is returned: half a table looks
 * complete and is worse than none.
 *
 * The text is the default source of vg_maps_load(): one read gives every
 * VMA, where PROCMAP_QUERY (procmap.c) needs an ioctl per VMA (slower on
 * large tables) and cannot name a path longer than PATH_MAX.  What the text
 * cannot say is settled afterwards, paying only for the regions concerned:
 * a name printed with an escape is ambiguous (a backslash is not escaped,
 * so "\012" may be a newline or those four bytes), and one query of that
 * VMA gives the raw name; a file region printed " (deleted)" may be a live
 * file with that suffix in its name, which one stat() through the target's
 * root with the mapped device and inode tells.
 *
 * It does not open the mapped files or interpret offsets: that is images'
 * job. */
#include "util/hex.h"
#include "target/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "target/procmap.h"
#include "target/target.h"

#define READ_CHUNK (1u << 20)
#define LIVE_READ_TRIES 3

static const char *const kind_names[] = {
	[VG_REGION_ANON] = "anon",
	[VG_REGION_FILE] = "file",
	[VG_REGION_HEAP] = "heap",
	[VG_REGION_STACK] = "stack",
	[VG_REGION_VDSO] = "vdso",
	[VG_REGION_VVAR] = "vvar",
	[VG_REGION_VSYSCALL] = "vsyscall",
	[VG_REGION_MEMFD] = "memfd",
	[VG_REGION_SPECIAL] = "special",
};

const char *vg_region_kind_name(enum vg_region_kind k)
{
	if ((unsigned)k >= sizeof(kind_names) / sizeof(kind_names[0]))
		return "unknown";
	return kind_names[k];
}

/* Exact names; [stack:TID] and prefixes are handled in vg_region_classify. */
static const struct {
	const char *name;
	enum vg_region_kind kind;
} special_names[] = {
	{ "[heap]", VG_REGION_HEAP },
	{ "[stack]", VG_REGION_STACK },
	{ "[vdso]", VG_REGION_VDSO },
	{ "[vvar]", VG_REGION_VVAR },
	{ "[vvar_vclock]", VG_REGION_VVAR },
	{ "[vsyscall]", VG_REGION_VSYSCALL },
};

static const char deleted_suffix[] = " (deleted)";

static bool is_stack_tid(const char *p)
{
	/* "[stack:1234]" (kernels before 4.5 named thread stacks so) */
	if (strncmp(p, "[stack:", 7) != 0)
		return false;
	p += 7;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return p[0] == ']' && p[1] == '\0';
}

void vg_region_classify(struct vg_region *r)
{
	char *p = r->path;
	size_t len = strlen(p);
	size_t sl = sizeof(deleted_suffix) - 1;

	r->deleted = false;
	/* Only files (and memfds, which are files) get the suffix: d_path()
	 * appends it to an unlinked dentry.  A bracketed name is a label. */
	if (p[0] != '[' && len > sl && memcmp(p + len - sl, deleted_suffix, sl) == 0) {
		p[len - sl] = '\0';
		r->deleted = true;
	}

	if (p[0] == '\0') {
		r->kind = VG_REGION_ANON;
		return;
	}
	for (size_t i = 0; i < sizeof(special_names) / sizeof(special_names[0]); i++) {
		if (strcmp(p, special_names[i].name) == 0) {
			r->kind = special_names[i].kind;
			return;
		}
	}
	if (is_stack_tid(p))
		r->kind = VG_REGION_STACK;
	else if (strncmp(p, "memfd:", 6) == 0 || strncmp(p, "/memfd:", 7) == 0)
		r->kind = VG_REGION_MEMFD;
	else if (p[0] == '/')
		r->kind = VG_REGION_FILE;
	else
		r->kind = VG_REGION_SPECIAL;
}

void vg_region_set_perms(struct vg_region *r)
{
	r->readable = r->perms[0] == 'r';
	r->writable = r->perms[1] == 'w';
	r->executable = r->perms[2] == 'x';
	r->shared = r->perms[3] == 's';
}

/* 1 to max_digits hex digits; *pp advanced past them. */
static bool parse_hex(const char **pp, const char *e, unsigned max_digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned n = 0;
	int d;

	while (p < e && (d = vg_hex_digit(*p)) >= 0) {
		if (++n > max_digits)
			return false;
		v = (v << 4) | (uint64_t)d;
		p++;
	}
	if (n == 0)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool parse_dec(const char **pp, const char *e, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p >= e || *p < '0' || *p > '9')
		return false;
	while (p < e && *p >= '0' && *p <= '9') {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return false;
		p++;
	}
	*pp = p;
	*out = v;
	return true;
}

static bool expect(const char **pp, const char *e, char c)
{
	if (*pp >= e || **pp != c)
		return false;
	(*pp)++;
	return true;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Copy the printed path [p, e) to dst, decoding "\ooo".  "\000" and
 * escapes above 0377 are kept literally: the kernel never prints them and a
 * NUL would silently cut the path.  Returns bytes written (no NUL), or -1 if
 * the path holds a NUL byte; *decoded is set if an escape was decoded. */
static long unescape(char *dst, const char *p, const char *e, bool *decoded)
{
	char *d = dst;

	*decoded = false;

	while (p < e) {
		char c = *p;

		if (c == '\0')
			return -1;
		if (c == '\\' && e - p >= 4 && p[1] >= '0' && p[1] <= '3' &&
		    is_octal(p[2]) && is_octal(p[3])) {
			int v = (p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0');

			if (v != 0) {
				*d++ = (char)v;
				p += 4;
				*decoded = true;
				continue;
			}
		}
		*d++ = c;
		p++;
	}
	return d - dst;
}

/* Parse one line [p, e) into r; the path goes to arena + *used.  On error
 * returns a static description of what is wrong. */
static const char *parse_line(const char *p, const char *e, struct vg_region *r,
			      char *arena, size_t *used)
{
	uint64_t v;
	long n;

	if (p == e)
		return "empty line";
	if (!parse_hex(&p, e, 16, &r->start))
		return "bad start address";
	if (!expect(&p, e, '-'))
		return "expected '-' after the start address";
	if (!parse_hex(&p, e, 16, &r->end))
		return "bad end address";
	if (!expect(&p, e, ' '))
		return "expected ' ' after the end address";
	if (r->end <= r->start)
		return "end address not above start address";
	if (e - p < 4)
		return "bad permissions";
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return "bad permissions (expected like 'r-xp')";
	memcpy(r->perms, p, 4);
	r->perms[4] = '\0';
	p += 4;
	if (!expect(&p, e, ' '))
		return "expected ' ' after the permissions";
	if (!parse_hex(&p, e, 16, &r->offset))
		return "bad offset";
	if (!expect(&p, e, ' '))
		return "expected ' ' after the offset";
	if (!parse_hex(&p, e, 8, &v))
		return "bad device major";
	r->dev_major = (uint32_t)v;
	if (!expect(&p, e, ':'))
		return "expected ':' in the device";
	if (!parse_hex(&p, e, 8, &v))
		return "bad device minor";
	r->dev_minor = (uint32_t)v;
	if (!expect(&p, e, ' '))
		return "expected ' ' after the device";
	if (!parse_dec(&p, e, &r->inode))
		return "bad inode";
	if (p < e && *p != ' ')
		return "bad inode";
	while (p < e && *p == ' ')
		p++;

	n = unescape(arena + *used, p, e, &r->name_ambiguous);
	if (n < 0)
		return "NUL byte in the path";
	arena[*used + (size_t)n] = '\0';
	/* Offsets for now: the arena may move when it is shrunk. */
	r->path = (char *)(uintptr_t)*used;
	*used += (size_t)n + 1;
	r->state = NULL;
	vg_region_set_perms(r);
	return NULL;
}

int vg_maps_parse(const char *text, size_t len, struct vg_maps **out,
		  struct vg_error *err)
{
	struct vg_maps *m = NULL;
	struct vg_region *regions = NULL;
	char *arena = NULL, *shrunk;
	size_t lines = 1, n = 0, used = 0, arena_size, lineno = 0;
	const char *p = text, *end = text + len;
	int r;

	*out = NULL;
	for (const char *q = text; q < end && (q = memchr(q, '\n', (size_t)(end - q))); q++)
		lines++;

	/* Each path plus its NUL fits in its line plus its newline, so the
	 * arena never needs more than len + 1 bytes; +1 more for the "". */
	if (__builtin_add_overflow(len, 2, &arena_size))
		return vg_error_set(err, -ENOMEM, "cannot parse maps: input too large");
	regions = calloc(lines, sizeof(*regions));
	arena = malloc(arena_size);
	m = calloc(1, sizeof(*m));
	if (!regions || !arena || !m) {
		r = vg_error_set(err, -ENOMEM, "cannot parse maps: out of memory for %zu lines", lines);
		goto fail;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		struct vg_region *reg = &regions[n];
		const char *why;

		lineno++;
		why = parse_line(p, e, reg, arena, &used);
		if (why) {
			r = vg_error_set(err, -EINVAL, "maps line %zu: %s%s; expected 'start-end perms offset major:minor inode [path]'",
					 lineno, why, nl ? "" : " (truncated last line?)");
			goto fail;
		}
		if (n > 0 && reg->start < regions[n - 1].end) {
			r = vg_error_set(err, -EINVAL, "maps line %zu: region %" PRIx64 "-%" PRIx64 " overlaps or precedes %" PRIx64 "-%" PRIx64 "; regions must be sorted and disjoint",
					 lineno, reg->start, reg->end,
					 regions[n - 1].start, regions[n - 1].end);
			goto fail;
		}
		n++;
		p = nl ? nl + 1 : end;
	}

	shrunk = realloc(arena, used ? used : 1);
	if (shrunk)
		arena = shrunk;
	for (size_t i = 0; i < n; i++)
		regions[i].path = arena + (uintptr_t)regions[i].path;
	for (size_t i = 0; i < n; i++)
		vg_region_classify(&regions[i]);

	m->regions = regions;
	m->n = n;
	m->path_arena = arena;
	*out = m;
	return 0;
fail:
	free(regions);
	free(arena);
	free(m);
	return r;
}

struct vg_maps *vg_maps_free(struct vg_maps *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		if (m->regions[i].state && m->state_free)
			m->state_free(m->regions[i].state);
		if (!m->path_arena)
			free(m->regions[i].path);
	}
	free(m->path_arena);
	free(m->regions);
	free(m);
	return NULL;
}

const struct vg_region *vg_maps_find(const struct vg_maps *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	/* Find the first region with start > addr; the one before it is the
	 * only one that can contain addr. */
	hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->regions[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < m->regions[lo - 1].end)
		return &m->regions[lo - 1];
	return NULL;
}

static bool same_mapping(const struct vg_region *a, const struct vg_region *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->inode == b->inode &&
	       memcmp(a->perms, b->perms, 4) == 0 &&
	       strcmp(a->path ? a->path : "", b->path ? b->path : "") == 0;
}

static void drop_state(struct vg_maps *m, struct vg_region *r)
{
	if (r->state && m->state_free)
		m->state_free(r->state);
	r->state = NULL;
}

size_t vg_maps_carry_over(struct vg_maps *new_maps, struct vg_maps *old_maps)
{
	size_t i = 0, j = 0, moved = 0;

	if (!old_maps)
		return 0;
	if (!new_maps) {
		for (i = 0; i < old_maps->n; i++)
			drop_state(old_maps, &old_maps->regions[i]);
		return 0;
	}
	if (!new_maps->state_free)
		new_maps->state_free = old_maps->state_free;
	/* Both tables are sorted by start: walk them side by side. */
	while (i < old_maps->n) {
		struct vg_region *o = &old_maps->regions[i];

		while (j < new_maps->n && new_maps->regions[j].start < o->start)
			j++;
		if (o->state && j < new_maps->n && !new_maps->regions[j].state &&
		    same_mapping(o, &new_maps->regions[j])) {
			new_maps->regions[j].state = o->state;
			o->state = NULL;
			moved++;
		} else {
			drop_state(old_maps, o);
		}
		i++;
	}
	return moved;
}

static int gone(struct vg_error *err, pid_t pid)
{
	return vg_error_proc(err, ESRCH, pid, "/proc/PID/maps");
}

static int open_errno(struct vg_error *err, pid_t pid, int e)
{
	return vg_error_proc(err, e, pid, "/proc/PID/maps");
}

/* Read the whole of /proc/PID/maps, or of /proc/PID/task/TID/maps when
 * tid is non-zero; *buf malloc'ed. */
static int slurp_maps(pid_t pid, pid_t tid, char **buf, size_t *len,
		      struct vg_error *err)
{
	char path[64];
	char *b = NULL, *nb;
	size_t cap = READ_CHUNK, n = 0;
	int fd, r;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return open_errno(err, pid, errno);
	b = malloc(cap);
	if (!b) {
		r = vg_error_set(err, -ENOMEM, "cannot read /proc/%d/maps: out of memory", (int)pid);
		goto out;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			if (__builtin_mul_overflow(cap, 2, &cap)) {
				r = vg_error_set(err, -EFBIG, "cannot read /proc/%d/maps: too large", (int)pid);
				goto out;
			}
			nb = realloc(b, cap);
			if (!nb) {
				r = vg_error_set(err, -ENOMEM, "cannot read /proc/%d/maps: out of memory for %zu bytes",
						 (int)pid, cap);
				goto out;
			}
			b = nb;
		}
		k = read(fd, b + n, cap - n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = open_errno(err, pid, errno);
			goto out;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*buf = b;
	*len = n;
	b = NULL;
	r = 0;
out:
	free(b);
	close(fd);
	return r;
}

int vg_maps_read(pid_t pid, struct vg_maps **out, struct vg_error *err)
{
	struct vg_error perr;
	int r = -EINVAL;

	*out = NULL;
	if (pid <= 0)
		return vg_error_set(err, -EINVAL, "pid %d is not valid; give a positive process id", (int)pid);
	/* The kernel prints the file in several passes when it is large, and
	 * the target may map or unmap between them: a table that then fails
	 * the order check is a torn read, not bad input.  Read it again. */
	for (int tries = 0; tries < LIVE_READ_TRIES; tries++) {
		char *buf = NULL;
		size_t len = 0;

		r = slurp_maps(pid, 0, &buf, &len, err);
		if (r < 0)
			return r;
		if (len == 0) {
			/* Empty: a kernel thread (the truth), a process whose
			 * main thread exited (its threads hold the map), or
			 * a process exiting right now. */
			pid_t tid;
			enum vg_mm_holder h = vg_proc_mm_holder(pid, &tid);

			if (h == VG_MM_THREAD) {
				free(buf);
				buf = NULL;
				r = slurp_maps(pid, tid, &buf, &len, err);
				if (r < 0)
					return r;
			}
			if (len == 0 && h != VG_MM_KTHREAD) {
				free(buf);
				return gone(err, pid);
			}
		}
		vg_error_clear(&perr);
		r = vg_maps_parse(buf, len, out, &perr);
		free(buf);
		if (r != -EINVAL)
			break;
	}
	if (r < 0)
		/* Not the user's input: a kernel format we do not know, or a
		 * table torn by the target on every try. */
		return vg_error_set(err, r == -EINVAL ? -EIO : r, "cannot parse /proc/%d/maps: %s",
				    (int)pid, perr.msg);
	return 0;
}

/* New names for some regions, put in at once (the arena is rebuilt), so
 * that a failure leaves the table as it was. */
struct name_fix {
	size_t i;                 /* region index; fixes are added in order */
	char *path;               /* malloc'ed; owned by the list */
	bool deleted, ambiguous;
	enum vg_region_kind kind;
};

struct fix_list {
	struct name_fix *v;
	size_t n, cap;
};

/* Consumes path, even on failure. */
static int fix_add(struct fix_list *f, size_t i, char *path, bool deleted,
		   bool ambiguous, enum vg_region_kind kind)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8, bytes;
		struct name_fix *nv;

		if (__builtin_mul_overflow(cap, sizeof(*nv), &bytes) ||
		    !(nv = realloc(f->v, bytes))) {
			free(path);
			return -ENOMEM;
		}
		f->v = nv;
		f->cap = cap;
	}
	f->v[f->n++] = (struct name_fix){ .i = i, .path = path, .deleted = deleted,
					  .ambiguous = ambiguous, .kind = kind };
	return 0;
}

static void fix_release(struct fix_list *f)
{
	for (size_t k = 0; k < f->n; k++)
		free(f->v[k].path);
	free(f->v);
	*f = (struct fix_list){ 0 };
}

static void fix_set(struct vg_region *r, const struct name_fix *x)
{
	r->deleted = x->deleted;
	r->name_ambiguous = x->ambiguous;
	r->kind = x->kind;
}

/* Returns how many regions were renamed, or -ENOMEM (m unchanged). */
static int fix_apply(struct vg_maps *m, struct fix_list *f)
{
	size_t size = 0, used = 0, k = 0;
	char *arena;

	if (f->n == 0)
		return 0;
	if (!m->path_arena) {
		/* a table built by hand: one malloc per path */
		for (k = 0; k < f->n; k++) {
			struct vg_region *r = &m->regions[f->v[k].i];

			free(r->path);
			r->path = f->v[k].path;
			f->v[k].path = NULL;
			fix_set(r, &f->v[k]);
		}
		return (int)f->n;
	}
	for (size_t i = 0; i < m->n; i++) {
		const char *p = k < f->n && f->v[k].i == i ? f->v[k++].path : m->regions[i].path;

		if (__builtin_add_overflow(size, strlen(p) + 1, &size))
			return -ENOMEM;
	}
	arena = malloc(size ? size : 1);
	if (!arena)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct vg_region *r = &m->regions[i];
		const char *p = r->path;
		size_t l;

		if (k < f->n && f->v[k].i == i) {
			p = f->v[k].path;
			fix_set(r, &f->v[k++]);
		}
		l = strlen(p) + 1;
		memcpy(arena + used, p, l);
		r->path = arena + used;
		used += l;
	}
	free(m->path_arena);
	m->path_arena = arena;
	return (int)f->n;
}

int vg_maps_settle_deleted(struct vg_maps *m, const char *root)
{
	/* Shared anonymous memory shows as many "/dev/zero (deleted)", one
	 * inode each: remember the last few answers per path. */
	struct {
		const char *path;
		bool found;
		dev_t dev;
		ino_t ino;
	} seen[8];
	struct fix_list f = { 0 };
	size_t n_seen = 0, next_seen = 0, rl = strlen(root), sl = sizeof(deleted_suffix) - 1;
	size_t buf_size = 0;
	char *buf = NULL;
	int r = 0;

	for (size_t i = 0; m && i < m->n; i++) {
		const struct vg_region *reg = &m->regions[i];
		size_t pl, s;
		bool found = false;
		dev_t dev = 0;
		ino_t ino = 0;
		char *np;

		if (reg->kind != VG_REGION_FILE || !reg->deleted)
			continue;
		for (s = 0; s < n_seen; s++)
			if (strcmp(seen[s].path, reg->path) == 0)
				break;
		pl = strlen(reg->path);
		if (s < n_seen) {
			found = seen[s].found;
			dev = seen[s].dev;
			ino = seen[s].ino;
		} else {
			struct stat st;

			if (rl + pl + sl + 1 > buf_size) {
				char *nb = realloc(buf, rl + pl + sl + 1);

				if (!nb) {
					r = -ENOMEM;
					goto out;
				}
				buf = nb;
				buf_size = rl + pl + sl + 1;
			}
			memcpy(buf, root, rl);
			memcpy(buf + rl, reg->path, pl);
			memcpy(buf + rl + pl, deleted_suffix, sl + 1);
			/* lstat: d_path() never names a symlink, so a link
			 * of that name to the mapped file is not the file */
			if (lstat(buf, &st) == 0) {
				found = true;
				dev = st.st_dev;
				ino = st.st_ino;
			}
			s = next_seen;
			next_seen = (next_seen + 1) % (sizeof(seen) / sizeof(seen[0]));
			if (n_seen < sizeof(seen) / sizeof(seen[0]))
				n_seen++;
			seen[s].path = reg->path;
			seen[s].found = found;
			seen[s].dev = dev;
			seen[s].ino = ino;
		}
		if (!found || major(dev) != reg->dev_major || minor(dev) != reg->dev_minor ||
		    (uint64_t)ino != reg->inode)
			continue;
		np = malloc(pl + sl + 1);
		if (!np) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(np, reg->path, pl);
		memcpy(np + pl, deleted_suffix, sl + 1);
		r = fix_add(&f, i, np, false, reg->name_ambiguous, reg->kind);
		if (r < 0)
			goto out;
	}
	r = fix_apply(m, &f);
out:
	free(buf);
	fix_release(&f);
	return r;
}

/* Does the raw name print in the text as decoded reads?  The kernel escapes
 * only '\n' (seq_file_path(m, file, "\n")); the parser decodes. */
static int prints_as(const char *raw, const char *decoded, bool *same)
{
	size_t len = strlen(raw), n = 0, bytes;
	char *text, *back;
	bool dummy;
	long k;

	if (__builtin_mul_overflow(len, 4, &bytes) || !(text = malloc(bytes + 1)))
		return -ENOMEM;
	back = malloc(bytes + 1);
	if (!back) {
		free(text);
		return -ENOMEM;
	}
	for (const char *p = raw; *p; p++) {
		if (*p == '\n') {
			memcpy(text + n, "\\012", 4);
			n += 4;
		} else {
			text[n++] = *p;
		}
	}
	k = unescape(back, text, text + n, &dummy);
	*same = k >= 0 && (size_t)k == strlen(decoded) && memcmp(back, decoded, (size_t)k) == 0;
	free(back);
	free(text);
	return 0;
}

/* Ask PROCMAP_QUERY the raw name of every name_ambiguous region.  Returns
 * how many were settled, or -ENOMEM; a kernel without the ioctl, or a VMA
 * that changed since the text was read, leaves the region ambiguous. */
static int settle_names(struct vg_maps *m, pid_t pid)
{
	struct vg_procmap pm = { .fd = -1 };
	struct fix_list f = { 0 };
	int r = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct vg_region *reg = &m->regions[i];
		struct vg_region q;
		bool same = false;

		if (!reg->name_ambiguous)
			continue;
		if (pm.fd < 0 && vg_procmap_open(pid, &pm, NULL) < 0)
			break;
		r = vg_procmap_query(&pm, reg->start, &q, NULL, NULL, NULL);
		if (r == -ESRCH)
			break;  /* gone: the caller finds out soon enough */
		if (r < 0) {
			r = 0;  /* unmapped meanwhile, or a name too long */
			continue;
		}
		if (q.start == reg->start && q.end == reg->end && q.inode == reg->inode &&
		    q.dev_major == reg->dev_major && q.dev_minor == reg->dev_minor &&
		    q.deleted == reg->deleted) {
			r = prints_as(q.path, reg->path, &same);
			if (r < 0) {
				free(q.path);
				goto out;
			}
		}
		if (!same) {
			free(q.path);
			continue;
		}
		r = fix_add(&f, i, q.path, q.deleted, false, q.kind);
		if (r < 0)
			goto out;
	}
	r = fix_apply(m, &f);
out:
	vg_procmap_close(&pm);
	fix_release(&f);
	return r;
}

/* vg_maps_settle_deleted() through the root of the task holding the mm:
 * /proc/PID/root of a leader that exited (a zombie) cannot be followed. */
static int settle_deleted_of(pid_t pid, struct vg_maps *m)
{
	char root[64];
	pid_t tid = 0;
	size_t i;
	int r, n;

	for (i = 0; i < m->n; i++)
		if (m->regions[i].kind == VG_REGION_FILE && m->regions[i].deleted)
			break;
	if (i == m->n)
		return 0;
	if (vg_proc_mm_holder(pid, &tid) == VG_MM_THREAD && tid > 0)
		pid = tid;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	r = vg_maps_settle_deleted(m, root);
	if (r < 0)
		return r;
	/* maps prints paths as seen from the reader's root: for a chrooted
	 * target they are host paths, which /proc/PID/root would prefix with
	 * the chroot a second time.  Try them as they are too; only a file
	 * with the mapping's device and inode counts either way. */
	n = vg_maps_settle_deleted(m, "");
	return n < 0 ? n : r + n;
}

enum fallback { FB_NONE, FB_NAME_TOO_LONG, FB_NOT_SUPPORTED };

/* [why the walk was not used][names settled with the ioctl] */
static const char *const text_methods[3][2] = {
	[FB_NONE] = { "text", "text+procmap_query" },
	[FB_NAME_TOO_LONG] = { "text (procmap_query failed: name too long)",
			       "text+procmap_query (procmap_query failed: name too long)" },
	[FB_NOT_SUPPORTED] = { "text (procmap_query failed: not supported by this kernel)",
			       "text (procmap_query failed: not supported by this kernel)" },
};

int vg_maps_load(pid_t pid, unsigned flags, struct vg_maps **out,
		 const char **method, struct vg_error *err)
{
	struct vg_error perr = { 0 };
	struct vg_maps *m = NULL;
	enum fallback why = FB_NONE;
	const char *how;
	int r, settled = 0;

	*out = NULL;
	if ((flags & VG_MAPS_FORCE_TEXT) && (flags & VG_MAPS_FORCE_QUERY))
		return vg_error_set(err, -EINVAL, "cannot load the maps of pid %d: the text and the PROCMAP_QUERY walk cannot both be forced",
				    (int)pid);
	if (flags & VG_MAPS_FORCE_QUERY) {
		struct vg_procmap pm;

		r = vg_procmap_open(pid, &pm, &perr);
		if (r == 0) {
			r = vg_procmap_read_all(&pm, &m, &perr);
			vg_procmap_close(&pm);
		}
		if (r == 0) {
			how = "procmap_query";
			goto settle_deleted;
		}
		/* A kernel before 6.11, or a path longer than the ioctl
		 * can return: the text has the whole table. */
		if (r == -ENAMETOOLONG)
			why = FB_NAME_TOO_LONG;
		else if (r == -EOPNOTSUPP)
			why = FB_NOT_SUPPORTED;
		else
			return vg_error_set(err, r, "%s", perr.msg);
	}
	r = vg_maps_read(pid, &m, err);
	if (r < 0)
		return r;
	if (!(flags & VG_MAPS_FORCE_TEXT) && why != FB_NOT_SUPPORTED) {
		settled = settle_names(m, pid);
		if (settled < 0) {
			r = settled;
			goto fail;
		}
	}
	how = text_methods[why][settled > 0];
settle_deleted:
	r = settle_deleted_of(pid, m);
	if (r < 0)
		goto fail;
	if (method)
		*method = how;
	*out = m;
	return 0;
fail:
	vg_maps_free(m);
	return vg_error_set(err, r, "cannot load the maps of pid %d: out of memory", (int)pid);
}
