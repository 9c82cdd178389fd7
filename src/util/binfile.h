/* binfile.h - the file framing shared by scan sets and snapshots.
 *
 * Both formats begin with the same 24 bytes (magic, version, flags, file
 * size) and end with a CRC (zlib's CRC-32, or CRC-32C: enum vg_bin_crc) of
 * every byte before it, computed with the file size field as zero, because
 * that field is only known when the last byte is written.  The size lets a
 * reader tell "truncated" from "corrupt" before parsing anything; the CRC
 * catches the rest.  Writes (struct vg_binw) go through a buffer to a
 * vg_outfile (0600, renamed over PATH only when complete); reads (struct
 * vg_binr) through a buffer with pread.  Used by scan/scanset.c and
 * scan/snapshot.c. */
#ifndef VG_UTIL_BINFILE_H
#define VG_UTIL_BINFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/outfile.h"

#define VG_BIN_HEADER 24u            /* magic 8, version 4, flags 4, size 8 */

/* The checksum at the end of a file: zlib's CRC-32 (scan sets, snapshots
 * of version 1) or CRC-32C (Castagnoli, snapshots from version 2: the
 * SSE4.2 crc32 instruction computes it at >10 GB/s where zlib 1.2.13's
 * crc32 runs at ~3.8 GB/s, a quarter of a snapshot's time). */
enum vg_bin_crc { VG_BIN_CRC32 = 0, VG_BIN_CRC32C = 1 };

/* The checksum of kind of n bytes (from 0). */
uint32_t vg_bin_crc(enum vg_bin_crc kind, const void *p, size_t n);

struct vg_binw {
	struct vg_outfile out;           /* the file (util/outfile.h) */
	uint8_t *buf;
	size_t len, cap;
	enum vg_bin_crc crc_kind;
	uint32_t crc;
	uint64_t size;                   /* bytes written so far */
	int error;                       /* first -errno of a write */
};
/* Create the file (vg_outfile_open) and write the header.  0 or -errno with a sentence. */
int vg_binw_open(struct vg_binw *w, const char *path, const char magic[8],
		 uint32_t version, enum vg_bin_crc crc, struct vg_error *err);
void vg_binw_put(struct vg_binw *w, const void *p, size_t n);
/* Put n bytes whose checksum (vg_bin_crc of w->crc_kind) the caller
 * computed, e.g. on another thread: a large payload is then written
 * without being read again here. */
void vg_binw_put_crc(struct vg_binw *w, const void *p, size_t n, uint32_t crc);
void vg_binw_u8(struct vg_binw *w, uint8_t v);
void vg_binw_u16(struct vg_binw *w, uint16_t v);
void vg_binw_u32(struct vg_binw *w, uint32_t v);
void vg_binw_u64(struct vg_binw *w, uint64_t v);
void vg_binw_uleb(struct vg_binw *w, uint64_t v);
/* Append the CRC, fill in the size, rename over PATH.  Frees w either
 * way (the temporary file is removed on failure). */
int vg_binw_commit(struct vg_binw *w, const char *what, struct vg_error *err);
/* Remove the temporary file and free w. */
void vg_binw_abort(struct vg_binw *w);

struct vg_binr {
	int fd;
	const char *path, *what;         /* borrowed: "scan set", "snapshot" */
	uint8_t *buf;
	size_t pos, len, cap;
	uint64_t loaded;                 /* file offset of buf[len] */
	uint64_t data_end;               /* file size - 4 (where the CRC is) */
	enum vg_bin_crc crc_kind;
	uint32_t crc;                    /* of every byte loaded */
	uint32_t version;
	int error;                       /* -EIO of a read, or -EINVAL */
};
/* Open path, check magic, version (-EPROTO unless oldest <= version <=
 * newest; r->version says which) and size (-EINVAL "truncated").  The
 * checksum is CRC-32C from version crc32c_from on (0: never), else zlib's
 * CRC-32.  what names the format in sentences. */
int vg_binr_open(struct vg_binr *r, const char *path, const char magic[8],
		 uint32_t oldest, uint32_t newest, uint32_t crc32c_from,
		 const char *what, struct vg_error *err);
/* false (and r->error set) if the data ends first: the file is corrupt,
 * since its size was checked against the header. */
bool vg_binr_get(struct vg_binr *r, void *p, size_t n);
bool vg_binr_u8(struct vg_binr *r, uint8_t *v);
bool vg_binr_u16(struct vg_binr *r, uint16_t *v);
bool vg_binr_u32(struct vg_binr *r, uint32_t *v);
bool vg_binr_u64(struct vg_binr *r, uint64_t *v);
bool vg_binr_uleb(struct vg_binr *r, uint64_t *v);
/* Bytes left before the CRC. */
uint64_t vg_binr_left(const struct vg_binr *r);
/* Everything consumed and the CRC matches: 0, else -EINVAL "corrupt"
 * (or the read error).  Closes and frees r either way. */
int vg_binr_finish(struct vg_binr *r, struct vg_error *err);
/* Close and free r without checking. */
void vg_binr_close(struct vg_binr *r);
/* Fill err with "WHAT PATH is corrupt (why)" and return -EINVAL, or the
 * read error if one happened (its sentence wins). */
int vg_binr_corrupt(struct vg_binr *r, struct vg_error *err, const char *why);

#endif
