/* symcache.h - where persistent symbol indexes (symindex.h) live, which
 * file serves which debug file, and how much room they may take.
 *
 * Directory: $VIGIL_CACHE_DIR, else $XDG_CACHE_HOME/vigil, else
 * ~/.cache/vigil (created 0700; files 0600, written to a temporary file
 * and renamed).  VIGIL_NO_CACHE=1 (what --no-cache sets) turns it off.
 * One file per debug file, named by its build-id (else by a hash of its
 * path, size, mtime and inode, which also form the key stored inside).
 *
 * Size: at most VIGIL_CACHE_MAX bytes in all (default 1 GiB; suffixes K,
 * M, G).  Using a file touches its mtime; writing one first removes the
 * least recently used (*.vsx by mtime, oldest first) until the new one
 * fits.  A file that fails its checks, when loaded or at the first lookup
 * in a CU (symindex.h), is rebuilt and replaced, never believed;
 * VIGIL_VERBOSE=1 says so on stderr, once per file. */
#ifndef VG_SYM_SYMCACHE_H
#define VG_SYM_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "sym/dwindex.h"
#include "sym/symindex.h"
#include "util/error.h"

struct vg_symcache {
	bool enabled;
	bool verbose;
	char dir[4096];
	uint64_t max_bytes;
};

/* From the environment. */
void vg_symcache_config(struct vg_symcache *c);

/* A cached index loaded (mapped; unmapped by vg_symcache_entry_free;
 * 2 MiB and larger with MADV_HUGEPAGE, so that a file read back from disk
 * comes in 2 MiB folios a fault maps whole). */
struct vg_symcache_entry {
	struct vg_symindex *index;
	void *map;
	size_t size;
	char path[4200];
	char key[VG_SYMINDEX_KEY_MAX + 1];
};

/* The key and file path of debug file di; false when it cannot be keyed
 * (read from memory, or no file to stat). */
bool vg_symcache_locate(const struct vg_symcache *c, const struct vg_image *di,
			char *key, size_t key_size, char *path, size_t path_size);

/* Load the index at path for key.  0 (*e filled, mtime touched), -ENOENT
 * when there is none, -EINVAL when it is bad (said on stderr when
 * verbose: the caller rebuilds it). */
int vg_symcache_load(const struct vg_symcache *c, const char *key,
		     const char *path, struct vg_symcache_entry *e);
void vg_symcache_entry_free(struct vg_symcache_entry *e);

/* Serialise ix (and sym_img's symbol table tagged sym_of, when given,
 * and the DWARF file's origin: vg_symindex_serialize) for key and write
 * it to path, evicting first
 * (least recently used) so the directory stays under the bound.  0 with
 * *size the file's size, or -errno with a sentence (-EINVAL: ix not
 * worth keeping, see vg_symindex_serialize; -EFBIG: larger than the
 * bound). */
int vg_symcache_store(const struct vg_symcache *c, struct vg_dwindex *ix,
		      const struct vg_image *sym_img, uint32_t sym_of,
		      const struct vg_symindex_origin *origin,
		      const char *key, const char *path, size_t *size,
		      struct vg_error *err);

/* Rewrite e's file with its origin set to o (vg_symindex_restamp),
 * atomically as vg_symcache_store writes.  0 or -errno with a sentence. */
int vg_symcache_restamp(const struct vg_symcache_entry *e, const struct vg_symindex_origin *o,
			struct vg_error *err);

#endif
