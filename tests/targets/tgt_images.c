/* tgt_images - images that are not one plain file per mapping set, for
 * `vigil sym`, `profile` and `scan` (built -O2 -g, frame pointers).
 * usage: tgt_images TRUTHFILE MODE
 *
 * MODE vdso: loops on clock_gettime() in vdso_spin() for ever.  The truth
 *   has "vdso 0xBASE" (AT_SYSINFO_EHDR) and "vdsosym NAME 0xRUNTIME SIZE"
 *   for every function of the vDSO's .dynsym, read here from the image the
 *   kernel mapped (its section headers are mapped too).
 * MODE bss: a .bss larger than a page, so that its tail past the file's
 *   last page is mapped anonymously: "sym bss_tail ..." is the address of
 *   the last byte of a big array, "sym bss_head ..." the first.
 * MODE dlmopen: libm.so.6 loaded a second time in a new namespace
 *   (dlmopen(LM_ID_NEWLM)): "copy N 0xBIAS 0xCOS" per copy (N = 0 the
 *   ordinary one, 1 the new namespace's), then loops calling cos() of
 *   both copies from dlm_spin().
 * Each mode writes "pid", the obj lines and "state ready". */

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "truth.h"

#define NOINLINE __attribute__((noinline, noclone, used))

volatile uint64_t images_sink;
void vdso_spin(void);
void dlm_spin(void);

NOINLINE void vdso_spin(void)
{
	struct timespec ts;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		images_sink += (uint64_t)ts.tv_nsec;
	}
}

/* Every function symbol of the vDSO, from its own section headers. */
static void vdso_truth(FILE *f)
{
	const char *base = (const char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Shdr *sh;
	uint64_t bias = (uint64_t)(uintptr_t)base;

	if (!base) {
		fprintf(stderr, "target: no vDSO (AT_SYSINFO_EHDR is 0)\n");
		exit(77);
	}
	fprintf(f, "vdso 0x%llx\n", (unsigned long long)bias);
	sh = (const void *)(base + eh->e_shoff);
	/* The vDSO is linked at 0 or at its first PT_LOAD's vaddr. */
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD) {
			bias -= ph->p_vaddr & ~(uint64_t)0xfff;
			break;
		}
	}
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const void *)(base + sh[i].sh_offset);
		str = base + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 1; k < sh[i].sh_size / sizeof(*sym); k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF)
				fprintf(f, "vdsosym %s 0x%llx %llu\n", str + sym[k].st_name,
					(unsigned long long)(bias + sym[k].st_value),
					(unsigned long long)sym[k].st_size);
	}
}

static char bss_big[3 << 20];

static void bss_truth(FILE *f)
{
	bss_big[0] = 1;
	bss_big[sizeof(bss_big) - 1] = 2;
	truth_symbol(f, "bss_head", &bss_big[0], 1);
	truth_symbol(f, "bss_tail", &bss_big[sizeof(bss_big) - 1], 1);
}

static double (*volatile cos1)(double), (*volatile cos2)(double);

NOINLINE void dlm_spin(void)
{
	double x = 0;

	for (;;) {
		x += cos1(x) * 1e-9 + cos2(x) * 1e-9;
		images_sink += (uint64_t)x;
	}
}

static void dlmopen_truth(FILE *f)
{
	void *h[2];

	h[0] = dlopen("libm.so.6", RTLD_NOW);
	h[1] = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW);
	if (!h[0] || !h[1]) {
		fprintf(stderr, "target: dlmopen libm.so.6: %s\n", dlerror());
		exit(77);
	}
	for (int i = 0; i < 2; i++) {
		struct link_map *lm;
		void *cos = dlsym(h[i], "cos");

		if (dlinfo(h[i], RTLD_DI_LINKMAP, &lm) != 0 || !cos) {
			fprintf(stderr, "target: dlinfo/dlsym copy %d: %s\n", i, dlerror());
			exit(99);
		}
		fprintf(f, "copy %d 0x%llx 0x%llx\n", i, (unsigned long long)lm->l_addr,
			(unsigned long long)(uintptr_t)cos);
		if (i == 0)
			cos1 = (double (*)(double))cos;
		else
			cos2 = (double (*)(double))cos;
	}
}

int main(int argc, char **argv)
{
	FILE *f;

	truth_init(TRUTH_MAX_SECONDS);
	if (argc != 3) {
		fprintf(stderr, "usage: tgt_images TRUTHFILE vdso|bss|dlmopen\n");
		return 99;
	}
	f = truth_begin(argv[1]);
	truth_objects(f);
	if (strcmp(argv[2], "vdso") == 0)
		vdso_truth(f);
	else if (strcmp(argv[2], "bss") == 0)
		bss_truth(f);
	else if (strcmp(argv[2], "dlmopen") == 0)
		dlmopen_truth(f);
	else
		return 99;
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	if (strcmp(argv[2], "vdso") == 0)
		vdso_spin();
	if (strcmp(argv[2], "dlmopen") == 0)
		dlm_spin();
	truth_wait_forever();
}
