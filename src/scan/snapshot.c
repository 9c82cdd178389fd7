/* snapshot.c - the readable memory of a target on disk, and the comparison
 * of the live memory with it.
 *
 * Capture: each selected region is read with process_vm_readv(2) in chunks
 * of 4 MiB.  Within a chunk, pages that could not be read are recorded in
 * a "missing" bitmap and all-zero pages in a "zero" bitmap; only the other
 * pages are stored: deflated with zlib level 1 and the Z_RLE strategy
 * (on heap-like data 40-60% faster than the default strategy and no
 * larger: what compresses there is runs of zero bytes, not repeated
 * strings; any inflater reads the stream), or raw when a byte histogram of
 * a sample says they will not compress.  Zero pages cost no compression
 * time at all, which keeps a mostly-empty heap near the raw copy rate;
 * deflate runs only where it can
 * win.  The framing (header, size, CRC, atomic rename) is scanset.c's.
 *
 * Compare: chunk by chunk, the saved chunk is rebuilt and the same range is
 * read live, so memory stays at a few chunks plus the matches.  A value
 * straddling two pages (or two chunks) is compared from the last bytes of
 * the previous page kept aside.  A page missing on either side is skipped
 * and counted.  Only whole regions still mapped at the same [start, end)
 * are compared: a region replaced by another mapping would compare
 * unrelated bytes.
 *
 * Never writes to the target. */
#include "scan/snapshot.h"
#include "scan/vmread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "util/binfile.h"

static const char SNAP_MAGIC[8] = { 'V', 'I', 'G', 'I', 'L', 'S', 'N', 'P' };
/* Version 2: the file's checksum is CRC-32C (version 1: zlib's CRC-32),
 * otherwise the same; both are read. */
#define SNAP_VERSION 2u
#define SNAP_OLDEST 1u
#define SNAP_CRC32C_FROM 2u
#define CHUNK_SIZE (4u << 20)
#define MAX_CHUNK (64u << 20)

enum chunk_encoding { ENC_NONE = 0, ENC_RAW = 1, ENC_DEFLATE = 2 };
#define CF_ZERO_MAP 0x1u      /* a bitmap of all-zero pages follows */
#define CF_MISSING_MAP 0x2u   /* a bitmap of unreadable pages follows */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool bit_get(const uint8_t *map, size_t i)
{
	return map[i / 8] & (1u << (i % 8));
}

static void bit_set(uint8_t *map, size_t i)
{
	map[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* Read len bytes at addr (page-aligned, whole pages) into buf.  A page
 * that faults is zeroed and set in missing; the rest is read around it.
 * 0, or -ESRCH / -EPERM when the process cannot be read at all. */
static int read_pages(pid_t pid, uint64_t addr, uint8_t *buf, size_t len,
		      size_t page, uint8_t *missing, size_t *nmissing)
{
	size_t off = 0;

	memset(missing, 0, (len / page + 7) / 8);
	*nmissing = 0;
	while (off < len) {
		struct iovec l = { buf + off, len - off };
		struct iovec r = { (void *)(uintptr_t)(addr + off), len - off };
		ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
		size_t p;

		if (k > 0) {
			off += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && vg_vmread_errno_class(errno) < 0)
			return vg_vmread_errno_class(errno);
		/* EFAULT (unmapped, PROT_NONE), EIO (a file mapping past
		 * its end): this page is missing, go on with the next. */
		p = off / page;
		bit_set(missing, p);
		(*nmissing)++;
		memset(buf + p * page, 0, page);
		off = (p + 1) * page;
	}
	return 0;
}

static bool page_is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 256) {
		uint64_t acc = 0;

		for (size_t j = 0; j < 256; j += 8) {
			uint64_t x;

			memcpy(&x, p + i + j, 8);
			acc |= x;
		}
		if (acc)
			return false;
	}
	return true;
}

/* Would deflate gain anything?  A byte histogram of 4 KiB taken from four
 * places: for uniformly random bytes, sum(c^2) * 256 / N^2 is about 1 + 256/N;
 * anything compressible (pointers, small integers, text) is far above.
 * Costs microseconds where deflate on random data costs ~20 ms per chunk. */
static bool looks_incompressible(const uint8_t *p, size_t n)
{
	uint32_t count[256] = { 0 };
	size_t part = n < 4096 ? n : 1024, taken = 0;
	uint64_t sq = 0;

	for (int s = 0; s < 4 && taken < n; s++) {
		size_t at = n <= 4096 ? taken : (n - part) / 3 * (size_t)s;

		for (size_t i = 0; i < part && at + i < n; i++)
			count[p[at + i]]++;
		taken += part;
		if (n < 4096)
			break;
	}
	if (taken > n)
		taken = n;
	for (int i = 0; i < 256; i++)
		sq += (uint64_t)count[i] * count[i];
	/* sum(c^2) * 256 < 1.5 * N^2 */
	return sq * 256 * 2 < 3 * (uint64_t)taken * taken;
}

/* One chunk on its way to the file.  The calling thread queues chunks
 * (address and length) and writes the encoded ones in order; the workers
 * read them (process_vm_readv) and encode them (zero test, packing,
 * deflate).  Reading on the workers too keeps the calling thread to the
 * write and the CRC alone: with reading there as well, it was the
 * bottleneck for incompressible memory while the workers idled. */
struct slot {
	size_t region;               /* index among the selected regions */
	uint64_t addr;
	size_t len;
	bool skip;                   /* interrupted: not captured */
	int rc;                      /* the read's -ESRCH / -EPERM */
	size_t nmissing, nzero;
	uint8_t *data;               /* the chunk, stored pages packed in place */
	uint8_t *zout;               /* deflate output, made on first use */
	uint8_t *zero_map, *missing_map;
	z_stream z;
	bool z_ok;
	uint8_t enc;
	const uint8_t *payload;
	uint32_t payload_len;
	uint32_t payload_crc;        /* the file checksum's, of the payload */
	enum { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE } state;
};

/* Buffers the size of a chunk, faulted in at once: a page fault costs up
 * to ~25 us on a VM, 25 ms for 4 MiB touched page by page. */
static void *chunk_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void chunk_free(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

struct saver {
	pid_t pid;
	size_t page, chunk;
	struct slot *slots;
	size_t nslots, nalloc;           /* in use, allocated */
	/* Chunks numbered in file order: queued < n_read, taken by a worker
	 * < n_taken.  Chunk i lives in slots[i % nslots]. */
	size_t n_read, n_taken;
	bool quit;
	struct vg_progress *progress;    /* NULL: none */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t *threads;
	size_t nthreads;
	struct vg_binw w;
};

static void encode_slot(struct saver *s, struct slot *sl)
{
	size_t npages = sl->len / s->page, stored = 0;
	int rc;

	sl->nzero = 0;
	sl->payload = NULL;
	sl->payload_len = 0;
	sl->enc = ENC_NONE;
	sl->nmissing = 0;
	sl->rc = 0;
	if (sl->skip)
		return;
	sl->rc = read_pages(s->pid, sl->addr, sl->data, sl->len, s->page,
			    sl->missing_map, &sl->nmissing);
	if (sl->rc)
		return;
	memset(sl->zero_map, 0, (npages + 7) / 8);
	for (size_t i = 0; i < npages; i++) {
		uint8_t *pg = sl->data + i * s->page;

		if (bit_get(sl->missing_map, i))
			continue;
		if (page_is_zero(pg, s->page)) {
			bit_set(sl->zero_map, i);
			sl->nzero++;
			continue;
		}
		/* Pack the stored pages to the front, in order. */
		if (stored != i * s->page)
			memcpy(sl->data + stored, pg, s->page);
		stored += s->page;
	}
	if (stored == 0)
		return;
	sl->enc = ENC_RAW;
	sl->payload = sl->data;
	sl->payload_len = (uint32_t)stored;
	if (looks_incompressible(sl->data, stored))
		return;
	if (!sl->zout && !(sl->zout = chunk_alloc(s->chunk)))
		return;                  /* stays raw */
	if (!sl->z_ok) {
		if (deflateInit2(&sl->z, 1, Z_DEFLATED, 15, 8, Z_RLE) != Z_OK)
			return;
		sl->z_ok = true;
	}
	sl->z.next_in = sl->data;
	sl->z.avail_in = (uInt)stored;
	sl->z.next_out = sl->zout;
	/* Stop as soon as deflate would not save half a page. */
	sl->z.avail_out = (uInt)(stored - s->page / 2);
	rc = deflate(&sl->z, Z_FINISH);
	if (rc == Z_STREAM_END) {
		sl->enc = ENC_DEFLATE;
		sl->payload = sl->zout;
		sl->payload_len = (uint32_t)sl->z.total_out;
	}
	deflateReset(&sl->z);
}

/* Encode, then checksum the payload here, on the worker, while it is
 * still in this CPU's cache: the writer only combines the CRCs. */
static void encode_crc_slot(struct saver *s, struct slot *sl)
{
	encode_slot(s, sl);
	sl->payload_crc = sl->payload_len
			  ? vg_bin_crc(s->w.crc_kind, sl->payload, sl->payload_len)
			  : 0;
}

/* Returns the bytes captured. */
static size_t write_slot(struct saver *s, struct slot *sl,
			 struct vg_snapshot_stats *st)
{
	size_t npages = sl->len / s->page, map_bytes = (npages + 7) / 8;
	size_t readable = sl->skip ? 0 : sl->len - sl->nmissing * s->page;

	if (sl->skip)
		memset(sl->missing_map, 0xff, map_bytes);
	vg_binw_u8(&s->w, sl->enc);
	vg_binw_u8(&s->w, (uint8_t)((sl->nzero ? CF_ZERO_MAP : 0) |
				    (sl->nmissing || sl->skip ? CF_MISSING_MAP : 0)));
	if (sl->nzero)
		vg_binw_put(&s->w, sl->zero_map, map_bytes);
	if (sl->nmissing || sl->skip)
		vg_binw_put(&s->w, sl->missing_map, map_bytes);
	vg_binw_u32(&s->w, sl->payload_len);
	if (sl->payload_len)
		vg_binw_put_crc(&s->w, sl->payload, sl->payload_len,
				sl->payload_crc);
	st->bytes += readable;
	st->bytes_skipped += sl->len - readable;
	vg_progress_add(s->progress, sl->len);
	return readable;
}

static void *worker_main(void *arg)
{
	struct saver *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct slot *sl;

		while (!s->quit && s->n_taken == s->n_read)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->quit)
			break;
		sl = &s->slots[s->n_taken++ % s->nslots];
		sl->state = SLOT_BUSY;
		pthread_mutex_unlock(&s->lock);
		encode_crc_slot(s, sl);
		pthread_mutex_lock(&s->lock);
		sl->state = SLOT_DONE;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Write chunk i (in order) once encoded, and free its slot.  0, or the
 * read's -ESRCH / -EPERM. */
static int drain_one(struct saver *s, size_t i, uint64_t *got,
		     struct vg_snapshot_stats *st)
{
	struct slot *sl = &s->slots[i % s->nslots];

	if (s->nthreads) {
		pthread_mutex_lock(&s->lock);
		while (sl->state != SLOT_DONE)
			pthread_cond_wait(&s->cond, &s->lock);
		pthread_mutex_unlock(&s->lock);
	} else {
		encode_crc_slot(s, sl);
	}
	sl->state = SLOT_FREE;
	if (sl->rc)
		return sl->rc;
	got[sl->region] += write_slot(s, sl, st);
	return 0;
}

static void saver_free(struct saver *s)
{
	if (s->nthreads) {
		pthread_mutex_lock(&s->lock);
		s->quit = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		for (size_t i = 0; i < s->nthreads; i++)
			pthread_join(s->threads[i], NULL);
	}
	free(s->threads);
	for (size_t i = 0; s->slots && i < s->nalloc; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->z_ok)
			deflateEnd(&sl->z);
		chunk_free(sl->data, s->chunk);
		chunk_free(sl->zout, s->chunk);
		free(sl->zero_map);
		free(sl->missing_map);
	}
	free(s->slots);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
}

/* Workers: one per online CPU up to 8 (the calling thread writes); none
 * on one CPU.  Three slots per worker keep both sides busy: the writer
 * drains one while each worker reads or encodes another. */
static int saver_init(struct saver *s, pid_t pid)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = cpus > 1 ? (size_t)(cpus < 8 ? cpus : 8) : 0;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->chunk = CHUNK_SIZE;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->nslots = want ? 3 * want : 1;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	s->nalloc = s->nslots;
	for (size_t i = 0; i < s->nslots; i++) {
		struct slot *sl = &s->slots[i];

		sl->data = chunk_alloc(s->chunk);
		sl->zero_map = malloc(s->chunk / s->page / 8 + 1);
		sl->missing_map = malloc(s->chunk / s->page / 8 + 1);
		if (!sl->data || !sl->zero_map || !sl->missing_map)
			return -ENOMEM;
	}
	s->threads = calloc(want ? want : 1, sizeof(*s->threads));
	if (!s->threads)
		return -ENOMEM;
	for (size_t i = 0; i < want; i++) {
		if (pthread_create(&s->threads[i], NULL, worker_main, s) != 0)
			break;   /* fewer workers is still correct */
		s->nthreads++;
	}
	if (s->nthreads == 0)
		s->nslots = 1;
	return 0;
}

/* The regions a snapshot holds: selected (so readable) and not larger
 * than VG_SCAN_MAX_REGION (a sanitizer's shadow would take hours and fill
 * the disk with zeros). */
static bool captured(const struct vg_scan_select *select, const struct vg_region *r)
{
	return vg_scan_region_selected(select, r) && r->end - r->start <= VG_SCAN_MAX_REGION;
}

/* Read every chunk of the selected regions into the pipeline, in file
 * order, writing the encoded ones as they come out.  got[] (one per
 * selected region) receives the bytes captured. */
static int capture(struct saver *s, const struct vg_maps *maps,
		   const struct vg_scan_select *select,
		   const volatile sig_atomic_t *stop, uint64_t *got,
		   struct vg_snapshot_stats *st)
{
	size_t written = 0, nsel = 0;

	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];

		if (!captured(select, r))
			continue;
		for (uint64_t a = r->start; a < r->end; a += s->chunk) {
			size_t k = s->n_read;
			struct slot *sl = &s->slots[k % s->nslots];

			if (k >= s->nslots) {
				int rc = drain_one(s, written++, got, st);

				if (rc)
					return rc;
			}
			sl->region = nsel;
			sl->addr = a;
			sl->len = r->end - a < s->chunk ? (size_t)(r->end - a)
							: s->chunk;
			if (stop && *stop)
				st->interrupted = true;
			sl->skip = st->interrupted;
			sl->nmissing = 0;
			pthread_mutex_lock(&s->lock);
			sl->state = SLOT_QUEUED;
			s->n_read++;
			pthread_cond_broadcast(&s->cond);
			pthread_mutex_unlock(&s->lock);
		}
		nsel++;
	}
	while (written < s->n_read) {
		int rc = drain_one(s, written++, got, st);

		if (rc)
			return rc;
	}
	return 0;
}

int vg_snapshot_save(pid_t pid, const struct vg_maps *maps,
		     const struct vg_scan_select *select,
		     const struct vg_scan_identity *id, const char *path,
		     const volatile sig_atomic_t *stop, struct vg_progress *progress,
		     struct vg_snapshot_stats *st, struct vg_error *err)
{
	struct saver s;
	char comm[16] = { 0 };
	double t0 = now_s();
	uint32_t nsel = 0;
	uint64_t size, *got, total = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = saver_init(&s, pid);
	if (rc) {
		saver_free(&s);
		return vg_vmread_fail(err, rc, pid);
	}
	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];

		if (captured(select, r)) {
			nsel++;
			total += r->end - r->start;
		} else if (vg_scan_region_selected(select, r))
			st->regions_skipped++;   /* too large: as the value scan */
	}

	rc = vg_binw_open(&s.w, path, SNAP_MAGIC, SNAP_VERSION, VG_BIN_CRC32C,
			  err);
	if (rc) {
		saver_free(&s);
		return rc;
	}
	memcpy(comm, id->comm, strnlen(id->comm, sizeof(comm)));
	vg_binw_u32(&s.w, (uint32_t)id->pid);
	vg_binw_u64(&s.w, id->start_time);
	vg_binw_put(&s.w, comm, sizeof(comm));
	vg_binw_u64(&s.w, realtime_ns());
	vg_binw_u32(&s.w, (uint32_t)s.chunk);
	vg_binw_u32(&s.w, (uint32_t)s.page);
	vg_binw_u32(&s.w, nsel);
	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];
		size_t plen = strnlen(r->path, 4096);

		if (!captured(select, r))
			continue;
		vg_binw_u64(&s.w, r->start);
		vg_binw_u64(&s.w, r->end);
		vg_binw_put(&s.w, r->perms, 4);
		vg_binw_u16(&s.w, (uint16_t)plen);
		vg_binw_put(&s.w, r->path, plen);
	}
	s.progress = progress;
	vg_progress_start(progress, total);
	got = calloc(nsel ? nsel : 1, sizeof(*got));
	rc = got ? capture(&s, maps, select, stop, got, st) : -ENOMEM;
	saver_free(&s);
	for (uint32_t i = 0; rc == 0 && i < nsel; i++) {
		if (got[i])
			st->regions++;
		else
			st->regions_skipped++;
	}
	free(got);
	if (rc) {
		vg_binw_abort(&s.w);
		return vg_vmread_fail(err, rc, pid);
	}
	size = s.w.size + 4;
	rc = vg_binw_commit(&s.w, "snapshot", err);
	if (rc == 0)
		st->bytes_compressed = size;
	st->seconds = now_s() - t0;
	return rc;
}

bool vg_snapshot_is(const char *path)
{
	char head[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool is;

	if (fd < 0)
		return false;
	is = read(fd, head, 8) == 8 && memcmp(head, SNAP_MAGIC, 8) == 0;
	close(fd);
	return is;
}

/* ---- compare ---- */

struct snap_region {
	uint64_t start, end;
};

struct comparer {
	enum vg_scan_type type;
	const struct vg_narrow *n;
	size_t width, step;
	/* The op is false wherever new == old bitwise. */
	bool needs_change;
	struct vg_match_set *out;
	/* The last width-1 bytes of the previous page, for values that
	 * straddle it and the next one. */
	bool tail_ok;
	uint64_t tail_end;
	uint8_t tail_old[8], tail_new[8];
};

static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t w)
{
	uint64_t x = 0, y = 0;

	memcpy(&x, a, w);
	memcpy(&y, b, w);
	return x == y;
}

static int compare_page(struct comparer *c, uint64_t addr, const uint8_t *o,
			const uint8_t *nw, size_t len)
{
	size_t w = c->width;

	if (w > 1 && c->tail_ok && c->tail_end == addr) {
		uint8_t bo[16], bn[16];

		memcpy(bo, c->tail_old, w - 1);
		memcpy(bo + w - 1, o, w - 1);
		memcpy(bn, c->tail_new, w - 1);
		memcpy(bn + w - 1, nw, w - 1);
		for (size_t k = 0; k < w - 1; k++) {
			uint64_t a = addr - (w - 1) + k;

			if (a % c->step == 0 &&
			    vg_narrow_test(c->type, c->n, bo + k, bn + k) &&
			    vg_match_set_push(c->out, a, bn + k, 0) < 0)
				return -ENOMEM;
		}
	}
	if (c->needs_change) {
		/* Nothing can hold where the bytes did not change: skip equal
		 * pages at memcmp speed and test only the values that differ
		 * (vg_narrow_test per offset costs ~20x more). */
		if (memcmp(o, nw, len) != 0)
			for (size_t off = 0; off + w <= len; off += c->step)
				if (!same_bytes(o + off, nw + off, w) &&
				    vg_narrow_test(c->type, c->n, o + off, nw + off) &&
				    vg_match_set_push(c->out, addr + off, nw + off, 0) < 0)
					return -ENOMEM;
	} else {
		for (size_t off = 0; off + w <= len; off += c->step)
			if (vg_narrow_test(c->type, c->n, o + off, nw + off) &&
			    vg_match_set_push(c->out, addr + off, nw + off, 0) < 0)
				return -ENOMEM;
	}
	if (w > 1) {
		memcpy(c->tail_old, o + len - (w - 1), w - 1);
		memcpy(c->tail_new, nw + len - (w - 1), w - 1);
		c->tail_ok = true;
		c->tail_end = addr + len;
	}
	return 0;
}

struct loader {
	struct vg_binr r;
	size_t page, chunk;
	uint8_t *old, *now, *zin;
	size_t zcap;
	uint8_t *zero_map, *missing_map, *live_missing;
	z_stream z;
	bool z_ok;
};

static void loader_free(struct loader *l)
{
	if (l->z_ok)
		inflateEnd(&l->z);
	free(l->old);
	free(l->now);
	free(l->zin);
	free(l->zero_map);
	free(l->missing_map);
	free(l->live_missing);
}

/* Read one chunk's header and payload; with rebuild, put the saved bytes
 * back into l->old (zero and missing pages as zeros).  *missing_pages gets
 * the count.  false: corrupt (why is set). */
static bool load_chunk(struct loader *l, size_t len, bool rebuild,
		       size_t *missing_pages, const char **why)
{
	size_t npages = len / l->page, map_bytes = (npages + 7) / 8;
	size_t stored = 0, k;
	uint8_t enc, flags;
	uint32_t plen;

	*why = "chunk header cut short";
	*missing_pages = 0;
	if (!vg_binr_u8(&l->r, &enc) || !vg_binr_u8(&l->r, &flags))
		return false;
	*why = "unknown chunk encoding";
	if (enc > ENC_DEFLATE || flags > (CF_ZERO_MAP | CF_MISSING_MAP))
		return false;
	memset(l->zero_map, 0, map_bytes);
	memset(l->missing_map, 0, map_bytes);
	*why = "chunk header cut short";
	if ((flags & CF_ZERO_MAP) && !vg_binr_get(&l->r, l->zero_map, map_bytes))
		return false;
	if ((flags & CF_MISSING_MAP) &&
	    !vg_binr_get(&l->r, l->missing_map, map_bytes))
		return false;
	if (!vg_binr_u32(&l->r, &plen))
		return false;
	for (size_t i = 0; i < npages; i++) {
		if (bit_get(l->missing_map, i))
			(*missing_pages)++;
		else if (!bit_get(l->zero_map, i))
			stored += l->page;
	}
	*why = "chunk payload does not match its page maps";
	if ((enc == ENC_NONE && (plen != 0 || stored != 0)) ||
	    (enc == ENC_RAW && plen != stored) ||
	    (enc == ENC_DEFLATE && (stored == 0 || plen > l->zcap)))
		return false;
	if (enc == ENC_RAW) {
		if (!vg_binr_get(&l->r, l->old, plen))
			return false;
	} else if (enc == ENC_DEFLATE) {
		if (!vg_binr_get(&l->r, l->zin, plen))
			return false;
		if (rebuild) {
			int zr;

			inflateReset(&l->z);
			l->z.next_in = l->zin;
			l->z.avail_in = plen;
			l->z.next_out = l->old;
			l->z.avail_out = (uInt)stored;
			zr = inflate(&l->z, Z_FINISH);
			*why = "a compressed chunk does not decompress";
			if (zr != Z_STREAM_END || l->z.total_out != stored ||
			    l->z.avail_in != 0)
				return false;
		}
	}
	if (!rebuild)
		return true;
	/* Unpack from the back: page i's bytes sit at k * page, k <= i,
	 * so moving the last first never overwrites one not yet moved. */
	k = stored / l->page;
	for (size_t i = npages; i-- > 0;) {
		uint8_t *dst = l->old + i * l->page;

		if (bit_get(l->missing_map, i) || bit_get(l->zero_map, i)) {
			memset(dst, 0, l->page);
			continue;
		}
		k--;
		if (k != i)
			memmove(dst, l->old + k * l->page, l->page);
	}
	return true;
}

static bool region_live(const struct vg_maps *maps, const struct snap_region *sr)
{
	const struct vg_region *r = vg_maps_find(maps, sr->start);

	return r && r->start == sr->start && r->end == sr->end && r->readable;
}

int vg_snapshot_compare(const char *path, pid_t pid,
			const struct vg_maps *maps, enum vg_scan_type type,
			bool aligned, const struct vg_narrow *n,
			struct vg_scan_identity *id, struct vg_match_set *out,
			struct vg_scan_stats *st, struct vg_error *err)
{
	struct loader l = { 0 };
	struct comparer c = { .type = type, .n = n, .out = out };
	struct snap_region *regions = NULL;
	uint32_t rpid, chunk, page, nreg;
	uint64_t created;
	char comm[16];
	const char *why = "header cut short";
	double t0 = now_s();
	int rc;

	memset(st, 0, sizeof(*st));
	memset(id, 0, sizeof(*id));
	c.width = vg_scan_type_width(type);
	c.step = aligned ? c.width : 1;
	/* For floats too: equal bits are neither greater nor smaller. */
	c.needs_change = n && (n->op == VG_NARROW_CHANGED ||
			       n->op == VG_NARROW_INCREASED ||
			       n->op == VG_NARROW_DECREASED);
	vg_match_set_init(out, type, c.width ? c.width : 1);
	if (pid != 0 && !n)
		return vg_error_set(err, -EINVAL, "comparing a snapshot needs a "
				    "narrowing operation");
	if (pid != 0 && c.width == 0)
		return vg_error_set(err, -EINVAL, "a snapshot compares numbers "
				    "only, not %s; give a numeric type (i8..u64, "
				    "f32, f64)", vg_scan_type_name(type));
	rc = vg_binr_open(&l.r, path, SNAP_MAGIC, SNAP_OLDEST, SNAP_VERSION,
			  SNAP_CRC32C_FROM, "snapshot", err);
	if (rc)
		return rc;
	if (!vg_binr_u32(&l.r, &rpid) || !vg_binr_u64(&l.r, &id->start_time) ||
	    !vg_binr_get(&l.r, comm, sizeof(comm)) ||
	    !vg_binr_u64(&l.r, &created) || !vg_binr_u32(&l.r, &chunk) ||
	    !vg_binr_u32(&l.r, &page) || !vg_binr_u32(&l.r, &nreg))
		return vg_binr_corrupt(&l.r, err, why);
	id->pid = (pid_t)rpid;
	memcpy(id->comm, comm, sizeof(comm));
	id->comm[16] = '\0';
	if (pid == 0) {
		vg_binr_close(&l.r);
		return 0;
	}
	if (page < 512 || (page & (page - 1)) || chunk < page ||
	    chunk > MAX_CHUNK || chunk % page)
		return vg_binr_corrupt(&l.r, err, "impossible chunk or page size");
	if (nreg > vg_binr_left(&l.r) / 22)
		return vg_binr_corrupt(&l.r, err, "region count larger than the file");
	l.page = page;
	l.chunk = chunk;
	l.zcap = deflateBound(NULL, chunk);
	regions = calloc(nreg ? nreg : 1, sizeof(*regions));
	l.old = malloc(chunk);
	l.now = malloc(chunk);
	l.zin = malloc(l.zcap);
	l.zero_map = malloc(chunk / page / 8 + 1);
	l.missing_map = malloc(chunk / page / 8 + 1);
	l.live_missing = malloc(chunk / page / 8 + 1);
	if (!regions || !l.old || !l.now || !l.zin || !l.zero_map ||
	    !l.missing_map || !l.live_missing || inflateInit(&l.z) != Z_OK) {
		vg_binr_close(&l.r);
		rc = vg_error_set(err, -ENOMEM, "out of memory comparing a snapshot");
		goto out;
	}
	l.z_ok = true;
	for (uint32_t i = 0; i < nreg; i++) {
		uint16_t plen;
		char skip[4 + 65535];

		if (!vg_binr_u64(&l.r, &regions[i].start) ||
		    !vg_binr_u64(&l.r, &regions[i].end) ||
		    !vg_binr_get(&l.r, skip, 4) || !vg_binr_u16(&l.r, &plen) ||
		    !vg_binr_get(&l.r, skip, plen)) {
			rc = vg_binr_corrupt(&l.r, err, "region table cut short");
			goto out;
		}
		if (regions[i].end <= regions[i].start ||
		    regions[i].start % page || regions[i].end % page ||
		    (i > 0 && regions[i].start < regions[i - 1].end)) {
			rc = vg_binr_corrupt(&l.r, err, "impossible region");
			goto out;
		}
		st->bytes_total += regions[i].end - regions[i].start;
	}
	for (uint32_t i = 0; i < nreg; i++) {
		const struct snap_region *sr = &regions[i];
		bool live = region_live(maps, sr);
		uint64_t compared = 0;

		c.tail_ok = false;
		for (uint64_t a = sr->start; a < sr->end; a += chunk) {
			size_t len = sr->end - a < chunk ? (size_t)(sr->end - a)
							 : chunk;
			size_t npages = len / page, old_missing, live_nmissing = 0;

			if (!load_chunk(&l, len, live, &old_missing, &why)) {
				rc = vg_binr_corrupt(&l.r, err, why);
				goto out;
			}
			if (!live)
				continue;
			memset(l.live_missing, 0, (npages + 7) / 8);
			if (old_missing < npages) {
				rc = read_pages(pid, a, l.now, len, page,
						l.live_missing, &live_nmissing);
				if (rc) {
					vg_binr_close(&l.r);
					rc = vg_vmread_fail(err, rc, pid);
					goto out;
				}
			}
			for (size_t p = 0; p < npages; p++) {
				size_t off = p * page;

				if (bit_get(l.missing_map, p) ||
				    bit_get(l.live_missing, p)) {
					c.tail_ok = false;
					st->bytes_skipped += page;
					continue;
				}
				rc = compare_page(&c, a + off, l.old + off,
						  l.now + off, page);
				if (rc) {
					vg_binr_close(&l.r);
					rc = vg_error_set(err, -ENOMEM, "out of "
							  "memory: %zu matches",
							  out->n);
					goto out;
				}
				compared += page;
			}
		}
		if (!live)
			st->bytes_skipped += sr->end - sr->start;
		if (compared) {
			st->regions_scanned++;
			st->bytes_scanned += compared;
		} else {
			st->regions_skipped++;
		}
	}
	rc = vg_binr_finish(&l.r, err);
out:
	if (rc) {
		vg_match_set_clear(out);
		vg_match_set_init(out, type, c.width ? c.width : 1);
	}
	st->matches = out->n;
	st->seconds = now_s() - t0;
	free(regions);
	loader_free(&l);
	return rc;
}
