/* procmap.h - the PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11+).
 *
 * One ioctl answers "which VMA covers (or follows) this address" with its
 * range, flags, offset, device, inode, path and the ELF build-id the kernel
 * recorded for file-backed executable mappings, without opening the file.
 * Debian 12's headers predate it, so the UAPI struct is declared here.
 * When the kernel lacks it (ENOTTY/EINVAL), callers fall back to the text
 * parser in maps.h. */
#ifndef VG_PROCMAP_H
#define VG_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/maps.h"
#include "util/error.h"

struct vg_procmap {
	int fd;  /* open /proc/PID/maps */
};

/* Open /proc/PID/maps for queries.  -EOPNOTSUPP if the kernel has no
 * PROCMAP_QUERY; -ESRCH, -EACCES as for vg_maps_read. */
int vg_procmap_open(pid_t pid, struct vg_procmap *pm, struct vg_error *err);
void vg_procmap_close(struct vg_procmap *pm);

/* Fill *r (path malloc'ed, owned by caller: free(r->path)) with the region
 * covering addr.  If build_id is non-NULL (size >= 20), also the build-id
 * (*build_id_len = 0 if none).  Returns 0, -ENOENT if nothing covers addr. */
int vg_procmap_query(const struct vg_procmap *pm, uint64_t addr,
		     struct vg_region *r, uint8_t *build_id,
		     size_t *build_id_len, struct vg_error *err);

/* Build the whole table through repeated "covering or next" queries.  Same
 * contract as vg_maps_read(). */
int vg_procmap_read_all(const struct vg_procmap *pm, struct vg_maps **out,
			struct vg_error *err);

#endif
