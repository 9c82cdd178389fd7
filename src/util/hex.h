/* hex.h - one hexadecimal digit, for the parsers that read hex text
 * (maps lines, scan's bytes patterns). */
#ifndef VG_HEX_H
#define VG_HEX_H

/* The value of c as a hex digit, or -1. */
static inline int vg_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
