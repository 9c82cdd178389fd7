/* ring.h - one perf mmap ring buffer, read from user space.
 *
 * The kernel writes records at data_head; we read up to it after an
 * acquire barrier and hand back the space by storing data_tail with a
 * release barrier (the protocol of perf_event_open(2), "mmap layout").  A
 * record that wraps around the end of the buffer is copied into a scratch
 * buffer, so every record handed out is contiguous.  Never writes to the
 * target: the ring is vigil's own memory, shared with the kernel only. */
#ifndef VG_RING_H
#define VG_RING_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "util/error.h"

struct vg_ring;

/* Map the ring of fd: 1 metadata page + data_pages (a power of two).
 * -EPERM/-ENOMEM come with the sentence that fixes them (perf_event_mlock_kb). */
int vg_ring_map(int fd, size_t data_pages, struct vg_ring **out, struct vg_error *err);
struct vg_ring *vg_ring_unmap(struct vg_ring *r);

/* Calls fn for every complete record between tail and head, in order, then
 * releases the space.  fn returns 0 to go on, non-zero to stop (the record
 * it saw is consumed).  Returns the number of records handed out. */
typedef int (*vg_ring_fn)(const struct perf_event_header *h, void *arg);
size_t vg_ring_drain(struct vg_ring *r, vg_ring_fn fn, void *arg);

/* Bytes waiting to be read. */
size_t vg_ring_pending(const struct vg_ring *r);
size_t vg_ring_size(const struct vg_ring *r);   /* data area bytes */

#endif
