/* symbolizer.h - address of a live process (or of one ELF file) to image,
 * symbol, inline frames and file:line:column.
 *
 * Threading model: one read-write lock per symbolizer.  A lookup in an
 * image whose persistent index answers, or whose DWARF is indexed in
 * memory to the last CU, takes it shared, so several
 * threads look up side by side (vigil sym's large batches: two); every
 * other lookup, and the maps refresh one may trigger, take it exclusive,
 * so any thread may call vg_sym_lookup (watch, profile and probe look up
 * from the one thread that drains).  A lookup holds it for ~1 us
 * once its CU is indexed; the first lookup in an image also finds its debug
 * info (a debuginfod download when DEBUGINFOD_URLS is set) and maps its
 * persistent index (sym/symcache.h), or, the first time, indexes a CU
 * (and starts indexing the others on another thread, for the persistent
 * index written by vg_symbolizer_free), under the mutex, so a
 * latency-bound caller should warm the images it cares about first.  A refresh adds warnings to the target
 * (vg_target_warn), which is not locked: read the target's warnings, and
 * vg_symbolizer_warnings(), when no lookup runs.  Answers borrow strings owned by the
 * symbolizer; an image dropped by a refresh (unmapped, or replaced at the
 * same address) is retired, not freed, until vg_symbolizer_free, so a
 * borrowed string never dangles while the symbolizer lives.
 *
 * Refresh: an address that no image covers re-reads the maps, at most once
 * a second (VG_SYM_REFRESH_NS), rebuilds the image list, keeps images whose
 * mappings, device, inode and bias are unchanged (with their debug info and
 * index), and retires the rest. */
#ifndef VG_SYMBOLIZER_H
#define VG_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/debuginfo.h"
#include "elf/image.h"
#include "sym/dwindex.h"
#include "target/target.h"
#include "util/error.h"

#define VG_SYM_REFRESH_NS 1000000000ull

enum vg_sym_source {
	VG_SYMSRC_NONE = 0,      /* "none": see why */
	VG_SYMSRC_DWARF,         /* "dwarf": embedded DWARF */
	VG_SYMSRC_SYMTAB,        /* "symtab" */
	VG_SYMSRC_DYNSYM,        /* "dynsym" */
	VG_SYMSRC_DEBUGLINK,     /* "debuglink" */
	VG_SYMSRC_BUILD_ID_DIR,  /* "build-id-dir" */
	VG_SYMSRC_MINIDEBUGINFO, /* "minidebuginfo" */
	VG_SYMSRC_DEBUGINFOD,    /* "debuginfod" */
	VG_SYMSRC_KALLSYMS,      /* "kallsyms" */
	VG_SYMSRC_EH_FRAME,      /* "eh_frame": no symbol, an FDE's function */
	VG_SYMSRC_PERF_MAP,      /* "perf-map": JIT code, /tmp/perf-PID.map */
};

struct vg_sym_frame {
	const char *function;  /* demangled unless VG_SYM_NO_DEMANGLE; NULL: ?? */
	const char *file;      /* NULL: unknown */
	uint32_t line, column; /* 0: unknown */
	bool inlined;
};

struct vg_sym_result {
	uint64_t address;
	const struct vg_image *image;  /* NULL: kernel, JIT, or not in any image */
	/* image path, kernel module "[ext4]", or "[perf-PID.map]" for JIT
	 * code named by the process's perf map (source VG_SYMSRC_PERF_MAP) */
	const char *image_path;
	uint64_t static_address;       /* address - bias */

	bool has_symbol;
	const char *symbol;            /* demangled unless NO_DEMANGLE */
	const char *symbol_raw;        /* as in the symbol table */
	uint64_t symbol_address;       /* target address: bias + st_value */
	uint64_t symbol_size;
	uint64_t offset;               /* address - symbol_address */

	/* Padding between functions: no symbol covers the address; the
	 * nearest symbol below it is a hint only. */
	const char *nearest_symbol;    /* NULL: none */
	uint64_t nearest_offset;
	/* No symbol, but an .eh_frame FDE covers the address: a function whose
	 * symbol was stripped, [start, end) as target addresses; the frame is
	 * named "[function at 0xSTART, no symbol]".  0: not the case. */
	uint64_t function_start, function_end;

	enum vg_sym_source source;     /* of the frames, else of the symbol */
	struct vg_sym_frame frames[VG_DW_MAX_FRAMES];
	size_t n_frames;               /* 0: no DWARF scope covers it */
	bool frames_truncated;
	/* file:line:column of the address (also set in padding, from the
	 * line table, when frames is empty). */
	const char *file;
	uint32_t line, column;
	/* Why there is no symbol or no line: one sentence, or NULL. */
	const char *why;
	/* why is the image's missing-debug-info note, the same sentence for
	 * every address of the image: a report may print it once. */
	bool why_is_image_note;
	char why_text[256];            /* storage for a why made per answer */
	char module_text[80];          /* storage for "[module]" */
};

enum vg_sym_flags {
	VG_SYM_NO_DEMANGLE = 1u << 0,
	VG_SYM_NO_DEBUGINFOD = 1u << 1,
	VG_SYM_NO_KERNEL = 1u << 2,    /* do not read /proc/kallsyms */
	/* Batch use: on the first lookup in an image, index all its CUs in a
	 * background thread (vg_dwindex_prefetch) while lookups go on. */
	VG_SYM_PREFETCH = 1u << 3,
	/* An interactive command: vg_symbolizer_free writes the persistent
	 * indexes this run wants in a detached process (its output and input
	 * on /dev/null), so that the command exits as soon as it answered
	 * instead of after indexing the rest of the DWARF (0.3-1.3 s). */
	VG_SYM_DETACH_INDEX = 1u << 4,
};

struct vg_symbolizer;
struct vg_maps;
struct vg_images;

/* Live target: images from its maps (vg_images_load), debug info looked up
 * lazily per image on first use.  t is borrowed and must outlive it. */
int vg_symbolizer_open_target(struct vg_target *t, unsigned flags,
			      struct vg_symbolizer **out, struct vg_error *err);
/* Live target, for addrs[0..n) only: just the images holding them
 * (vg_images_load_only), at open and at every refresh.  For a question
 * about a few addresses (`vigil sym PID ADDR`): no other library is
 * opened or warned about.  addrs is copied. */
int vg_symbolizer_open_target_only(struct vg_target *t, unsigned flags, const uint64_t *addrs,
				   size_t n_addrs, struct vg_symbolizer **out, struct vg_error *err);
/* Live target, from what the caller already loaded (vigil watch resolves
 * its ADDRs with the same tables, and loading every ELF twice cost as
 * much again): maps from vg_maps_load and imgs from vg_images_load over
 * them.  Ownership: imgs becomes the symbolizer's at the call, on success
 * and on failure alike; the caller reads it from then on only through
 * vg_symbolizer_images() (a refresh replaces it) and never frees it.
 * maps stay the caller's, borrowed: they must outlive the symbolizer,
 * which never changes or frees them (a refresh reads a table of its own).
 * t is borrowed and must outlive it. */
int vg_symbolizer_open_loaded(struct vg_target *t, unsigned flags, const struct vg_maps *maps,
			      struct vg_images *imgs, struct vg_symbolizer **out,
			      struct vg_error *err);
/* Offline: one ELF file, addresses are its own static addresses (bias 0). */
int vg_symbolizer_open_file(const char *path, unsigned flags,
			    struct vg_symbolizer **out, struct vg_error *err);
/* Writes the persistent indexes this run's lookups wanted (which may take
 * a second for a large binary: flush answers first; with
 * VG_SYM_DETACH_INDEX, in a detached process), then frees. */
struct vg_symbolizer *vg_symbolizer_free(struct vg_symbolizer *s);

/* Always fills *res (source NONE and why when nothing is known).
 * Returns 0, or <0 only for out-of-memory or a target that exited during
 * a refresh (-ESRCH, err filled).  Thread-safe. */
int vg_sym_lookup(struct vg_symbolizer *s, uint64_t addr,
		  struct vg_sym_result *res, struct vg_error *err);

/* A block of lookups under one hold of the shared lock: vg_sym_lookup
 * takes and drops it per address, and a batch's two threads doing so
 * pass the lock's word between cores twice per address.  Between
 * vg_sym_hold and vg_sym_release the thread looks up with
 * vg_sym_lookup_held only (same answers as vg_sym_lookup; what needs
 * the exclusive lock lets go of the hold for it meanwhile) and calls
 * nothing else of s: the lock prefers writers, so taking it again
 * could wait on a writer that waits on the hold. */
void vg_sym_hold(struct vg_symbolizer *s);
int vg_sym_lookup_held(struct vg_symbolizer *s, uint64_t addr,
		       struct vg_sym_result *res, struct vg_error *err);
void vg_sym_release(struct vg_symbolizer *s);
/* Between vg_sym_hold and vg_sym_release: a hint that addr will be
 * looked up soon (a batch calls it a few addresses ahead), so that the
 * index lines that lookup will search are fetched into the cache
 * meanwhile (the persistent index's, else the in-memory one's); with
 * records, the persistent index's next step (symindex.h's
 * vg_symindex_prefetch_records), a lookup or so later: the records those
 * lines lead to.  No answer changes; nothing is done for an image not
 * looked up in yet or without DWARF. */
void vg_sym_prefetch_held(struct vg_symbolizer *s, uint64_t addr, bool records);

/* Do lookups in s now take the lock shared?  True when some image was
 * looked up in, and every image looked up in so far that has DWARF
 * answers from its persistent index or from an in-memory index of all
 * its CUs (none left to index lazily, the prefetch thread done): a
 * caller with a large batch may then share it between threads.
 * Thread-safe. */
bool vg_symbolizer_lookups_shared(struct vg_symbolizer *s);

/* Force a maps refresh now (ignores the rate limit); tests and long-running
 * callers after a known dlopen.  The next address in no image also reads
 * what was appended to the perf map (JIT code) without waiting for its
 * rate limit.  Thread-safe. */
int vg_symbolizer_refresh(struct vg_symbolizer *s, struct vg_error *err);

/* The image set currently in use (borrowed; valid until the next lookup
 * or refresh from any thread: for single-threaded callers). */
const struct vg_images *vg_symbolizer_images(const struct vg_symbolizer *s);

/* The target observed (borrowed), or NULL offline. */
struct vg_target *vg_symbolizer_target(const struct vg_symbolizer *s);

/* img's DWARF, found on first use exactly as a lookup finds it (debug
 * links, build-id directory, debuginfod unless VG_SYM_NO_DEBUGINFOD), or
 * NULL when it has none.  Borrowed: valid while s lives.  Takes the lock,
 * but the handle is not thread-safe: use it where no lookup runs. */
Dwarf *vg_symbolizer_dwarf(struct vg_symbolizer *s, const struct vg_image *img,
			   struct vg_error *err);

/* With VG_SYM_PREFETCH: the caller is about to look up n addresses.  A
 * batch this large will likely need every CU of the image it opens next,
 * so the background indexing starts with the image's DWARF instead of
 * after its second CU (a cold batch of the generated 20,000-function
 * binary spent its first half on one core). */
void vg_symbolizer_expect_lookups(struct vg_symbolizer *s, size_t n);

/* For an offline symbolizer (vg_symbolizer_open_file): make sure the
 * persistent index of the file's DWARF is in the cache (symcache.h):
 * found valid, or built and written now (*written).  0 with *path
 * (borrowed) and *size; -ENOENT when the file has no DWARF; -EINVAL when
 * the cache is off or the DWARF is not worth keeping; else -errno, with
 * err saying why. */
int vg_symbolizer_build_index(struct vg_symbolizer *s, const char **path,
			      size_t *size, bool *written, struct vg_error *err);

/* Warnings gathered once per symbolizer (an image whose on-disk file
 * differs from the mapped one, kallsyms unreadable, corrupt DWARF):
 * NULL-terminated, borrowed.  Not locked: read it when no lookup runs. */
const char *const *vg_symbolizer_warnings(const struct vg_symbolizer *s);

const char *vg_sym_source_name(enum vg_sym_source s);

#endif
