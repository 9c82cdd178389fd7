/* image.c - ELF images: one mapped file (or --bin file), its PT_LOADs, its
 * build-id, its symbol tables, and the set of images a target maps.
 *
 * Parsing goes through libelf (gelf) only.  Nothing in a header is trusted
 * before e_ident says ELF64, little-endian, and e_machine says x86-64; then the
 * program header table, every PT_LOAD's file bytes and the section header
 * table must lie inside the file, or the file is "truncated" (-ENOEXEC).
 * Files are read with ELF_C_READ (pread on demand), never mmap()ed, so a file
 * truncated under us yields an error, not SIGBUS.
 *
 * A target's images are grouped by (device, inode) of their maps entries and
 * opened once each, through /proc/PID/map_files, /proc/PID/root/PATH (checked
 * against the mapping's device and inode) or, for an unlinked file neither
 * reaches, from the target's memory: the bytes of every readable mapping are
 * put back at their file offsets and parsed like a file.  Section headers
 * that were never mapped are dropped; such an image then gets the .dynsym the
 * dynamic linker itself uses, found through PT_DYNAMIC (DT_SYMTAB, DT_STRTAB,
 * DT_GNU_HASH or DT_HASH for the count) and described by two synthetic
 * section headers appended to the buffer, so that one symbol loader serves
 * every image.  Its local (.symtab) symbols are lost; a target warning says
 * so, or says that it has no symbols at all.
 *
 * Where the kernel has PROCMAP_QUERY, it is asked for the build-id of each
 * image's first mapping: it reads it from the mapped file (vma->vm_file)
 * without any open.  A file route whose build-id differs is not the mapped
 * file (overlayfs keeps the inode number across a copy-up, the mapping keeps
 * the lower file) and is refused with a warning; an image whose bytes hold
 * no build-id note gets the kernel's (build_id_from_kernel).
 *
 * Symbols (.symtab, then .dynsym) are loaded on first lookup into two sorted
 * arrays: by address (with a running maximum of symbol ends, so "which symbol
 * contains X" is a binary search plus a short backward walk) and by name.
 * Lookups are not thread-safe: the first one fills the cache.
 * Never prints, never reads the environment. */
#include "elf/image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/fde.h"
#include "util/vec.h"
#include "target/procmap.h"

/* Largest image rebuilt from target memory. */
#define MEM_IMAGE_MAX (512ull << 20)
/* Bytes compared by vg_image_compare when there is no build-id. */
#define COMPARE_MAX (4ull << 20)

struct sym {
	uint64_t vaddr, size;
	uint64_t limit;     /* unsized symbols: end of their section */
	const char *name;
	bool dyn;
	bool ifunc;         /* STT_GNU_IFUNC: vaddr is its resolver */
	uint8_t rank;       /* among aliases at one address: higher is shown */
};

struct vg_image_priv {
	int fd;             /* -1 for an in-memory image */
	char *buf;          /* in-memory image, owned */
	uint64_t size;      /* bytes of the file (or buffer) */
	Elf *elf;

	bool syms_loaded;
	struct sym *syms;   /* by address */
	uint64_t *max_end;  /* max end of sized syms[0..i] */
	size_t *by_name;    /* indices into syms, by name */
	size_t n_syms;
	char **plt_names;   /* "NAME@plt" of the synthetic PLT symbols, owned */
	size_t n_plt_names, cap_plt_names;

	/* The separate debug file's symbols (vg_image_adopt_debug_symbols). */
	bool debug_syms_looked;
	struct vg_image *debug_syms;
	bool fdes_loaded;
	struct vg_fde_table fdes;  /* .eh_frame's function ranges */
};

/* ------------------------------------------------------------------ */
/* opening                                                              */

static const char *class_name(unsigned char c)
{
	switch (c) {
	case ELFCLASS32:
		return "ELFCLASS32";
	case ELFCLASS64:
		return "ELFCLASS64";
	default:
		return "invalid class";
	}
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int truncated(struct vg_error *err, const char *label, const char *what,
		     uint64_t end, uint64_t size)
{
	return vg_error_set(err, -ENOEXEC,
			    "'%s' is truncated or corrupt: its %s end at byte %llu but the file has %llu bytes; use a complete copy of the file",
			    label, what, (unsigned long long)end,
			    (unsigned long long)size);
}

static int read_build_id_notes(Elf_Data *data, struct vg_image *img)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *d = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(d + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= sizeof(img->build_id)) {
			memcpy(img->build_id, d + desc_off, nh.n_descsz);
			img->build_id_len = nh.n_descsz;
			return 1;
		}
		off = next;
	}
	return 0;
}

static void find_build_id(struct vg_image *img, size_t n_phdr)
{
	struct vg_image_priv *p = img->priv;
	Elf_Scn *scn = NULL;

	for (size_t i = 0; i < n_phdr; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    !range_ok(ph.p_offset, ph.p_filesz, p->size))
			continue;
		d = elf_getdata_rawchunk(p->elf, (int64_t)ph.p_offset,
					 ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d && read_build_id_notes(d, img))
			return;
	}
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && read_build_id_notes(d, img))
			return;
	}
}

static int check_sections(struct vg_image *img, const char *label,
			  const GElf_Ehdr *eh, struct vg_error *err)
{
	struct vg_image_priv *p = img->priv;
	Elf_Scn *scn = NULL;
	size_t shnum;
	uint64_t tab;

	if (eh->e_shoff == 0)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return vg_error_set(err, -ENOEXEC,
				    "'%s' has section headers of %u bytes instead of %zu; the file is corrupt",
				    label, eh->e_shentsize, sizeof(Elf64_Shdr));
	/* Section 0 holds the real count when e_shnum is 0. */
	if (!range_ok(eh->e_shoff, sizeof(Elf64_Shdr), p->size))
		return truncated(err, label, "section headers",
				 eh->e_shoff + sizeof(Elf64_Shdr), p->size);
	/* As for program headers, trust the header's count, not libelf's
	 * clamped one; only 0 means "the count is in section 0". */
	shnum = eh->e_shnum;
	if (shnum == 0 && elf_getshdrnum(p->elf, &shnum) != 0)
		return vg_error_set(err, -ENOEXEC,
				    "cannot count the sections of '%s': %s; the file is corrupt",
				    label, elf_errmsg(-1));
	if (__builtin_mul_overflow((uint64_t)shnum, sizeof(Elf64_Shdr), &tab) ||
	    !range_ok(eh->e_shoff, tab, p->size))
		return truncated(err, label, "section headers",
				 eh->e_shoff + tab, p->size);
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return vg_error_set(err, -ENOEXEC,
					    "cannot read section %zu of '%s': %s; the file is corrupt",
					    elf_ndxscn(scn), label, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS &&
		    !range_ok(sh.sh_offset, sh.sh_size, p->size))
			return truncated(err, label, "sections",
					 sh.sh_offset + sh.sh_size, p->size);
	}
	return 0;
}

/* Parse the ELF behind img->priv (fd or buf already set).  lenient: the
 * bytes come from target memory, so PT_LOAD file ranges past the end are
 * expected.  *not_elf is set when the bytes are not ELF at all. */
static int parse(struct vg_image *img, const char *label, bool lenient,
		 bool *not_elf, struct vg_error *err)
{
	struct vg_image_priv *p = img->priv;
	const char *ident;
	size_t n_ident = 0, n_phdr;
	GElf_Ehdr eh;
	uint64_t tab;

	*not_elf = false;
	elf_version(EV_CURRENT);
	if (p->fd >= 0)
		p->elf = elf_begin(p->fd, ELF_C_READ_MMAP, NULL);
	else
		p->elf = elf_memory(p->buf, p->size);
	if (!p->elf)
		return vg_error_set(err, -ENOEXEC,
				    "cannot read '%s' as ELF: %s; the file is corrupt",
				    label, elf_errmsg(-1));

	ident = elf_getident(p->elf, &n_ident);
	if (elf_kind(p->elf) != ELF_K_ELF || !ident || n_ident < EI_NIDENT) {
		*not_elf = true;
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is not an ELF file; pass an executable or a shared library",
				    label);
	}
	if (ident[EI_CLASS] != ELFCLASS64)
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is not an ELF64 x86-64 file (%s); vigil reads 64-bit x86-64 programs only",
				    label, class_name(ident[EI_CLASS]));
	if (ident[EI_DATA] != ELFDATA2LSB)
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is not an ELF64 x86-64 file (not little-endian); vigil reads 64-bit x86-64 programs only",
				    label);
	if (p->size < sizeof(Elf64_Ehdr))
		return truncated(err, label, "ELF header",
				 sizeof(Elf64_Ehdr), p->size);
	if (!gelf_getehdr(p->elf, &eh))
		return vg_error_set(err, -ENOEXEC,
				    "cannot read the ELF header of '%s': %s; the file is corrupt",
				    label, elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64)
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is not an ELF64 x86-64 file (e_machine %u); vigil reads x86-64 programs only",
				    label, eh.e_machine);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is an ELF file of type %u, not an executable or shared library; pass a linked program",
				    label, eh.e_type);
	img->e_type = eh.e_type;

	/* libelf clamps the count to what fits in the file; the header's
	 * own count is what tells a truncated file. */
	n_phdr = eh.e_phnum;
	if (n_phdr == PN_XNUM && elf_getphdrnum(p->elf, &n_phdr) != 0)
		return vg_error_set(err, -ENOEXEC,
				    "cannot count the program headers of '%s': %s; the file is corrupt",
				    label, elf_errmsg(-1));
	if (n_phdr && eh.e_phentsize != sizeof(Elf64_Phdr))
		return vg_error_set(err, -ENOEXEC,
				    "'%s' has program headers of %u bytes instead of %zu; the file is corrupt",
				    label, eh.e_phentsize, sizeof(Elf64_Phdr));
	if (__builtin_mul_overflow((uint64_t)n_phdr, sizeof(Elf64_Phdr), &tab) ||
	    !range_ok(eh.e_phoff, tab, p->size))
		return truncated(err, label, "program headers",
				 eh.e_phoff + tab, p->size);

	for (size_t i = 0; i < n_phdr; i++) {
		GElf_Phdr ph;
		struct vg_load *l;

		if (!gelf_getphdr(p->elf, (int)i, &ph))
			return vg_error_set(err, -ENOEXEC,
					    "cannot read program header %zu of '%s': %s; the file is corrupt",
					    i, label, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD)
			continue;
		if (!lenient && !range_ok(ph.p_offset, ph.p_filesz, p->size))
			return truncated(err, label, "loadable segments",
					 ph.p_offset + ph.p_filesz, p->size);
		/* n_phdr * sizeof(Phdr) fits in the file, so this cannot
		 * overflow; realloc per load keeps the code short. */
		l = realloc(img->loads, (img->n_loads + 1) * sizeof(*l));
		if (!l)
			return vg_error_set(err, -ENOMEM,
					    "out of memory reading '%s'", label);
		img->loads = l;
		l += img->n_loads++;
		*l = (struct vg_load){
			.vaddr = ph.p_vaddr, .offset = ph.p_offset,
			.filesz = ph.p_filesz, .memsz = ph.p_memsz,
			.align = ph.p_align, .flags = ph.p_flags,
		};
	}

	if (!lenient) {
		int r = check_sections(img, label, &eh, err);

		if (r < 0)
			return r;
	}
	find_build_id(img, n_phdr);
	return 0;
}

static struct vg_image *image_new(void)
{
	struct vg_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->priv = calloc(1, sizeof(*img->priv));
	if (!img->priv) {
		free(img);
		return NULL;
	}
	img->priv->fd = -1;
	return img;
}

struct vg_image *vg_image_free(struct vg_image *img)
{
	struct vg_image_priv *p;

	if (!img)
		return NULL;
	p = img->priv;
	if (p) {
		if (p->elf)
			elf_end(p->elf);
		if (p->fd >= 0)
			close(p->fd);
		free(p->buf);
		free(p->syms);
		free(p->max_end);
		free(p->by_name);
		vg_image_free(p->debug_syms);
		for (size_t i = 0; i < p->n_plt_names; i++)
			free(p->plt_names[i]);
		free(p->plt_names);
		vg_fde_table_release(&p->fdes);
		free(p);
	}
	free(img->path);
	free(img->open_path);
	free(img->loads);
	free(img);
	return NULL;
}

/* Takes fd (closed on failure too). */
static int open_fd(int fd, const char *label, struct vg_image **out,
		   bool *not_elf, struct vg_error *err)
{
	struct vg_image *img;
	struct stat st;
	int r;

	*not_elf = false;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return vg_error_set(err, r, "cannot stat '%s': %s", label,
				    strerror(-r));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*not_elf = true;
		return vg_error_set(err, -ENOEXEC,
				    "'%s' is not a regular file; pass an executable or a shared library",
				    label);
	}
	img = image_new();
	if (!img) {
		close(fd);
		return vg_error_set(err, -ENOMEM, "out of memory opening '%s'",
				    label);
	}
	img->priv->fd = fd;
	img->priv->size = (uint64_t)st.st_size;
	img->dev = st.st_dev;
	img->inode = st.st_ino;
	img->open_path = strdup(label);
	img->path = strdup("");
	if (!img->open_path || !img->path) {
		vg_image_free(img);
		return vg_error_set(err, -ENOMEM, "out of memory opening '%s'",
				    label);
	}
	r = parse(img, label, false, not_elf, err);
	if (r < 0) {
		vg_image_free(img);
		return r;
	}
	*out = img;
	return 0;
}

int vg_image_open_path(const char *path, struct vg_image **out,
		       struct vg_error *err)
{
	struct vg_image *img = NULL;
	bool not_elf;
	int fd, r;

	*out = NULL;
	/* O_NONBLOCK: a FIFO given as --bin must not hang the open; open_fd
	 * then refuses anything but a regular file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		return vg_error_set(err, r, "cannot open '%s': %s%s", path,
				    strerror(-r),
				    r == -ENOENT ? "; check the path" :
				    (r == -EACCES || r == -EPERM) ?
				    "; run as a user who can read it" : "");
	}
	r = open_fd(fd, path, &img, &not_elf, err);
	if (r < 0)
		return r;
	free(img->path);
	img->path = strdup(path);
	if (!img->path) {
		vg_image_free(img);
		return vg_error_set(err, -ENOMEM, "out of memory opening '%s'",
				    path);
	}
	img->via = VG_VIA_PATH;
	*out = img;
	return 0;
}

/* ------------------------------------------------------------------ */
/* .dynsym through PT_DYNAMIC                                           */

/* File offset of the n bytes at static address v inside one PT_LOAD's file
 * bytes and inside the buffer.  A pointer read from a loaded .dynamic may
 * already be relocated (glibc adds the load bias in place on x86-64), so a
 * value that no PT_LOAD contains is tried again minus the bias. */
static bool dyn_offset(const struct vg_image *img, uint64_t v, uint64_t n,
		       uint64_t *off)
{
	for (int pass = 0; pass < 2; pass++) {
		uint64_t a = v;

		if (pass == 1) {
			if (!img->bias || v < img->bias)
				break;
			a = v - img->bias;
		}
		for (size_t i = 0; i < img->n_loads; i++) {
			const struct vg_load *l = &img->loads[i];

			if (a < l->vaddr || !range_ok(a - l->vaddr, n, l->filesz))
				continue;
			*off = l->offset + (a - l->vaddr);
			if (range_ok(*off, n, img->priv->size))
				return true;
		}
	}
	return false;
}

/* DT_HASH: nchain is the number of symbols. */
static uint64_t count_hash(const char *buf, uint64_t size, uint64_t off)
{
	uint32_t w[2];

	if (!range_ok(off, sizeof(w), size))
		return 0;
	memcpy(w, buf + off, sizeof(w));
	return w[1];
}

/* DT_GNU_HASH: the highest symbol index is the end of the chain of the
 * highest bucket (its last entry has bit 0 set). */
static uint64_t count_gnu_hash(const char *buf, uint64_t size, uint64_t off)
{
	uint32_t h[4], maxb = 0;
	uint64_t buckets, chains;

	if (!range_ok(off, sizeof(h), size))
		return 0;
	memcpy(h, buf + off, sizeof(h));
	/* nbuckets h[0], symoffset h[1], bloom words h[2] (8 bytes each) */
	buckets = off + sizeof(h) + (uint64_t)h[2] * 8;
	if (!range_ok(buckets, (uint64_t)h[0] * 4, size))
		return 0;
	for (uint32_t i = 0; i < h[0]; i++) {
		uint32_t b;

		memcpy(&b, buf + buckets + 4 * (uint64_t)i, 4);
		if (b > maxb)
			maxb = b;
	}
	if (maxb < h[1])
		return h[1];
	chains = buckets + 4 * (uint64_t)h[0];
	for (uint64_t k = maxb;; k++) {
		uint64_t at = chains + 4 * (k - h[1]);
		uint32_t c;

		if (!range_ok(at, 4, size))
			return 0;
		memcpy(&c, buf + at, 4);
		if (c & 1)
			return k + 1;
	}
}

static bool has_symbol_sections(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			return true;
	}
	return false;
}

/* An in-memory image without symbol sections: append section headers
 * [NULL, .dynsym, .dynstr] describing what PT_DYNAMIC points at and reopen
 * the buffer.  Needs img->bias when the bytes come from a running process.
 * Returns 1 if done, 0 if not applicable (nothing changed), -ENOMEM. */
static int add_dynamic_symbols(struct vg_image *img)
{
	struct vg_image_priv *p = img->priv;
	uint64_t dyn_off = 0, dyn_size = 0, sym_off, str_off, hash_off, n = 0;
	uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnu_hash = 0;
	uint64_t syment = sizeof(Elf64_Sym), base, new_size;
	Elf64_Shdr sh[3];
	Elf64_Ehdr eh;
	size_t n_phdr;
	char *nb;
	Elf *ne;

	if (!p->buf || !p->elf || p->syms_loaded || has_symbol_sections(p->elf) ||
	    elf_getphdrnum(p->elf, &n_phdr) != 0)
		return 0;
	for (size_t i = 0; i < n_phdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(p->elf, (int)i, &ph) && ph.p_type == PT_DYNAMIC) {
			dyn_off = ph.p_offset;
			dyn_size = ph.p_filesz;
			break;
		}
	}
	if (!dyn_size || !range_ok(dyn_off, dyn_size, p->size))
		return 0;
	for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= dyn_size; o += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;

		memcpy(&d, p->buf + dyn_off + o, sizeof(d));
		if (d.d_tag == DT_NULL)
			break;
		switch (d.d_tag) {
		case DT_SYMTAB:
			symtab = d.d_un.d_ptr;
			break;
		case DT_STRTAB:
			strtab = d.d_un.d_ptr;
			break;
		case DT_STRSZ:
			strsz = d.d_un.d_val;
			break;
		case DT_SYMENT:
			syment = d.d_un.d_val;
			break;
		case DT_HASH:
			hash = d.d_un.d_ptr;
			break;
		case DT_GNU_HASH:
			gnu_hash = d.d_un.d_ptr;
			break;
		default:
			break;
		}
	}
	if (!symtab || !strtab || !strsz || syment != sizeof(Elf64_Sym) ||
	    !dyn_offset(img, symtab, sizeof(Elf64_Sym), &sym_off) ||
	    !dyn_offset(img, strtab, 1, &str_off))
		return 0;
	if (gnu_hash && dyn_offset(img, gnu_hash, 16, &hash_off))
		n = count_gnu_hash(p->buf, p->size, hash_off);
	if (!n && hash && dyn_offset(img, hash, 8, &hash_off))
		n = count_hash(p->buf, p->size, hash_off);
	/* No hash table: ld -z separate lays .dynstr right after .dynsym. */
	if (!n && str_off > sym_off)
		n = (str_off - sym_off) / sizeof(Elf64_Sym);
	if (n > (p->size - sym_off) / sizeof(Elf64_Sym))
		n = (p->size - sym_off) / sizeof(Elf64_Sym);
	if (strsz > p->size - str_off)
		strsz = p->size - str_off;
	if (n < 2)
		return 0;

	base = (p->size + 7) & ~(uint64_t)7;
	new_size = base + sizeof(sh);
	nb = calloc(1, new_size);
	if (!nb)
		return -ENOMEM;
	memcpy(nb, p->buf, p->size);
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){
		.sh_type = SHT_DYNSYM, .sh_flags = SHF_ALLOC,
		.sh_offset = sym_off, .sh_size = n * sizeof(Elf64_Sym),
		.sh_link = 2, .sh_info = 1, .sh_addralign = 8,
		.sh_entsize = sizeof(Elf64_Sym),
	};
	sh[2] = (Elf64_Shdr){
		.sh_type = SHT_STRTAB, .sh_flags = SHF_ALLOC,
		.sh_offset = str_off, .sh_size = strsz, .sh_addralign = 1,
	};
	memcpy(nb + base, sh, sizeof(sh));
	/* parse() checked ELF64 little-endian x86-64: the host layout. */
	memcpy(&eh, nb, sizeof(eh));
	eh.e_shoff = base;
	eh.e_shnum = 3;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shstrndx = SHN_UNDEF;
	memcpy(nb, &eh, sizeof(eh));
	ne = elf_memory(nb, new_size);
	if (!ne) {
		free(nb);
		return 0;
	}
	elf_end(p->elf);
	free(p->buf);
	p->elf = ne;
	p->buf = nb;
	p->size = new_size;
	img->dynsym_from_dynamic = true;
	return 1;
}

/* Takes buf (freed on failure too). */
static int open_buffer(char *buf, size_t len, const char *label, bool lenient,
		       struct vg_image **out, bool *not_elf,
		       struct vg_error *err)
{
	struct vg_image *img = image_new();
	int r;

	*not_elf = false;
	if (!img || !(img->open_path = strdup(label ? label : "")) ||
	    !(img->path = strdup(""))) {
		free(buf);
		vg_image_free(img);
		return vg_error_set(err, -ENOMEM, "out of memory opening '%s'",
				    label ? label : "");
	}
	img->priv->buf = buf;
	img->priv->size = len;
	r = parse(img, img->open_path, lenient, not_elf, err);
	if (r < 0) {
		vg_image_free(img);
		return r;
	}
	*out = img;
	return 0;
}

int vg_image_open_memory(const void *buf, size_t len, const char *label,
			 struct vg_image **out, struct vg_error *err)
{
	char *copy;
	bool not_elf;
	int r;

	*out = NULL;
	if (!label)
		label = "(memory)";
	/* elf_memory() wants a writable buffer and the image must outlive
	 * the caller's: always copy. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return vg_error_set(err, -ENOMEM,
				    "out of memory copying %zu bytes of '%s'",
				    len, label);
	if (len)
		memcpy(copy, buf, len);
	r = open_buffer(copy, len, label, false, out, &not_elf, err);
	if (r < 0)
		return r;
	if (add_dynamic_symbols(*out) == -ENOMEM) {
		*out = vg_image_free(*out);
		return vg_error_set(err, -ENOMEM,
				    "out of memory reading the symbols of '%s'",
				    label);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* symbols                                                              */

static bool wanted_type(unsigned t)
{
	return t == STT_FUNC || t == STT_OBJECT || t == STT_GNU_IFUNC ||
	       t == STT_NOTYPE;
}

/* Which of several names for one address a person expects: a global
 * over a local alias (malloc, not __GI___libc_malloc), the default or no
 * symbol version over a compat one (clock_nanosleep@@GLIBC_2.17, not
 * @GLIBC_2.2.5), a public name over an underscored one. */
static uint8_t alias_rank(const GElf_Sym *s, const char *name)
{
	unsigned bind = GELF_ST_BIND(s->st_info);
	const char *at = strchr(name, '@');
	uint8_t r = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;

	r = (uint8_t)(r * 8);
	if (!at || at[1] == '@')
		r += 4;
	if (name[0] != '_')
		r += 2;
	return r;
}

static int grow_syms(struct vg_image_priv *p, size_t *cap)
{
	size_t nc = *cap ? *cap * 2 : 256, bytes;
	struct sym *ns;

	if (__builtin_mul_overflow(nc, sizeof(*ns), &bytes))
		return -ENOMEM;
	ns = realloc(p->syms, bytes);
	if (!ns)
		return -ENOMEM;
	p->syms = ns;
	*cap = nc;
	return 0;
}

static int add_table(struct vg_image_priv *p, Elf_Scn *scn,
		     const GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || sh->sh_entsize != sizeof(Elf64_Sym))
		return 0;
	n = d->d_size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Shdr tsh;
		Elf_Scn *target;
		const char *name;
		struct sym *e;

		if (!gelf_getsym(d, (int)i, &s) ||
		    !wanted_type(GELF_ST_TYPE(s.st_info)) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(p->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (p->n_syms == *cap && grow_syms(p, cap) < 0)
			return -ENOMEM;
		e = &p->syms[p->n_syms++];
		e->vaddr = s.st_value;
		e->size = s.st_size;
		if (e->size > UINT64_MAX - e->vaddr)
			e->size = UINT64_MAX - e->vaddr;
		e->name = name;
		e->dyn = sh->sh_type == SHT_DYNSYM;
		e->ifunc = GELF_ST_TYPE(s.st_info) == STT_GNU_IFUNC;
		e->rank = alias_rank(&s, name);
		e->limit = e->vaddr + 1;
		target = elf_getscn(p->elf, s.st_shndx);
		if (target && gelf_getshdr(target, &tsh) &&
		    tsh.sh_addr <= e->vaddr && tsh.sh_size <= UINT64_MAX - tsh.sh_addr &&
		    tsh.sh_addr + tsh.sh_size > e->vaddr)
			e->limit = tsh.sh_addr + tsh.sh_size;
	}
	return 0;
}

/* Equal starts: bigger first, .dynsym before .symtab, so the backward walk
 * in symbol_at meets the innermost, .symtab copy first. */
static int cmp_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	int c;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	/* Lookups take the last of equal (vaddr, size): the best alias. */
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	/* The .symtab copy of a name last: the dedup below keeps it. */
	return x->dyn != y->dyn ? (x->dyn ? -1 : 1) : 0;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct sym *syms = ctx;
	const struct sym *x = &syms[*(const size_t *)a];
	const struct sym *y = &syms[*(const size_t *)b];
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->dyn != y->dyn)
		return x->dyn ? 1 : -1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* A section's name, or "". */
static const char *scn_name(Elf *elf, const GElf_Shdr *sh)
{
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return "";
	n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n ? n : "";
}

struct got_slot {
	uint64_t addr;
	const char *name;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* GOT slots that a dynamic relocation binds to a named symbol:
 * R_X86_64_JUMP_SLOT (.rela.plt, lazy or not) and R_X86_64_GLOB_DAT
 * (.rela.dyn, what .plt.got entries jump through). */
static int got_slots(struct vg_image_priv *p, struct got_slot **out, size_t *n_out)
{
	struct got_slot *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *symd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || !(d = elf_getdata(scn, NULL)) ||
		    !(symscn = elf_getscn(p->elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
		    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB) ||
		    !(symd = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Rela); i++) {
			GElf_Rela rel;
			GElf_Sym sym;
			unsigned type;
			const char *name;

			if (!gelf_getrela(d, (int)i, &rel))
				continue;
			type = (unsigned)GELF_R_TYPE(rel.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !GELF_R_SYM(rel.r_info) ||
			    !gelf_getsym(symd, (int)GELF_R_SYM(rel.r_info), &sym) ||
			    !(name = elf_strptr(p->elf, symsh.sh_link, sym.st_name)) || !*name)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct got_slot *nv;

				if (nc > SIZE_MAX / sizeof(*nv) || !(nv = realloc(v, nc * sizeof(*nv)))) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (struct got_slot){ rel.r_offset, name };
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_slot);
	*out = v;
	*n_out = n;
	return 0;
}

static const char *slot_name(const struct got_slot *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == addr ? v[lo].name : NULL;
}

/* PLT stubs have no symbol: name each "NAME@plt" as binutils and gdb do.
 * Whatever the layout (.plt with lazy binding, .plt.sec with IBT, .plt.got
 * for -z now), the stub a call lands on holds `jmp *disp(%rip)` (ff 25,
 * maybe after endbr64 or a bnd prefix) through the GOT slot its symbol's
 * relocation names. */
static int add_plt_symbols(struct vg_image_priv *p, size_t *cap)
{
	struct got_slot *slots = NULL;
	size_t n_slots = 0;
	Elf_Scn *scn = NULL;
	int r;

	r = got_slots(p, &slots, &n_slots);
	if (r < 0 || !n_slots)
		return r;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *sn;
		uint64_t ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		sn = scn_name(p->elf, &sh);
		if (strcmp(sn, ".plt") != 0 && strcmp(sn, ".plt.sec") != 0 &&
		    strcmp(sn, ".plt.got") != 0)
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf || d->d_size < 8)
			continue;
		ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize
		      : strcmp(sn, ".plt.got") == 0 ? 8 : 16;
		for (uint64_t at = 0; at + ent <= d->d_size; at += ent) {
			const uint8_t *e = (const uint8_t *)d->d_buf + at;
			const char *name = NULL;
			struct sym *s;
			char *full;

			for (uint64_t k = 0; !name && k + 6 <= ent; k++) {
				int32_t disp;

				if (e[k] != 0xff || e[k + 1] != 0x25)
					continue;
				memcpy(&disp, e + k + 2, 4);
				name = slot_name(slots, n_slots,
						 sh.sh_addr + at + k + 6 + (uint64_t)(int64_t)disp);
			}
			if (!name)
				continue;
			if (asprintf(&full, "%s@plt", name) < 0)
				goto oom;
			if (VG_GROW(p->plt_names, p->cap_plt_names, p->n_plt_names + 1) ||
			    (p->n_syms == *cap && grow_syms(p, cap) < 0)) {
				free(full);
				goto oom;
			}
			p->plt_names[p->n_plt_names++] = full;
			s = &p->syms[p->n_syms++];
			*s = (struct sym){ .vaddr = sh.sh_addr + at, .size = ent,
					   .limit = sh.sh_addr + at + ent, .name = full,
					   .rank = 0 };
		}
	}
	free(slots);
	return 0;
oom:
	free(slots);
	return -ENOMEM;
}

static int load_symbols(struct vg_image_priv *p)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, w = 0, bytes;
	int r = 0;

	if (p->syms_loaded)
		return p->n_syms ? 0 : -ENOENT;
	p->syms_loaded = true;
	if (!p->elf)
		return -ENOENT;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		r = add_table(p, scn, &sh, &cap);
		if (r < 0)
			goto fail;
	}
	r = add_plt_symbols(p, &cap);
	if (r < 0)
		goto fail;
	if (!p->n_syms)
		return -ENOENT;

	qsort(p->syms, p->n_syms, sizeof(*p->syms), cmp_addr);
	/* .dynsym repeats most of .symtab: keep one of each. */
	for (size_t i = 0; i < p->n_syms; i++) {
		if (w && p->syms[w - 1].vaddr == p->syms[i].vaddr &&
		    p->syms[w - 1].size == p->syms[i].size &&
		    strcmp(p->syms[w - 1].name, p->syms[i].name) == 0) {
			p->syms[w - 1] = p->syms[i]; /* the .symtab one */
			continue;
		}
		p->syms[w++] = p->syms[i];
	}
	p->n_syms = w;

	r = -ENOMEM;
	if (__builtin_mul_overflow(p->n_syms, sizeof(*p->max_end), &bytes) ||
	    !(p->max_end = malloc(bytes)) ||
	    !(p->by_name = malloc(bytes)))
		goto fail;
	for (size_t i = 0; i < p->n_syms; i++) {
		uint64_t e = p->syms[i].size ? p->syms[i].vaddr + p->syms[i].size : 0;

		p->max_end[i] = i && p->max_end[i - 1] > e ? p->max_end[i - 1] : e;
		p->by_name[i] = i;
	}
	qsort_r(p->by_name, p->n_syms, sizeof(*p->by_name), cmp_name, p->syms);
	return 0;
fail:
	free(p->syms);
	free(p->max_end);
	free(p->by_name);
	p->syms = NULL;
	p->max_end = NULL;
	p->by_name = NULL;
	p->n_syms = 0;
	return r;
}

static void fill_sym(const struct sym *s, struct vg_symbol *out)
{
	out->vaddr = s->vaddr;
	out->size = s->size;
	out->name = s->name;
	out->from_dynsym = s->dyn;
	out->ifunc = s->ifunc;
}

/* Index into by_name of the first name >= name. */
static size_t name_lower_bound(const struct vg_image_priv *p, const char *name)
{
	size_t lo = 0, hi = p->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(p->syms[p->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* name exactly, or (clones) a GCC clone of it, "name.part.0",
 * "name.isra.0", "name.constprop.0", whose DWARF name vigil prints as
 * name: the first such symbol in name order. */
static int find_by_name(const struct vg_image *img, const char *name, bool clone,
			struct vg_symbol *sym)
{
	struct vg_image_priv *p = img->priv;
	size_t lo, n = strlen(name);

	if (load_symbols(p) < 0)
		return -ENOENT;
	lo = name_lower_bound(p, name);
	for (; lo < p->n_syms; lo++) {
		const char *c = p->syms[p->by_name[lo]].name;

		if (strncmp(c, name, n) != 0)
			break;
		if (c[n] == '\0' && !clone) {
			fill_sym(&p->syms[p->by_name[lo]], sym);
			return 0;
		}
		if (clone && c[n] == '.') {
			fill_sym(&p->syms[p->by_name[lo]], sym);
			return 0;
		}
		if (!clone)
			break;
	}
	return -ENOENT;
}

int vg_image_symbol_by_name(const struct vg_image *img, const char *name,
			    struct vg_symbol *sym)
{
	if (!img || !img->priv || !name || !*name)
		return -ENOENT;
	if (find_by_name(img, name, false, sym) == 0 ||
	    find_by_name(img, name, true, sym) == 0)
		return 0;
	return -ENOENT;
}

const struct vg_image *vg_image_debug_symbols(const struct vg_image *img, bool *looked)
{
	*looked = img && img->priv && img->priv->debug_syms_looked;
	return *looked ? img->priv->debug_syms : NULL;
}

void vg_image_adopt_debug_symbols(const struct vg_image *img, struct vg_image *dbg)
{
	if (!img || !img->priv || img->priv->debug_syms_looked) {
		vg_image_free(dbg);
		return;
	}
	img->priv->debug_syms_looked = true;
	img->priv->debug_syms = dbg;
}

static bool slot_reloc(const struct vg_image_priv *p, const GElf_Rela *r,
		       Elf_Data *syms, size_t strndx, const char *name,
		       uint64_t resolver_vaddr)
{
	unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
	GElf_Sym s;
	const char *n;

	if (type == R_X86_64_IRELATIVE)
		return resolver_vaddr != UINT64_MAX &&
		       (uint64_t)r->r_addend == resolver_vaddr;
	if (!name || !syms || GELF_R_SYM(r->r_info) == 0 ||
	    (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
	     type != R_X86_64_64) ||
	    !gelf_getsym(syms, (int)GELF_R_SYM(r->r_info), &s))
		return false;
	n = elf_strptr(p->elf, strndx, s.st_name);
	return n && strcmp(n, name) == 0;
}

int vg_image_function_slots(const struct vg_image *img, const char *name,
			    uint64_t resolver_vaddr, uint64_t **slots, size_t *n)
{
	struct vg_image_priv *p = img ? img->priv : NULL;
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*slots = NULL;
	*n = 0;
	if (!p || !p->elf)
		return 0;
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Scn *link;
		Elf_Data *d, *syms = NULL;
		size_t strndx = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || !(d = elf_getdata(scn, NULL)))
			continue;
		link = elf_getscn(p->elf, sh.sh_link);
		if (link && gelf_getshdr(link, &lsh) && lsh.sh_type == SHT_DYNSYM &&
		    lsh.sh_entsize == sizeof(Elf64_Sym)) {
			syms = elf_getdata(link, NULL);
			strndx = lsh.sh_link;
		}
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Rela); i++) {
			GElf_Rela r;

			if (!gelf_getrela(d, (int)i, &r) ||
			    !slot_reloc(p, &r, syms, strndx, name, resolver_vaddr))
				continue;
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 8;
				uint64_t *ns = reallocarray(*slots, nc, sizeof(**slots));

				if (!ns) {
					free(*slots);
					*slots = NULL;
					*n = 0;
					return -ENOMEM;
				}
				*slots = ns;
				cap = nc;
			}
			(*slots)[(*n)++] = r.r_offset;
		}
	}
	return 0;
}

bool vg_image_has_tls_symbol(const struct vg_image *img, const char *name)
{
	Elf_Scn *scn = NULL;

	if (!img || !img->priv || !img->priv->elf || !name)
		return false;
	/* A linear scan: only the error path of a failed name lookup asks. */
	while ((scn = elf_nextscn(img->priv->elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize != sizeof(Elf64_Sym) || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < d->d_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym sy;
			const char *n;

			if (gelf_getsym(d, (int)i, &sy) && GELF_ST_TYPE(sy.st_info) == STT_TLS &&
			    (n = elf_strptr(img->priv->elf, sh.sh_link, sy.st_name)) &&
			    strcmp(n, name) == 0)
				return true;
		}
	}
	return false;
}

/* How many symbols start at or before vaddr (syms is sorted by address). */
static size_t syms_starting_by(const struct vg_image_priv *p, uint64_t vaddr)
{
	size_t lo = 0, hi = p->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->syms[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vg_image_symbol_at(const struct vg_image *img, uint64_t vaddr,
		       struct vg_symbol *sym)
{
	struct vg_image_priv *p;
	size_t lo;

	if (!img || !img->priv || load_symbols(img->priv) < 0)
		return -ENOENT;
	p = img->priv;
	lo = syms_starting_by(p, vaddr);
	/* Sized symbols first: the nearest start that still covers vaddr. */
	for (size_t k = lo; k > 0 && p->max_end[k - 1] > vaddr; k--) {
		const struct sym *s = &p->syms[k - 1];

		if (s->size && vaddr < s->vaddr + s->size) {
			fill_sym(s, sym);
			return 0;
		}
	}
	/* Else an unsized label right before vaddr, in the same section and
	 * with no sized symbol in between. */
	for (size_t k = lo; k > 0; k--) {
		const struct sym *s = &p->syms[k - 1];

		if (s->size)
			break;
		if (vaddr < s->limit) {
			fill_sym(s, sym);
			return 0;
		}
		break;
	}
	return -ENOENT;
}

/* The function ranges of .eh_frame, read on first use.  An image without
 * section headers (rebuilt from memory) has none: every lookup misses. */
static void load_fdes(struct vg_image_priv *p)
{
	Elf_Scn *scn = NULL;

	if (p->fdes_loaded)
		return;
	p->fdes_loaded = true;
	while (p->elf && (scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    strcmp(scn_name(p->elf, &sh), ".eh_frame") != 0)
			continue;
		if ((d = elf_getdata(scn, NULL)) && d->d_buf)
			vg_fde_table_build(d->d_buf, d->d_size, sh.sh_addr, &p->fdes);
		return;
	}
}

int vg_image_function_at(const struct vg_image *img, uint64_t vaddr,
			 uint64_t *start, uint64_t *end)
{
	struct vg_fde_range r;

	if (!img || !img->priv)
		return -ENOENT;
	load_fdes(img->priv);
	if (!vg_fde_table_find(&img->priv->fdes, vaddr, &r))
		return -ENOENT;
	*start = r.start;
	*end = r.end;
	return 0;
}

/* ------------------------------------------------------------------ */
/* a target's images                                                    */

struct group {
	uint32_t major, minor;
	uint64_t inode;
	size_t *idx;        /* region indices, ascending start */
	size_t n;
};

static bool region_is_file(const struct vg_region *r)
{
	return (r->kind == VG_REGION_FILE || r->kind == VG_REGION_MEMFD) &&
	       r->inode != 0;
}

static bool same_file(const struct stat *st, const struct group *g)
{
	return major(st->st_dev) == g->major && minor(st->st_dev) == g->minor &&
	       (uint64_t)st->st_ino == g->inode;
}

/* Rebuild the file from the target's readable mappings of it. */
static int open_memory_route(struct vg_target *t, const struct vg_maps *maps,
			     struct vg_mem *mem, const struct group *g,
			     struct vg_image **out, bool *not_elf)
{
	uint64_t len = 0, unread = 0;
	bool have_header = false;
	char label[96];
	char *buf;
	int r;

	*not_elf = false;
	if (!mem)
		return -ENOENT;
	for (size_t i = 0; i < g->n; i++) {
		const struct vg_region *reg = &maps->regions[g->idx[i]];
		uint64_t end;

		if (!reg->readable)
			continue;
		if (reg->offset == 0)
			have_header = true;
		if (__builtin_add_overflow(reg->offset, reg->end - reg->start, &end))
			continue;
		if (end > len)
			len = end;
	}
	if (!have_header || len < sizeof(Elf64_Ehdr))
		return -ENOENT;
	if (len > MEM_IMAGE_MAX)
		len = MEM_IMAGE_MAX;
	/* Zeros stand only for file ranges nothing maps; a mapping that cannot
	 * be read is counted and said, never passed off as zeros. */
	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const struct vg_region *reg = &maps->regions[g->idx[i]];
		struct vg_mem_result res;
		uint64_t n;

		if (!reg->readable || reg->offset >= len)
			continue;
		n = reg->end - reg->start;
		if (n > len - reg->offset)
			n = len - reg->offset;
		vg_mem_read(mem, reg->start, buf + reg->offset, n, &res, NULL);
		if (reg->offset == 0 && res.bytes_read < sizeof(Elf64_Ehdr)) {
			free(buf);
			/* No header: the route failed, not "not ELF"; a refusal
			 * stays a refusal so the warning can say why. */
			return res.error == -EPERM || res.error == -EACCES ? res.error : -EIO;
		}
		unread += n - res.bytes_read;
	}
	if (unread)
		vg_target_warn(t, "'%s' rebuilt from target memory: %llu bytes of its mappings could not be read; its symbols may be incomplete",
			       maps->regions[g->idx[0]].path, (unsigned long long)unread);
	/* Section headers sit past the last PT_LOAD and are not mapped: drop
	 * them rather than parse zeros. */
	if (len >= sizeof(Elf64_Ehdr) && memcmp(buf, ELFMAG, SELFMAG) == 0 &&
	    buf[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		uint64_t tab;

		memcpy(&eh, buf, sizeof(eh));
		if (eh.e_shoff &&
		    (__builtin_mul_overflow((uint64_t)eh.e_shnum, sizeof(Elf64_Shdr), &tab) ||
		     !range_ok(eh.e_shoff, tab, len) || eh.e_shnum == 0)) {
			eh.e_shoff = 0;
			eh.e_shnum = 0;
			eh.e_shstrndx = 0;
			memcpy(buf, &eh, sizeof(eh));
		}
	}
	snprintf(label, sizeof(label), "pid %d memory at 0x%llx", (int)t->pid,
		 (unsigned long long)maps->regions[g->idx[0]].start);
	r = open_buffer(buf, len, label, true, out, not_elf, NULL);
	return r;
}

static int set_strings(struct vg_image *img, const struct vg_region *r)
{
	free(img->path);
	img->path = strdup(r->path ? r->path : "");
	return img->path ? 0 : -ENOMEM;
}

/* The anonymous tail of .bss: a PT_LOAD mapped up to hi whose memory
 * size reaches further.  Only with a bias (a guess says so elsewhere). */
static void set_mem_hi(struct vg_image *img, uint64_t page)
{
	img->mem_hi = img->hi;
	if (img->bias_method == VG_BIAS_NONE)
		return;
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];
		uint64_t start, end;

		if (__builtin_add_overflow(img->bias, l->vaddr, &start) ||
		    __builtin_add_overflow(start, l->memsz, &end) ||
		    __builtin_add_overflow(end, page - 1, &end))
			continue;
		end &= ~(page - 1);
		/* Its file part must be what ends the image's mappings. */
		if (start < img->hi && end > img->mem_hi && start >= img->lo)
			img->mem_hi = end;
	}
}

static void compute_bias(struct vg_image *img, const struct vg_maps *maps,
			 const struct group *g, uint64_t page)
{
	struct vg_mapping *mp;
	bool any = false;

	img->lo = UINT64_MAX;
	img->hi = 0;
	mp = calloc(g->n, sizeof(*mp));
	if (mp) {
		for (size_t i = 0; i < g->n; i++) {
			const struct vg_region *r = &maps->regions[g->idx[i]];

			mp[i] = (struct vg_mapping){ r->start, r->end, r->offset };
		}
		if (vg_loadbias_compute(img->loads, img->n_loads, mp, g->n, page,
					&img->bias, &img->bias_method) < 0)
			img->bias_method = VG_BIAS_NONE;
		/* The range is what the loader mapped, not every mapping of
		 * the file (a program may mmap() its own binary too). */
		for (size_t i = 0; img->bias_method == VG_BIAS_EXACT && i < g->n; i++) {
			if (!vg_loadbias_explains(img->loads, img->n_loads, &mp[i],
						  page, img->bias))
				continue;
			any = true;
			if (mp[i].start < img->lo)
				img->lo = mp[i].start;
			if (mp[i].end > img->hi)
				img->hi = mp[i].end;
		}
		free(mp);
	}
	if (!any) {
		for (size_t i = 0; i < g->n; i++) {
			const struct vg_region *r = &maps->regions[g->idx[i]];

			if (r->start < img->lo)
				img->lo = r->start;
			if (r->end > img->hi)
				img->hi = r->end;
		}
	}
	set_mem_hi(img, page);
}

static int cmp_image_lo(const void *a, const void *b)
{
	const struct vg_image *x = *(const struct vg_image *const *)a;
	const struct vg_image *y = *(const struct vg_image *const *)b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void free_groups(struct group *gs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(gs[i].idx);
	free(gs);
}

static int make_groups(const struct vg_maps *maps, struct group **out,
		       size_t *n_out)
{
	struct group *gs = NULL;
	size_t n = 0;

	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];
		struct group *g = NULL;
		size_t *ni;

		if (!region_is_file(r))
			continue;
		for (size_t k = 0; k < n; k++) {
			if (gs[k].major == r->dev_major && gs[k].minor == r->dev_minor &&
			    gs[k].inode == r->inode) {
				g = &gs[k];
				break;
			}
		}
		if (!g) {
			/* n < maps->n, so this cannot overflow */
			struct group *ng = realloc(gs, (n + 1) * sizeof(*gs));

			if (!ng)
				goto oom;
			gs = ng;
			g = &gs[n++];
			*g = (struct group){ r->dev_major, r->dev_minor, r->inode, NULL, 0 };
		}
		ni = realloc(g->idx, (g->n + 1) * sizeof(*g->idx));
		if (!ni)
			goto oom;
		g->idx = ni;
		g->idx[g->n++] = i;
	}
	*out = gs;
	*n_out = n;
	return 0;
oom:
	free_groups(gs, n);
	return -ENOMEM;
}

/* One file loaded twice (dlmopen(LM_ID_NEWLM) of a library already
 * loaded, a second ld.so) is two mapping sets of one (device, inode), each
 * with its own bias.  A set starts at a mapping of file offset 0 (the
 * loader maps the ELF header first, in address order the lowest); a run
 * that is a real load has at least two mappings, one executable.  With two
 * or more such runs the group becomes one group per run; runs that are not
 * loads (a program mapping its own file, fx_selfmap) join the run before
 * them, or the first.  Returns 0 or -ENOMEM. */
static int split_mapping_sets(const struct vg_maps *maps, struct group **gs,
			      size_t *n)
{
	for (size_t k = 0; k < *n; k++) {
		struct group *g = &(*gs)[k];
		size_t starts[64], n_runs = 0, n_loads = 0;
		bool is_load[64];

		for (size_t i = 0; i < g->n && n_runs < 64; i++)
			if (i == 0 || maps->regions[g->idx[i]].offset == 0)
				starts[n_runs++] = i;
		if (n_runs < 2)
			continue;
		for (size_t r = 0; r < n_runs; r++) {
			size_t end = r + 1 < n_runs ? starts[r + 1] : g->n;
			bool exec = false;

			for (size_t i = starts[r]; i < end; i++)
				exec |= maps->regions[g->idx[i]].executable;
			is_load[r] = exec && end - starts[r] >= 2;
			n_loads += is_load[r];
		}
		if (n_loads < 2)
			continue;
		/* Group k keeps the first load (and what precedes it); each
		 * later load starts a new group at the end; a run that is not
		 * a load joins the load before it. */
		{
			struct group proto = *g;
			size_t dest[64], cur = k;
			bool first = true;

			for (size_t r = 0; r < n_runs; r++) {
				if (is_load[r] && !first) {
					struct group *ng = realloc(*gs, (*n + 1) * sizeof(**gs));

					if (!ng)
						return -ENOMEM;
					*gs = ng;
					(*gs)[*n] = (struct group){ proto.major, proto.minor, proto.inode, NULL, 0 };
					cur = (*n)++;
				}
				if (is_load[r])
					first = false;
				dest[r] = cur;
			}
			(*gs)[k].idx = NULL;
			(*gs)[k].n = 0;
			for (size_t r = 0; r < n_runs; r++) {
				size_t end = r + 1 < n_runs ? starts[r + 1] : proto.n;
				struct group *dst = &(*gs)[dest[r]];

				for (size_t i = starts[r]; i < end; i++) {
					size_t *ni = realloc(dst->idx, (dst->n + 1) * sizeof(*ni));

					if (!ni) {
						free(proto.idx);
						return -ENOMEM;
					}
					dst->idx = ni;
					dst->idx[dst->n++] = proto.idx[i];
				}
			}
			free(proto.idx);
		}
	}
	return 0;
}

static char *hex_id(const uint8_t *id, size_t len, char *buf, size_t size)
{
	size_t w = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < len && w + 3 <= size; i++)
		w += (size_t)snprintf(buf + w, size - w, "%02x", id[i]);
	return buf;
}

/* The build-id the kernel reads from the file mapped at first->start, if
 * that mapping is still the group's file. */
static void kernel_build_id(const struct vg_procmap *pm,
			    const struct vg_region *first, const struct group *g,
			    uint8_t *bid, size_t *len)
{
	struct vg_region r;

	*len = 0;
	if (vg_procmap_query(pm, first->start, &r, bid, len, NULL) < 0)
		return;
	if (r.start != first->start || r.inode != g->inode ||
	    r.dev_major != g->major || r.dev_minor != g->minor)
		*len = 0;
	free(r.path);
}

/* A file route's image whose build-id differs from the kernel's for the
 * mapping is another file with the same device and inode numbers: refuse
 * it (frees *img) with a warning, so that the next route is tried. */
static int refuse_other_file(struct vg_target *t, const struct vg_region *first,
			     struct vg_image **img, const uint8_t *kbid,
			     size_t kbid_len)
{
	char disk[2 * sizeof((*img)->build_id) + 1], mapped[2 * VG_BUILD_ID_MAX + 1];

	if (!kbid_len || !(*img)->build_id_len ||
	    ((*img)->build_id_len == kbid_len &&
	     memcmp((*img)->build_id, kbid, kbid_len) == 0))
		return 0;
	vg_target_warn(t,
		       "'%s' on disk differs from the image mapped at 0x%llx (build-id %s on disk vs %s mapped); not using '%s'",
		       first->path, (unsigned long long)first->start,
		       hex_id((*img)->build_id, (*img)->build_id_len, disk, sizeof(disk)),
		       hex_id(kbid, kbid_len, mapped, sizeof(mapped)),
		       (*img)->open_path);
	*img = vg_image_free(*img);
	return -ESTALE;
}

/* One file route: path must be the group's file (device and inode), then
 * an ELF, then (where the kernel gave a build-id) the bytes mapped. */
static int open_file_route(struct vg_target *t, const char *rest,
			   const struct vg_region *first, const struct group *g,
			   const uint8_t *kbid, size_t kbid_len,
			   struct vg_image **out, bool *not_elf)
{
	char path[PATH_MAX + 64];
	int fd, r;

	vg_target_proc_path(t, path, sizeof(path), rest);
	fd = vg_proc_open_file(path, g->major, g->minor, g->inode);
	if (fd < 0)
		return fd;
	r = open_fd(fd, path, out, not_elf, NULL);
	if (r == 0)
		r = refuse_other_file(t, first, out, kbid, kbid_len);
	return r;
}

/* "root/PATH" of a mapping named by an absolute path, into rest.  Not for
 * a deleted file: whatever now has its name is by definition another. */
static int root_rest(const struct vg_region *r, char *rest, size_t size)
{
	if (r->path[0] != '/' || r->deleted)
		return -ENOENT;
	if ((size_t)snprintf(rest, size, "root%s", r->path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Largest vDSO read (the kernel's is two pages; four with vvar tricks). */
#define VDSO_MAX (1u << 20)

/* Where the kernel put the vDSO: the [vdso] mapping, else the region
 * holding AT_SYSINFO_EHDR of /proc/PID/auxv (a process that mremap()ed
 * its vDSO, as CRIU restores do, keeps the auxv value but may lose the
 * name).  NULL when the process has none (vdso=0). */
static const struct vg_region *vdso_region(struct vg_target *t,
					   const struct vg_maps *maps)
{
	char path[64];
	uint64_t av[2];
	FILE *f;

	for (size_t i = maps->n; i > 0; i--)
		if (maps->regions[i - 1].kind == VG_REGION_VDSO)
			return &maps->regions[i - 1];
	vg_target_proc_path(t, path, sizeof(path), "auxv");
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL) {
		if (av[0] == AT_SYSINFO_EHDR) {
			const struct vg_region *r = vg_maps_find(maps, av[1]);

			fclose(f);
			return r && r->start == av[1] && r->inode == 0 && r->readable ? r : NULL;
		}
	}
	fclose(f);
	return NULL;
}

/* The vDSO: a complete ELF image (section headers, .dynsym, .eh_frame)
 * that the kernel maps from its own memory, no file behind it.  Read from
 * the target, named "[vdso]" (perf, gdb and eu-stack name it so), via
 * target_memory.  0 with *out (NULL when the process has no vDSO), or a
 * negative errno with a warning for the target. */
static int open_vdso(struct vg_target *t, const struct vg_maps *maps,
		     struct vg_mem *mem, uint64_t page, struct vg_image **out)
{
	const struct vg_region *r = vdso_region(t, maps);
	struct vg_mem_result res;
	struct vg_mapping mp;
	struct vg_image *img = NULL;
	char label[96];
	bool not_elf;
	uint64_t len;
	char *buf;
	int rc;

	*out = NULL;
	if (!r || !mem)
		return 0;
	len = r->end - r->start;
	if (len > VDSO_MAX)
		len = VDSO_MAX;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	vg_mem_read(mem, r->start, buf, len, &res, NULL);
	if (res.bytes_read < sizeof(Elf64_Ehdr)) {
		free(buf);
		vg_target_warn(t, "cannot read the vDSO of pid %d at 0x%llx: %s; its functions have no names",
			       (int)t->pid, (unsigned long long)r->start,
			       strerror(res.error ? -res.error : EIO));
		return res.error ? res.error : -EIO;
	}
	snprintf(label, sizeof(label), "[vdso] of pid %d at 0x%llx", (int)t->pid,
		 (unsigned long long)r->start);
	/* Only the bytes read: a read that stopped early is never padded
	 * with zeros, and a header pointing past it is refused as truncated. */
	rc = open_buffer(buf, res.bytes_read, label, false, &img, &not_elf, NULL);
	if (rc < 0) {
		if (rc != -ENOMEM)
			vg_target_warn(t, "the vDSO of pid %d at 0x%llx is not a readable ELF image (%s); its functions have no names",
				       (int)t->pid, (unsigned long long)r->start, strerror(-rc));
		return rc;
	}
	free(img->path);
	img->path = strdup("[vdso]");
	if (!img->path) {
		vg_image_free(img);
		return -ENOMEM;
	}
	img->via = VG_VIA_MEMORY;
	mp = (struct vg_mapping){ r->start, r->end, 0 };
	if (vg_loadbias_compute(img->loads, img->n_loads, &mp, 1, page, &img->bias,
				&img->bias_method) < 0)
		img->bias_method = VG_BIAS_NONE;
	img->lo = r->start;
	img->hi = img->mem_hi = r->end;
	*out = img;
	return 0;
}

int vg_images_load(struct vg_target *t, const struct vg_maps *maps,
		   struct vg_mem *mem, struct vg_images **out,
		   struct vg_error *err)
{
	struct vg_images *s;
	struct group *gs = NULL;
	size_t n_groups = 0;
	struct stat exe;
	bool have_exe;
	char path[64];
	long page = sysconf(_SC_PAGESIZE);
	struct vg_procmap pm;
	bool have_pm;
	int r;

	*out = NULL;
	if (page <= 0)
		page = 4096;
	if (make_groups(maps, &gs, &n_groups) < 0 ||
	    split_mapping_sets(maps, &gs, &n_groups) < 0)
		return vg_error_set(err, -ENOMEM,
				    "out of memory grouping the mappings of pid %d",
				    (int)t->pid);
	s = calloc(1, sizeof(*s));
	/* One more slot for the vDSO. */
	if (!s || !(s->images = calloc(n_groups + 1, sizeof(*s->images)))) {
		free(s);
		free_groups(gs, n_groups);
		return vg_error_set(err, -ENOMEM,
				    "out of memory loading the images of pid %d",
				    (int)t->pid);
	}
	s->target = t;
	/* Without PROCMAP_QUERY (before Linux 6.11) there is no kernel
	 * build-id: no cross-check, no fill-in. */
	have_pm = vg_procmap_open(t->pid, &pm, NULL) == 0;

	vg_target_proc_path(t, path, sizeof(path), "exe");
	have_exe = stat(path, &exe) == 0;

	for (size_t k = 0; k < n_groups; k++) {
		const struct group *g = &gs[k];
		const struct vg_region *first = &maps->regions[g->idx[0]];
		struct vg_image *img = NULL;
		enum vg_image_via via;
		uint8_t kbid[VG_BUILD_ID_MAX];
		size_t kbid_len = 0;
		bool not_elf = false, denied = false;
		bool is_main = have_exe && same_file(&exe, g);
		char rest[PATH_MAX];

		if (have_pm)
			kernel_build_id(&pm, first, g, kbid, &kbid_len);
		/* The routes in order; via ends as the one that served. */
		snprintf(rest, sizeof(rest), "map_files/%llx-%llx",
			 (unsigned long long)first->start,
			 (unsigned long long)first->end);
		via = VG_VIA_MAP_FILES;
		r = open_file_route(t, rest, first, g, kbid, kbid_len, &img, &not_elf);
		denied |= r == -EACCES;
		if (r < 0 && !not_elf) {
			via = VG_VIA_ROOT;
			r = root_rest(first, rest, sizeof(rest));
			if (r == 0)
				r = open_file_route(t, rest, first, g, kbid, kbid_len,
						    &img, &not_elf);
			denied |= r == -EACCES || r == -EPERM;
		}
		/* /proc/PID/exe reaches the exact inode like map_files (even
		 * deleted or replaced) but needs only the ptrace read access
		 * every other route needs, not CAP_SYS_ADMIN. */
		if (r < 0 && !not_elf && is_main) {
			via = VG_VIA_EXE;
			r = open_file_route(t, "exe", first, g, kbid, kbid_len, &img, &not_elf);
			denied |= r == -EACCES || r == -EPERM;
		}
		if (r < 0 && !not_elf) {
			via = VG_VIA_MEMORY;
			r = open_memory_route(t, maps, mem, g, &img, &not_elf);
			denied |= r == -EACCES || r == -EPERM;
		}
		if (r == -ENOMEM)
			goto oom;
		if (r < 0) {
			/* Not ELF (fonts, locale-archive) is not news; an
			 * ELF nothing can open is. */
			bool code = false;

			for (size_t i = 0; i < g->n; i++)
				code |= maps->regions[g->idx[i]].executable;
			if (!not_elf && code && denied) {
				struct vg_error why = { 0 };

				s->n_denied++;
				vg_error_denied(&why, -EACCES, t->pid, "the mapped files or memory");
				vg_target_warn(t, "no symbols for '%s' mapped at 0x%llx: %s",
					       first->path, (unsigned long long)first->start, why.msg);
			}
			else if (!not_elf && code)
				vg_target_warn(t,
					       "cannot open '%s' mapped at 0x%llx: %s; its symbols are unavailable",
					       first->path,
					       (unsigned long long)first->start,
					       strerror(-r));
			continue;
		}
		if (set_strings(img, first) < 0) {
			vg_image_free(img);
			goto oom;
		}
		img->via = via;
		img->deleted = first->deleted;
		img->dev = makedev(g->major, g->minor);
		img->inode = g->inode;
		if (!img->build_id_len && kbid_len) {
			memcpy(img->build_id, kbid, kbid_len);
			img->build_id_len = kbid_len;
			img->build_id_from_kernel = true;
		}
		img->is_main = is_main;
		compute_bias(img, maps, g, (uint64_t)page);
		s->images[s->n++] = img;
		if (via == VG_VIA_MEMORY) {
			/* Needs the bias: a loaded .dynamic holds runtime
			 * addresses. */
			if (add_dynamic_symbols(img) == -ENOMEM ||
			    load_symbols(img->priv) == -ENOMEM)
				goto oom;
			if (!img->priv->n_syms)
				vg_target_warn(t,
					       "'%s' mapped at 0x%llx was read from target memory without any symbol table (its section headers are not mapped and no .dynsym is reachable through PT_DYNAMIC); SYMBOL and IMAGE:SYMBOL cannot name it, use addresses",
					       first->path,
					       (unsigned long long)first->start);
			else if (img->dynsym_from_dynamic)
				vg_target_warn(t,
					       "'%s' mapped at 0x%llx was read from target memory: only its dynamic symbols (.dynsym) are available, not its local ones",
					       first->path,
					       (unsigned long long)first->start);
		}
	}
	{
		struct vg_image *vdso;

		r = open_vdso(t, maps, mem, (uint64_t)page, &vdso);
		if (r == -ENOMEM)
			goto oom;
		if (vdso)
			s->images[s->n++] = vdso;
	}
	if (!have_exe) {
		/* The first file the target maps is, by construction of the
		 * loader, its executable (the kernel maps it before ld.so). */
		for (size_t k = 0; k < s->n; k++) {
			if (s->images[k]->inode == gs[0].inode &&
			    s->images[k]->dev == makedev(gs[0].major, gs[0].minor)) {
				s->images[k]->is_main = true;
				break;
			}
		}
	}
	vg_procmap_close(&pm);
	free_groups(gs, n_groups);
	if (s->n)
		qsort(s->images, s->n, sizeof(*s->images), cmp_image_lo);
	*out = s;
	return 0;
oom:
	vg_procmap_close(&pm);
	vg_images_free(s);
	free_groups(gs, n_groups);
	return vg_error_set(err, -ENOMEM, "out of memory loading the images of pid %d",
			    (int)t->pid);
}

struct vg_images *vg_images_free(struct vg_images *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		vg_image_free(s->images[i]);
	free(s->images);
	free(s);
	return NULL;
}

const struct vg_image *vg_images_find(const struct vg_images *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!s)
		return NULL;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->images[mid]->lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The .bss tail lies between an image's last mapping and the next
	 * image's first, so the image below addr is the only candidate. */
	if (lo && (addr < s->images[lo - 1]->hi || addr < s->images[lo - 1]->mem_hi))
		return s->images[lo - 1];
	return NULL;
}

const struct vg_image *vg_images_main(const struct vg_images *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->images[i]->is_main)
			return s->images[i];
	return NULL;
}

const struct vg_image *vg_images_by_name(const struct vg_images *s,
					 const char *name, size_t *n_matches)
{
	const struct vg_image *first = NULL;
	size_t nl = strlen(name), n = 0;

	for (size_t i = 0; s && i < s->n; i++) {
		const char *p = s->images[i]->path;
		size_t pl = strlen(p);

		if (strcmp(p, name) == 0) {
			first = s->images[i];  /* a full path is never ambiguous */
			n = 1;
			break;
		}
		if (pl > nl && p[pl - nl - 1] == '/' && strcmp(p + pl - nl, name) == 0 &&
		    n++ == 0)
			first = s->images[i];
	}
	if (n_matches)
		*n_matches = n;
	return first;
}

int vg_image_symbol_before(const struct vg_image *img, uint64_t vaddr,
			   struct vg_symbol *sym)
{
	struct vg_image_priv *p;
	size_t lo;

	if (!img || !img->priv || load_symbols(img->priv) < 0)
		return -ENOENT;
	p = img->priv;
	lo = syms_starting_by(p, vaddr);
	if (!lo)
		return -ENOENT;
	fill_sym(&p->syms[lo - 1], sym);
	return 0;
}

Elf *vg_image_elf(const struct vg_image *img)
{
	return img && img->priv ? img->priv->elf : NULL;
}

int vg_image_fd(const struct vg_image *img)
{
	return img && img->priv ? img->priv->fd : -1;
}

char *vg_image_build_id_hex(const struct vg_image *img, char *buf, size_t size)
{
	size_t w = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; img && i < img->build_id_len && w + 3 <= size; i++)
		w += (size_t)snprintf(buf + w, size - w, "%02x", img->build_id[i]);
	return buf;
}

/* ------------------------------------------------------------------ */
/* --bin matching                                                       */

static int image_bytes(const struct vg_image *img, uint64_t off, void *dst,
		       size_t len)
{
	const struct vg_image_priv *p = img->priv;

	if (!range_ok(off, len, p->size))
		return -ERANGE;
	if (p->fd < 0) {
		memcpy(dst, p->buf + off, len);
		return 0;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(p->fd, (char *)dst + done, len - done,
				  (off_t)(off + done));

		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

enum vg_bin_match vg_image_compare(const struct vg_image *bin,
				   const struct vg_image *running,
				   struct vg_mem *mem, const char **how)
{
	uint64_t budget = COMPARE_MAX, compared = 0;
	char *a = NULL, *b = NULL;
	enum vg_bin_match m = VG_BIN_UNKNOWN;
	const size_t chunk = 64 << 10;

	if (how)
		*how = "none";
	if (!bin || !running)
		return VG_BIN_UNKNOWN;
	if (bin->build_id_len && running->build_id_len) {
		if (how)
			*how = "build_id";
		return bin->build_id_len == running->build_id_len &&
		       memcmp(bin->build_id, running->build_id,
			      bin->build_id_len) == 0 ? VG_BIN_MATCH : VG_BIN_MISMATCH;
	}
	if (!mem || running->bias_method == VG_BIAS_NONE || !bin->priv)
		return VG_BIN_UNKNOWN;
	a = malloc(chunk);
	b = malloc(chunk);
	if (!a || !b)
		goto out;
	for (size_t i = 0; i < bin->n_loads && budget; i++) {
		const struct vg_load *l = &bin->loads[i];

		if (l->flags & PF_W)
			continue;
		for (uint64_t done = 0; done < l->filesz && budget;) {
			size_t n = chunk;
			struct vg_mem_result res;

			if (n > l->filesz - done)
				n = (size_t)(l->filesz - done);
			if (n > budget)
				n = (size_t)budget;
			if (image_bytes(bin, l->offset + done, a, n) < 0 ||
			    vg_mem_read(mem, running->bias + l->vaddr + done, b, n,
					&res, NULL) < 0) {
				/* Unreadable memory proves nothing either way, and
				 * a match on part of the plan is no match. */
				goto out;
			}
			if (memcmp(a, b, n) != 0) {
				m = VG_BIN_MISMATCH;
				if (how)
					*how = "content";
				goto out;
			}
			done += n;
			budget -= n;
			compared += n;
		}
	}
	if (compared) {
		m = VG_BIN_MATCH;
		if (how)
			*how = "content";
	}
out:
	free(a);
	free(b);
	return m;
}

const char *vg_image_via_name(enum vg_image_via v)
{
	static const char *const names[] = {
		[VG_VIA_NONE] = "none",
		[VG_VIA_MAP_FILES] = "map_files",
		[VG_VIA_ROOT] = "proc_root",
		[VG_VIA_MEMORY] = "target_memory",
		[VG_VIA_EXE] = "proc_exe",
		[VG_VIA_PATH] = "path",
	};

	if ((unsigned)v < sizeof(names) / sizeof(names[0]) && names[v])
		return names[v];
	return "none";
}

const char *vg_bin_match_name(enum vg_bin_match m)
{
	switch (m) {
	case VG_BIN_MATCH:
		return "match";
	case VG_BIN_MISMATCH:
		return "mismatch";
	case VG_BIN_UNKNOWN:
		break;
	}
	return "unknown";
}

bool vg_elf_has_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, want) == 0)
			return true;
	}
	return false;
}
