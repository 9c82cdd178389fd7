/* number.h - a strict unsigned integer, as every command line number and
 * ADDR offset is read.  In util/ because the ADDR forms (elf/addrspec.h,
 * which includes this header for its callers) and the durations of
 * util/duration.c both read numbers, and util is below elf. */
#ifndef VG_UTIL_NUMBER_H
#define VG_UTIL_NUMBER_H

#include <stdbool.h>
#include <stdint.h>

/* Strict unsigned integer: decimal, 0xHEX; optional k/M/G suffix when
 * allow_suffix (binary units).  -EINVAL on junk, -ERANGE on overflow. */
int vg_parse_u64(const char *s, int allow_suffix, uint64_t *out);

/* s is one or more hex digits and nothing else (no 0x): bare hex, as
 * addr2line and perf script -F ip write addresses. */
bool vg_is_hex_digits(const char *s);

#endif
