/* debuginfo.h - where the DWARF (and the full symbol table) of an image
 * comes from.
 *
 * Sources, tried in this order; the first that gives DWARF wins, and a
 * source that gives only a symbol table is kept as a fallback:
 *   1. the image itself, when it has .debug_info (embedded; may be
 *      SHF_COMPRESSED or .zdebug, libelf decompresses);
 *   2. /usr/lib/debug/.build-id/xx/rest.debug (needs a build-id);
 *   3. .gnu_debuglink: DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME,
 *      where DIR is the directory of the image's path (NAME must be a base
 *      name, as binutils writes it); the file's CRC32 must equal the
 *      link's, and when both have a build-id they must match;
 *   4. debuginfod (libdebuginfod, only when DEBUGINFOD_URLS is set and the
 *      image has a build-id);
 *   5. .gnu_debugdata (MiniDebugInfo: an xz-compressed ELF holding a
 *      .symtab of local function symbols, no DWARF).
 * Every candidate path is looked up first under the target's root
 * (/proc/PID/root, the target's mount namespace) and then on the host, when
 * those differ.  A candidate that does not open (ENOENT, EACCES, not ELF,
 * CRC or build-id mismatch) is skipped with a note in `tried`: nothing is
 * built from a path that did not open, and a failed open never falls back to
 * some other file under the same name.
 *
 * The debug file is a `struct vg_image` of its own (opened by path or from
 * memory), so its .symtab answers symbol lookups with the same static
 * addresses as the image it describes. */
#ifndef VG_DEBUGINFO_H
#define VG_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <elfutils/libdw.h>

#include "elf/image.h"
#include "util/error.h"

enum vg_debug_source {
	VG_DEBUG_NONE = 0,      /* "none" */
	VG_DEBUG_EMBEDDED,      /* "dwarf": .debug_info in the image itself */
	VG_DEBUG_BUILD_ID_DIR,  /* "build-id-dir" */
	VG_DEBUG_DEBUGLINK,     /* "debuglink" */
	VG_DEBUG_DEBUGINFOD,    /* "debuginfod" */
	VG_DEBUG_MINIDEBUGINFO, /* "minidebuginfo" (symbols only) */
};

struct vg_debuginfo_opts {
	/* Prefix under which the target's paths resolve ("/proc/PID/root"),
	 * or NULL for offline use (--bin): host paths only. */
	const char *target_root;
	/* Directory holding .build-id/ and the debuglink mirror tree;
	 * NULL: "/usr/lib/debug".  Tests point it at a fixture tree. */
	const char *debug_dir;
	/* Skip debuginfod even when DEBUGINFOD_URLS is set. */
	bool no_debuginfod;
	/* Take the first matching file with .debug_info without opening it
	 * with libdw (dwarf NULL, dwarf_deferred true): a caller holding a
	 * persistent index of that file (sym/symcache.h) needs no Dwarf, and
	 * dwarf_begin_elf decompresses every compressed debug section
	 * (libc6-dbg's: most of a warm run's time).  vg_debuginfo_open_dwarf
	 * opens it when needed; if libdw refuses it, search again without
	 * this flag, which goes on to the next candidate. */
	bool defer_dwarf;
};

struct vg_debuginfo {
	enum vg_debug_source source;   /* where the DWARF came from */
	/* The file holding the DWARF: img itself (borrowed) for
	 * VG_DEBUG_EMBEDDED, else an owned image.  NULL: no DWARF. */
	struct vg_image *dwarf_image;
	Dwarf *dwarf;                  /* NULL: no DWARF (or deferred) */
	/* The in-memory copy of dwarf_image, compressed sections
	 * decompressed, that dwarf reads (elf/inflate.h); NULL when dwarf
	 * reads dwarf_image's own Elf.  dwarf_getelf(dwarf) is the one. */
	struct vg_inflated *inflated;
	/* defer_dwarf: dwarf_image has .debug_info, not opened yet. */
	bool dwarf_deferred;
	/* Best symbol table: the debug file's .symtab when the image has
	 * none, the MiniDebugInfo ELF, or img itself (borrowed). */
	struct vg_image *symbol_image;
	enum vg_debug_source symbol_source; /* NONE: img's own symbols */
	/* Path of the separate debug file serving the DWARF, else the one
	 * serving only symbols; NULL for embedded DWARF and MiniDebugInfo. */
	char *path;
	/* One line per candidate that was looked at and refused, e.g.
	 * "/usr/lib/debug/.build-id/ab/cd.debug: no such file", joined by
	 * '\n' without a final one; "" if none.  Explains a result with no
	 * DWARF.  Paths in it come from the image: escape before printing. */
	char *tried;
	bool owns_dwarf_image, owns_symbol_image;
	/* Whether debuginfod was asked, for the explanation. */
	enum vg_debuginfod_state {
		VG_DEBUGINFOD_UNSET = 0,   /* DEBUGINFOD_URLS is not set */
		VG_DEBUGINFOD_DISABLED,    /* --no-debuginfod */
		VG_DEBUGINFOD_NO_BUILD_ID, /* the image has no build-id to ask by */
		VG_DEBUGINFOD_ASKED,       /* asked (tried says the answer) */
		VG_DEBUGINFOD_NOT_NEEDED,  /* an earlier source served */
	} debuginfod;
	/* Made by vg_debuginfo_vouched, not by a search: source, path and
	 * symbol_source as the search would give them, no file opened
	 * (dwarf_image NULL; symbol_image NULL when the symbols are the
	 * debug file's).  Search again (vg_debuginfo_find) for the files. */
	bool vouched;
};

/* The Debian package that ships path (from dpkg's file lists under
 * /var/lib/dpkg/info, trying the /usr-merged twin of the path too) into
 * buf; false if none owns it.  Reads every list: ~0.5 s cold, so for a
 * one-off explanation only, never on a lookup path. */
bool vg_debuginfo_owner_package(const char *path, char *buf, size_t size);

/* Find the debug info of img.  Never fails for lack of debug info: *out is
 * then source == VG_DEBUG_NONE with `tried` saying why.  Returns <0 only
 * for out-of-memory. */
int vg_debuginfo_find(struct vg_image *img,
		      const struct vg_debuginfo_opts *opts,
		      struct vg_debuginfo **out, struct vg_error *err);
struct vg_debuginfo *vg_debuginfo_free(struct vg_debuginfo *d);

/* The separate debug file a search would try first for img's DWARF: none
 * when img carries its own (embedded comes first), else the build-id
 * directory's file (under opts->target_root first, as the search tries
 * it) if one exists there.  0 with *path (malloc'd, as the search's
 * vg_debuginfo.path would say it) and *st, -ENOENT, or -ENOMEM. */
int vg_debuginfo_first_file(const struct vg_image *img,
			    const struct vg_debuginfo_opts *opts, char **path,
			    struct stat *st);

/* What vg_debuginfo_find would give for img when its first file
 * (vg_debuginfo_first_file: path) is one a caller already knows, without
 * opening it: a persistent index written from that very file (same
 * device, inode, size and mtime) vouches for it having DWARF that libdw
 * reads, and says whether it has a .symtab (file_has_symtab).  NULL when
 * the answer would need the file itself (img stripped of its .symtab and
 * the file without one: the search would go on to MiniDebugInfo) or out
 * of memory. */
struct vg_debuginfo *vg_debuginfo_vouched(const struct vg_image *img, const char *path,
					  bool file_has_symtab);

/* Open the DWARF a defer_dwarf search found.  0 (d->dwarf set; also when
 * it was open already), -ENOENT when there is none, -EINVAL when libdw
 * refuses it (then search again without defer_dwarf). */
int vg_debuginfo_open_dwarf(struct vg_debuginfo *d);

/* The symbol table of img's separate debug file (or MiniDebugInfo), for
 * name lookups that img's own tables cannot answer (__strcmp_avx2 is only
 * in libc6-dbg's .symtab).  Found once, as vg_debuginfo_find finds it
 * (target_root and no_debuginfod as in opts), and kept with img
 * (vg_image_adopt_debug_symbols), so later calls cost nothing.  NULL when
 * there is none, or when img's own .symtab is already the best table.
 * Borrowed until img is freed.  Not thread-safe for one img. */
const struct vg_image *vg_debuginfo_symbols(const struct vg_image *img,
					    const char *target_root,
					    bool no_debuginfod);

const char *vg_debug_source_name(enum vg_debug_source s);

/* CRC32 as .gnu_debuglink uses it (zlib's crc32) of the whole file. */
int vg_debuglink_crc(int fd, uint32_t *crc);

#endif
