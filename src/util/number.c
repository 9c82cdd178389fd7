/* number.c - strict unsigned integers for every option and ADDR form that
 * takes one (number.h). */
#include "util/number.h"

#include <ctype.h>
#include <errno.h>

int vg_parse_u64(const char *s, int allow_suffix, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	int base = 10;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!*p)
			return -EINVAL;
	}
	for (; *p; p++) {
		int d;

		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			break;
		if (__builtin_mul_overflow(v, (uint64_t)base, &v) ||
		    __builtin_add_overflow(v, (uint64_t)d, &v))
			return -ERANGE;
	}
	if (p == s)
		return -EINVAL;
	if (*p && allow_suffix && !p[1]) {
		switch (*p) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return -EINVAL;
		}
		p++;
	}
	if (*p)
		return -EINVAL;
	if (__builtin_mul_overflow(v, mul, &v))
		return -ERANGE;
	*out = v;
	return 0;
}

bool vg_is_hex_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}
