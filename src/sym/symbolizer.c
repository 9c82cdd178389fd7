/* symbolizer.c - one answer per address: image, symbol, inline frames,
 * line; debug info found and indexed once per image, maps refreshed on a
 * miss (rate-limited), dropped images retired rather than freed. */
#include "sym/symbolizer.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sym/demangle.h"
#include "sym/kallsyms.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/procmap.h"
#include "util/vec.h"
#include <sys/sysmacros.h>

#define MAX_WARNINGS 32

/* What vigil knows about one image beyond the ELF: found on first use. */
struct image_state {
	struct vg_image *img;
	bool looked;               /* debug info searched */
	struct vg_debuginfo *dbg;
	struct vg_dwindex *ix;
	char *why_no_dwarf;        /* one sentence, when dbg has no DWARF */
	uint64_t checked_ns;       /* last time the mapping was confirmed */
	bool corrupt_warned;
	/* VG_SYM_PREFETCH: the debug file opened again for the prefetch
	 * thread's own libdw handle; freed after the index. */
	struct second_handle *pf;
	bool pf_tried;
};

/* What the prefetch thread opens for itself (filled in by that thread,
 * read after it is joined). */
struct second_handle {
	char *path;
	uint64_t dev, inode;
	uint8_t build_id[64];
	size_t build_id_len;
	struct vg_image *img;
	Dwarf *dwarf;
};

/* Demangled names by the address of the mangled string: those strings live
 * in ELF or DWARF sections that stay mapped while the symbolizer lives. */
struct name_cache {
	const char **keys;
	const char **values;       /* == key when the name is not mangled */
	size_t n, cap;             /* cap: power of two */
	char **owned;
	size_t n_owned, cap_owned;
};

/* "[function at 0xSTART, no symbol]" by START (a target address): the
 * frames of a stripped function share one string, as a symbol's do. */
struct unnamed_cache {
	uint64_t *keys;            /* 0: empty */
	char **values;
	size_t n, cap;             /* cap: power of two */
};

struct vg_symbolizer {
	pthread_mutex_t lock;
	unsigned flags;
	struct vg_target *target;  /* NULL: offline */
	char target_root[64];
	struct vg_maps *maps;
	struct vg_procmap pm;      /* fd -1: no PROCMAP_QUERY, re-read maps */
	struct vg_mem *mem;
	struct vg_images *images;  /* current */
	struct image_state *states;/* by pointer, for current images */
	size_t n_states, cap_states;
	/* Images (and their states) dropped by refreshes: kept for the
	 * strings earlier answers borrowed. */
	struct image_state *retired;
	size_t n_retired, cap_retired;
	uint64_t last_refresh_ns;
	size_t last_hit;

	struct vg_kallsyms *ksyms;
	bool ksyms_loaded;
	bool ksyms_warned;

	struct name_cache names;
	struct unnamed_cache unnamed;
	char *warnings[MAX_WARNINGS + 1];
	size_t n_warnings;
};

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


static void warn(struct vg_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(struct vg_symbolizer *s, const char *fmt, ...)
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
/* demangling, cached by the mangled string's address                   */

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static int cache_grow(struct name_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 1024;
	const char **keys = calloc(cap, sizeof(*keys));
	const char **values = calloc(cap, sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++) {
		size_t h;

		if (!c->keys[i])
			continue;
		for (h = ptr_hash(c->keys[i], cap); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = c->keys[i];
		values[h] = c->values[i];
	}
	free(c->keys);
	free(c->values);
	c->keys = keys;
	c->values = values;
	c->cap = cap;
	return 0;
}

/* ELF symbol names may carry a symbol version ("clock_nanosleep@@GLIBC_2.17",
 * a compat "xdr_uint32_t@GLIBC_2.2.5"): shown without it, as gdb and
 * llvm-symbolizer name the function; symbol_raw keeps it. */
static char *strip_version(const char *raw, bool demangle)
{
	const char *at = strchr(raw, '@');
	char *plain, *d;

	if (!at || at == raw)
		return NULL;
	plain = strndup(raw, (size_t)(at - raw));
	if (!plain || !demangle)
		return plain;
	d = vg_demangle(plain);
	if (d) {
		free(plain);
		return d;
	}
	return plain;
}

static bool is_plt_name(const char *raw)
{
	size_t n = strlen(raw);

	return n > 4 && strcmp(raw + n - 4, "@plt") == 0 && !strchr(raw, '@')[4];
}

/* raw as a person reads it: demangled (unless --no-demangle) and, for an
 * ELF symbol (versioned true), without its version suffix. */
static const char *display_name(struct vg_symbolizer *s, const char *raw,
				bool versioned)
{
	struct name_cache *c = &s->names;
	bool demangle = !(s->flags & VG_SYM_NO_DEMANGLE);
	bool mangled, has_version;
	size_t h;
	char *d;

	if (!raw)
		return raw;
	mangled = demangle && raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R');
	/* "printf@plt" (a PLT stub vigil named) is a name, not a version. */
	has_version = versioned && strchr(raw, '@') && !is_plt_name(raw);
	/* Plain C names are the common case: no table needed. */
	if (!mangled && !has_version)
		return raw;
	if ((c->n + 1) * 2 > c->cap && cache_grow(c))
		return raw;
	for (h = ptr_hash(raw, c->cap); c->keys[h]; h = (h + 1) & (c->cap - 1))
		if (c->keys[h] == raw)
			return c->values[h];
	d = has_version ? strip_version(raw, demangle) : vg_demangle(raw);
	if (d && VG_GROW(c->owned, c->cap_owned, c->n_owned + 1)) {
		free(d);
		d = NULL;
	}
	if (d)
		c->owned[c->n_owned++] = d;
	c->keys[h] = raw;
	c->values[h] = d ? d : raw;
	c->n++;
	return c->values[h];
}

static const char *unnamed_name(struct unnamed_cache *c, uint64_t start)
{
	size_t h;
	char *v;

	if (!start)
		return NULL;
	if ((c->n + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		char **values = calloc(cap, sizeof(*values));

		if (!keys || !values) {
			free(keys);
			free(values);
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->keys[i])
				continue;
			for (h = ptr_hash((void *)(uintptr_t)c->keys[i], cap); keys[h];
			     h = (h + 1) & (cap - 1))
				;
			keys[h] = c->keys[i];
			values[h] = c->values[i];
		}
		free(c->keys);
		free(c->values);
		c->keys = keys;
		c->values = values;
		c->cap = cap;
	}
	for (h = ptr_hash((void *)(uintptr_t)start, c->cap); c->keys[h]; h = (h + 1) & (c->cap - 1))
		if (c->keys[h] == start)
			return c->values[h];
	if (asprintf(&v, "[function at 0x%" PRIx64 ", no symbol]", start) < 0)
		return NULL;
	c->keys[h] = start;
	c->values[h] = v;
	c->n++;
	return v;
}

static void unnamed_free(struct unnamed_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->values[i]);
	free(c->keys);
	free(c->values);
}

static void cache_free(struct name_cache *c)
{
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
	free(c->keys);
	free(c->values);
}

/* ------------------------------------------------------------------ */
/* image states                                                         */

static void second_handle_free(struct second_handle *h)
{
	if (!h)
		return;
	if (h->dwarf)
		dwarf_end(h->dwarf);
	vg_image_free(h->img);
	free(h->path);
	free(h);
}

static void state_free(struct image_state *st)
{
	vg_dwindex_free(st->ix);  /* joins the prefetch thread first */
	second_handle_free(st->pf);
	vg_debuginfo_free(st->dbg);
	free(st->why_no_dwarf);
	vg_image_free(st->img);
}

static struct image_state *state_of(struct vg_symbolizer *s,
				    const struct vg_image *img)
{
	if (s->last_hit < s->n_states && s->states[s->last_hit].img == img)
		return &s->states[s->last_hit];
	for (size_t i = 0; i < s->n_states; i++) {
		if (s->states[i].img == img) {
			s->last_hit = i;
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

/* In the prefetch thread: the debug file again, with its own libdw handle
 * (one handle cannot serve two threads), only if the path reopens the
 * very file: same device, inode and build-id; else no prefetch, which
 * only costs time. */
static Dwarf *open_second_handle(void *arg)
{
	struct second_handle *h = arg;

	if (vg_image_open_path(h->path, &h->img, NULL) < 0)
		return NULL;
	if (h->img->dev != h->dev || h->img->inode != h->inode ||
	    h->img->build_id_len != h->build_id_len ||
	    memcmp(h->img->build_id, h->build_id, h->build_id_len) != 0)
		return NULL;
	h->dwarf = dwarf_begin_elf(vg_image_elf(h->img), DWARF_C_READ, NULL);
	return h->dwarf;
}

static void start_prefetch(struct image_state *st)
{
	const struct vg_image *di = st->dbg->dwarf_image;
	struct second_handle *h;

	if (!di->open_path || !di->open_path[0] || di->via == VG_VIA_MEMORY)
		return;
	h = calloc(1, sizeof(*h));
	if (!h || !(h->path = strdup(di->open_path))) {
		free(h);
		return;
	}
	h->dev = di->dev;
	h->inode = di->inode;
	memcpy(h->build_id, di->build_id, di->build_id_len);
	h->build_id_len = di->build_id_len;
	if (vg_dwindex_prefetch(st->ix, open_second_handle, h) < 0) {
		second_handle_free(h);
		return;
	}
	st->pf = h;
}

/* A batch that has needed a second CU of an image will likely need most:
 * index the rest on the other core.  Not at the first lookup, so that a
 * run with one address does not open the file twice for nothing. */
static void maybe_prefetch(struct vg_symbolizer *s, struct image_state *st)
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

static int ensure_debug(struct vg_symbolizer *s, struct image_state *st,
			struct vg_error *err)
{
	struct vg_debuginfo_opts opts = {
		.target_root = s->target ? s->target_root : NULL,
		.no_debuginfod = (s->flags & VG_SYM_NO_DEBUGINFOD) != 0,
	};
	int rc;

	if (st->looked)
		return 0;
	st->looked = true;
	rc = vg_debuginfo_find(st->img, &opts, &st->dbg, err);
	if (rc < 0) {
		/* Later lookups answer without DWARF: they must say why. */
		st->why_no_dwarf = strdup("debug info lookup failed: out of memory");
		return rc;
	}
	if (st->dbg && st->dbg->dwarf) {
		rc = vg_dwindex_new(st->dbg->dwarf, &st->ix, err);
		if (rc < 0)
			return rc;
		if (vg_dwindex_missing_dwo(st->ix))
			warn(s, "%zu split DWARF units of %s (-gsplit-dwarf) were not found: no .dwo file at their "
			     "DW_AT_comp_dir/DW_AT_dwo_name or next to the file (a .dwp package is read only by "
			     "elfutils 0.191 and later); their lines come from the skeleton, their functions and "
			     "inline frames are missing",
			     vg_dwindex_missing_dwo(st->ix), st->img->path[0] ? st->img->path : "(image)");

	} else {
		st->why_no_dwarf = explain_no_dwarf(st->img, st->dbg);
	}
	return 0;
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

	pthread_mutex_lock(&s->lock);
	st = state_of(s, img);
	if (st && ensure_debug(s, st, err) == 0 && st->dbg)
		d = st->dbg->dwarf;
	pthread_mutex_unlock(&s->lock);
	return d;
}

/* ------------------------------------------------------------------ */
/* opening                                                              */

static struct vg_symbolizer *symbolizer_new(unsigned flags)
{
	struct vg_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->flags = flags;
	s->pm.fd = -1;
	return s;
}

static int adopt_images(struct vg_symbolizer *s, struct vg_images *imgs)
{
	if (VG_GROW(s->states, s->cap_states, imgs->n))
		return -ENOMEM;
	uint64_t now = now_ns();

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
			warn(s, "%s was deleted or replaced on disk after the process mapped it; "
			     "answers come from the mapped file (via %s), not from what the path names now",
			     img->path, vg_image_via_name(img->via));
	}
}

int vg_symbolizer_open_target(struct vg_target *t, unsigned flags,
			      struct vg_symbolizer **out, struct vg_error *err)
{
	struct vg_symbolizer *s = symbolizer_new(flags);
	struct vg_images *imgs = NULL;
	int rc;

	*out = NULL;
	if (!s)
		return vg_error_set(err, -ENOMEM, "out of memory");
	s->target = t;
	if (vg_procmap_open(t->pid, &s->pm, NULL) < 0)
		s->pm.fd = -1;
	snprintf(s->target_root, sizeof(s->target_root), "/proc/%d/root",
		 (int)(t->mm_pid ? t->mm_pid : t->pid));
	rc = vg_maps_load(t->pid, 0, &s->maps, NULL, err);
	if (rc == 0)
		rc = vg_mem_open(t, s->maps, &s->mem, err);
	if (rc == 0)
		rc = vg_images_load(t, s->maps, s->mem, &imgs, err);
	if (rc == 0 && adopt_images(s, imgs) < 0) {
		vg_images_free(imgs);
		rc = vg_error_set(err, -ENOMEM, "out of memory");
	}
	if (rc < 0) {
		vg_symbolizer_free(s);
		return rc;
	}
	s->last_refresh_ns = now_ns();
	warn_replaced(s);
	*out = s;
	return 0;
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

struct vg_symbolizer *vg_symbolizer_free(struct vg_symbolizer *s)
{
	if (!s)
		return NULL;
	/* The image set owns the images; states own the rest. */
	for (size_t i = 0; i < s->n_states; i++) {
		s->states[i].img = NULL;
		state_free(&s->states[i]);
	}
	free(s->states);
	vg_images_free(s->images);
	retire_all(s);
	vg_mem_free(s->mem);
	vg_maps_free(s->maps);
	if (s->pm.fd >= 0)
		vg_procmap_close(&s->pm);
	vg_kallsyms_free(s->ksyms);
	cache_free(&s->names);
	unnamed_free(&s->unnamed);
	for (size_t i = 0; i < s->n_warnings; i++)
		free(s->warnings[i]);
	pthread_mutex_destroy(&s->lock);
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
	st->why_no_dwarf = donor->why_no_dwarf;
	st->corrupt_warned = donor->corrupt_warned;
	st->pf = donor->pf;
	st->pf_tried = donor->pf_tried;
	donor->looked = false;
	donor->dbg = NULL;
	donor->ix = NULL;
	donor->why_no_dwarf = NULL;
	donor->pf = NULL;
}

static int refresh_locked(struct vg_symbolizer *s, struct vg_error *err)
{
	struct vg_maps *maps = NULL;
	struct vg_images *imgs = NULL;
	struct image_state *states = NULL;
	size_t cap = 0;
	int rc;

	s->last_refresh_ns = now_ns();
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
	rc = vg_images_load(s->target, maps, s->mem, &imgs, err);
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
	s->last_hit = 0;
	/* Images own their paths: no answer borrows from the old table. */
	vg_maps_free(s->maps);
	s->maps = maps;
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
	pthread_mutex_lock(&s->lock);
	rc = refresh_locked(s, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ------------------------------------------------------------------ */
/* lookup                                                               */

static void lookup_kernel(struct vg_symbolizer *s, uint64_t addr,
			  struct vg_sym_result *res)
{
	struct vg_ksym k;

	if (!s->ksyms_loaded) {
		struct vg_error e = { 0 };

		s->ksyms_loaded = true;
		if (vg_kallsyms_load(NULL, &s->ksyms, &e) < 0)
			warn(s, "cannot use /proc/kallsyms: %s", e.msg);
	}
	if (!s->ksyms || vg_kallsyms_why(s->ksyms)) {
		const char *why = s->ksyms ? vg_kallsyms_why(s->ksyms)
					   : "kernel symbols unavailable";

		if (!s->ksyms_warned)
			warn(s, "%s", why);
		s->ksyms_warned = true;
		res->why = why;
		return;
	}
	if (vg_kallsyms_lookup(s->ksyms, addr, &k) < 0) {
		res->why = "no kernel symbol covers this address";
		return;
	}
	if (k.module) {
		snprintf(res->module_text, sizeof(res->module_text), "[%s]", k.module);
		res->image_path = res->module_text;
	} else {
		res->image_path = "[kernel]";
	}
	res->static_address = addr;
	res->has_symbol = true;
	res->symbol_raw = k.name;
	res->symbol = k.name;
	res->symbol_address = k.addr;
	res->symbol_size = k.size;
	res->offset = addr - k.addr;
	res->source = VG_SYMSRC_KALLSYMS;
	res->frames[0] = (struct vg_sym_frame){ .function = k.name };
	res->n_frames = 1;
}

/* The sentence goes into the answer itself: it must outlive the lock. */
static const char *no_image_reason(struct vg_symbolizer *s, uint64_t addr,
				   struct vg_sym_result *res)
{
	const struct vg_region *r = s->maps ? vg_maps_find(s->maps, addr) : NULL;
	char *buf = res->why_text;
	size_t size = sizeof(res->why_text);

	if (!s->target)
		snprintf(buf, size, "0x%" PRIx64 " is outside every PT_LOAD segment of the file", addr);
	else if (!r)
		snprintf(buf, size, "0x%" PRIx64 " is not mapped in the process", addr);
	else if (r->path && r->path[0])
		snprintf(buf, size, "0x%" PRIx64 " is in %s, which is not an ELF image", addr, r->path);
	else
		snprintf(buf, size, "0x%" PRIx64 " is in anonymous memory (no ELF image: JIT code, heap or stack)",
			 addr);
	return buf;
}

static const struct vg_image *find_image(struct vg_symbolizer *s, uint64_t addr)
{
	if (!s->target) {
		const struct vg_image *img = s->images->images[0];

		/* Offline addresses are the file's own: any PT_LOAD. */
		for (size_t i = 0; i < img->n_loads; i++)
			if (addr >= img->loads[i].vaddr &&
			    addr - img->loads[i].vaddr < img->loads[i].memsz)
				return img;
		return NULL;
	}
	return vg_images_find(s->images, addr);
}

/* Is img still what the process maps at addr?  A library unloaded and
 * another loaded at the same address covers the same range, so a hit in
 * the image table is confirmed with the kernel, at most once a second per
 * image: one PROCMAP_QUERY, or (before Linux 6.11) a stale verdict that
 * lets the rate-limited refresh re-read the maps. */
static bool still_mapped(struct vg_symbolizer *s, const struct vg_image *img,
			 uint64_t addr)
{
	struct image_state *st = state_of(s, img);
	uint64_t now = now_ns();
	struct vg_region r = { 0 };
	bool same;

	if (!st || now - st->checked_ns < VG_SYM_REFRESH_NS)
		return true;
	if (s->pm.fd < 0)
		return false;
	if (vg_procmap_query(&s->pm, addr, &r, NULL, NULL, NULL) < 0)
		return false;
	same = (r.inode == img->inode &&
		makedev(r.dev_major, r.dev_minor) == img->dev &&
		r.start >= img->lo && r.end <= img->hi) ||
	       /* the .bss tail: anonymous, after the last file page */
	       (r.inode == 0 && r.start >= img->hi && addr < img->mem_hi);
	free(r.path);
	if (same)
		st->checked_ns = now;
	return same;
}

/* Could a refresh find an image at addr?  Only if the kernel shows a file
 * mapped there: an address in the heap, a stack, JIT code or nowhere
 * stays without an image whatever the maps say next.  Without
 * PROCMAP_QUERY, the rate-limited refresh decides (and skips reopening
 * images when the maps are unchanged). */
static bool may_be_new_image(struct vg_symbolizer *s, uint64_t addr)
{
	struct vg_region r = { 0 };
	bool file;
	int rc;

	if (s->pm.fd < 0)
		return true;
	rc = vg_procmap_query(&s->pm, addr, &r, NULL, NULL, NULL);
	if (rc == -ENOENT)
		return false;  /* nothing mapped there */
	if (rc < 0)
		return true;   /* no answer (an older kernel): let the maps say */
	file = r.inode != 0;
	free(r.path);
	return file;
}

static enum vg_sym_source source_of(enum vg_debug_source d)
{
	switch (d) {
	case VG_DEBUG_EMBEDDED:
		return VG_SYMSRC_DWARF;
	case VG_DEBUG_BUILD_ID_DIR:
		return VG_SYMSRC_BUILD_ID_DIR;
	case VG_DEBUG_DEBUGLINK:
		return VG_SYMSRC_DEBUGLINK;
	case VG_DEBUG_DEBUGINFOD:
		return VG_SYMSRC_DEBUGINFOD;
	case VG_DEBUG_MINIDEBUGINFO:
		return VG_SYMSRC_MINIDEBUGINFO;
	default:
		return VG_SYMSRC_NONE;
	}
}

static void fill_symbol(struct vg_symbolizer *s, struct image_state *st,
			struct vg_sym_result *res, enum vg_sym_source *sym_source)
{
	const struct vg_image *symimg = st->img;
	struct vg_symbol sym;
	bool found;

	*sym_source = VG_SYMSRC_NONE;
	if (st->dbg && st->dbg->symbol_image && st->dbg->symbol_source != VG_DEBUG_NONE)
		symimg = st->dbg->symbol_image;
	/* A separate debug file's .symtab answers first for a stripped
	 * image; the image's own .dynsym still covers what it lacks. */
	found = vg_image_symbol_at(symimg, res->static_address, &sym) == 0;
	if (!found && symimg != st->img &&
	    vg_image_symbol_at(st->img, res->static_address, &sym) == 0) {
		symimg = st->img;
		found = true;
	}
	if (found) {
		res->has_symbol = true;
		res->symbol_raw = sym.name;
		res->symbol = display_name(s, sym.name, true);
		res->symbol_address = sym.vaddr + st->img->bias;
		res->symbol_size = sym.size;
		res->offset = res->address - res->symbol_address;
		if (symimg != st->img)
			*sym_source = source_of(st->dbg->symbol_source);
		else
			*sym_source = sym.from_dynsym ? VG_SYMSRC_DYNSYM : VG_SYMSRC_SYMTAB;
		return;
	}
	if (vg_image_symbol_before(symimg, res->static_address, &sym) == 0) {
		res->nearest_symbol = display_name(s, sym.name, true);
		res->nearest_offset = res->static_address - sym.vaddr;
	}
}

/* A C++ function whose DWARF has no linkage name (a member of a local
 * class, a lambda) is named by DW_AT_name alone ("bump", "operator()").
 * When the ELF symbol is that very function (same entry) and mangled, its
 * demangled name is the qualified one: shown instead, as llvm-symbolizer
 * and eu-addr2line show it.  C names keep the DWARF name (aliases). */
static void qualify_outer_frame(struct vg_sym_result *res,
				const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;

	if (!dw->n_frames)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || outer->name_is_linkage ||
	    !res->has_symbol || !res->symbol_raw || strncmp(res->symbol_raw, "_Z", 2) != 0 ||
	    res->symbol_address - bias != outer->entry || res->symbol == res->symbol_raw)
		return;
	res->frames[dw->n_frames - 1].function = res->symbol;
}

/* How public a C name looks: "__GI___clock_gettime" (glibc's internal
 * alias) < "__clock_gettime" < "clock_gettime". */
static int public_rank(const char *n)
{
	int r = 0;

	if (strncmp(n, "__GI_", 5) == 0)
		return -1;
	while (n[r] == '_')
		r++;
	return -r;
}

/* The concrete function of a frame taken from DWARF is named by its
 * linkage name, which for C is an asm alias where one was given (glibc's
 * hidden_proto: "__GI_sigaltstack", "__GI___clock_gettime").  When the
 * ELF symbol at the same entry is another name of that very function and
 * a more public one (the symbol lookup already ranks aliases: global over
 * local, default version, fewer underscores), the frame takes it, as
 * gdb and perf name it.  Not for clones ("f.constprop.0": the DWARF name
 * "f" is the better one) nor C++ (the mangled names are the same). */
static void public_outer_frame(struct vg_symbolizer *s, struct vg_sym_result *res,
			       const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;
	struct vg_sym_frame *f;

	if (!dw->n_frames || !res->has_symbol || !res->symbol)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	f = &res->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || !f->function ||
	    res->symbol_address - bias != outer->entry ||
	    strchr(res->symbol, '.') || strncmp(res->symbol_raw, "_Z", 2) == 0 ||
	    strncmp(f->function, "_Z", 2) == 0 || strcmp(f->function, res->symbol) == 0)
		return;
	if (public_rank(res->symbol) > public_rank(f->function))
		f->function = res->symbol;
	(void)s;
}

/* Under --no-demangle a frame is named by its linkage name: a C++
 * function whose DWARF has only DW_AT_name ("operator()" of a lambda)
 * takes the mangled ELF symbol at its entry. */
static void linkage_outer_frame(struct vg_symbolizer *s, struct vg_sym_result *res,
				const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;

	if (!(s->flags & VG_SYM_NO_DEMANGLE) || !dw->n_frames || !res->has_symbol)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || outer->name_is_linkage ||
	    res->symbol_address - bias != outer->entry ||
	    strncmp(res->symbol_raw, "_Z", 2) != 0)
		return;
	res->frames[dw->n_frames - 1].function = res->symbol;
}

static int fill_frames(struct vg_symbolizer *s, struct image_state *st,
		       struct vg_sym_result *res, struct vg_error *err)
{
	struct vg_dw_result dw;

	if (!st->ix)
		return 0;
	/* -ENOENT (no CU covers it) still fills dw: no frames, no line;
	 * -ENOMEM (its CU could not be indexed) must not pass for that. */
	if (vg_dwindex_lookup(st->ix, res->static_address, &dw) == -ENOMEM)
		return vg_error_set(err, -ENOMEM, "out of memory indexing the DWARF of %s",
				    st->img->path[0] ? st->img->path : "(image)");
	maybe_prefetch(s, st);
	if (vg_dwindex_corrupt(st->ix) && !st->corrupt_warned) {
		st->corrupt_warned = true;
		warn(s, "the DWARF of %s (%s) is corrupt in places libdw refused to read; "
		     "answers from it may lack inline frames or lines",
		     st->img->path[0] ? st->img->path : "(image)",
		     st->dbg->path ? st->dbg->path : "embedded");
	}
	if (dw.n_frames == 0 && !dw.has_line)
		return 0;
	for (size_t i = 0; i < dw.n_frames; i++) {
		res->frames[i] = (struct vg_sym_frame){
			.function = display_name(s, dw.frames[i].name, false),
			.file = dw.frames[i].file,
			.line = dw.frames[i].line,
			.column = dw.frames[i].column,
			.inlined = dw.frames[i].inlined,
		};
	}
	res->n_frames = dw.n_frames;
	res->frames_truncated = dw.truncated;
	qualify_outer_frame(res, &dw, st->img->bias);
	public_outer_frame(s, res, &dw, st->img->bias);
	linkage_outer_frame(s, res, &dw, st->img->bias);
	if (dw.has_line) {
		res->file = dw.file;
		res->line = dw.line;
		res->column = dw.column;
	}
	return 0;
}

/* No symbol: is the address inside a function the image's .eh_frame
 * describes (a stripped one), rather than in padding? */
static void fill_unnamed_function(struct vg_symbolizer *s, struct image_state *st,
				  struct vg_sym_result *res)
{
	uint64_t start, end;

	(void)s;
	if (vg_image_function_at(st->img, res->static_address, &start, &end) < 0)
		return;
	res->function_start = start + st->img->bias;
	res->function_end = end + st->img->bias;
}

static const char *unnamed_why(struct vg_sym_result *res)
{
	snprintf(res->why_text, sizeof(res->why_text),
		 "no symbol covers this address, but the .eh_frame of the image describes a function at 0x%" PRIx64
		 "-0x%" PRIx64 " that contains it: its symbol was stripped",
		 res->function_start, res->function_end);
	return res->why_text;
}

static int lookup_locked(struct vg_symbolizer *s, uint64_t addr,
			 struct vg_sym_result *res, struct vg_error *err)
{
	const struct vg_image *img;
	struct image_state *st;
	enum vg_sym_source sym_source;
	bool from_dwarf;
	int rc;

	if (vg_addr_is_kernel(addr) && s->target) {
		if (!(s->flags & VG_SYM_NO_KERNEL))
			lookup_kernel(s, addr, res);
		else
			res->why = "kernel address (kernel symbols not requested)";
		return 0;
	}
	img = find_image(s, addr);
	if (s->target && now_ns() - s->last_refresh_ns >= VG_SYM_REFRESH_NS &&
	    (img ? !still_mapped(s, img, addr) : may_be_new_image(s, addr))) {
		rc = refresh_locked(s, err);
		if (rc == -ESRCH && img) {
			/* The process is gone: samples drained after its exit
			 * ran in the maps it last had, which still hold img. */
			vg_error_clear(err);
		} else if (rc < 0) {
			return rc;
		} else {
			img = find_image(s, addr);
		}
	}
	if (!img) {
		res->why = no_image_reason(s, addr, res);
		return 0;
	}
	st = state_of(s, img);
	res->image = img;
	res->image_path = img->path;
	res->static_address = addr - img->bias;
	rc = ensure_debug(s, st, err);
	if (rc < 0)
		return rc;
	fill_symbol(s, st, res, &sym_source);
	rc = fill_frames(s, st, res, err);
	if (rc < 0)
		return rc;
	from_dwarf = res->n_frames > 0 || res->file;
	if (!res->has_symbol)
		fill_unnamed_function(s, st, res);
	if (res->n_frames == 0 && res->function_start) {
		res->frames[0] = (struct vg_sym_frame){
			.function = unnamed_name(&s->unnamed, res->function_start),
			.file = res->file, .line = res->line, .column = res->column,
		};
		res->n_frames = res->frames[0].function ? 1 : 0;
	}
	if (res->n_frames == 0 && res->has_symbol) {
		/* No DWARF scope (a function compiled without debug info, or
		 * hand-written assembly): the symbol is the function, at the
		 * line the line table gives, if any (llvm-symbolizer does the
		 * same). */
		res->frames[0] = (struct vg_sym_frame){
			.function = res->symbol, .file = res->file,
			.line = res->line, .column = res->column,
		};
		res->n_frames = 1;
		if (res->file)
			res->why = "no DWARF scope covers this address: the function is the symbol";
	}
	if (from_dwarf) {
		res->source = source_of(st->dbg->source);
	} else {
		res->source = !res->has_symbol && res->function_start ? VG_SYMSRC_EH_FRAME
								       : sym_source;
		if (!res->has_symbol && res->function_start)
			res->why = unnamed_why(res);
		else if (st->why_no_dwarf) {
			res->why = st->why_no_dwarf;
			res->why_is_image_note = true;
		}
		else if (res->has_symbol)
			res->why = "no DWARF scope or line covers this address";
		else if (res->nearest_symbol)
			res->why = "padding between functions: no symbol, DWARF scope or line covers this address (nearest_symbol is a hint)";
		else
			res->why = "no symbol, DWARF scope or line covers this address";
	}
	if (!res->has_symbol && !res->why && res->function_start)
		res->why = unnamed_why(res);
	if (!res->has_symbol && !res->why)
		res->why = res->nearest_symbol
			? "padding between functions: no symbol covers this address (nearest_symbol is a hint)"
			: "no symbol covers this address";
	return 0;
}

int vg_sym_lookup(struct vg_symbolizer *s, uint64_t addr,
		  struct vg_sym_result *res, struct vg_error *err)
{
	int rc;

	memset(res, 0, offsetof(struct vg_sym_result, frames));
	res->n_frames = 0;
	res->frames_truncated = false;
	res->file = NULL;
	res->line = res->column = 0;
	res->why = NULL;
	res->why_is_image_note = false;
	res->address = addr;
	pthread_mutex_lock(&s->lock);
	rc = lookup_locked(s, addr, res, err);
	pthread_mutex_unlock(&s->lock);
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

const char *vg_sym_source_name(enum vg_sym_source src)
{
	switch (src) {
	case VG_SYMSRC_DWARF:
		return "dwarf";
	case VG_SYMSRC_SYMTAB:
		return "symtab";
	case VG_SYMSRC_DYNSYM:
		return "dynsym";
	case VG_SYMSRC_DEBUGLINK:
		return "debuglink";
	case VG_SYMSRC_BUILD_ID_DIR:
		return "build-id-dir";
	case VG_SYMSRC_MINIDEBUGINFO:
		return "minidebuginfo";
	case VG_SYMSRC_DEBUGINFOD:
		return "debuginfod";
	case VG_SYMSRC_KALLSYMS:
		return "kallsyms";
	case VG_SYMSRC_EH_FRAME:
		return "eh_frame";
	default:
		return "none";
	}
}
