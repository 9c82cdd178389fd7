/* fuzz_inflate.c - libFuzzer harness for the in-memory copy of an ELF
 * file with its compressed debug sections decompressed (elf/inflate.h).
 *
 * The input is an ELF file in memory, its sections and their compression
 * headers the fuzzer's.  vg_inflate_copy (at any size: vg_dwarf_begin asks
 * for 256 KiB of compressed sections, a fuzz input has less) must refuse
 * it or give a copy that keeps its promises: as many sections, none
 * compressed, those libdw does not read without bytes, each compressed
 * one as large as its header said and every other byte for byte the
 * input's; libdw then reads the copy's units and
 * their first DIEs.  Then vg_dwarf_begin, whose fallback inflates the
 * input in place.  Nothing may crash, hang or leak.  Built by
 * tests/fuzz/run.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "elf/inflate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_UNITS 64

static volatile uint64_t sink;

static void read_units(Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int n = 0;

	while (n++ < MAX_UNITS && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die, child;
		const char *name;

		if (dwarf_offdie(dw, off + hsize, &die)) {
			name = dwarf_diename(&die);
			sink += name ? (uint64_t)name[0] : 0;
			if (dwarf_child(&die, &child) == 0 && (name = dwarf_diename(&child)))
				sink += (uint64_t)name[0];
		}
		off = next;
	}
}

/* The copy of in keeps its promises, or abort. */
static void check_copy(Elf *in, Elf *m)
{
	size_t n_in, n_m;

	if (elf_getshdrnum(in, &n_in) != 0 || elf_getshdrnum(m, &n_m) != 0 || n_in != n_m)
		abort();
	for (size_t i = 1; i < n_in; i++) {
		Elf_Scn *si = elf_getscn(in, i), *sm = elf_getscn(m, i);
		GElf_Shdr hi, hm;
		Elf_Data *di, *dm;

		/* the input's type, or NOBITS for what libdw does not read
		 * (never a compressed section: those are refused) */
		if (!si || !sm || !gelf_getshdr(si, &hi) || !gelf_getshdr(sm, &hm) ||
		    (hm.sh_flags & SHF_COMPRESSED) ||
		    (hm.sh_type != hi.sh_type &&
		     (hm.sh_type != SHT_NOBITS || (hi.sh_flags & SHF_COMPRESSED))))
			abort();
		if (hm.sh_type == SHT_NOBITS)
			continue;
		di = elf_rawdata(si, NULL);
		dm = elf_rawdata(sm, NULL);
		if (!di || !dm || dm->d_size != hm.sh_size)
			abort();
		if (hi.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(si, &ch) || ch.ch_size != hm.sh_size)
				abort();
		} else if (di->d_size != dm->d_size ||
			   (di->d_size && memcmp(di->d_buf, dm->d_buf, di->d_size) != 0)) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	struct vg_inflated *x = NULL, *keep = NULL;
	Elf *in;
	Dwarf *dw;
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	in = elf_memory(copy, size);
	if (!in) {
		free(copy);
		return 0;
	}
	rc = vg_inflate_copy(in, 0, &x);
	if (rc == 0) {
		if (!x || !vg_inflated_elf(x))
			abort();
		check_copy(in, vg_inflated_elf(x));
		dw = dwarf_begin_elf(vg_inflated_elf(x), DWARF_C_READ, NULL);
		if (dw) {
			read_units(dw);
			dwarf_end(dw);
		}
		x = vg_inflated_free(x);
	} else if (x || (rc != -ENOTSUP && rc != -EINVAL && rc != -ENOMEM)) {
		abort();
	}
	dw = vg_dwarf_begin(in, &keep);
	if (keep && (!dw || dwarf_getelf(dw) != vg_inflated_elf(keep)))
		abort();
	if (dw) {
		read_units(dw);
		dwarf_end(dw);
	}
	vg_inflated_free(keep);
	elf_end(in);
	free(copy);
	return 0;
}
