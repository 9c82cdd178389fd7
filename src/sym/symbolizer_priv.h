/* symbolizer_priv.h - the symbolizer's private state, shared by
 * symbolizer.c (opening, debug info per image, names, refresh) and
 * lookup.c (one address to image, symbol, frames, line).  Not part of the
 * library's interface: symbolizer.h is.  Every function here expects
 * s->lock held for writing, but for the lookups lookup.c makes under the
 * shared lock (sym_display_name, sym_unnamed_name, sym_state_of: safe
 * there). */
#ifndef VG_SYM_SYMBOLIZER_PRIV_H
#define VG_SYM_SYMBOLIZER_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sym/kallsyms.h"
#include "sym/perfmap.h"
#include "sym/symcache.h"
#include "sym/symbolizer.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/procmap.h"

#define MAX_WARNINGS 32

/* What vigil knows about one image beyond the ELF: found on first use. */
struct image_state {
	struct vg_image *img;
	bool looked;               /* debug info searched */
	struct vg_debuginfo *dbg;
	struct vg_dwindex *ix;
	/* Every CU of ix is indexed (vg_dwindex_complete) and its
	 * corruption warned about: lookups in ix may take the lock shared.
	 * Set under the exclusive lock, read under either. */
	bool ix_shared;
	/* The persistent index (symcache.h) when a valid one was found:
	 * lookups read it instead of ix, which is then NULL. */
	struct vg_symcache_entry *cached;
	/* A persistent index dropped for a bad table: kept mapped until
	 * the state is freed, for the names answers already borrowed
	 * from it (a symbol name, then a CU that fails its checks). */
	struct vg_symcache_entry *dropped;
	/* The persistent index to write (key and path) when the symbolizer
	 * is freed: not at the first lookup, whose answer would wait. */
	char *pending_key, *pending_path;
	/* What writing the persistent index did: index_path (index_size
	 * bytes) when written, else index_rc -errno and index_why. */
	int index_rc;
	size_t index_size;
	char *index_path;
	char *index_why;
	char *why_no_dwarf;        /* one sentence, when dbg has no DWARF */
	uint64_t checked_ns;       /* last time the mapping was confirmed */
	bool corrupt_warned;
	/* VG_SYM_PREFETCH: the prefetch thread's own libdw handle on the
	 * debug file's ELF handle; freed after the index. */
	struct second_handle *pf;
	bool pf_tried;
	/* cached was found through the debug file a search opened, and its
	 * origin names another file (the same build-id reinstalled, another
	 * inode): rewritten with this one's when the symbolizer is freed, so
	 * that later runs need not open it (use_vouched_index). */
	bool restamp;
};

/* The prefetch thread's libdw handle (begun by start_prefetch on the
 * DWARF image's ELF handle; ended after the thread is joined). */
struct second_handle {
	Dwarf *dwarf;
};

/* A name by a nonzero 64-bit key (a string's address, a target address):
 * open addressing, at most half full.  Both caches below are one. */
struct name_map {
	uint64_t *keys;            /* 0: empty */
	const char **values;
	size_t n, cap;             /* cap: power of two */
};

/* Demangled names by the address of the mangled string: those strings live
 * in ELF or DWARF sections that stay mapped while the symbolizer lives. */
struct name_cache {
	struct name_map map;       /* value == key when the name is not mangled */
	char **owned;
	size_t n_owned, cap_owned;
};

/* "[function at 0xSTART, no symbol]" by START (a target address): the
 * frames of a stripped function share one string, as a symbol's do. */
struct unnamed_cache {
	struct name_map map;       /* values owned */
};

struct vg_symbolizer {
	/* Written (exclusive) by everything that changes the state: opening
	 * debug info, a refresh, an index dropped, the lazily built tables.
	 * Read (shared) by a lookup that needs none of that: a live image's
	 * address whose persistent index answers (lookup.c), so that two
	 * threads of a batch look up side by side. */
	pthread_rwlock_t lock;
	/* names and unnamed, which lookups under the shared lock fill. */
	pthread_mutex_t names_lock;
	unsigned flags;
	/* vg_symbolizer_expect_lookups: the batch being answered. */
	size_t expect_lookups;
	struct vg_target *target;  /* NULL: offline */
	char target_root[64];
	const struct vg_maps *maps;   /* current: maps_owned, or the caller's */
	struct vg_maps *maps_owned;   /* NULL while the caller's are current */
	struct vg_procmap pm;      /* fd -1: no PROCMAP_QUERY, re-read maps */
	struct vg_mem *mem;
	struct vg_images *images;  /* current */
	/* vg_symbolizer_open_target_only: the addresses whose images are
	 * loaded, at open and at every refresh (NULL: every image). */
	uint64_t *only;
	size_t n_only;
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

	struct vg_symcache cache;  /* from the environment at open */

	/* JIT code: /tmp/perf-PID.map of a live target, opened at the first
	 * address in no image, re-read on a miss at most once a second. */
	struct vg_perfmap perfmap;
	bool perfmap_opened, perfmap_usable, perfmap_warned;

	struct name_cache names;
	struct unnamed_cache unnamed;
	char *warnings[MAX_WARNINGS + 1];
	size_t n_warnings;
};

static inline uint64_t sym_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Adds a warning (at most MAX_WARNINGS, no duplicates). */
void sym_warn(struct vg_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* raw as a person reads it: demangled (unless --no-demangle) and, for an
 * ELF symbol (versioned true), without its version suffix.  Borrowed
 * until s is freed. */
const char *sym_display_name(struct vg_symbolizer *s, const char *raw,
			     bool versioned);

/* sym_display_name(s, raw, false), a name without a version suffix (a
 * DWARF name): only a mangled one ("_Z", "_R") needs the call (the call
 * per frame of a batch's 230,000 frames, all plain C names). */
static inline const char *sym_display_name_unversioned(struct vg_symbolizer *s,
							const char *raw)
{
	if (!raw || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return raw;
	return sym_display_name(s, raw, false);
}

/* "[function at 0xSTART, no symbol]", one string per START; NULL when
 * out of memory. */
const char *sym_unnamed_name(struct vg_symbolizer *s, uint64_t start);
/* Frees both name tables (symnames.c). */
void sym_names_free(struct vg_symbolizer *s);

/* The state of a current image of s, or NULL. */
struct image_state *sym_state_of(struct vg_symbolizer *s,
				 const struct vg_image *img);

/* Finds and indexes st's debug info once.  0 or -errno.  st->dbg may
 * then be a stand-in that a persistent index vouched for (vouched: no
 * file opened): sym_realize_debug before reading its images. */
int sym_ensure_debug(struct vg_symbolizer *s, struct image_state *st,
		     struct vg_error *err);
/* st->dbg as a search gives it, its files open, in place of a vouched
 * stand-in (nothing to do otherwise).  The persistent index stays. */
void sym_realize_debug(struct vg_symbolizer *s, struct image_state *st);
/* The image whose symbol table answers first for st: the debug file's
 * when the search chose it, else st's own; NULL for a vouched stand-in
 * whose debug file has that table (read it with sym_realize_debug). */
const struct vg_image *sym_symbol_image(const struct image_state *st);

/* st's persistent index failed a check at a lookup: forget it, index the
 * DWARF instead (st->ix; NULL if that fails too) and rewrite the file when
 * the symbolizer is freed. */
void sym_drop_cached_index(struct vg_symbolizer *s, struct image_state *st);
/* Which symbol table the persistent index keeps for st (its tag, see
 * vg_symindex_serialize), or 0: none. */
uint32_t sym_index_symbols_of(const struct image_state *st);

/* Starts indexing the rest of st's DWARF on another thread when a batch
 * of lookups needs it (VG_SYM_PREFETCH). */
void sym_maybe_prefetch(struct vg_symbolizer *s, struct image_state *st);

/* Re-reads the maps and images, keeping the state of unchanged images.
 * 0 or -errno. */
int sym_refresh_locked(struct vg_symbolizer *s, struct vg_error *err);

#endif
