/* fuzz_usdt.c - libFuzzer harness for the .note.stapsdt parser
 * (elf/usdt.h) on hostile note bytes: the notes are on-disk data of the
 * target's files.  The first 8 bytes are the .stapsdt.base address (0:
 * none), the rest the section.  Every probe handed out must have a
 * non-empty provider and name, all three strings NUL-terminated within
 * their buffers.  Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/usdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const struct vg_usdt_probe *p, void *arg)
{
	size_t *n = arg;

	if (!p->provider[0] || !p->name[0] ||
	    !memchr(p->provider, 0, sizeof(p->provider)) || !memchr(p->name, 0, sizeof(p->name)) ||
	    !memchr(p->args, 0, sizeof(p->args)))
		abort();
	{
		struct vg_usdt_arg a[12];
		size_t k = 0;

		vg_usdt_args_parse(p->args, a, 12, &k);
		if (k > 12)
			abort();
		for (size_t i = 0; i < k; i++)
			if ((a[i].size != 1 && a[i].size != 2 && a[i].size != 4 && a[i].size != 8) ||
			    a[i].reg < -1 || a[i].reg > 15 || (a[i].reg >= 0) != (a[i].reg_name[0] != 0) ||
			    (a[i].mem && (a[i].reg < 0 || !a[i].operand[0] ||
					  !memchr(a[i].operand, 0, sizeof(a[i].operand)))))
				abort();
	}
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t base = 0;
	size_t n = 0, bad = 0;
	uint8_t *copy;

	if (size < 8)
		return 0;
	memcpy(&base, data, 8);
	/* An exact-size copy: ASan sees any read past the section. */
	copy = malloc(size - 8 ? size - 8 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 8, size - 8);
	vg_usdt_parse_notes(copy, size - 8, base, base != 0, check, &n, &bad);
	free(copy);
	return 0;
}
