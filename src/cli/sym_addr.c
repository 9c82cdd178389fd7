/* sym_addr.c - what a `vigil sym` input means as an address: 0xHEX,
 * bare hex where only addresses are expected, @0xHEX offline, or any ADDR
 * form every command takes (elf/addrspec.h).  Shared by the one-address
 * answers of cmd_sym.c and the batch engine of sym_batch.c. */
#include <stdio.h>
#include <string.h>

#include "cli/sym_addr.h"
#include "elf/addrspec.h"
#include "util/number.h"

/* The value of s when it is 1 to 16 hex digits and nothing else. */
static bool short_hex(const char *s, uint64_t *value)
{
	/* 1 + a digit's value, 0 for anything else: one load per character. */
	static const uint8_t digit[256] = {
		['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
		['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
		['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
		['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
	};
	const unsigned char *p = (const unsigned char *)s;
	uint64_t v = 0;
	size_t n;

	for (n = 0; n < 16 && digit[p[n]]; n++)
		v = v << 4 | (uint64_t)(digit[p[n]] - 1);
	if (n == 0 || p[n])
		return false;   /* no digit, more than 16, or not a digit */
	*value = v;
	return true;
}

/* A batch's line, 0xHEX or bare hex (and @0xHEX offline), read here:
 * through vg_addr_parse (and the 0x prepended to bare hex) it was a
 * tenth of a 100,000-address batch.  Same values, same lines accepted;
 * false for anything else, which takes the general path.  Touches
 * nothing shared: a batch's second thread reads its lines with it. */
bool sym_addr_hex(bool offline, const char *spec, bool from_stdin, uint64_t *addr)
{
	const char *hex;

	if (offline && spec[0] == '@')
		spec++;
	if (spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X'))
		hex = spec + 2;
	else
		hex = offline || from_stdin ? spec : NULL;
	return hex && short_hex(hex, addr);
}

/* ADDR as every command takes it; offline, also bare hex (addr2line) and
 * @0xHEX, which are the same thing there: the file's own addresses. */
int sym_addr_resolve(struct vg_symbolizer *s, bool offline, const char *spec,
		     bool from_stdin, uint64_t *addr, struct vg_error *err)
{
	const struct vg_images *imgs;
	struct vg_addr a;
	char buf[64];

	if (sym_addr_hex(offline, spec, from_stdin, addr))
		return 0;
	if (offline && spec[0] == '@')
		spec++;
	imgs = vg_symbolizer_images(s);
	/* Bare hex is an address where only addresses are expected: with
	 * --bin (addr2line's habit) and on standard input (perf script -F ip
	 * prints IPs so).  A live command-line ADDR needs 0x: "add" or
	 * "cafe" may be symbols there. */
	if ((offline || from_stdin) && strlen(spec) <= 16 &&
	    vg_is_hex_digits(spec)) {
		snprintf(buf, sizeof(buf), "0x%s", spec);
		spec = buf;
	}
	if (vg_addr_parse(spec, imgs, NULL, &a, err) < 0)
		return -1;
	*addr = a.runtime;
	return 0;
}
