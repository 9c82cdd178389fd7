/* symbolizer.c - one answer per address: image, symbol, inline frames,
 * line; debug info found and indexed once per image, maps refreshed on a
 * miss (rate-limited), dropped images retired rather than freed.  The
 * lookup itself is lookup.c (symbolizer_priv.h: the state both share). */
#include "sym/symbolizer.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sym/kallsyms.h"
#include "sym/symbolizer_priv.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/procmap.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

void sym_warn(struct vg_symbolizer *s, const char *fmt, ...)
{
	va_list ap;
	char *w;

	if (s->n_warnings == MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&w, fmt, ap) < 0)
		w = NULL;
	va_end(ap);
	if (!w)
		return;
	for (size_t i = 0; i < s->n_warnings; i++) {
		if (strcmp(s->warnings[i], w) == 0) {
			free(w);
			return;
		}
	}
	s->warnings[s->n_warnings++] = w;
	s->warnings[s->n_warnings] = NULL;
}

/* ------------------------------------------------------------------ */
/* image states                                                         */

static void second_handle_free(struct second_handle *h)
{
	if (!h)
		return;
	if (h->dwarf)
		dwarf_end(h->dwarf);
	free(h);
}

static void state_free(struct image_state *st)
{
	vg_dwindex_free(st->ix);  /* joins the prefetch thread first */
	if (st->cached) {
		vg_symcache_entry_free(st->cached);
		free(st->cached);
	}
	if (st->dropped) {
		vg_symcache_entry_free(st->dropped);
		free(st->dropped);
	}
	free(st->index_why);
	free(st->index_path);
	free(st->pending_key);
	free(st->pending_path);
	second_handle_free(st->pf);
	vg_debuginfo_free(st->dbg);
	free(st->why_no_dwarf);
	vg_image_free(st->img);
}

struct image_state *sym_state_of(struct vg_symbolizer *s,
				 const struct vg_image *img)
{
	/* Relaxed: a hint that lookups under the shared lock update too. */
	size_t hit = __atomic_load_n(&s->last_hit, __ATOMIC_RELAXED);

	if (hit < s->n_states && s->states[hit].img == img)
		return &s->states[hit];
	for (size_t i = 0; i < s->n_states; i++) {
		if (s->states[i].img == img) {
			__atomic_store_n(&s->last_hit, i, __ATOMIC_RELAXED);
			return &s->states[i];
		}
	}
	return NULL;
}

/* One readable sentence: which image (and build-id), every candidate
 * tried and why it was refused (debuginfo lists them one per line; here
 * joined by "; ", since the sentence is for a person), and whether
 * debuginfod was asked.  The Debian package that would supply it is the
 * CLI's to add (vg_debuginfo_owner_package reads dpkg's lists). */
static char *explain_no_dwarf(const struct vg_image *img,
			      const struct vg_debuginfo *dbg)
{
	const char *tried = dbg && dbg->tried ? dbg->tried : "";
	const char *dfd;
	char bid[160], *list, *s = NULL;

	switch (dbg ? dbg->debuginfod : VG_DEBUGINFOD_UNSET) {
	case VG_DEBUGINFOD_ASKED:
		dfd = "";   /* its answer is among the candidates */
		break;
	case VG_DEBUGINFOD_DISABLED:
		dfd = "; debuginfod not asked (--no-debuginfod)";
		break;
	case VG_DEBUGINFOD_NO_BUILD_ID:
		dfd = "; debuginfod not asked (no build-id to ask by)";
		break;
	default:
		dfd = "; debuginfod not asked (DEBUGINFOD_URLS is not set)";
		break;
	}
	list = strdup(tried);
	if (!list)
		return NULL;
	vg_image_build_id_hex(img, bid, sizeof(bid));
	{
		/* "A: why\nB: why" -> "A (why); B (why)" */
		size_t n = 0;
		char *out = malloc(strlen(list) * 2 + 8), *w = out;

		if (!out) {
			free(list);
			return NULL;
		}
		for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
			char *colon = strstr(line, ": ");

			w += sprintf(w, "%s", n++ ? "; " : "");
			if (colon) {
				*colon = '\0';
				w += sprintf(w, "%s (%s)", line, colon + 2);
			} else {
				w += sprintf(w, "%s", line);
			}
		}
		*w = '\0';
		free(list);
		list = out;
	}
	if (asprintf(&s, "no debug info for %s (build-id %s): %s%s%s",
		     img->path[0] ? img->path : "(image)", bid[0] ? bid : "none",
		     *list ? "tried " : "no .debug_info, no .gnu_debuglink, no separate debug file by build-id",
		     list, dfd) < 0)
		s = NULL;
	free(list);
	return s;
}

/* The prefetch thread's own libdw handle, begun here on the ELF handle
 * the first one reads (dwarf_getelf): the in-memory copy whose sections
 * were decompressed, or the file's, decompressed in place
 * (elf/inflate.h), so this one inflates nothing (libc6-dbg's compressed
 * debug file: a second open inflated everything again, a sixth of a cold
 * libc batch), and it is begun in this thread, so libelf is never used
 * from two threads (the prefetch thread only reads memory through
 * libdw). */
static void start_prefetch(struct image_state *st)
{
	const struct vg_image *di = st->dbg->dwarf_image;
	struct second_handle *h;

	if (!di->open_path || !di->open_path[0] || di->via == VG_VIA_MEMORY)
		return;
	h = calloc(1, sizeof(*h));
	if (!h)
		return;
	h->dwarf = dwarf_begin_elf(dwarf_getelf(st->dbg->dwarf), DWARF_C_READ, NULL);
	if (!h->dwarf || vg_dwindex_prefetch(st->ix, h->dwarf) < 0) {
		second_handle_free(h);
		return;
	}
	st->pf = h;
}

/* A batch of this many addresses indexes in the background at once
 * (vg_symbolizer_expect_lookups): a second open of the file costs a few
 * milliseconds of the other core, which a batch this large repays. */
#define PREFETCH_AT_ONCE 256

void vg_symbolizer_expect_lookups(struct vg_symbolizer *s, size_t n)
{
	s->expect_lookups = n;
}

/* A batch that has needed a second CU of an image will likely need most:
 * index the rest on the other core.  Not at the first lookup, so that a
 * run with one address does not open the file twice for nothing. */
void sym_maybe_prefetch(struct vg_symbolizer *s, struct image_state *st)
{
	size_t built, n;

	if (!(s->flags & VG_SYM_PREFETCH) || st->pf_tried)
		return;
	n = vg_dwindex_cus(st->ix, &built);
	if (built < 2)
		return;
	st->pf_tried = true;
	if (n > built)
		start_prefetch(st);
}

/* The persistent index at path for key, if a valid one is there. */
static struct vg_symcache_entry *load_index(const struct vg_symbolizer *s, const char *key,
					    const char *path)
{
	struct vg_symcache_entry *e = malloc(sizeof(*e));

	if (e && vg_symcache_load(&s->cache, key, path, e) < 0) {
		free(e);
		e = NULL;
	}
	return e;
}

static void entry_free(struct vg_symcache_entry *e)
{
	if (e) {
		vg_symcache_entry_free(e);
		free(e);
	}
}

/* The index file use_vouched_index read (path; "" if none): e when
 * valid but not vouched for, for the search's key if it is the same, so
 * that no file is read twice (nor a bad one said bad twice). */
struct index_read {
	char path[sizeof(((struct vg_symcache_entry *)0)->path)];
	struct vg_symcache_entry *e;
};

/* An image whose DWARF was just indexed lazily: its persistent index is
 * written when the symbolizer is freed (write_pending_index), after the
 * answers.  Meanwhile the other core indexes the rest of its CUs (the
 * prefetch thread), which the index needs all of. */
static void want_cached_index(struct image_state *st, const char *key,
			      const char *path)
{
	st->pending_key = strdup(key);
	st->pending_path = strdup(path);
	if (!st->pending_key || !st->pending_path) {
		free(st->pending_key);
		free(st->pending_path);
		st->pending_key = st->pending_path = NULL;
		return;
	}
	if (!st->pf_tried && vg_dwindex_cus(st->ix, NULL) > 1) {
		st->pf_tried = true;
		start_prefetch(st);
	}
}

/* Where st's DWARF came from and which file it was (vg_symindex_origin),
 * into *o; NULL when that is no opened file. */
static const struct vg_symindex_origin *origin_of(const struct image_state *st,
						  struct vg_symindex_origin *o)
{
	const struct vg_image *di = st->dbg ? st->dbg->dwarf_image : NULL;

	/* A vouched stand-in has no dwarf_image: nothing opened. */
	if (!di || !di->file_size)
		return NULL;
	*o = (struct vg_symindex_origin){
		.source = (uint32_t)st->dbg->source, .dev = di->dev, .ino = di->inode,
		.size = di->file_size, .mtime_sec = di->mtime_sec, .mtime_nsec = di->mtime_nsec,
	};
	return o;
}

static bool same_origin(const struct vg_symindex_origin *a, const struct vg_symindex_origin *b)
{
	return a->source == b->source && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* st->cached, found through the build-id directory's file a search just
 * opened, records another origin (or none). */
static bool origin_stale(const struct image_state *st)
{
	struct vg_symindex_origin now, then;

	if (!origin_of(st, &now) || now.source != VG_DEBUG_BUILD_ID_DIR)
		return false;
	vg_symindex_origin(st->cached->index, &then);
	return !same_origin(&now, &then);
}

/* st->restamp: the index rewritten with the origin of the file this run
 * opened.  A failure costs only later runs' time (said when verbose). */
static void restamp_index(struct vg_symbolizer *s, struct image_state *st)
{
	struct vg_symindex_origin now;
	struct vg_error err = { 0 };

	if (!st->restamp || !st->cached || !origin_of(st, &now))
		return;
	st->restamp = false;
	if (vg_symcache_restamp(st->cached, &now, &err) < 0) {
		if (s->cache.verbose)
			fprintf(stderr, "vigil: symbol index %s not restamped: %s\n", st->cached->path,
				err.msg);
	} else if (s->cache.verbose) {
		fprintf(stderr, "vigil: symbol index %s: now written from %s\n", st->cached->path,
			st->dbg->path ? st->dbg->path : "(debug file)");
	}
}

/* Index every CU not indexed yet and keep the result for later runs.  A
 * failure costs only the next run's time: it is remembered for `sym
 * --index`, said when verbose. */
static void write_pending_index(struct vg_symbolizer *s, struct image_state *st)
{
	struct vg_symindex_origin origin;
	struct vg_error err = { 0 };
	char *key = st->pending_key, *path = st->pending_path;

	if (!key || !st->ix)
		return;
	st->pending_key = st->pending_path = NULL;
	st->index_rc = vg_symcache_store(&s->cache, st->ix,
					 st->dbg ? st->dbg->dwarf_image : NULL,
					 sym_index_symbols_of(st), origin_of(st, &origin), key, path,
					 &st->index_size, &err);
	if (st->index_rc == 0) {
		st->index_path = path;
		path = NULL;
	}
	if (st->index_rc < 0) {
		free(st->index_why);
		st->index_why = strdup(err.msg);
		if (s->cache.verbose)
			fprintf(stderr, "vigil: symbol index of %s not written: %s\n",
				st->img && st->img->path[0] ? st->img->path : "(image)", err.msg);
	}
	free(key);
	free(path);
}

void sym_drop_cached_index(struct vg_symbolizer *s, struct image_state *st)
{
	struct vg_symcache_entry *e = st->cached;

	if (!e)
		return;
	st->cached = NULL;
	if (s->cache.verbose)
		fprintf(stderr, "vigil: symbol index %s: a table failed its checksum or checks: "
			"rebuilding it\n", e->path);
	sym_realize_debug(s, st);
	if (vg_debuginfo_open_dwarf(st->dbg) == 0 &&
	    vg_dwindex_new(st->dbg->dwarf, &st->ix, NULL) == 0)
		want_cached_index(st, e->key, e->path);
	/* Dropped once at most: st->cached is never loaded again. */
	st->dropped = e;
}

uint32_t sym_index_symbols_of(const struct image_state *st)
{
	const struct vg_debuginfo *d = st->dbg;

	/* Only the table of the keyed file itself (the DWARF's), and the
	 * one lookup.c reads first: the image's own (embedded DWARF), or a
	 * separate debug file's .symtab for a stripped image.  Tagged with
	 * where the file came from, since one build-id keys both an
	 * unstripped image and its separate debug file, whose tables
	 * differ (.dynsym).  A stand-in (use_vouched_index) says what its
	 * file's would be. */
	if (d && d->vouched)
		return d->symbol_source != VG_DEBUG_NONE ? (uint32_t)d->source : 0;
	if (!d || !d->dwarf_image || d->source == VG_DEBUG_NONE ||
	    (d->source == VG_DEBUG_EMBEDDED ? d->dwarf_image != st->img ||
					      (d->symbol_source != VG_DEBUG_NONE &&
					       d->symbol_image != st->img)
					    : d->symbol_image != d->dwarf_image ||
					      d->symbol_source == VG_DEBUG_NONE))
		return 0;
	return (uint32_t)d->source;
}

static struct vg_debuginfo_opts debug_opts(const struct vg_symbolizer *s)
{
	return (struct vg_debuginfo_opts){
		.target_root = s->target ? s->target_root : NULL,
		.no_debuginfod = (s->flags & VG_SYM_NO_DEBUGINFOD) != 0,
		/* With a persistent index, libdw need not open the file. */
		.defer_dwarf = s->cache.enabled,
	};
}

/* The persistent index of st's image, when it was written from the very
 * file a search would open first (vg_debuginfo_first_file: same device,
 * inode, size and mtime as its origin says), without opening that file:
 * st->dbg is then a stand-in (vg_debuginfo_vouched) until something
 * needs the file (sym_realize_debug).  Opening libc6-dbg's file (mapping
 * it, its section headers, its build-id note) was 0.2-0.3 ms of a 4 ms
 * `vigil sym PID ADDR`.  False, and nothing kept, otherwise. */
static bool use_vouched_index(struct vg_symbolizer *s, struct image_state *st,
			      const struct vg_debuginfo_opts *opts, struct index_read *read)
{
	char key[VG_SYMINDEX_KEY_MAX + 1];
	struct vg_symindex_origin then, now;
	struct vg_debuginfo *d = NULL;
	struct vg_symcache_entry *e;
	struct stat sb;
	char *file;

	/* No build-id, no first file: the search's first candidate is the
	 * build-id directory's. */
	if (!s->cache.enabled || vg_debuginfo_first_file(st->img, opts, &file, &sb) < 0)
		return false;
	now = (struct vg_symindex_origin){
		.source = VG_DEBUG_BUILD_ID_DIR, .dev = (uint64_t)sb.st_dev,
		.ino = (uint64_t)sb.st_ino, .size = (uint64_t)sb.st_size,
		.mtime_sec = (int64_t)sb.st_mtim.tv_sec, .mtime_nsec = (int64_t)sb.st_mtim.tv_nsec,
	};
	/* The image's build-id keys its debug file's index: a search takes
	 * only a file whose build-id is the image's. */
	if (!vg_symcache_locate(&s->cache, st->img, key, sizeof(key), read->path,
				sizeof(read->path))) {
		read->path[0] = '\0';
		free(file);
		return false;
	}
	e = load_index(s, key, read->path);
	if (e) {
		vg_symindex_origin(e->index, &then);
		if (same_origin(&then, &now))
			d = vg_debuginfo_vouched(st->img, file,
						 vg_symindex_has_symbols(e->index, VG_DEBUG_BUILD_ID_DIR));
	}
	if (d) {
		st->dbg = d;
		st->cached = e;
		if (s->cache.verbose)
			fprintf(stderr, "vigil: symbol index %s: written from %s as it is now: that file not opened\n",
				e->path, file);
	} else {
		read->e = e;
	}
	free(file);
	return d != NULL;
}

const struct vg_image *sym_symbol_image(const struct image_state *st)
{
	if (st->dbg && st->dbg->symbol_source != VG_DEBUG_NONE)
		return st->dbg->symbol_image;
	return st->img;
}

void sym_realize_debug(struct vg_symbolizer *s, struct image_state *st)
{
	struct vg_debuginfo_opts opts = debug_opts(s);
	struct vg_debuginfo *d = NULL;

	if (!st->dbg || !st->dbg->vouched)
		return;
	/* Out of memory: the stand-in stays, and its file unread. */
	if (vg_debuginfo_find(st->img, &opts, &d, NULL) < 0)
		return;
	vg_debuginfo_free(st->dbg);
	st->dbg = d;
}

int sym_ensure_debug(struct vg_symbolizer *s, struct image_state *st,
		     struct vg_error *err)
{
	struct vg_debuginfo_opts opts = debug_opts(s);
	char key[VG_SYMINDEX_KEY_MAX + 1], path[sizeof(st->cached->path)];
	struct index_read read = { .path = "" };
	bool keyed = false;
	int rc;

	if (st->looked)
		return 0;
	st->looked = true;
	if (use_vouched_index(s, st, &opts, &read))
		return 0;
	rc = vg_debuginfo_find(st->img, &opts, &st->dbg, err);
	if (rc == 0 && st->dbg && st->dbg->dwarf_deferred) {
		keyed = vg_symcache_locate(&s->cache, st->dbg->dwarf_image, key,
					   sizeof(key), path, sizeof(path));
		if (keyed && strcmp(path, read.path) == 0) {
			/* Read already: valid (read.e) or not there or bad. */
			st->cached = read.e;
			read.e = NULL;
		} else if (keyed) {
			st->cached = load_index(s, key, path);
		}
		entry_free(read.e);
		read.e = NULL;
		if (st->cached) {
			st->restamp = origin_stale(st);
			return 0;
		}
		if (vg_debuginfo_open_dwarf(st->dbg) < 0) {
			/* libdw refuses it: the ordinary search goes on to
			 * the next candidate and says why in `tried`. */
			st->dbg = vg_debuginfo_free(st->dbg);
			opts.defer_dwarf = false;
			keyed = false;
			rc = vg_debuginfo_find(st->img, &opts, &st->dbg, err);
		}
	}
	entry_free(read.e);
	if (rc < 0) {
		/* Later lookups answer without DWARF: they must say why. */
		st->why_no_dwarf = strdup("debug info lookup failed: out of memory");
		return rc;
	}
	if (st->dbg && st->dbg->dwarf) {
		if (!keyed && opts.defer_dwarf)
			keyed = vg_symcache_locate(&s->cache, st->dbg->dwarf_image, key,
						   sizeof(key), path, sizeof(path));
		rc = vg_dwindex_new(st->dbg->dwarf, &st->ix, err);
		if (rc < 0)
			return rc;
		if (vg_dwindex_missing_dwo(st->ix))
			sym_warn(s, "%zu split DWARF units of %s (-gsplit-dwarf) were not found: no .dwo file at their "
			     "DW_AT_comp_dir/DW_AT_dwo_name or next to the file (a .dwp package is read only by "
			     "elfutils 0.191 and later); their lines come from the skeleton, their functions and "
			     "inline frames are missing",
			     vg_dwindex_missing_dwo(st->ix), st->img->path[0] ? st->img->path : "(image)");
		if (keyed)
			want_cached_index(st, key, path);
		else if ((s->flags & VG_SYM_PREFETCH) && s->expect_lookups >= PREFETCH_AT_ONCE &&
			 !st->pf_tried && vg_dwindex_cus(st->ix, NULL) > 1) {
			st->pf_tried = true;
			start_prefetch(st);
		}
	} else {
		st->why_no_dwarf = explain_no_dwarf(st->img, st->dbg);
	}
	return 0;
}

int vg_symbolizer_build_index(struct vg_symbolizer *s, const char **path,
			      size_t *size, bool *written, struct vg_error *err)
{
	struct image_state *st;
	int rc = 0;

	*path = NULL;
	*size = 0;
	*written = false;
	if (s->target || s->n_states != 1)
		return vg_error_set(err, -EINVAL, "an index is built for one file (--bin)");
	if (!s->cache.enabled)
		return vg_error_set(err, -EINVAL, "the symbol index cache is off (--no-cache or VIGIL_NO_CACHE)");
	pthread_rwlock_wrlock(&s->lock);
	st = &s->states[0];
	rc = sym_ensure_debug(s, st, err);
	if (rc == 0)
		write_pending_index(s, st);
	if (rc < 0) {
		/* the error says why */
	} else if (st->cached) {
		*path = st->cached->path;
		*size = st->cached->size;
	} else if (st->index_path) {
		*path = st->index_path;
		*size = st->index_size;
		*written = true;
	} else if (!st->dbg || (!st->dbg->dwarf && !st->dbg->dwarf_deferred)) {
		rc = vg_error_set(err, -ENOENT, "%s", st->why_no_dwarf ? st->why_no_dwarf : "no DWARF to index");
	} else if (st->index_rc < 0) {
		rc = vg_error_set(err, st->index_rc, "%s", st->index_why ? st->index_why : "not written");
	} else {
		rc = vg_error_set(err, -EINVAL, "its debug file cannot be keyed (read from memory)");
	}
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

bool vg_symbolizer_lookups_shared(struct vg_symbolizer *s)
{
	bool any = false, all = true;

	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->n_states; i++) {
		const struct image_state *st = &s->states[i];

		if (st->cached || (st->ix && st->ix_shared))
			any = true;
		else if (st->ix)
			all = false;
	}
	pthread_rwlock_unlock(&s->lock);
	return any && all;
}

struct vg_target *vg_symbolizer_target(const struct vg_symbolizer *s)
{
	return s->target;
}

Dwarf *vg_symbolizer_dwarf(struct vg_symbolizer *s, const struct vg_image *img,
			   struct vg_error *err)
{
	struct image_state *st;
	Dwarf *d = NULL;

	pthread_rwlock_wrlock(&s->lock);
	st = sym_state_of(s, img);
	/* A persistent index answered lookups without opening the DWARF:
	 * this caller needs the handle itself. */
	if (st && sym_ensure_debug(s, st, err) == 0 && st->dbg) {
		sym_realize_debug(s, st);
		if (vg_debuginfo_open_dwarf(st->dbg) == 0)
			d = st->dbg->dwarf;
	}
	pthread_rwlock_unlock(&s->lock);
	return d;
}

/* ------------------------------------------------------------------ */
/* opening                                                              */

static struct vg_symbolizer *symbolizer_new(unsigned flags)
{
	struct vg_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_rwlockattr_t attr;

	/* Writers first: two threads of a batch reading all the time must
	 * not keep the one that needs the lock alone (a refresh, an index
	 * dropped) waiting for ever. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	pthread_mutex_init(&s->names_lock, NULL);
	s->flags = flags;
	s->pm.fd = -1;
	vg_symcache_config(&s->cache);
	return s;
}

static int adopt_images(struct vg_symbolizer *s, struct vg_images *imgs)
{
	if (VG_GROW(s->states, s->cap_states, imgs->n))
		return -ENOMEM;
	uint64_t now = sym_now_ns();

	for (size_t i = 0; i < imgs->n; i++)
		s->states[i] = (struct image_state){ .img = imgs->images[i],
						     .checked_ns = now };
	s->n_states = imgs->n;
	s->images = imgs;
	return 0;
}

static void warn_replaced(struct vg_symbolizer *s)
{
	for (size_t i = 0; i < s->images->n; i++) {
		const struct vg_image *img = s->images->images[i];

		if (img->deleted)
			sym_warn(s, "%s was deleted or replaced on disk after the process mapped it; "
			     "answers come from the mapped file (via %s), not from what the path names now",
			     img->path, vg_image_via_name(img->via));
	}
}

/* Open a live target's symbolizer over maps (the caller's, or s's own
 * in maps_owned) and imgs: NULL loads them.  imgs is s's from the call
 * on, also on failure. */
/* Every image of maps, or only those of s->only. */
static int load_images(struct vg_symbolizer *s, const struct vg_maps *maps,
		       struct vg_images **out, struct vg_error *err)
{
	if (s->only)
		return vg_images_load_only(s->target, maps, s->mem, s->only, s->n_only, out, err);
	return vg_images_load(s->target, maps, s->mem, out, err);
}

static int open_live(struct vg_target *t, unsigned flags, const struct vg_maps *maps,
		     struct vg_images *imgs, const uint64_t *only, size_t n_only,
		     struct vg_symbolizer **out, struct vg_error *err)
{
	struct vg_symbolizer *s = symbolizer_new(flags);
	int rc = 0;

	*out = NULL;
	if (s && only && !(s->only = malloc((n_only ? n_only : 1) * sizeof(*only)))) {
		vg_symbolizer_free(s);
		s = NULL;
	}
	if (!s) {
		vg_images_free(imgs);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (only) {
		memcpy(s->only, only, n_only * sizeof(*only));
		s->n_only = n_only;
	}
	s->target = t;
	if (vg_procmap_open(t->pid, &s->pm, NULL) < 0)
		s->pm.fd = -1;
	snprintf(s->target_root, sizeof(s->target_root), "/proc/%d/root",
		 (int)(t->mm_pid ? t->mm_pid : t->pid));
	if (!maps) {
		rc = vg_maps_load(t->pid, 0, &s->maps_owned, NULL, err);
		maps = s->maps_owned;
	}
	s->maps = maps;
	if (rc == 0)
		rc = vg_mem_open(t, s->maps, &s->mem, err);
	if (rc == 0 && !imgs)
		rc = load_images(s, s->maps, &imgs, err);
	if (rc == 0 && adopt_images(s, imgs) < 0)
		rc = vg_error_set(err, -ENOMEM, "out of memory");
	if (rc < 0) {
		if (s->images != imgs)
			vg_images_free(imgs);
		vg_symbolizer_free(s);
		return rc;
	}
	s->last_refresh_ns = sym_now_ns();
	warn_replaced(s);
	*out = s;
	return 0;
}

int vg_symbolizer_open_target(struct vg_target *t, unsigned flags,
			      struct vg_symbolizer **out, struct vg_error *err)
{
	return open_live(t, flags, NULL, NULL, NULL, 0, out, err);
}

int vg_symbolizer_open_target_only(struct vg_target *t, unsigned flags, const uint64_t *addrs,
				   size_t n_addrs, struct vg_symbolizer **out, struct vg_error *err)
{
	return open_live(t, flags, NULL, NULL, addrs, n_addrs, out, err);
}

int vg_symbolizer_open_loaded(struct vg_target *t, unsigned flags, const struct vg_maps *maps,
			      struct vg_images *imgs, struct vg_symbolizer **out,
			      struct vg_error *err)
{
	return open_live(t, flags, maps, imgs, NULL, 0, out, err);
}

int vg_symbolizer_open_file(const char *path, unsigned flags,
			    struct vg_symbolizer **out, struct vg_error *err)
{
	struct vg_symbolizer *s = symbolizer_new(flags | VG_SYM_NO_KERNEL);
	struct vg_images *imgs;
	struct vg_image *img = NULL;
	int rc;

	*out = NULL;
	if (!s)
		return vg_error_set(err, -ENOMEM, "out of memory");
	rc = vg_image_open_path(path, &img, err);
	if (rc < 0) {
		vg_symbolizer_free(s);
		return rc;
	}
	imgs = calloc(1, sizeof(*imgs));
	if (imgs)
		imgs->images = malloc(sizeof(*imgs->images));
	if (!imgs || !imgs->images) {
		if (imgs)
			free(imgs);
		vg_image_free(img);
		vg_symbolizer_free(s);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	imgs->images[0] = img;
	imgs->n = 1;
	if (adopt_images(s, imgs) < 0) {
		vg_images_free(imgs);
		vg_symbolizer_free(s);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

static void retire_all(struct vg_symbolizer *s)
{
	for (size_t i = 0; i < s->n_retired; i++)
		state_free(&s->retired[i]);
	free(s->retired);
	s->retired = NULL;
	s->n_retired = 0;
}

static bool wants_index(const struct image_state *st)
{
	return st->pending_key && st->ix;
}

/* VG_SYM_DETACH_INDEX: the pending index writes go to a grandchild (not
 * waited for, reparented when this process exits: no zombie), detached
 * from the terminal's session, with /dev/null as its input and output so
 * that no reader waits for it (stderr too unless VIGIL_VERBOSE, whose
 * messages it then still says).  True when the writes are now the
 * grandchild's; false when they are still to do here (nothing pending, or
 * fork failed). */
static bool detach_index_writes(struct vg_symbolizer *s)
{
	bool any = false;
	pid_t child;

	for (size_t i = 0; i < s->n_states; i++)
		any |= wants_index(&s->states[i]);
	for (size_t i = 0; i < s->n_retired; i++)
		any |= wants_index(&s->retired[i]);
	if (!(s->flags & VG_SYM_DETACH_INDEX) || !any)
		return false;
	/* One thread at the fork: the child indexes what the prefetch
	 * thread had not. */
	for (size_t i = 0; i < s->n_states; i++)
		vg_dwindex_stop_prefetch(s->states[i].ix);
	for (size_t i = 0; i < s->n_retired; i++)
		vg_dwindex_stop_prefetch(s->retired[i].ix);
	fflush(NULL);
	child = fork();
	if (child < 0)
		return false;
	if (child == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* Out of the terminal's session before this process returns:
		 * the terminal's hangup when the command's shell or script(1)
		 * closes it must not reach the writer. */
		setsid();
		signal(SIGHUP, SIG_IGN);
		if (fork() != 0)
			_exit(0);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			if (!s->cache.verbose)
				dup2(null, STDERR_FILENO);
		}
		for (size_t i = 0; i < s->n_states; i++)
			write_pending_index(s, &s->states[i]);
		for (size_t i = 0; i < s->n_retired; i++)
			write_pending_index(s, &s->retired[i]);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	return true;
}

struct vg_symbolizer *vg_symbolizer_free(struct vg_symbolizer *s)
{
	bool detached;

	if (!s)
		return NULL;
	detached = detach_index_writes(s);
	/* Persistent indexes wanted by this run's lookups, now that they
	 * are answered (the other core has indexed CUs meanwhile). */
	for (size_t i = 0; i < s->n_states && !detached; i++)
		write_pending_index(s, &s->states[i]);
	for (size_t i = 0; i < s->n_retired && !detached; i++)
		write_pending_index(s, &s->retired[i]);
	for (size_t i = 0; i < s->n_states; i++)
		restamp_index(s, &s->states[i]);
	/* The image set owns the images; states own the rest. */
	for (size_t i = 0; i < s->n_states; i++) {
		s->states[i].img = NULL;
		state_free(&s->states[i]);
	}
	free(s->states);
	free(s->only);
	vg_images_free(s->images);
	retire_all(s);
	vg_mem_free(s->mem);
	vg_maps_free(s->maps_owned);
	if (s->pm.fd >= 0)
		vg_procmap_close(&s->pm);
	vg_kallsyms_free(s->ksyms);
	if (s->perfmap_opened)
		vg_perfmap_free(&s->perfmap);
	sym_names_free(s);
	for (size_t i = 0; i < s->n_warnings; i++)
		free(s->warnings[i]);
	pthread_rwlock_destroy(&s->lock);
	pthread_mutex_destroy(&s->names_lock);
	free(s);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* refresh                                                              */

static bool same_image(const struct vg_image *a, const struct vg_image *b)
{
	return a->dev == b->dev && a->inode == b->inode && a->bias == b->bias &&
	       a->lo == b->lo && a->hi == b->hi && a->deleted == b->deleted &&
	       a->build_id_len == b->build_id_len &&
	       memcmp(a->build_id, b->build_id, a->build_id_len) == 0 &&
	       strcmp(a->path, b->path) == 0;
}

static bool same_maps(const struct vg_maps *a, const struct vg_maps *b)
{
	if (!a || !b || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct vg_region *x = &a->regions[i], *y = &b->regions[i];

		if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
		    x->dev_major != y->dev_major || x->dev_minor != y->dev_minor ||
		    x->inode != y->inode || x->deleted != y->deleted ||
		    strcmp(x->perms, y->perms) != 0 ||
		    strcmp(x->path ? x->path : "", y->path ? y->path : "") != 0)
			return false;
	}
	return true;
}

static bool same_file(const struct vg_image *a, const struct vg_image *b)
{
	return a->dev == b->dev && a->inode == b->inode &&
	       a->build_id_len == b->build_id_len &&
	       memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* A state, current-but-unmatched or retired, whose debug info describes the
 * same file as img, to hand it over. */
static struct image_state *debug_donor(struct vg_symbolizer *s,
				       const struct vg_image *img)
{
	for (size_t j = 0; j < s->n_states; j++)
		if (s->states[j].img && s->states[j].looked && same_file(s->states[j].img, img))
			return &s->states[j];
	for (size_t j = 0; j < s->n_retired; j++)
		if (s->retired[j].looked && same_file(s->retired[j].img, img))
			return &s->retired[j];
	return NULL;
}

/* Move the debug info and index from donor to st.  The donor keeps its
 * image (earlier answers point at its path) but no longer owns the rest. */
static void take_debug(struct image_state *st, struct image_state *donor)
{
	st->looked = true;
	st->dbg = donor->dbg;
	st->ix = donor->ix;
	st->cached = donor->cached;
	st->index_rc = donor->index_rc;
	st->index_size = donor->index_size;
	st->index_why = donor->index_why;
	st->index_path = donor->index_path;
	st->pending_key = donor->pending_key;
	st->pending_path = donor->pending_path;
	st->why_no_dwarf = donor->why_no_dwarf;
	st->corrupt_warned = donor->corrupt_warned;
	st->pf = donor->pf;
	st->pf_tried = donor->pf_tried;
	donor->looked = false;
	donor->dbg = NULL;
	donor->ix = NULL;
	donor->cached = NULL;
	donor->index_why = NULL;
	donor->index_path = NULL;
	donor->pending_key = donor->pending_path = NULL;
	donor->why_no_dwarf = NULL;
	donor->pf = NULL;
}

int sym_refresh_locked(struct vg_symbolizer *s, struct vg_error *err)
{
	struct vg_maps *maps = NULL;
	struct vg_images *imgs = NULL;
	struct image_state *states = NULL;
	size_t cap = 0;
	int rc;

	s->last_refresh_ns = sym_now_ns();
	rc = vg_maps_load(s->target->pid, 0, &maps, NULL, err);
	if (rc < 0)
		return vg_target_explain(s->target, rc, err);
	if (same_maps(s->maps, maps)) {
		/* Nothing changed: no image to reopen (a miss in the heap
		 * or a JIT region lands here once a second). */
		vg_maps_free(maps);
		return 0;
	}
	vg_mem_set_maps(s->mem, maps);
	rc = load_images(s, maps, &imgs, err);
	if (rc < 0) {
		vg_mem_set_maps(s->mem, s->maps);
		vg_maps_free(maps);
		return vg_target_explain(s->target, rc, err);
	}
	if (VG_GROW(states, cap, imgs->n) ||
	    VG_GROW(s->retired, s->cap_retired, s->n_retired + s->n_states))
		goto oom;
	/* Keep the state (debug info, index) of every unchanged image: the
	 * old image object moves into the new set, the duplicate just
	 * opened is freed. */
	for (size_t i = 0; i < imgs->n; i++) {
		states[i] = (struct image_state){ .img = imgs->images[i],
						  .checked_ns = s->last_refresh_ns };
		for (size_t j = 0; j < s->n_states; j++) {
			struct image_state *old = &s->states[j];

			if (!old->img || !same_image(old->img, imgs->images[i]))
				continue;
			vg_image_free(imgs->images[i]);
			imgs->images[i] = old->img;
			states[i] = *old;
			states[i].checked_ns = s->last_refresh_ns;
			old->img = NULL;
			break;
		}
	}
	/* A file mapped again elsewhere (a plugin reloaded at another base)
	 * keeps its debug info and index: they hold static addresses only. */
	for (size_t i = 0; i < imgs->n; i++) {
		struct image_state *donor;

		if (states[i].looked)
			continue;
		donor = debug_donor(s, imgs->images[i]);
		if (donor)
			take_debug(&states[i], donor);
	}
	/* What no longer maps is retired: answers given earlier still
	 * point into it. */
	for (size_t j = 0; j < s->n_states; j++)
		if (s->states[j].img)
			s->retired[s->n_retired++] = s->states[j];
	/* The old set's pointers now belong elsewhere. */
	s->images->n = 0;
	vg_images_free(s->images);
	free(s->states);
	s->images = imgs;
	s->states = states;
	s->n_states = imgs->n;
	s->cap_states = cap;
	__atomic_store_n(&s->last_hit, 0, __ATOMIC_RELAXED);
	/* Images own their paths: no answer borrows from the old table. */
	vg_maps_free(s->maps_owned);
	s->maps = s->maps_owned = maps;
	warn_replaced(s);
	return 0;
oom:
	free(states);
	vg_images_free(imgs);
	vg_mem_set_maps(s->mem, s->maps);
	vg_maps_free(maps);
	return vg_error_set(err, -ENOMEM, "out of memory refreshing the maps");
}

int vg_symbolizer_refresh(struct vg_symbolizer *s, struct vg_error *err)
{
	int rc = 0;

	if (!s->target)
		return 0;
	pthread_rwlock_wrlock(&s->lock);
	rc = sym_refresh_locked(s, err);
	/* and the next miss reads what the JIT appended to its perf map */
	s->perfmap.checked_ns = 0;
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

const struct vg_images *vg_symbolizer_images(const struct vg_symbolizer *s)
{
	return s->images;
}

const char *const *vg_symbolizer_warnings(const struct vg_symbolizer *s)
{
	return (const char *const *)s->warnings;
}
