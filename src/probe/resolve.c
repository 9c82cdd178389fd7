/* resolve.c - probe LOCATIONs to (file, offset) sites.
 *
 * ADDR forms go through vg_addr_parse (the parser every command shares);
 * FILE:LINE asks the line tables of every image (sym/srclines.h) for the
 * rows of that line in a source file whose path ends with FILE, one per
 * innermost function or inlined-call instance containing them: one site
 * each.
 * Every site is then checked against the target's current maps (it must
 * be file-backed executable code) and named by the symbolizer.  The file
 * offset is the mapping's offset plus the distance into the mapping: the
 * same number the kernel computes back when the uprobe fires.
 *
 * Each image's DWARF is the symbolizer's own (vg_symbolizer_dwarf: found
 * once, as lookups find it), and the maps are those of the symbolizer's
 * target, read afresh (offline, without a target, the image's PT_LOADs
 * give the file offset).  Not to be called while
 * another thread uses the same symbolizer (the image set may be
 * refreshed by a lookup).
 *
 * The parameters of a probed function (--args) are sym/params.c. */
#include "probe/resolve.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "elf/addrspec.h"
#include "elf/debuginfo.h"
#include "elf/usdt.h"
#include "sym/srclines.h"
#include "util/vec.h"

/* ------------------------------------------------------------------ */
/* the target behind a symbolizer                                      */

/* The process whose maps decide where a site is (0 offline): the task
 * holding its memory map (the leader may have exited). */
static pid_t target_pid(struct vg_symbolizer *sym)
{
	const struct vg_target *t = vg_symbolizer_target(sym);

	return !t ? 0 : t->mm_pid ? t->mm_pid : t->pid;
}

/* The image set holds non-const pointers; lookups hand out const ones. */
static struct vg_image *image_in(const struct vg_images *imgs, const struct vg_image *img)
{
	for (size_t i = 0; imgs && i < imgs->n; i++)
		if (imgs->images[i] == img)
			return imgs->images[i];
	return NULL;
}

static const char *image_label(const struct vg_image *img)
{
	return img->path && img->path[0] ? img->path : "(unnamed image)";
}

/* ------------------------------------------------------------------ */
/* one site                                                             */

static void site_clear(struct vg_probe_site *s)
{
	free(s->path);
	free(s->function);
	free(s->inlined_into);
	free(s->inlined_function);
	free(s->file);
	free(s->usdt_args);
	memset(s, 0, sizeof(*s));
}

static int dup_or_null(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static const char *region_label(const struct vg_region *r)
{
	if (r->path && r->path[0])
		return r->path;
	return "anonymous memory";
}

/* Is addr in file-backed executable code?  maps NULL (no live target):
 * the image's PT_LOADs decide instead, below. */
static int check_region(const struct vg_maps *maps, pid_t pid, uint64_t addr,
			const struct vg_region **out, struct vg_error *err)
{
	const struct vg_region *r;

	*out = NULL;
	if (!maps)
		return 0;
	r = vg_maps_find(maps, addr);
	if (!r)
		return vg_error_set(err, -EFAULT,
				    "0x%" PRIx64 " is not mapped in pid %d; 'vigil maps %d' lists the mappings",
				    addr, (int)pid, (int)pid);
	if (!r->executable)
		return vg_error_set(err, -ENOEXEC,
				    "0x%" PRIx64 " is in %s %s, not in executable code",
				    addr, region_label(r), r->perms);
	if (r->kind != VG_REGION_FILE)
		return vg_error_set(err, -ENOEXEC,
				    "0x%" PRIx64 " is in executable %s (%s), not in a file: uprobes need a file (JIT code cannot be probed)",
				    addr, region_label(r), r->perms);
	*out = r;
	return 0;
}

/* File offset of static address vaddr from the PT_LOAD holding it
 * (executable code, or with data_ok any file-backed bytes). */
static int offset_in_loads(const struct vg_image *img, uint64_t vaddr, bool data_ok, uint64_t *off,
			   struct vg_error *err)
{
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct vg_load *l = &img->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			if (!(l->flags & PF_X) && !data_ok)
				break;
			*off = l->offset + (vaddr - l->vaddr);
			return 0;
		}
	}
	return vg_error_set(err, -ENOEXEC,
			    "static address 0x%" PRIx64 " is not in %s PT_LOAD of %s",
			    vaddr, data_ok ? "a" : "an executable", image_label(img));
}

static int offset_from_loads(const struct vg_image *img, uint64_t vaddr, uint64_t *off,
			     struct vg_error *err)
{
	return offset_in_loads(img, vaddr, false, off, err);
}

static int fill_names(struct vg_probe_site *site, const struct vg_sym_result *res)
{
	if (res->has_symbol) {
		site->function_addr = res->symbol_address;
		site->function_offset = res->offset;
	}
	site->line = res->line;
	site->inlined = res->n_frames > 1 && res->frames[0].inlined;
	if (dup_or_null(res->has_symbol ? res->symbol : NULL, &site->function) < 0 ||
	    dup_or_null(res->file, &site->file) < 0 ||
	    dup_or_null(site->inlined ? res->frames[1].function : NULL, &site->inlined_into) < 0 ||
	    dup_or_null(site->inlined ? res->frames[0].function : NULL, &site->inlined_function) < 0)
		return -ENOMEM;
	return 0;
}

/* The site at runtime address addr: checked, located in its file, named. */
/* A uprobe must sit on the first byte of an instruction: the kernel
 * refuses some offsets inside one and accepts others (bytes that happen
 * to decode), which would then count nothing or corrupt the target's
 * instruction stream as the kernel sees it.  Decode the function from its
 * start, in the file (the bytes the kernel will patch), up to the site. */
#define MAX_DECODE_BYTES (1u << 20)
static int check_instruction_start(const struct vg_probe_site *site, uint64_t fn_size,
				   struct vg_error *err)
{
	uint64_t fn_off = site->file_offset - site->function_offset, pos = 0, prev = 0;
	size_t len = site->function_offset + 16;
	ZydisDecoder dec;
	uint8_t *code;
	ssize_t got;
	int fd;

	if (!site->function || site->function_offset == 0 || site->function_offset >= fn_size ||
	    site->function_offset > MAX_DECODE_BYTES || site->file_offset < site->function_offset)
		return 0;
	code = malloc(len);
	fd = code ? open(site->path, O_RDONLY | O_CLOEXEC) : -1;
	got = fd >= 0 ? pread(fd, code, len, (off_t)fn_off) : -1;
	if (fd >= 0)
		close(fd);
	if (got < (ssize_t)site->function_offset) {
		free(code);
		return 0;   /* unreadable here: the kernel still checks what it can */
	}
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (pos < site->function_offset) {
		ZydisDecodedInstruction in;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code + pos, (size_t)got - pos, &in))) {
			free(code);
			return 0;   /* data in code, or bytes Zydis does not know: no verdict */
		}
		prev = pos;
		pos += in.length;
	}
	free(code);
	if (pos == site->function_offset)
		return 0;
	return vg_error_set(err, -EINVAL,
			    "cannot probe %s+%" PRIu64 ": it is inside the instruction at %s+%" PRIu64 " (%" PRIu64 " bytes); a probe must be on an instruction's first byte (%s+%" PRIu64 " or %s+%" PRIu64 ")",
			    site->function, site->function_offset, site->function, prev, pos - prev,
			    site->function, prev, site->function, pos);
}

static int fill_site(struct vg_symbolizer *sym, const struct vg_maps *maps, pid_t pid,
		     uint64_t addr, struct vg_probe_site *site, struct vg_error *err)
{
	const struct vg_region *r;
	struct vg_sym_result res;
	const struct vg_image *img;
	int rc;

	memset(site, 0, sizeof(*site));
	rc = check_region(maps, pid, addr, &r, err);
	if (rc < 0)
		return rc;
	rc = vg_sym_lookup(sym, addr, &res, err);
	if (rc < 0)
		return rc;
	img = res.image;
	if (!img)
		return vg_error_set(err, maps ? -ENOEXEC : -EFAULT, "cannot probe 0x%" PRIx64 ": %s",
				    addr, res.why ? res.why : "it is in no ELF image");
	if (img->via == VG_VIA_MEMORY || img->via == VG_VIA_NONE || !img->open_path ||
	    !img->open_path[0])
		return vg_error_set(err, -ENODATA,
				    "cannot probe 0x%" PRIx64 " in %s: vigil read that image from target memory and has no file the kernel can open for a uprobe",
				    addr, image_label(img));
	/* The maps were read now, the image set maybe a second ago: a
	 * library replaced at the same address in between is not img. */
	if (r && (r->inode != img->inode || makedev(r->dev_major, r->dev_minor) != img->dev))
		return vg_error_set(err, -ESTALE,
				    "cannot probe 0x%" PRIx64 ": %s was replaced by %s at that address while vigil resolved it; try again",
				    addr, image_label(img), region_label(r));
	site->image = img;
	site->runtime_addr = addr;
	site->static_addr = addr - img->bias;
	if (r)
		site->file_offset = r->offset + (addr - r->start);
	else if ((rc = offset_from_loads(img, site->static_addr, &site->file_offset, err)) < 0)
		return rc;
	if (dup_or_null(img->open_path, &site->path) < 0 || fill_names(site, &res) < 0) {
		site_clear(site);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	rc = check_instruction_start(site, res.symbol_size, err);
	if (rc < 0)
		site_clear(site);
	return rc;
}

/* ------------------------------------------------------------------ */
/* FILE:LINE                                                            */

/* FILE:LINE when the text after the last ':' is digits (or nothing, a
 * malformed FILE:LINE) and the text before it looks like a path. */
static bool is_file_line(const char *spec)
{
	const char *colon = strrchr(spec, ':');

	if (!colon || colon == spec || colon[-1] == ':')
		return false;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return memchr(spec, '.', (size_t)(colon - spec)) || memchr(spec, '/', (size_t)(colon - spec));
}

static int cmp_site(const void *a, const void *b)
{
	const struct vg_probe_site *x = a, *y = b;

	return (x->runtime_addr > y->runtime_addr) - (x->runtime_addr < y->runtime_addr);
}

static int add_site(struct vg_probe_location *out, size_t *cap, struct vg_symbolizer *sym,
		    const struct vg_maps *maps, pid_t pid, uint64_t addr,
		    const struct vg_line_hit *hit, uint32_t line, struct vg_error *err)
{
	struct vg_probe_site *s;
	int rc;

	if (VG_GROW(out->sites, *cap, out->n_sites + 1) < 0)
		return vg_error_set(err, -ENOMEM, "out of memory");
	s = &out->sites[out->n_sites];
	rc = fill_site(sym, maps, pid, addr, s, err);
	if (rc < 0)
		return rc;
	out->n_sites++;
	/* The line asked for, in the file whose name matched: the innermost
	 * row at addr may be another line at the same address. */
	free(s->file);
	s->file = strdup(hit->path);
	s->line = line;
	if (!s->file)
		return vg_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* A line of an inlined function's body has rows in the inlined copy, and
 * often a few more that the compiler left in the caller's own scope (code
 * of the line moved past the inlined block): probing both would count
 * each execution twice.  A source line belongs to one function's body, so
 * where a symbol has inlined copies of the line, its own-scope sites are
 * dropped. */
static void drop_caller_scope_sites(struct vg_probe_location *out, size_t first)
{
	size_t kept = first;

	for (size_t i = first; i < out->n_sites; i++) {
		struct vg_probe_site *s = &out->sites[i];
		bool shadowed = false;

		for (size_t j = first; !s->inlined && j < out->n_sites && !shadowed; j++)
			shadowed = out->sites[j].inlined && s->function && out->sites[j].function &&
				   strcmp(out->sites[j].function, s->function) == 0;
		if (shadowed)
			site_clear(s);
		else
			out->sites[kept++] = *s;
	}
	out->n_sites = kept;
}

/* The sites of FILE:LINE in one image, in address order. */
static int scan_image(struct vg_line_search *ls, struct vg_image *img, pid_t pid,
		      struct vg_symbolizer *sym, const struct vg_maps *maps,
		      struct vg_probe_location *out, size_t *cap, struct vg_error *err)
{
	struct vg_line_hit *hits;
	size_t n, first = out->n_sites;
	int rc = vg_line_search_image(ls, sym, img, &hits, &n, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = add_site(out, cap, sym, maps, pid, hits[i].addr + img->bias, &hits[i], ls->line, err);
	vg_line_hits_free(hits, n);
	if (rc < 0 || n == 0)
		return rc;
	drop_caller_scope_sites(out, first);
	qsort(out->sites + first, out->n_sites - first, sizeof(*out->sites), cmp_site);
	return 0;
}

static int no_code(const struct vg_line_search *ls, struct vg_error *err)
{
	char near[64] = "";

	if (ls->n_dwarf_images == 0)
		return vg_error_set(err, -ENOENT,
				    "no code for %s:%" PRIu32 ": no image of the target has DWARF line tables; build with -g or install its debug info",
				    ls->file, ls->line);
	if (!ls->file_seen)
		return vg_error_set(err, -ENOENT,
				    "no source file ending in '%s' in the line tables of %zu image(s) with DWARF; give more of its path, or check the spelling",
				    ls->file, ls->n_dwarf_images);
	if (ls->below && ls->above)
		snprintf(near, sizeof(near), "%" PRIu32 ", %" PRIu32, ls->below, ls->above);
	else
		snprintf(near, sizeof(near), "%" PRIu32, ls->below ? ls->below : ls->above);
	return vg_error_set(err, -ENOENT,
			    "no code for %s:%" PRIu32 " in any image with DWARF; nearest lines with code: %s",
			    ls->file, ls->line, near);
}

static int resolve_file_line(const char *spec, struct vg_symbolizer *sym,
			     const struct vg_maps *maps, pid_t pid,
			     struct vg_probe_location *out, struct vg_error *err)
{
	const struct vg_images *imgs = vg_symbolizer_images(sym);
	const struct vg_image *main_img = vg_images_main(imgs);
	const char *colon = strrchr(spec, ':');
	struct vg_line_search ls = { 0 };
	struct vg_image **order = NULL;
	size_t n = 0, cap = 0;
	uint64_t line;
	int rc = 0;

	if (!colon[1] || vg_parse_u64(colon + 1, 0, &line) < 0 || line == 0 || line > UINT32_MAX)
		return vg_error_set(err, -EINVAL,
				    "malformed location '%s': expected FILE:LINE with LINE a number from 1", spec);
	ls.file = strndup(spec, (size_t)(colon - spec));
	ls.line = (uint32_t)line;
	/* Lookups may refresh the image set: walk a copy of it, main first
	 * (the images themselves live as long as the symbolizer). */
	order = imgs && imgs->n ? calloc(imgs->n, sizeof(*order)) : NULL;
	if (!ls.file || (imgs && imgs->n && !order)) {
		rc = vg_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (main_img)
		order[n++] = image_in(imgs, main_img);
	for (size_t i = 0; imgs && i < imgs->n; i++)
		if (imgs->images[i] != main_img)
			order[n++] = imgs->images[i];
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = scan_image(&ls, order[i], pid, sym, maps, out, &cap, err);
	if (rc == 0 && out->n_sites == 0)
		rc = no_code(&ls, err);
out:
	free(order);
	vg_line_search_clear(&ls);
	free((char *)ls.file);
	return rc;
}

/* ------------------------------------------------------------------ */
/* entry points                                                         */

static int resolve_addr(const char *spec, struct vg_symbolizer *sym, const struct vg_maps *maps,
			pid_t pid, struct vg_probe_location *out, struct vg_error *err)
{
	struct vg_addr a;
	int rc;

	/* addrspec would look "+5" up as a symbol name. */
	if (spec[0] == '+' || spec[strlen(spec) - 1] == ':')
		return vg_error_set(err, -EINVAL,
				    "malformed location '%s': expected SYMBOL, IMAGE:SYMBOL, SYMBOL+OFF, 0xADDR, @0xADDR or FILE:LINE",
				    spec);
	rc = vg_addr_parse(spec, vg_symbolizer_images(sym), NULL, &a, err);
	if (rc < 0)
		return rc;
	out->n_definitions = a.n_definitions;
	out->ifunc_resolver = a.ifunc_resolver;
	out->sites = calloc(1, sizeof(*out->sites));
	if (!out->sites || (a.ifunc && !(out->ifunc = strdup(a.ifunc))))
		return vg_error_set(err, -ENOMEM, "out of memory");
	rc = fill_site(sym, maps, pid, a.runtime, &out->sites[0], err);
	if (rc == 0)
		out->n_sites = 1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* usdt:[IMAGE:]PROVIDER:NAME                                          */

static bool is_usdt(const char *spec)
{
	return !strncmp(spec, "usdt:", 5);
}

/* Every probe PROVIDER:NAME of the images (IMAGE's only when given): one
 * site each (a probe may be emitted at several places, e.g. inlined). */
static int resolve_usdt(const char *spec, struct vg_symbolizer *sym, const struct vg_maps *maps,
			pid_t pid, struct vg_probe_location *out, struct vg_error *err)
{
	const struct vg_images *imgs = vg_symbolizer_images(sym);
	char buf[512], *parts[3], *save = NULL, *tok;
	const char *image = NULL, *provider, *name;
	char seen[512] = "";
	size_t n_parts = 0, cap = 0, n_seen = 0, used = 0;
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", spec + 5);
	for (tok = strtok_r(buf, ":", &save); tok && n_parts < 3; tok = strtok_r(NULL, ":", &save))
		parts[n_parts++] = tok;
	if (tok || n_parts < 2)
		return vg_error_set(err, -EINVAL, "malformed location '%s': expected "
				    "usdt:PROVIDER:NAME or usdt:IMAGE:PROVIDER:NAME", spec);
	if (n_parts == 3)
		image = parts[0];
	provider = parts[n_parts - 2];
	name = parts[n_parts - 1];
	for (size_t i = 0; imgs && i < imgs->n && rc == 0; i++) {
		const struct vg_image *img = imgs->images[i];
		struct vg_usdt_probe *probes = NULL;
		size_t n = 0;

		if (image && img != vg_images_by_name(imgs, image, NULL))
			continue;
		rc = vg_usdt_image_probes(img, &probes, &n, err);
		for (size_t k = 0; rc == 0 && k < n; k++) {
			const struct vg_usdt_probe *p = &probes[k];
			struct vg_probe_site *s;

			if (strcmp(p->provider, provider) || strcmp(p->name, name)) {
				if (used + 1 < sizeof(seen) && n_seen < 16) {
					used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s:%s",
								 n_seen ? ", " : "", p->provider, p->name);
					if (used >= sizeof(seen))
						used = sizeof(seen) - 1;
				}
				n_seen++;
				continue;
			}
			if (VG_GROW(out->sites, cap, out->n_sites + 1) < 0) {
				rc = vg_error_set(err, -ENOMEM, "out of memory");
				break;
			}
			s = &out->sites[out->n_sites];
			rc = fill_site(sym, maps, pid, p->pc + img->bias, s, err);
			if (rc == 0 && !(s->usdt_args = strdup(p->args))) {
				site_clear(s);
				rc = vg_error_set(err, -ENOMEM, "out of memory");
			}
			if (rc == 0 && p->semaphore &&
			    (rc = offset_in_loads(img, p->semaphore, true, &s->ref_ctr_offset, err)) < 0)
				site_clear(s);
			if (rc == 0)
				out->n_sites++;
		}
		free(probes);
	}
	if (rc == 0 && out->n_sites == 0)
		rc = vg_error_set(err, -ENOENT, "no USDT probe %s:%s in %s%s%s%s", provider, name,
				  image ? image : "the process's images",
				  n_seen ? " (its probes: " : " (no image has USDT probes)",
				  n_seen ? seen : "", n_seen ? (n_seen > 16 ? ", ...)" : ")") : "");
	return rc;
}

int vg_probe_resolve(const char *spec, struct vg_symbolizer *sym, struct vg_probe_location *out,
		     struct vg_error *err)
{
	pid_t pid = target_pid(sym);
	struct vg_maps *maps = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!spec || !spec[0])
		return vg_error_set(err, -EINVAL, "empty probe location");
	if (pid > 0 && (rc = vg_maps_read(pid, &maps, err)) < 0)
		return rc;
	out->input = strdup(spec);
	out->is_file_line = is_file_line(spec);
	if (!out->input)
		rc = vg_error_set(err, -ENOMEM, "out of memory");
	else if ((out->is_usdt = is_usdt(spec)))
		rc = resolve_usdt(spec, sym, maps, pid, out, err);
	else if (out->is_file_line)
		rc = resolve_file_line(spec, sym, maps, pid, out, err);
	else
		rc = resolve_addr(spec, sym, maps, pid, out, err);
	vg_maps_free(maps);
	if (rc < 0)
		vg_probe_location_clear(out);
	return rc;
}

void vg_probe_location_clear(struct vg_probe_location *loc)
{
	if (!loc)
		return;
	for (size_t i = 0; i < loc->n_sites; i++)
		site_clear(&loc->sites[i]);
	free(loc->sites);
	free(loc->input);
	free(loc->ifunc);
	memset(loc, 0, sizeof(*loc));
}
