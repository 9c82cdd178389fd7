/* maps.h - the target's memory regions from /proc/PID/maps.
 *
 * The text parser accepts every path the kernel can print: spaces, escaped
 * newlines ("\012" is decoded), a " (deleted)" suffix (stripped, with
 * deleted=true: the canonical path is the one without), [heap], [stack],
 * [vdso], [vvar], [vsyscall], anonymous, "memfd:NAME" and "/memfd:NAME".
 *
 * The text is ambiguous in two ways, which vg_maps_load() settles and the
 * pure parser cannot: the kernel escapes a newline as "\012" but does not
 * escape a backslash, so a file literally named "a\012b" prints exactly as
 * "a<newline>b" does (the parser decodes both to a newline and marks the
 * region name_ambiguous); and a file literally named "x (deleted)" prints
 * as a deleted "x".
 * A malformed line is an error naming the line number: the table is never
 * returned half-parsed.  Regions are sorted by start and do not overlap, so
 * vg_maps_find() is a binary search. */
#ifndef VG_MAPS_H
#define VG_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

enum vg_region_kind {
	VG_REGION_ANON,      /* no path */
	VG_REGION_FILE,      /* path starts with '/' */
	VG_REGION_HEAP,      /* [heap] */
	VG_REGION_STACK,     /* [stack] or [stack:TID] */
	VG_REGION_VDSO,      /* [vdso] */
	VG_REGION_VVAR,      /* [vvar], [vvar_vclock] */
	VG_REGION_VSYSCALL,  /* [vsyscall] */
	VG_REGION_MEMFD,     /* memfd:NAME or /memfd:NAME */
	VG_REGION_SPECIAL,   /* any other [name] or non-'/' label ([anon:x], [uprobes]) */
};

struct vg_region {
	uint64_t start, end;          /* [start, end) */
	uint64_t offset;              /* file offset of start */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char perms[5];                /* "r-xp" */
	bool readable, writable, executable, shared;
	bool deleted;                 /* " (deleted)" was printed */
	/* The text printed an escape ("\ooo") in the name: the decoded path
	 * may not be the real name (see above).  Never set by PROCMAP_QUERY,
	 * which gives names raw, nor after vg_maps_load() settled it. */
	bool name_ambiguous;
	enum vg_region_kind kind;
	char *path;                   /* canonical (unescaped, suffix stripped); "" if none */
	/* Per-mapping state owned by a consumer (e.g. an image index) that
	 * vg_maps_carry_over() moves to an identical region of a newer table. */
	void *state;
};

struct vg_maps {
	struct vg_region *regions;
	size_t n;
	void (*state_free)(void *state);  /* frees region.state; may be NULL */
	/* Internal: one block holding every region's path, freed by
	 * vg_maps_free().  NULL means each path is its own malloc (a table
	 * built by hand); vg_maps_free() then frees them one by one. */
	char *path_arena;
};

/* Parse maps text (need not be NUL-terminated).  Returns 0 or -EINVAL with
 * the offending line number in err.  *out owned by caller. */
int vg_maps_parse(const char *text, size_t len, struct vg_maps **out,
		  struct vg_error *err);

/* Read and parse /proc/PID/maps.  -ESRCH if the process is gone,
 * -EACCES/-EPERM if not allowed. */
int vg_maps_read(pid_t pid, struct vg_maps **out, struct vg_error *err);

struct vg_maps *vg_maps_free(struct vg_maps *m);

/* Region containing addr, or NULL.  Borrowed pointer, valid until m is freed. */
const struct vg_region *vg_maps_find(const struct vg_maps *m, uint64_t addr);

/* Move the state of every region of old that is unchanged in new (same
 * start, end, offset, perms, dev, inode and path) into new; states of regions
 * the new table no longer confirms are freed with old->state_free.  old keeps
 * no state afterwards.  Returns how many states were carried over. */
size_t vg_maps_carry_over(struct vg_maps *new_maps, struct vg_maps *old_maps);

/* Human label of a kind: "file", "anon", "heap", ... */
const char *vg_region_kind_name(enum vg_region_kind k);

/* vg_maps_load() flags (at most one). */
#define VG_MAPS_FORCE_TEXT 0x1u   /* the text only: names stay as decoded */
#define VG_MAPS_FORCE_QUERY 0x2u  /* walk with PROCMAP_QUERY, one ioctl per VMA */

/* The table of pid.  By default from the text of /proc/PID/maps (one read,
 * every name whatever its length), then settled: each name_ambiguous
 * region is asked of PROCMAP_QUERY, when the kernel has it, for its raw name
 * (kept only if the answer is the same VMA: start, end, device, inode, and
 * the raw name prints as the text did); each deleted file region whose path
 * with " (deleted)" exists in the target's mount namespace as the mapped
 * device and inode is a live file of that name (vg_maps_settle_deleted()).
 *
 * VG_MAPS_FORCE_QUERY walks the whole table with PROCMAP_QUERY instead; if
 * the walk cannot be done (-EOPNOTSUPP: kernel before 6.11; -ENAMETOOLONG:
 * a path longer than the ioctl's PATH_MAX limit) it falls back to the
 * default and *method says why.  VG_MAPS_FORCE_TEXT is the text with no
 * ioctl: an escaped name stays decoded and name_ambiguous (a literal
 * "a\012b" reads as "a<newline>b"); deleted paths are settled as above.
 *
 * *method (if non-NULL) is set to a static string: "text",
 * "text+procmap_query" (the ioctl settled at least one name),
 * "procmap_query", or, after a FORCE_QUERY fallback, one of the first two
 * followed by " (procmap_query failed: name too long)" or
 * " (procmap_query failed: not supported by this kernel)".
 * Errors as for vg_maps_read(); -EINVAL for both flags at once. */
int vg_maps_load(pid_t pid, unsigned flags, struct vg_maps **out,
		 const char **method, struct vg_error *err);

/* For every VG_REGION_FILE region with deleted set: if root + path +
 * " (deleted)" names a file (stat, following links) whose device and inode
 * are the mapping's, the file is not deleted, its name ends in " (deleted)":
 * put the suffix back in path and clear deleted.  root is the target's
 * root directory ("/proc/PID/root", "" for our own namespace); a stat that
 * fails leaves the region as it is.  Paths move, so region paths read
 * before the call are stale.  Returns how many regions changed, or -ENOMEM
 * (then m is unchanged). */
int vg_maps_settle_deleted(struct vg_maps *m, const char *root);

/* Shared by the text parser and PROCMAP_QUERY, exposed so both agree.
 * vg_region_classify: r->path holds the unescaped name as the kernel
 * printed it; strip a " (deleted)" suffix in place (setting r->deleted) and
 * set r->kind.  vg_region_set_perms: derive readable..shared from r->perms. */
void vg_region_classify(struct vg_region *r);
void vg_region_set_perms(struct vg_region *r);

#endif
