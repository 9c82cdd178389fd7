/* image.c - one ELF image: opening a file, a descriptor or a buffer, its
 * PT_LOADs and build-id, the .dynsym of an image rebuilt from memory, and
 * the --bin check against a running image.  Its symbol table is symbols.c,
 * the set of images a target maps images.c (image_priv.h: what the three
 * share).
 *
 * Parsing goes through libelf (gelf) only.  Nothing in a header is trusted
 * before e_ident says ELF64, little-endian, and e_machine says x86-64; then the
 * program header table, every PT_LOAD's file bytes and the section header
 * table must lie inside the file, or the file is "truncated" (-ENOEXEC).
 * Files are read with ELF_C_READ (pread on demand), never mmap()ed, so a file
 * truncated under us yields an error, not SIGBUS.
 *
 * An image rebuilt from target memory (images.c) has lost the section
 * headers that were never mapped; it then gets the .dynsym the dynamic
 * linker itself uses, found through PT_DYNAMIC (DT_SYMTAB, DT_STRTAB,
 * DT_GNU_HASH or DT_HASH for the count) and described by two synthetic
 * section headers appended to the buffer, so that one symbol loader serves
 * every image.
 * Never prints, never reads the environment. */
#include "elf/image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/image_priv.h"

/* Bytes compared by vg_image_compare when there is no build-id. */
#define COMPARE_MAX (4ull << 20)


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

bool image_range_ok(uint64_t off, uint64_t len, uint64_t size)
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
		    !image_range_ok(ph.p_offset, ph.p_filesz, p->size))
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
	if (!image_range_ok(eh->e_shoff, sizeof(Elf64_Shdr), p->size))
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
	    !image_range_ok(eh->e_shoff, tab, p->size))
		return truncated(err, label, "section headers",
				 eh->e_shoff + tab, p->size);
	while ((scn = elf_nextscn(p->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return vg_error_set(err, -ENOEXEC,
					    "cannot read section %zu of '%s': %s; the file is corrupt",
					    elf_ndxscn(scn), label, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS &&
		    !image_range_ok(sh.sh_offset, sh.sh_size, p->size))
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
	    !image_range_ok(eh.e_phoff, tab, p->size))
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
		if (!lenient && !image_range_ok(ph.p_offset, ph.p_filesz, p->size))
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
		vg_bucket_free(&p->syms_by_addr);
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
int image_open_fd(int fd, const char *label, struct vg_image **out,
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
	img->file_size = (uint64_t)st.st_size;
	img->mtime_sec = (int64_t)st.st_mtim.tv_sec;
	img->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
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
	r = image_open_fd(fd, path, &img, &not_elf, err);
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

			if (a < l->vaddr || !image_range_ok(a - l->vaddr, n, l->filesz))
				continue;
			*off = l->offset + (a - l->vaddr);
			if (image_range_ok(*off, n, img->priv->size))
				return true;
		}
	}
	return false;
}

/* DT_HASH: nchain is the number of symbols. */
static uint64_t count_hash(const char *buf, uint64_t size, uint64_t off)
{
	uint32_t w[2];

	if (!image_range_ok(off, sizeof(w), size))
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

	if (!image_range_ok(off, sizeof(h), size))
		return 0;
	memcpy(h, buf + off, sizeof(h));
	/* nbuckets h[0], symoffset h[1], bloom words h[2] (8 bytes each) */
	buckets = off + sizeof(h) + (uint64_t)h[2] * 8;
	if (!image_range_ok(buckets, (uint64_t)h[0] * 4, size))
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

		if (!image_range_ok(at, 4, size))
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
int image_add_dynamic_symbols(struct vg_image *img)
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
	if (!dyn_size || !image_range_ok(dyn_off, dyn_size, p->size))
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
int image_open_buffer(char *buf, size_t len, const char *label, bool lenient,
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
	r = image_open_buffer(copy, len, label, false, out, &not_elf, err);
	if (r < 0)
		return r;
	if (image_add_dynamic_symbols(*out) == -ENOMEM) {
		*out = vg_image_free(*out);
		return vg_error_set(err, -ENOMEM,
				    "out of memory reading the symbols of '%s'",
				    label);
	}
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

	if (!image_range_ok(off, len, p->size))
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
