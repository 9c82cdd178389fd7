/* matchset.c - the matches of a scan (struct vg_match_set): addresses,
 * values and str/bytes variants in three parallel arrays grown together.
 * Never prints. */
#include "scan/matchset.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vg_match_set_init(struct vg_match_set *s, enum vg_scan_type t,
		       size_t value_size)
{
	memset(s, 0, sizeof(*s));
	s->type = t;
	s->value_size = value_size;
}

void vg_match_set_clear(struct vg_match_set *s)
{
	if (!s)
		return;
	free(s->addr);
	free(s->value);
	free(s->variant);
	s->addr = NULL;
	s->value = NULL;
	s->variant = NULL;
	s->n = s->cap = 0;
}

int vg_match_set_reserve(struct vg_match_set *s, size_t need)
{
	size_t cap = s->cap ? s->cap : 16, vbytes;
	void *p;

	if (need <= s->cap)
		return 0;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (cap > SIZE_MAX / sizeof(uint64_t) ||
	    __builtin_mul_overflow(cap, s->value_size ? s->value_size : 1, &vbytes))
		return -ENOMEM;
	p = realloc(s->addr, cap * sizeof(uint64_t));
	if (!p)
		return -ENOMEM;
	s->addr = p;
	p = realloc(s->value, vbytes);
	if (!p)
		return -ENOMEM;
	s->value = p;
	if (vg_scan_type_is_pattern(s->type)) {
		p = realloc(s->variant, cap);
		if (!p)
			return -ENOMEM;
		s->variant = p;
	}
	s->cap = cap;
	return 0;
}

int vg_match_set_push(struct vg_match_set *s, uint64_t addr,
		      const void *value, uint8_t variant)
{
	if (vg_match_set_reserve(s, s->n + 1) < 0)
		return -ENOMEM;
	s->addr[s->n] = addr;
	if (s->value_size)
		memcpy(s->value + s->n * s->value_size, value, s->value_size);
	if (s->variant)
		s->variant[s->n] = variant;
	s->n++;
	return 0;
}

size_t vg_match_set_len(const struct vg_match_set *s,
			const struct vg_scan_value *v, size_t i)
{
	if (s->variant && v && s->variant[i] < v->npat &&
	    v->pat[s->variant[i]].len <= s->value_size)
		return v->pat[s->variant[i]].len;
	return s->value_size;
}
