/* fuzz_elf.c - libFuzzer harness for the ELF image reader.
 *
 * Any input must either be rejected with -ENOEXEC (or -ENOMEM) and a
 * sentence, or give an image whose lookups keep their promises: a symbol
 * found at an address contains it (or is the unsized label just before it),
 * and its name finds a symbol of that name (PLT stubs' NAME@plt too); an
 * .eh_frame function found at an address contains it.  Built by tests/fuzz/run.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(const struct vg_image *img, uint64_t a)
{
	struct vg_symbol s, t;

	uint64_t fs, fe;

	/* A function .eh_frame describes contains the address. */
	if (vg_image_function_at(img, a, &fs, &fe) == 0 && (fs > a || a >= fe))
		abort();
	if (vg_image_symbol_at(img, a, &s) != 0)
		return;
	if (s.vaddr > a || (s.size && a - s.vaddr >= s.size) || !s.name)
		abort();
	if (vg_image_symbol_by_name(img, s.name, &t) != 0 ||
	    strcmp(s.name, t.name) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_image *img = NULL;
	struct vg_error err = { 0 };
	struct vg_symbol s;
	char hex[160];
	int r;

	r = vg_image_open_memory(data, size, "fuzz", &img, &err);
	if (r != 0) {
		if ((r != -ENOEXEC && r != -ENOMEM) || !err.msg[0] || img)
			abort();
		return 0;
	}
	vg_image_build_id_hex(img, hex, sizeof(hex));
	if (strlen(hex) != 2 * img->build_id_len)
		abort();
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];

		probe(img, l->vaddr);
		probe(img, l->vaddr + l->memsz / 2);
		probe(img, l->vaddr + l->memsz - 1);
		for (uint64_t k = 0; k < 64; k++)
			probe(img, l->vaddr + k * 16);
	}
	vg_image_symbol_by_name(img, "main", &s);
	vg_image_symbol_by_name(img, "_start", &s);
	if (size > 8) {
		uint64_t a;

		memcpy(&a, data + size - 8, sizeof(a));
		probe(img, a);
	}
	vg_image_free(img);
	return 0;
}
