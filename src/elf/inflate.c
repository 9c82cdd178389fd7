/* inflate.c - compressed debug sections decompressed fast before libdw
 * reads them (inflate.h): into an in-memory copy of the file, or in place
 * on two threads. */
#include "elf/inflate.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/affinity.h"
#include "util/hugebuf.h"

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

/* ------------------------------------------------------------------ */
/* the in-memory copy                                                  */

/* A deflate stream expands at most 1032 to 1: a section header claiming
 * more is a lie, and is not allocated for. */
#define DEFLATE_MAX_RATIO 1032u
/* The largest section alignment the copy honours (a page is the most a
 * linker asks of a section; more is a damaged header). */
#define COPY_MAX_ALIGN ((uint64_t)1 << 21)
/* The largest copy made: a debug file decompressing to more keeps the
 * slower way (the largest known, Firefox's libxul, is some 3 GiB). */
#define COPY_MAX ((uint64_t)8 << 30)

struct vg_inflated {
	Elf *elf;
	uint8_t *buf;
	size_t size;
};

/* One section of the copy. */
struct copied {
	Elf64_Shdr sh;          /* as in the copy */
	const uint8_t *src;     /* the file's bytes (zlib stream if compressed) */
	size_t src_len;
	bool compressed;
};

/* Compressed sections decompressed by one thread into the copy. */
struct unpack {
	const struct copied **secs;
	size_t n;
	uint8_t *buf;
	bool ok;
};

static void unpack_all(struct unpack *u)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();

	u->ok = d != NULL;
	for (size_t i = 0; i < u->n && u->ok; i++) {
		const struct copied *c = u->secs[i];

		/* No actual size asked for: anything but exactly sh_size
		 * bytes is an error, and the zlib trailer's Adler-32 is
		 * checked. */
		u->ok = libdeflate_zlib_decompress(d, c->src, c->src_len, u->buf + c->sh.sh_offset,
						   c->sh.sh_size, NULL) == LIBDEFLATE_SUCCESS;
	}
	libdeflate_free_decompressor(d);
}

static void *unpack_thread(void *arg)
{
	unpack_all(arg);
	return NULL;
}

static int by_src_len_desc(const void *a, const void *b)
{
	const struct copied *x = *(const struct copied *const *)a, *y = *(const struct copied *const *)b;

	return x->src_len < y->src_len ? 1 : x->src_len > y->src_len ? -1 : 0;
}

/* Decompresses the n compressed sections of secs into buf: the largest
 * first, each to the lighter of two threads when there is enough work
 * and a second CPU.  false when one failed. */
static bool unpack_sections(const struct copied *secs, size_t n_secs, size_t n,
			    uint64_t total, uint8_t *buf)
{
	/* by size, then the two shares: mine from the front, the
	 * helper's from the back */
	const struct copied **by_size = malloc(2 * (n ? n : 1) * sizeof(*by_size));
	const struct copied **order = by_size + n;
	struct unpack mine = { .buf = buf }, helper = { .buf = buf };
	uint64_t load[2] = { 0, 0 };
	pthread_t thread;
	bool two;
	size_t k = 0;

	if (!by_size)
		return false;
	for (size_t i = 0; i < n_secs; i++)
		if (secs[i].compressed)
			by_size[k++] = &secs[i];
	qsort(by_size, n, sizeof(*by_size), by_src_len_desc);
	two = total >= INFLATE_SPLIT_MIN && n >= 2 && vg_affinity_two_cpus();
	mine.secs = order;
	helper.secs = order + n;
	for (size_t i = 0; i < n; i++) {
		int t = two && load[1] < load[0];

		load[t] += by_size[i]->src_len;
		if (t)
			*--helper.secs = by_size[i];
		else
			mine.secs[mine.n++] = by_size[i];
	}
	helper.n = n - mine.n;
	if (helper.n && pthread_create(&thread, NULL, unpack_thread, &helper) != 0) {
		/* All here after all: the two shares fill order between them. */
		mine.n = n;
		helper.n = 0;
	}
	unpack_all(&mine);
	if (helper.n)
		pthread_join(thread, NULL);
	else
		helper.ok = true;
	free(by_size);
	return mine.ok && helper.ok;
}

/* A dwz link libdw would resolve next to the file: the copy is the wrong
 * choice (inflate.h). */
static bool relative_altlink(const char *name, const Elf64_Shdr *sh, const Elf_Data *raw)
{
	return strcmp(name, ".gnu_debugaltlink") == 0 &&
	       ((sh->sh_flags & SHF_COMPRESSED) || !raw || raw->d_size == 0 ||
		((const char *)raw->d_buf)[0] != '/');
}

/* What libdw reads of a file (dwarf_begin_elf looks sections up by these
 * names; a .gnu_debugaltlink names the dwz file): the copy holds these,
 * every other section is a header without bytes. */
static bool libdw_reads_name(const char *name)
{
	return strncmp(name, ".debug_", 7) == 0 || strncmp(name, ".zdebug_", 8) == 0 ||
	       strcmp(name, ".gnu_debugaltlink") == 0;
}

/* The next piece of the layout: *end aligned up to a (a power of two)
 * is where it starts (*start), and size bytes on is the new *end; false
 * on overflow or past COPY_MAX. */
static bool place(uint64_t *end, uint64_t a, uint64_t size, uint64_t *start)
{
	uint64_t x;

	if (__builtin_add_overflow(*end, a - 1, &x))
		return false;
	x &= ~(a - 1);
	*start = x;
	if (__builtin_add_overflow(x, size, &x) || x > COPY_MAX)
		return false;
	*end = x;
	return true;
}

/* Does libdw find a skeleton unit (DWARF 5's, or GNU DebugFission's in
 * DWARF 4) in elf?  Unreadable DWARF: no. */
static bool has_skeleton_units(Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_CU *cu = NULL;
	uint8_t type;
	bool found = false;

	while (dw && !found && dwarf_get_units(dw, cu, &cu, NULL, &type, NULL, NULL) == 0)
		found = type == DW_UT_skeleton;
	dwarf_end(dw);
	return found;
}

int vg_inflate_copy(Elf *elf, size_t min_compressed, struct vg_inflated **out)
{
	Elf64_Ehdr *eh, ehdr;
	Elf64_Phdr *ph = NULL;
	struct copied *secs = NULL;
	struct vg_inflated *x = NULL;
	size_t shnum, phnum, shstrndx, n_compressed = 0, file_size = 0;
	bool has_debug_addr = false;
	uint64_t compressed = 0, sources = 0, off, shoff, phoff = 0, total = 0;
	uint8_t *buf = NULL;
	int rc = -ENOTSUP;

	*out = NULL;
	if (!elf || !(eh = elf64_getehdr(elf)) || elf_getshdrnum(elf, &shnum) != 0 ||
	    elf_getphdrnum(elf, &phnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    shnum == 0 || (phnum && !(ph = elf64_getphdr(elf))) || !elf_rawfile(elf, &file_size))
		return -ENOTSUP;
	memcpy(&ehdr, eh, sizeof(ehdr));
	/* libelf hands out headers in this machine's byte order: a copy of
	 * them is a file of this order only.  Big-endian files (never an
	 * x86-64 program's) keep the slower way. */
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	secs = calloc(shnum, sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	/* Every section's header and bytes, read here before any thread
	 * starts (libelf is not used from two threads). */
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		struct copied *c = &secs[i];
		/* libelf's pointer may be misaligned (a memory image whose
		 * e_shoff is not a multiple of 8): copied, not dereferenced. */
		const Elf64_Shdr *shp = scn ? elf64_getshdr(scn) : NULL;
		const Elf64_Shdr *sh = &c->sh;
		const char *name;
		Elf_Data *raw;

		if (!shp)
			goto out;
		memcpy(&c->sh, shp, sizeof(c->sh));
		/* Section 0 has no bytes (its size may be the count of
		 * sections). */
		if (i == 0)
			continue;
		/* A compressed section that is not plain bytes, not debug
		 * info (or one libelf refuses to decompress: NULL, NOBITS,
		 * ALLOC): not for the copy, libdw judges the file. */
		if ((sh->sh_flags & SHF_COMPRESSED) &&
		    (sh->sh_type != SHT_PROGBITS || (sh->sh_flags & SHF_ALLOC)))
			goto out;
		if (sh->sh_type == SHT_NOBITS)
			continue;  /* no bytes in the file */
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if ((sh->sh_flags & SHF_ALLOC) ||
		    (i != shstrndx && (!name || !libdw_reads_name(name)))) {
			/* Not read by libdw (the program's own bytes, its
			 * symbol table...): a header without bytes, not a
			 * second copy of them. */
			if (sh->sh_flags & SHF_COMPRESSED)
				goto out;
			c->sh.sh_type = SHT_NOBITS;
			continue;
		}
		raw = elf_rawdata(scn, NULL);
		if (!raw || (raw->d_size && !raw->d_buf))
			goto out;
		if (name && relative_altlink(name, sh, raw))
			goto out;
		has_debug_addr |= name && strcmp(name, ".debug_addr") == 0;
		c->src = raw->d_buf;
		c->src_len = raw->d_size;
		/* Each byte of the file copied or decompressed once at
		 * most: sections sharing their bytes would multiply the copy
		 * (200 headers over one 4 MiB blob made 839 MB). */
		if (__builtin_add_overflow(sources, c->src_len, &sources) || sources > file_size)
			goto out;
		if (sh->sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;

			if (raw->d_size < sizeof(ch))
				goto out;
			memcpy(&ch, raw->d_buf, sizeof(ch));
			c->src += sizeof(ch);
			c->src_len -= sizeof(ch);
			if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 ||
			    ch.ch_size / DEFLATE_MAX_RATIO > c->src_len)
				goto out;
			c->compressed = true;
			c->sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			c->sh.sh_size = ch.ch_size;
			c->sh.sh_addralign = ch.ch_addralign;
			compressed += c->src_len;
			n_compressed++;
		}
		if (c->sh.sh_addralign > COPY_MAX_ALIGN ||
		    (c->sh.sh_addralign & (c->sh.sh_addralign - 1)))
			goto out;
	}
	if (!n_compressed || compressed < min_compressed)
		goto out;
	/* The layout: header, program headers, each section where its
	 * alignment allows, the section headers last; every step checked
	 * (a crafted file's sizes add up to anything) and the whole at most
	 * COPY_MAX. */
	off = sizeof(ehdr);
	if (phnum && !place(&off, 8, (uint64_t)phnum * sizeof(*ph), &phoff))
		goto out;
	for (size_t i = 1; i < shnum; i++) {
		struct copied *c = &secs[i];
		uint64_t a = c->sh.sh_addralign ? c->sh.sh_addralign : 1;

		/* NOBITS: no bytes, so no alignment to keep (nor checked) */
		if (c->sh.sh_type == SHT_NOBITS) {
			c->sh.sh_offset = off;
			continue;
		}
		if (!place(&off, a, c->compressed ? c->sh.sh_size : c->src_len, &c->sh.sh_offset))
			goto out;
	}
	if (!place(&off, 8, (uint64_t)shnum * sizeof(Elf64_Shdr), &shoff))
		goto out;
	total = off;
	x = calloc(1, sizeof(*x));
	buf = x ? vg_hugebuf_alloc((size_t)total) : NULL;
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	ehdr.e_phoff = phoff;
	ehdr.e_shoff = shoff;
	memcpy(buf, &ehdr, sizeof(ehdr));
	if (phnum)
		memcpy(buf + phoff, ph, phnum * sizeof(*ph));
	for (size_t i = 0; i < shnum; i++) {
		const struct copied *c = &secs[i];

		memcpy(buf + shoff + i * sizeof(Elf64_Shdr), &c->sh, sizeof(c->sh));
		if (i && c->sh.sh_type != SHT_NOBITS && !c->compressed && c->src_len)
			memcpy(buf + c->sh.sh_offset, c->src, c->src_len);
	}
	if (!unpack_sections(secs, shnum, n_compressed, compressed, buf)) {
		rc = -EINVAL;
		goto out;
	}
	x->elf = elf_memory((char *)buf, (size_t)total);
	if (!x->elf) {
		rc = -EINVAL;
		goto out;
	}
	x->buf = buf;
	x->size = (size_t)total;
	buf = NULL;
	/* Split DWARF has a .debug_addr, and so does clang's DWARF 5 without
	 * it: only a skeleton unit sends libdw looking for a .dwo, perhaps
	 * next to the file. */
	if (has_debug_addr && has_skeleton_units(x->elf)) {
		rc = -ENOTSUP;
		goto out;
	}
	*out = x;
	x = NULL;
	rc = 0;
out:
	if (buf)
		vg_hugebuf_free(buf, (size_t)total);
	if (x && x->elf)
		vg_inflated_free(x);
	else
		free(x);
	free(secs);
	return rc;
}

Elf *vg_inflated_elf(const struct vg_inflated *x)
{
	return x ? x->elf : NULL;
}

struct vg_inflated *vg_inflated_free(struct vg_inflated *x)
{
	if (!x)
		return NULL;
	elf_end(x->elf);
	vg_hugebuf_free(x->buf, x->size);
	free(x);
	return NULL;
}

Dwarf *vg_dwarf_begin(Elf *elf, struct vg_inflated **keep)
{
	struct vg_inflated *x;

	*keep = NULL;
	if (vg_inflate_copy(elf, INFLATE_SPLIT_MIN, &x) == 0) {
		Dwarf *dw = dwarf_begin_elf(x->elf, DWARF_C_READ, NULL);

		if (dw) {
			*keep = x;
			return dw;
		}
		/* libdw refuses the copy: the file itself, for its verdict. */
		vg_inflated_free(x);
	}
	vg_elf_inflate_debug(elf);
	return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}
