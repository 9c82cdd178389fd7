/* duration.c - command-line durations with units, in one place so that
 * every option that takes a time reads "2s" the same way. */
#include "util/duration.h"

#include <errno.h>
#include <string.h>

#include "util/number.h"

static const struct {
	const char *name;
	uint64_t ms;
} units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
};

int vg_parse_duration_ms(const char *s, uint64_t *ms)
{
	uint64_t whole = 0, frac = 0, frac_scale = 1, mul = 0, v, part;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	/* No unit at all: milliseconds, decimal or 0xHEX, exactly as before. */
	if (strspn(s, "0123456789") == strlen(s) || strncmp(s, "0x", 2) == 0)
		return vg_parse_u64(s, 0, ms);
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return -ERANGE;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_scale >= 1000000000u)   /* finer than a ns: never whole ms */
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_scale *= 10;
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].name) == 0)
			mul = units[i].ms;
	if (!mul)
		return -EINVAL;
	/* frac / frac_scale of a unit must be whole milliseconds. */
	if ((frac * mul) % frac_scale)
		return -EINVAL;
	part = frac * mul / frac_scale;
	if (__builtin_mul_overflow(whole, mul, &v) || __builtin_add_overflow(v, part, &v))
		return -ERANGE;
	*ms = v;
	return 0;
}
