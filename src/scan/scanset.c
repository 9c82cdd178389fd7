/* scanset.c - scan sets on disk, and the file framing snapshots share.
 *
 * Format (docs/scan-formats.md): the 24-byte common header, the identity,
 * type, VALUE text, generation and creation time, then the matches as
 * columns: every address as an unsigned LEB128 delta from the previous one
 * (the first from 0), then every value (value_size bytes each), then for
 * str/bytes one variant byte per match; a CRC32 ends the file.  Dense
 * matches cost 1-2 bytes per address.  Columns rather than records because
 * each loop then does one thing, and the values of numbers stay aligned
 * on load.
 *
 * Reads and writes stream through a 1 MiB buffer.  A loaded set is handed
 * back only after the CRC matched: a truncated or corrupt file is refused,
 * never half-loaded. */
#include "scan/scanset.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define BUF_SIZE (1u << 20)
#define SIZE_FIELD 16u                   /* offset of the file size */

static const char SET_MAGIC[8] = { 'V', 'I', 'G', 'I', 'L', 'S', 'E', 'T' };
#define SET_VERSION 1u
/* A value is at most the UTF-16 form of a 255-byte VALUE text. */
#define MAX_VALUE_SIZE 1024u

/* ---- writing ---- */

/* ---- CRC-32C ----
 * Software: one table lookup per byte.  Hardware: the SSE4.2 crc32
 * instruction has a latency of 3 cycles and a throughput of 1, so three
 * independent streams over adjacent blocks run ~3x faster than one; the
 * three CRCs are then joined by "appending" the zeros of the blocks after
 * them (a linear operator on the 32-bit state, tabulated for the block
 * lengths) and xoring (the method of Mark Adler's crc32c.c). */
#define CRC32C_POLY 0x82f63b78u
#define CRC32C_LONG 8192u
#define CRC32C_SHORT 256u

static uint32_t crc32c_table[256];
static uint32_t crc32c_long[4][256], crc32c_short[4][256];
static uint32_t crc32c_pow2[64][32];      /* append 2^k zero bytes */
static bool crc32c_hw_ok;
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		sq[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends len zero bytes (a power of two) to a CRC
 * state (not inverted). */
static void crc32c_zeros_op(uint32_t *even, size_t len)
{
	uint32_t odd[32], row = 1;

	odd[0] = CRC32C_POLY;            /* one zero bit */
	for (int n = 1; n < 32; n++) {
		odd[n] = row;
		row <<= 1;
	}
	gf2_square(even, odd);           /* two zero bits */
	gf2_square(odd, even);           /* four */
	do {
		gf2_square(even, odd);   /* one zero byte, then 4, 16, ... */
		len >>= 1;
		if (len == 0)
			return;
		gf2_square(odd, even);
		len >>= 1;
	} while (len);
	memcpy(even, odd, sizeof(odd));
}

static void crc32c_zeros(uint32_t zeros[4][256], size_t len)
{
	uint32_t op[32];

	crc32c_zeros_op(op, len);
	for (uint32_t n = 0; n < 256; n++) {
		zeros[0][n] = gf2_times(op, n);
		zeros[1][n] = gf2_times(op, n << 8);
		zeros[2][n] = gf2_times(op, n << 16);
		zeros[3][n] = gf2_times(op, n << 24);
	}
}

static inline uint32_t crc32c_shift(uint32_t zeros[4][256], uint32_t crc)
{
	return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
	       zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

static void crc32c_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc32c_table[n] = c;
	}
	crc32c_zeros_op(crc32c_pow2[0], 1);
	for (int k = 1; k < 64; k++)
		gf2_square(crc32c_pow2[k], crc32c_pow2[k - 1]);
	crc32c_zeros(crc32c_long, CRC32C_LONG);
	crc32c_zeros(crc32c_short, CRC32C_SHORT);
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	crc32c_hw_ok = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t vg_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	pthread_once(&crc32c_once, crc32c_init);
	crc = ~crc;
	while (n--)
		crc = crc32c_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__)
static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Three streams of block bytes each, while 3 * block bytes remain. */
#define CRC32C_3WAY(block, zeros)                                             \
	while (n >= 3 * (block)) {                                            \
		uint64_t c1 = 0, c2 = 0;                                      \
		const uint8_t *end = b + (block);                             \
		do {                                                          \
			c0 = __builtin_ia32_crc32di(c0, load64(b));           \
			c1 = __builtin_ia32_crc32di(c1, load64(b + (block))); \
			c2 = __builtin_ia32_crc32di(c2, load64(b + 2 * (block))); \
			b += 8;                                               \
		} while (b < end);                                            \
		c0 = crc32c_shift(zeros, (uint32_t)c0) ^ c1;                  \
		c0 = crc32c_shift(zeros, (uint32_t)c0) ^ c2;                  \
		b += 2 * (block);                                             \
		n -= 3 * (block);                                             \
	}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *b, size_t n)
{
	uint64_t c0 = ~crc;

	while (n && ((uintptr_t)b & 7)) {
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *b++);
		n--;
	}
	CRC32C_3WAY(CRC32C_LONG, crc32c_long)
	CRC32C_3WAY(CRC32C_SHORT, crc32c_short)
	for (; n >= 8; n -= 8, b += 8)
		c0 = __builtin_ia32_crc32di(c0, load64(b));
	for (; n; n--)
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *b++);
	return ~(uint32_t)c0;
}
#endif

uint32_t vg_crc32c(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&crc32c_once, crc32c_init);
#if defined(__x86_64__)
	if (crc32c_hw_ok)
		return crc32c_hw(crc, p, n);
#endif
	return vg_crc32c_sw(crc, p, n);
}

uint32_t vg_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	pthread_once(&crc32c_once, crc32c_init);
	for (int k = 0; len2; k++, len2 >>= 1)
		if (len2 & 1)
			crc1 = gf2_times(crc32c_pow2[k], crc1);
	return crc1 ^ crc2;
}

static uint32_t crc_update(enum vg_bin_crc kind, uint32_t crc, const void *p,
			   size_t n)
{
	const uint8_t *b = p;

	if (kind == VG_BIN_CRC32C)
		return vg_crc32c(crc, p, n);
	/* zlib's crc32 takes a uInt length. */
	while (n) {
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;

		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		n -= k;
	}
	return crc;
}

uint32_t vg_bin_crc(enum vg_bin_crc kind, const void *p, size_t n)
{
	return crc_update(kind, 0, p, n);
}

static uint32_t crc_combine(enum vg_bin_crc kind, uint32_t crc1,
			    uint32_t crc2, uint64_t len2)
{
	if (kind == VG_BIN_CRC32C)
		return vg_crc32c_combine(crc1, crc2, len2);
	return (uint32_t)crc32_combine(crc1, crc2, (z_off_t)len2);
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The CRC is taken here, a buffer at a time: per put it would cost more
 * than the encoding for one-byte address deltas. */
static void binw_flush(struct vg_binw *w)
{
	w->crc = crc_update(w->crc_kind, w->crc, w->buf, w->len);
	if (w->len && !w->error)
		w->error = write_all(w->out.fd, w->buf, w->len);
	w->len = 0;
}

void vg_binw_put(struct vg_binw *w, const void *p, size_t n)
{
	w->size += n;
	if (w->len + n <= w->cap) {
		memcpy(w->buf + w->len, p, n);
		w->len += n;
		return;
	}
	binw_flush(w);
	if (n >= w->cap / 2) {
		/* Large payloads (snapshot chunks) skip the copy. */
		w->crc = crc_update(w->crc_kind, w->crc, p, n);
		if (!w->error)
			w->error = write_all(w->out.fd, p, n);
		return;
	}
	memcpy(w->buf, p, n);
	w->len = n;
}

void vg_binw_put_crc(struct vg_binw *w, const void *p, size_t n, uint32_t crc)
{
	if (n < w->cap / 2) {
		vg_binw_put(w, p, n);    /* buffered; CRC'd again, cheaply */
		return;
	}
	binw_flush(w);
	w->size += n;
	w->crc = crc_combine(w->crc_kind, w->crc, crc, n);
	if (!w->error)
		w->error = write_all(w->out.fd, p, n);
}

/* Little-endian on disk; x86-64 is little-endian, so the byte copies below
 * are the encoding. */
void vg_binw_u8(struct vg_binw *w, uint8_t v) { vg_binw_put(w, &v, 1); }
void vg_binw_u16(struct vg_binw *w, uint16_t v) { vg_binw_put(w, &v, 2); }
void vg_binw_u32(struct vg_binw *w, uint32_t v) { vg_binw_put(w, &v, 4); }
void vg_binw_u64(struct vg_binw *w, uint64_t v) { vg_binw_put(w, &v, 8); }

void vg_binw_uleb(struct vg_binw *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	if (w->len + 10 <= w->cap) {
		uint8_t *d = w->buf + w->len;

		while (v >= 0x80) {
			d[n++] = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		d[n++] = (uint8_t)v;
		w->len += n;
		w->size += n;
		return;
	}
	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	vg_binw_put(w, b, n);
}

static void binw_free(struct vg_binw *w)
{
	free(w->buf);
	w->buf = NULL;
}

int vg_binw_open(struct vg_binw *w, const char *path, const char magic[8],
		 uint32_t version, enum vg_bin_crc crc, struct vg_error *err)
{
	int r;

	memset(w, 0, sizeof(*w));
	w->out.fd = -1;
	w->crc_kind = crc;
	w->crc = 0;                      /* both start from 0 (pre-inverted) */
	w->cap = BUF_SIZE;
	w->buf = malloc(w->cap);
	if (!w->buf)
		return vg_error_set(err, -ENOMEM, "out of memory writing '%s'", path);
	/* Scan sets and snapshots hold the target's memory: 0600. */
	r = vg_outfile_open(&w->out, path, VG_OUTFILE_PRIVATE, err);
	if (r < 0) {
		binw_free(w);
		return r;
	}
	vg_binw_put(w, magic, 8);
	vg_binw_u32(w, version);
	vg_binw_u32(w, 0);               /* flags: none defined */
	vg_binw_u64(w, 0);               /* size: filled in by commit */
	return 0;
}

void vg_binw_abort(struct vg_binw *w)
{
	vg_outfile_abort(&w->out);
	binw_free(w);
}

int vg_binw_commit(struct vg_binw *w, const char *what, struct vg_error *err)
{
	uint64_t size;
	int rc;

	binw_flush(w);
	vg_binw_u32(w, w->crc);
	size = w->size;
	w->error = w->error ? w->error : write_all(w->out.fd, w->buf, w->len);
	w->len = 0;
	if (!w->error && pwrite(w->out.fd, &size, 8, SIZE_FIELD) != 8)
		w->error = -errno;
	/* ENOSPC and EIO are not the user's input: they keep their class. */
	if (w->error && !w->out.error)
		w->out.error = w->error;
	rc = vg_outfile_commit(&w->out, what, err);
	binw_free(w);
	return rc;
}

/* ---- reading ---- */

static int read_full(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *b = p;

	while (n) {
		ssize_t k = pread(fd, b, n, (off_t)off);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ENODATA;
		b += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

void vg_binr_close(struct vg_binr *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->buf);
	r->buf = NULL;
}

int vg_binr_open(struct vg_binr *r, const char *path, const char magic[8],
		 uint32_t oldest, uint32_t newest, uint32_t crc32c_from,
		 const char *what, struct vg_error *err)
{
	uint8_t head[VG_BIN_HEADER];
	struct stat sb;
	uint64_t size;
	int e;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->what = what;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		e = errno;
		return vg_error_set(err, e == ENOENT ? -ENOENT : -e,
				    "cannot open %s '%s': %s", what, path,
				    strerror(e));
	}
	if (fstat(r->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		vg_binr_close(r);
		return vg_error_set(err, -EINVAL, "'%s' is not a vigil %s "
				    "(not a regular file)", path, what);
	}
	size = (uint64_t)sb.st_size;
	e = size >= VG_BIN_HEADER ? read_full(r->fd, head, VG_BIN_HEADER, 0)
				  : read_full(r->fd, head, (size_t)size, 0);
	if (e && e != -ENODATA) {
		vg_binr_close(r);
		return vg_error_set(err, -EIO, "cannot read %s '%s': %s", what,
				    path, strerror(-e));
	}
	if (memcmp(head, magic, size < 8 ? (size_t)size : 8) != 0) {
		vg_binr_close(r);
		return vg_error_set(err, -EINVAL, "'%s' is not a vigil %s "
				    "(wrong magic); give a file that vigil "
				    "wrote", path, what);
	}
	if (size < VG_BIN_HEADER) {
		vg_binr_close(r);
		return vg_error_set(err, -EINVAL, "%s '%s' is truncated (%llu "
				    "bytes); write it again", what, path,
				    (unsigned long long)size);
	}
	memcpy(&r->version, head + 8, 4);
	if (r->version < oldest || r->version > newest) {
		vg_binr_close(r);
		if (oldest == newest)
			return vg_error_set(err, -EPROTO, "%s '%s' has format "
					    "version %u; this vigil reads version "
					    "%u only (write it again with this "
					    "vigil)", what, path, r->version,
					    newest);
		return vg_error_set(err, -EPROTO, "%s '%s' has format version "
				    "%u; this vigil reads versions %u to %u "
				    "(write it again with this vigil)", what,
				    path, r->version, oldest, newest);
	}
	r->crc_kind = crc32c_from && r->version >= crc32c_from ? VG_BIN_CRC32C
							      : VG_BIN_CRC32;
	memcpy(&r->data_end, head + SIZE_FIELD, 8);
	if (size < r->data_end || r->data_end < VG_BIN_HEADER + 4) {
		vg_binr_close(r);
		return vg_error_set(err, -EINVAL, "%s '%s' is truncated (%llu of "
				    "%llu bytes); write it again", what, path,
				    (unsigned long long)size,
				    (unsigned long long)r->data_end);
	}
	if (size > r->data_end) {
		vg_binr_close(r);
		return vg_error_set(err, -EINVAL, "%s '%s' is corrupt (%llu "
				    "bytes, its header says %llu)", what, path,
				    (unsigned long long)size,
				    (unsigned long long)r->data_end);
	}
	r->data_end -= 4;
	memset(head + SIZE_FIELD, 0, 8);
	r->crc = crc_update(r->crc_kind, 0, head, VG_BIN_HEADER);
	r->loaded = VG_BIN_HEADER;
	r->cap = BUF_SIZE;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		vg_binr_close(r);
		return vg_error_set(err, -ENOMEM, "out of memory reading '%s'", path);
	}
	return 0;
}

uint64_t vg_binr_left(const struct vg_binr *r)
{
	return r->data_end - r->loaded + (r->len - r->pos);
}

/* Load up to want bytes (never past data_end) into dst, CRC'd. */
static bool binr_load(struct vg_binr *r, uint8_t *dst, size_t want, size_t *got)
{
	uint64_t left = r->data_end - r->loaded;
	size_t n = want < left ? want : (size_t)left;
	int e;

	*got = 0;
	if (n == 0)
		return true;
	e = read_full(r->fd, dst, n, r->loaded);
	if (e) {
		if (!r->error)
			r->error = e == -ENODATA ? -EINVAL : -EIO;
		return false;
	}
	r->crc = crc_update(r->crc_kind, r->crc, dst, n);
	r->loaded += n;
	*got = n;
	return true;
}

bool vg_binr_get(struct vg_binr *r, void *p, size_t n)
{
	uint8_t *d = p;
	size_t avail = r->len - r->pos, got;

	if (r->error)
		return false;
	if (n <= avail) {
		memcpy(d, r->buf + r->pos, n);
		r->pos += n;
		return true;
	}
	if (n > vg_binr_left(r)) {
		r->error = -EINVAL;   /* ends early: structure and size disagree */
		return false;
	}
	memcpy(d, r->buf + r->pos, avail);
	d += avail;
	n -= avail;
	r->pos = r->len = 0;
	if (n >= r->cap / 2) {
		if (!binr_load(r, d, n, &got))
			return false;
		return true;
	}
	if (!binr_load(r, r->buf, r->cap, &got))
		return false;
	r->len = got;
	memcpy(d, r->buf, n);
	r->pos = n;
	return true;
}

bool vg_binr_u8(struct vg_binr *r, uint8_t *v) { return vg_binr_get(r, v, 1); }
bool vg_binr_u16(struct vg_binr *r, uint16_t *v) { return vg_binr_get(r, v, 2); }
bool vg_binr_u32(struct vg_binr *r, uint32_t *v) { return vg_binr_get(r, v, 4); }
bool vg_binr_u64(struct vg_binr *r, uint64_t *v) { return vg_binr_get(r, v, 8); }

bool vg_binr_uleb(struct vg_binr *r, uint64_t *v)
{
	uint64_t x = 0;

	/* Fast path: the whole number is in the buffer. */
	if (r->len - r->pos >= 10) {
		const uint8_t *b = r->buf + r->pos;

		for (unsigned i = 0; i < 10; i++) {
			x |= (uint64_t)(b[i] & 0x7f) << (7 * i);
			if (!(b[i] & 0x80)) {
				if (i == 9 && b[i] > 1)
					break;      /* more than 64 bits */
				r->pos += i + 1;
				*v = x;
				return true;
			}
		}
		r->error = -EINVAL;
		return false;
	}
	x = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b;

		if (r->pos < r->len) {
			b = r->buf[r->pos++];
		} else if (!vg_binr_get(r, &b, 1)) {
			return false;
		}
		if (shift == 63 && (b & 0x7e)) {
			r->error = -EINVAL;   /* more than 64 bits */
			return false;
		}
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		if (shift == 63) {
			r->error = -EINVAL;
			return false;
		}
	}
	*v = x;
	return true;
}

int vg_binr_corrupt(struct vg_binr *r, struct vg_error *err, const char *why)
{
	int rc;

	if (r->error == -EIO)
		rc = vg_error_set(err, -EIO, "cannot read %s '%s': input/output "
				  "error", r->what, r->path);
	else
		rc = vg_error_set(err, -EINVAL, "%s '%s' is corrupt (%s); write "
				  "it again", r->what, r->path, why);
	vg_binr_close(r);
	return rc;
}

int vg_binr_finish(struct vg_binr *r, struct vg_error *err)
{
	uint32_t stored;

	if (r->error)
		return vg_binr_corrupt(r, err, "its contents do not match their "
				       "own counts");
	if (vg_binr_left(r) != 0)
		return vg_binr_corrupt(r, err, "bytes left after the last entry");
	if (read_full(r->fd, &stored, 4, r->data_end) != 0) {
		r->error = -EIO;
		return vg_binr_corrupt(r, err, "");
	}
	if (stored != r->crc)
		return vg_binr_corrupt(r, err, "checksum mismatch");
	vg_binr_close(r);
	return 0;
}

/* ---- scan sets ---- */

static bool type_valid(uint32_t t)
{
	return t <= VG_SCAN_BYTES;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vg_scanset_save(const char *path, const struct vg_scanset_meta *meta,
		    const struct vg_match_set *set, struct vg_error *err)
{
	struct vg_binw w;
	char comm[16] = { 0 };
	size_t tlen = strnlen(meta->value_text, sizeof(meta->value_text) - 1);
	uint64_t prev = 0;
	int rc;

	if (set->type != meta->type)
		return vg_error_set(err, -EINVAL, "cannot write scan set '%s': "
				    "the matches are %s but the header says %s",
				    path, vg_scan_type_name(set->type),
				    vg_scan_type_name(meta->type));
	if (set->value_size == 0 || set->value_size > MAX_VALUE_SIZE ||
	    (vg_scan_type_width(set->type) &&
	     set->value_size != vg_scan_type_width(set->type)))
		return vg_error_set(err, -EINVAL, "cannot write scan set '%s': "
				    "value size %zu does not fit type %s",
				    path, set->value_size,
				    vg_scan_type_name(set->type));
	rc = vg_binw_open(&w, path, SET_MAGIC, SET_VERSION, VG_BIN_CRC32, err);
	if (rc)
		return rc;
	memcpy(comm, meta->id.comm, strnlen(meta->id.comm, sizeof(comm)));
	vg_binw_u32(&w, (uint32_t)meta->id.pid);
	vg_binw_u64(&w, meta->id.start_time);
	vg_binw_put(&w, comm, sizeof(comm));
	vg_binw_u64(&w, meta->created_ns ? meta->created_ns : realtime_ns());
	vg_binw_u32(&w, meta->generation);
	vg_binw_u32(&w, (uint32_t)meta->type);
	vg_binw_u16(&w, (uint16_t)tlen);
	vg_binw_put(&w, meta->value_text, tlen);
	vg_binw_u32(&w, (uint32_t)set->value_size);
	vg_binw_u64(&w, set->n);
	for (size_t i = 0; i < set->n; i++) {
		if (i > 0 && set->addr[i] < prev) {
			vg_binw_abort(&w);
			return vg_error_set(err, -EINVAL, "cannot write scan set "
					    "'%s': addresses are not ascending "
					    "at match %zu", path, i);
		}
		vg_binw_uleb(&w, set->addr[i] - prev);
		prev = set->addr[i];
	}
	if (set->n)
		vg_binw_put(&w, set->value, set->n * set->value_size);
	if (vg_scan_type_is_pattern(set->type) && set->n) {
		if (set->variant) {
			vg_binw_put(&w, set->variant, set->n);
		} else {
			for (size_t i = 0; i < set->n; i++)
				vg_binw_u8(&w, 0);
		}
	}
	return vg_binw_commit(&w, "scan set", err);
}

/* Memory for the arrays of a loaded set.  On this kind of VM a 4 KiB page
 * fault costs ~25 us: faulting the 13 MB of a million u32 matches took
 * ~85 ms against 3 ms of decoding.  Transparent huge pages (asked for
 * with madvise, the common "madvise" THP mode) cut that 3-10x.  The block
 * comes from posix_memalign, so free() and realloc() take it as usual. */
static void *big_alloc(size_t size)
{
	const size_t huge = (size_t)2 << 20;
	void *p;

	if (size < 2 * huge)
		return malloc(size);
	if (posix_memalign(&p, huge, size) != 0)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);   /* a hint: failure is harmless */
	return p;
}

/* The arrays are allocated at their final size and handed to set (whose
 * fields are public; vg_match_set_clear frees them): pushing a million
 * matches one by one costs more than the whole decoding. */
static int load_matches(struct vg_binr *r, struct vg_match_set *set,
			uint64_t n, struct vg_error *err)
{
	size_t vs = set->value_size;
	bool var = vg_scan_type_is_pattern(set->type);
	uint64_t a = 0;

	/* Each match takes at least 1 address byte + its value (+ variant):
	 * a count the remaining bytes cannot hold is refused before any
	 * allocation it would ask for. */
	if (n > vg_binr_left(r) / (1 + vs + (var ? 1 : 0)))
		return vg_binr_corrupt(r, err, "match count larger than the file");
	if (n == 0)
		return 0;
	set->addr = big_alloc(n * sizeof(*set->addr));
	set->value = big_alloc(n * vs);
	set->variant = var ? big_alloc(n) : NULL;
	set->cap = n;
	if (!set->addr || !set->value || (var && !set->variant)) {
		vg_binr_close(r);
		return vg_error_set(err, -ENOMEM, "out of memory loading %llu "
				    "matches", (unsigned long long)n);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d;

		if (!vg_binr_uleb(r, &d))
			return vg_binr_corrupt(r, err, "its contents do not "
					       "match their own counts");
		if (__builtin_add_overflow(a, d, &a))
			return vg_binr_corrupt(r, err, "addresses out of range");
		set->addr[i] = a;
	}
	if (!vg_binr_get(r, set->value, n * vs) ||
	    (var && !vg_binr_get(r, set->variant, n)))
		return vg_binr_corrupt(r, err, "its contents do not match their "
				       "own counts");
	for (uint64_t i = 0; var && i < n; i++)
		if (set->variant[i] > 1)
			return vg_binr_corrupt(r, err, "unknown string variant");
	set->n = n;
	return 0;
}

int vg_scanset_load(const char *path, struct vg_scanset_meta *meta,
		    struct vg_match_set *set, struct vg_error *err)
{
	struct vg_binr r;
	uint32_t pid, type, vs, gen;
	uint16_t tlen;
	char comm[16];
	uint64_t n;
	int rc;

	memset(meta, 0, sizeof(*meta));
	vg_match_set_init(set, VG_SCAN_U8, 1);
	rc = vg_binr_open(&r, path, SET_MAGIC, SET_VERSION, SET_VERSION, 0,
			  "scan set", err);
	if (rc)
		return rc;
	if (!vg_binr_u32(&r, &pid) || !vg_binr_u64(&r, &meta->id.start_time) ||
	    !vg_binr_get(&r, comm, sizeof(comm)) ||
	    !vg_binr_u64(&r, &meta->created_ns) || !vg_binr_u32(&r, &gen) ||
	    !vg_binr_u32(&r, &type) || !vg_binr_u16(&r, &tlen))
		return vg_binr_corrupt(&r, err, "header cut short");
	if (!type_valid(type))
		return vg_binr_corrupt(&r, err, "unknown value type");
	if (tlen >= sizeof(meta->value_text) ||
	    !vg_binr_get(&r, meta->value_text, tlen) || !vg_binr_u32(&r, &vs) ||
	    !vg_binr_u64(&r, &n))
		return vg_binr_corrupt(&r, err, "header cut short");
	meta->value_text[tlen] = '\0';
	meta->id.pid = (pid_t)pid;
	memcpy(meta->id.comm, comm, sizeof(comm));
	meta->id.comm[16] = '\0';
	meta->generation = gen;
	meta->type = (enum vg_scan_type)type;
	if (vs == 0 || vs > MAX_VALUE_SIZE ||
	    (vg_scan_type_width(meta->type) &&
	     vs != vg_scan_type_width(meta->type)))
		return vg_binr_corrupt(&r, err, "value size does not fit the type");
	vg_match_set_clear(set);
	vg_match_set_init(set, meta->type, vs);
	rc = load_matches(&r, set, n, err);
	if (rc == 0)
		rc = vg_binr_finish(&r, err);
	if (rc) {
		vg_match_set_clear(set);
		vg_match_set_init(set, meta->type, vs);
	}
	return rc;
}
