/* inflate.c - compressed debug sections decompressed on two threads
 * (inflate.h). */
#include "elf/inflate.h"

#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/affinity.h"

/* Below this many compressed bytes a second thread costs more than it
 * saves (starting it is ~0.1 ms; zlib inflates ~100 MB/s of output
 * here). */
#define INFLATE_SPLIT_MIN (256u << 10)

struct share {
	Elf_Scn **scns;
	size_t n;
};

static void inflate_all(const struct share *s)
{
	for (size_t i = 0; i < s->n; i++)
		(void)elf_compress(s->scns[i], 0, 0);
}

static void *inflate_thread(void *arg)
{
	inflate_all(arg);
	return NULL;
}

/* The sections dwarf_begin_elf reads, and so inflates (elfutils'
 * dwarf_scnnames; the index sections of newer versions too): others
 * (.debug_pubtypes, .debug_gnu_pubnames) would be inflated for nothing. */
static const char *const libdw_reads[] = {
	".debug_info", ".debug_types", ".debug_abbrev", ".debug_addr", ".debug_aranges",
	".debug_line", ".debug_line_str", ".debug_frame", ".debug_loc", ".debug_loclists",
	".debug_pubnames", ".debug_str", ".debug_str_offsets", ".debug_macinfo",
	".debug_macro", ".debug_ranges", ".debug_rnglists", ".debug_cu_index",
	".debug_tu_index",
};

static bool libdw_reads_section(const char *name)
{
	for (size_t i = 0; i < sizeof(libdw_reads) / sizeof(*libdw_reads); i++)
		if (strcmp(name, libdw_reads[i]) == 0)
			return true;
	return false;
}

struct candidate {
	Elf_Scn *scn;
	uint64_t size;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

void vg_elf_inflate_debug(Elf *elf)
{
	struct candidate *c = NULL;
	Elf_Scn **order = NULL, *scn = NULL;
	struct share mine = { 0 }, helper = { 0 };
	uint64_t total = 0, load[2] = { 0, 0 };
	size_t shstrndx, n = 0, cap = 0;
	pthread_t thread;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	/* Every section header is read here, before the helper starts: the
	 * first gelf_getshdr loads them all into the Elf, which the two
	 * threads then only read. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
		    (sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || !libdw_reads_section(name))
			continue;
		if (n == cap) {
			size_t grown = cap ? 2 * cap : 16;
			struct candidate *g = realloc(c, grown * sizeof(*c));

			if (!g)
				goto out;
			c = g;
			cap = grown;
		}
		c[n++] = (struct candidate){ scn, sh.sh_size };
		total += sh.sh_size;
	}
	/* Too little to share, or one CPU: all here, as libdw would have. */
	if (total < INFLATE_SPLIT_MIN || n < 2 || !vg_affinity_two_cpus())
		goto alone;
	/* Largest first, each to the lighter share (compressed size stands
	 * for the work: libc6-dbg's .debug_info is 59% of it). */
	qsort(c, n, sizeof(*c), by_size_desc);
	order = malloc(n * sizeof(*order));
	if (!order)
		goto alone;
	mine.scns = order;
	helper.scns = order + n;
	for (size_t i = 0; i < n; i++) {
		int k = load[1] < load[0];

		load[k] += c[i].size;
		if (k)
			*--helper.scns = c[i].scn;
		else
			mine.scns[mine.n++] = c[i].scn;
	}
	helper.n = n - mine.n;
	if (pthread_create(&thread, NULL, inflate_thread, &helper) != 0)
		goto alone;
	inflate_all(&mine);
	pthread_join(thread, NULL);
	goto out;
alone:
	for (size_t i = 0; i < n; i++)
		(void)elf_compress(c[i].scn, 0, 0);
out:
	free(order);
	free(c);
}
