/* binfile.c - the file framing scan sets and snapshots share: the
 * 24-byte common header (magic, version, flags, file size), buffered
 * writes through a vg_outfile, buffered reads with pread, and the checksum
 * at the end (zlib's CRC-32 or CRC-32C, util/crc32c.h) of every byte
 * before it, taken with the size field as zero.
 *
 * Reads and writes stream through a 1 MiB buffer.  A reader is told
 * "truncated" or "corrupt" from the size in the header before anything is
 * parsed; the CRC catches the rest.  Never prints. */
#include "util/binfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/crc32c.h"

#define BUF_SIZE (1u << 20)
#define SIZE_FIELD 16u                   /* offset of the file size */

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
