/* images.c - the set of ELF images a target maps (struct vg_images):
 * which mappings are one load of one file, the route each file is opened
 * by, the vDSO read from memory, the load bias, and lookups by address and
 * by name.
 *
 * A target's images are grouped by (device, inode) of their maps entries and
 * opened once each, through /proc/PID/map_files, /proc/PID/root/PATH (checked
 * against the mapping's device and inode) or, for an unlinked file neither
 * reaches, from the target's memory: the bytes of every readable mapping are
 * put back at their file offsets and parsed like a file (image.c then finds
 * its .dynsym through PT_DYNAMIC).  Its local (.symtab) symbols are lost; a
 * target warning says so, or says that it has no symbols at all.
 *
 * Where the kernel has PROCMAP_QUERY, it is asked for the build-id of each
 * image's first mapping: it reads it from the mapped file (vma->vm_file)
 * without any open.  A file route whose build-id differs is not the mapped
 * file (overlayfs keeps the inode number across a copy-up, the mapping keeps
 * the lower file) and is refused with a warning; an image whose bytes hold
 * no build-id note gets the kernel's (build_id_from_kernel).
 * Never prints, never reads the environment. */
#include "elf/image_priv.h"

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

#include "target/procmap.h"

/* Largest image rebuilt from target memory. */
#define MEM_IMAGE_MAX (512ull << 20)

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
		     !image_range_ok(eh.e_shoff, tab, len) || eh.e_shnum == 0)) {
			eh.e_shoff = 0;
			eh.e_shnum = 0;
			eh.e_shstrndx = 0;
			memcpy(buf, &eh, sizeof(eh));
		}
	}
	snprintf(label, sizeof(label), "pid %d memory at 0x%llx", (int)t->pid,
		 (unsigned long long)maps->regions[g->idx[0]].start);
	r = image_open_buffer(buf, len, label, true, out, not_elf, NULL);
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
	r = image_open_fd(fd, path, out, not_elf, NULL);
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
	rc = image_open_buffer(buf, res.bytes_read, label, false, &img, &not_elf, NULL);
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

/* Which groups are certainly not ELF: the first bytes mapped at file
 * offset 0 are not ELFMAG.  One scatter read for them all, instead of the
 * ten system calls and the page fault of opening each file (a process
 * maps a dozen locale, gconv and font files, none of them an image).  A
 * group whose header cannot be read is not judged here: its routes say.
 * not_elf[k] set for those; never fails. */
static void mapped_not_elf(const struct vg_maps *maps, struct vg_mem *mem,
			   const struct group *gs, size_t n, bool *not_elf)
{
	struct vg_mem_req *reqs;
	char (*magic)[SELFMAG];
	size_t *of, n_reqs = 0;

	if (!mem || !n)
		return;
	reqs = calloc(n, sizeof(*reqs));
	magic = calloc(n, sizeof(*magic));
	of = calloc(n, sizeof(*of));
	if (!reqs || !magic || !of)
		goto out;
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < gs[k].n; i++) {
			const struct vg_region *r = &maps->regions[gs[k].idx[i]];

			if (r->offset != 0 || !r->readable)
				continue;
			reqs[n_reqs] = (struct vg_mem_req){ .addr = r->start, .buf = magic[n_reqs],
							    .len = SELFMAG };
			of[n_reqs++] = k;
			break;
		}
	}
	if (vg_mem_readv(mem, reqs, n_reqs, NULL) == 0)
		for (size_t q = 0; q < n_reqs; q++)
			if (reqs[q].bytes_read == SELFMAG && memcmp(magic[q], ELFMAG, SELFMAG) != 0)
				not_elf[of[q]] = true;
out:
	free(reqs);
	free(magic);
	free(of);
}

/* Marks in skip[] every group none of only[0..n_only) falls in, besides
 * those already there (not ELF).  An address belongs to the group of the
 * last mapping at or below it among the rest: the .bss tail lies between
 * an image's last mapping and the next file's first, as vg_images_find
 * has it, and so may a file that is not ELF, mapped in an image's gap.
 * A superset of what the images will cover, never less. */
static int skip_unwanted(const struct vg_maps *maps, const struct group *gs,
			 size_t n_groups, const uint64_t *only, size_t n_only, bool *skip)
{
	bool *wanted = calloc(n_groups + 1, sizeof(*wanted));

	if (!wanted)
		return -ENOMEM;
	for (size_t a = 0; a < n_only; a++) {
		size_t best_k = SIZE_MAX;
		uint64_t best_start = 0;

		for (size_t k = 0; k < n_groups; k++) {
			if (skip[k])
				continue;
			for (size_t i = 0; i < gs[k].n; i++) {
				const struct vg_region *r = &maps->regions[gs[k].idx[i]];

				if (r->start <= only[a] && (best_k == SIZE_MAX || r->start >= best_start)) {
					best_k = k;
					best_start = r->start;
				}
			}
		}
		if (best_k != SIZE_MAX)
			wanted[best_k] = true;
	}
	for (size_t k = 0; k < n_groups; k++)
		skip[k] = skip[k] || !wanted[k];
	free(wanted);
	return 0;
}

static bool vdso_holds(const struct vg_region *r, const uint64_t *only, size_t n_only)
{
	for (size_t a = 0; r && a < n_only; a++)
		if (only[a] >= r->start && only[a] < r->end)
			return true;
	return false;
}

static int load_images(struct vg_target *t, const struct vg_maps *maps,
		       struct vg_mem *mem, const uint64_t *only, size_t n_only,
		       struct vg_images **out, struct vg_error *err)
{
	struct vg_images *s;
	struct group *gs = NULL;
	size_t n_groups = 0;
	struct stat exe;
	bool have_exe;
	char path[64];
	long page = sysconf(_SC_PAGESIZE);
	struct vg_procmap pm;
	bool have_pm, *skip;
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
	skip = calloc(n_groups + 1, sizeof(*skip));
	/* One more slot for the vDSO. */
	if (!s || !skip || !(s->images = calloc(n_groups + 1, sizeof(*s->images)))) {
		free(s);
		free(skip);
		free_groups(gs, n_groups);
		return vg_error_set(err, -ENOMEM,
				    "out of memory loading the images of pid %d",
				    (int)t->pid);
	}
	s->target = t;
	/* Without PROCMAP_QUERY (before Linux 6.11) there is no kernel
	 * build-id: no cross-check, no fill-in. */
	have_pm = vg_procmap_open(t->pid, &pm, NULL) == 0;
	mapped_not_elf(maps, mem, gs, n_groups, skip);
	if (only && skip_unwanted(maps, gs, n_groups, only, n_only, skip) < 0)
		goto oom;

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

		if (skip[k])
			continue;  /* not ELF: not news (fonts, locale files) */
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
			if (image_add_dynamic_symbols(img) == -ENOMEM ||
			    image_load_symbols(img->priv) == -ENOMEM)
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
		struct vg_image *vdso = NULL;

		/* Every image: no search for the vDSO's mapping first. */
		r = !only || vdso_holds(vdso_region(t, maps), only, n_only)
			    ? open_vdso(t, maps, mem, (uint64_t)page, &vdso) : 0;
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
	free(skip);
	if (s->n)
		qsort(s->images, s->n, sizeof(*s->images), cmp_image_lo);
	*out = s;
	return 0;
oom:
	vg_procmap_close(&pm);
	free(skip);
	vg_images_free(s);
	free_groups(gs, n_groups);
	return vg_error_set(err, -ENOMEM, "out of memory loading the images of pid %d",
			    (int)t->pid);
}

int vg_images_load(struct vg_target *t, const struct vg_maps *maps,
		   struct vg_mem *mem, struct vg_images **out,
		   struct vg_error *err)
{
	return load_images(t, maps, mem, NULL, 0, out, err);
}

int vg_images_load_only(struct vg_target *t, const struct vg_maps *maps,
			struct vg_mem *mem, const uint64_t *addrs, size_t n_addrs,
			struct vg_images **out, struct vg_error *err)
{
	return load_images(t, maps, mem, addrs, n_addrs, out, err);
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
