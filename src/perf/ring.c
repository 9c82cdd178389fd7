/* ring.c - the perf mmap ring: see ring.h. */
#include "perf/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct vg_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t data_size;            /* power of two */
	size_t map_size;
	unsigned char *scratch;      /* one wrapped record; grows */
	size_t scratch_size;
};

int vg_ring_map(int fd, size_t data_pages, struct vg_ring **out, struct vg_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct vg_ring *r;
	void *p;

	*out = NULL;
	if (data_pages == 0 || (data_pages & (data_pages - 1)))
		return vg_error_set(err, -EINVAL, "ring size %zu pages is not a power of two", data_pages);
	r = calloc(1, sizeof(*r));
	if (!r)
		return vg_error_set(err, -ENOMEM, "out of memory for a perf ring");
	r->data_size = data_pages * page;
	r->map_size = r->data_size + page;
	p = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		size_t kib = r->data_size >> 10;

		free(r);
		if (e == EPERM || e == ENOMEM)
			return vg_error_set(err, -e, "cannot map a %zu KiB perf ring buffer: %s; "
					    "the locked-memory budget is kernel.perf_event_mlock_kb "
					    "(per user) and RLIMIT_MEMLOCK", kib, strerror(e));
		return vg_error_set(err, -e, "cannot map a perf ring buffer: %s", strerror(e));
	}
	r->meta = p;
	r->data = (unsigned char *)p + page;
	*out = r;
	return 0;
}

struct vg_ring *vg_ring_unmap(struct vg_ring *r)
{
	if (!r)
		return NULL;
	munmap(r->meta, r->map_size);
	free(r->scratch);
	free(r);
	return NULL;
}

size_t vg_ring_size(const struct vg_ring *r)
{
	return r->data_size;
}

size_t vg_ring_pending(const struct vg_ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

	return (size_t)(head - r->meta->data_tail);
}

size_t vg_ring_drain(struct vg_ring *r, vg_ring_fn fn, void *arg)
{
	/* Acquire: record bytes written before head was published are
	 * visible once we see head. */
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t mask = r->data_size - 1, count = 0;

	while (tail < head) {
		const struct perf_event_header *h;
		struct perf_event_header hdr;
		size_t off = (size_t)(tail & mask);
		int stop;

		/* The 8-byte header itself never straddles the end (records
		 * are 8-byte aligned and the size is a multiple of 8). */
		memcpy(&hdr, r->data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;   /* corrupt or torn: stop rather than read garbage */
		if (off + hdr.size <= r->data_size) {
			h = (const void *)(r->data + off);
		} else {
			size_t first = r->data_size - off;

			if (r->scratch_size < hdr.size) {
				unsigned char *s = realloc(r->scratch, hdr.size);

				if (!s)
					break;
				r->scratch = s;
				r->scratch_size = hdr.size;
			}
			memcpy(r->scratch, r->data + off, first);
			memcpy(r->scratch + first, r->data, hdr.size - first);
			h = (const void *)r->scratch;
		}
		tail += hdr.size;
		count++;
		stop = fn(h, arg);
		if (stop)
			break;
	}
	/* Release: our reads of the records happen before the kernel may
	 * overwrite them. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return count;
}
