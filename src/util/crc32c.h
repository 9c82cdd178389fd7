/* crc32c.h - CRC-32C (Castagnoli), the checksum of snapshot files from
 * version 2 on (util/binfile.h); usable over any bytes. */
#ifndef VG_UTIL_CRC32C_H
#define VG_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (iSCSI polynomial, reflected, pre- and post-inverted like zlib's
 * crc32: vg_crc32c(0, "123456789", 9) == 0xe3069283).  Hardware (SSE4.2,
 * three interleaved streams) when the CPU has it, else a table. */
uint32_t vg_crc32c(uint32_t crc, const void *p, size_t n);
/* The table version, always (for tests). */
uint32_t vg_crc32c_sw(uint32_t crc, const void *p, size_t n);
/* The CRC-32C of A then B from crc1 of A, crc2 of B and B's length. */
uint32_t vg_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

#endif
