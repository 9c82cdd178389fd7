/* procmap.h - the PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11+).
 *
 * One ioctl answers "which VMA covers (or follows) this address" with its
 * range, flags, offset, device, inode, path and the ELF build-id the kernel
 * recorded for file-backed executable mappings, without opening the file.
 * Debian 12's headers predate it, so procmap.c declares the UAPI struct.
 * When the kernel lacks it (ENOTTY/EINVAL), callers fall back to the text
 * parser in maps.h.  vg_maps_load() reads the text by default (faster on
 * large tables, and complete: the ioctl cannot return a path longer than
 * PATH_MAX) and queries single VMAs to get the raw names that the text
 * prints ambiguously; the whole walk is VG_MAPS_FORCE_QUERY.
 *
 * Differences from the text it papers over, so that vg_procmap_read_all()
 * and vg_maps_read() give identical tables: the ioctl returns names raw (a
 * newline is a newline, not "\012"), with the same " (deleted)" suffix; it
 * never reports the [vsyscall] gate page, which is not a VMA, so the walk
 * adds it when the text would show it; a process without an mm (kernel
 * thread) answers ESRCH where the text is empty.  Differences it cannot
 * paper over: a name holding a literal backslash escape (the raw name is
 * right, the decoded text wrong), and a path longer than PATH_MAX (the walk
 * fails with -ENAMETOOLONG). */
#ifndef VG_PROCMAP_H
#define VG_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"
#include "util/error.h"

struct vg_procmap {
	int fd;     /* open /proc/PID/maps, O_CLOEXEC */
	pid_t pid;
};

#define VG_BUILD_ID_MAX 20  /* the kernel's BUILD_ID_SIZE_MAX */

/* Open /proc/PID/maps for queries.  -EOPNOTSUPP if the kernel has no
 * PROCMAP_QUERY; -ESRCH, -EACCES as for vg_maps_read.  On failure pm->fd
 * is -1 and vg_procmap_close() is a no-op. */
int vg_procmap_open(pid_t pid, struct vg_procmap *pm, struct vg_error *err);
void vg_procmap_close(struct vg_procmap *pm);

/* Fill *r (path malloc'ed, owned by caller: free(r->path)) with the region
 * covering addr, path and kind as the text parser gives them.  If build_id
 * is non-NULL (size >= VG_BUILD_ID_MAX), also the build-id the kernel reads
 * from the mapped ELF file (*build_id_len = 0 if none).  r->name_ambiguous
 * is false: the name is raw.  Returns 0, -ENOENT if nothing covers addr,
 * -ESRCH if the process is gone, -ENAMETOOLONG if the path is longer than
 * the kernel returns (PATH_MAX). */
int vg_procmap_query(const struct vg_procmap *pm, uint64_t addr,
		     struct vg_region *r, uint8_t *build_id,
		     size_t *build_id_len, struct vg_error *err);

/* Build the whole table through repeated "covering or next" queries.  Same
 * contract as vg_maps_read(), plus -ENAMETOOLONG if any path is longer than
 * the kernel returns (PATH_MAX): the text has it, use vg_maps_read(). */
int vg_procmap_read_all(const struct vg_procmap *pm, struct vg_maps **out,
			struct vg_error *err);

#endif
