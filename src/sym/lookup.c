/* lookup.c - the symbolizer's answer for one address (vg_sym_lookup):
 * the kernel's symbols, or the image, its symbol (or an unnamed function
 * from .eh_frame), the inline frames and line from its DWARF; a miss
 * refreshes the maps (rate-limited) in case a new image was mapped.
 * Never prints. */
#include "sym/symbolizer_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

/* A lookup under the shared lock that meets something only the exclusive
 * lock may do (read debug info, refresh, build a table, drop an index)
 * returns this; vg_sym_lookup then makes it again under that lock. */
#define NEED_EXCLUSIVE 1

static void lookup_kernel(struct vg_symbolizer *s, uint64_t addr,
			  struct vg_sym_result *res)
{
	struct vg_ksym k;

	if (!s->ksyms_loaded) {
		struct vg_error e = { 0 };

		s->ksyms_loaded = true;
		if (vg_kallsyms_load(NULL, &s->ksyms, &e) < 0)
			sym_warn(s, "cannot use /proc/kallsyms: %s", e.msg);
	}
	if (!s->ksyms || vg_kallsyms_why(s->ksyms)) {
		const char *why = s->ksyms ? vg_kallsyms_why(s->ksyms)
					   : "kernel symbols unavailable";

		if (!s->ksyms_warned)
			sym_warn(s, "%s", why);
		s->ksyms_warned = true;
		res->why = why;
		return;
	}
	if (vg_kallsyms_lookup(s->ksyms, addr, &k) < 0) {
		res->why = "no kernel symbol covers this address";
		return;
	}
	if (k.module) {
		snprintf(res->module_text, sizeof(res->module_text), "[%s]", k.module);
		res->image_path = res->module_text;
	} else {
		res->image_path = "[kernel]";
	}
	res->static_address = addr;
	res->has_symbol = true;
	res->symbol_raw = k.name;
	res->symbol = k.name;
	res->symbol_address = k.addr;
	res->symbol_size = k.size;
	res->offset = addr - k.addr;
	res->source = VG_SYMSRC_KALLSYMS;
	res->frames[0] = (struct vg_sym_frame){ .function = k.name };
	res->n_frames = 1;
}

/* The sentence goes into the answer itself: it must outlive the lock. */
static const char *no_image_reason(struct vg_symbolizer *s, uint64_t addr,
				   struct vg_sym_result *res)
{
	const struct vg_region *r = s->maps ? vg_maps_find(s->maps, addr) : NULL;
	char *buf = res->why_text;
	size_t size = sizeof(res->why_text);

	if (!s->target)
		snprintf(buf, size, "0x%" PRIx64 " is outside every PT_LOAD segment of the file", addr);
	else if (!r)
		snprintf(buf, size, "0x%" PRIx64 " is not mapped in the process", addr);
	else if (r->path && r->path[0])
		snprintf(buf, size, "0x%" PRIx64 " is in %s, which is not an ELF image", addr, r->path);
	else
		snprintf(buf, size, "0x%" PRIx64 " is in anonymous memory (no ELF image: JIT code, heap or stack)",
			 addr);
	return buf;
}

/* JIT code: an address in no image that the process's perf map names.
 * The map is read at the first such address and again, at most once a
 * second, when an address misses (the JIT keeps appending). */
static bool lookup_perfmap(struct vg_symbolizer *s, uint64_t addr,
			   struct vg_sym_result *res)
{
	const struct vg_perfmap_entry *e;
	struct vg_error e2 = { 0 };
	uint64_t now = sym_now_ns();
	int rc;

	if (!s->target)
		return false;
	if (!s->perfmap_opened) {
		s->perfmap_opened = true;
		s->perfmap_usable = vg_perfmap_open_target(&s->perfmap, s->target->pid,
							   s->target->mm_pid, NULL) == 0;
		if (!s->perfmap_usable)
			vg_perfmap_free(&s->perfmap);
	}
	if (!s->perfmap_usable)
		return false;
	e = s->perfmap.checked_ns ? vg_perfmap_lookup(&s->perfmap, addr) : NULL;
	if (!e) {
		rc = vg_perfmap_update(&s->perfmap, now, VG_SYM_REFRESH_NS, &e2);
		if (rc < 0 && rc != -ENOENT && !s->perfmap_warned) {
			s->perfmap_warned = true;
			sym_warn(s, "cannot use the perf map of the process (JIT code names): %s", e2.msg);
		}
		e = vg_perfmap_lookup(&s->perfmap, addr);
	}
	if (!e)
		return false;
	res->image_path = s->perfmap.label;
	res->static_address = addr;
	res->has_symbol = true;
	res->symbol_raw = e->name;
	res->symbol = sym_display_name(s, e->name, false);
	res->symbol_address = e->start;
	res->symbol_size = e->end - e->start;
	res->offset = addr - e->start;
	res->source = VG_SYMSRC_PERF_MAP;
	res->frames[0] = (struct vg_sym_frame){ .function = res->symbol };
	res->n_frames = 1;
	res->why = "JIT code named by the process's /tmp/perf-PID.map, which has no source lines";
	return true;
}

static const struct vg_image *find_image(struct vg_symbolizer *s, uint64_t addr)
{
	if (!s->target) {
		const struct vg_image *img = s->images->images[0];

		/* Offline addresses are the file's own: any PT_LOAD. */
		for (size_t i = 0; i < img->n_loads; i++)
			if (addr >= img->loads[i].vaddr &&
			    addr - img->loads[i].vaddr < img->loads[i].memsz)
				return img;
		return NULL;
	}
	return vg_images_find(s->images, addr);
}

/* Is img still what the process maps at addr?  A library unloaded and
 * another loaded at the same address covers the same range, so a hit in
 * the image table is confirmed with the kernel, at most once a second per
 * image: one PROCMAP_QUERY, or (before Linux 6.11) a stale verdict that
 * lets the rate-limited refresh re-read the maps. */
static bool still_mapped(struct vg_symbolizer *s, const struct vg_image *img,
			 uint64_t addr)
{
	struct image_state *st = sym_state_of(s, img);
	uint64_t now = sym_now_ns();
	struct vg_region r = { 0 };
	bool same;

	if (!st || now - st->checked_ns < VG_SYM_REFRESH_NS)
		return true;
	if (s->pm.fd < 0)
		return false;
	if (vg_procmap_query(&s->pm, addr, &r, NULL, NULL, NULL) < 0)
		return false;
	same = (r.inode == img->inode &&
		makedev(r.dev_major, r.dev_minor) == img->dev &&
		r.start >= img->lo && r.end <= img->hi) ||
	       /* the .bss tail: anonymous, after the last file page */
	       (r.inode == 0 && r.start >= img->hi && addr < img->mem_hi);
	free(r.path);
	if (same)
		st->checked_ns = now;
	return same;
}

/* Could a refresh find an image at addr?  Only if the kernel shows a file
 * mapped there: an address in the heap, a stack, JIT code or nowhere
 * stays without an image whatever the maps say next.  Without
 * PROCMAP_QUERY, the rate-limited refresh decides (and skips reopening
 * images when the maps are unchanged). */
static bool may_be_new_image(struct vg_symbolizer *s, uint64_t addr)
{
	struct vg_region r = { 0 };
	bool file;
	int rc;

	if (s->pm.fd < 0)
		return true;
	rc = vg_procmap_query(&s->pm, addr, &r, NULL, NULL, NULL);
	if (rc == -ENOENT)
		return false;  /* nothing mapped there */
	if (rc < 0)
		return true;   /* no answer (an older kernel): let the maps say */
	file = r.inode != 0;
	free(r.path);
	return file;
}

static enum vg_sym_source source_of(enum vg_debug_source d)
{
	switch (d) {
	case VG_DEBUG_EMBEDDED:
		return VG_SYMSRC_DWARF;
	case VG_DEBUG_BUILD_ID_DIR:
		return VG_SYMSRC_BUILD_ID_DIR;
	case VG_DEBUG_DEBUGLINK:
		return VG_SYMSRC_DEBUGLINK;
	case VG_DEBUG_DEBUGINFOD:
		return VG_SYMSRC_DEBUGINFOD;
	case VG_DEBUG_MINIDEBUGINFO:
		return VG_SYMSRC_MINIDEBUGINFO;
	default:
		return VG_SYMSRC_NONE;
	}
}

/* The symbol of symimg at vaddr (before: the nearest one starting at or
 * below it) from the persistent index when it keeps that table, so that
 * a run with a valid index neither reads .symtab nor sorts it; else from
 * the ELF.  A kept table that fails its checks drops the index (the ELF
 * answers, the file is rewritten). */
static int symbol_of(struct vg_symbolizer *s, struct image_state *st,
		     const struct vg_image *symimg, uint64_t vaddr, bool before,
		     bool shared, struct vg_symbol *sym)
{
	/* symimg NULL: a vouched stand-in's debug file, whose table the
	 * index keeps (sym_symbol_image). */
	uint32_t of = symimg == (st->dbg ? st->dbg->dwarf_image : NULL) ? sym_index_symbols_of(st) : 0;

	if (st->cached && of && vg_symindex_has_symbols(st->cached->index, of)) {
		int rc = before ? vg_symindex_symbol_before(st->cached->index, of, vaddr, sym)
				: vg_symindex_symbol_at(st->cached->index, of, vaddr, sym);

		if (rc != -EBADMSG && rc != -ENODATA)
			return rc;
		if (rc == -EBADMSG && shared)
			return NEED_EXCLUSIVE;
		if (rc == -EBADMSG)
			sym_drop_cached_index(s, st);
	}
	if (!symimg) {
		/* The index cannot answer: the file it vouched for, read. */
		if (shared)
			return NEED_EXCLUSIVE;
		sym_realize_debug(s, st);
		symimg = sym_symbol_image(st);
		if (!symimg)
			return -ENOENT;
	}
	if (shared && !vg_image_symbols_read(symimg))
		return NEED_EXCLUSIVE;
	return before ? vg_image_symbol_before(symimg, vaddr, sym)
		      : vg_image_symbol_at(symimg, vaddr, sym);
}

static int fill_symbol(struct vg_symbolizer *s, struct image_state *st,
		       struct vg_sym_result *res, bool shared,
		       enum vg_sym_source *sym_source)
{
	const struct vg_image *symimg = st->img;
	struct vg_symbol sym;
	bool found;
	int rc;

	*sym_source = VG_SYMSRC_NONE;
	symimg = sym_symbol_image(st);
	/* A separate debug file's .symtab answers first for a stripped
	 * image; the image's own .dynsym still covers what it lacks. */
	rc = symbol_of(s, st, symimg, res->static_address, false, shared, &sym);
	if (rc == NEED_EXCLUSIVE)
		return rc;
	found = rc == 0;
	if (!found && symimg != st->img && shared && !vg_image_symbols_read(st->img))
		return NEED_EXCLUSIVE;
	if (!found && symimg != st->img &&
	    vg_image_symbol_at(st->img, res->static_address, &sym) == 0) {
		symimg = st->img;
		found = true;
	}
	if (found) {
		res->has_symbol = true;
		res->symbol_raw = sym.name;
		res->symbol = sym_display_name(s, sym.name, true);
		res->symbol_address = sym.vaddr + st->img->bias;
		res->symbol_size = sym.size;
		res->offset = res->address - res->symbol_address;
		if (symimg != st->img)
			*sym_source = source_of(st->dbg->symbol_source);
		else
			*sym_source = sym.from_dynsym ? VG_SYMSRC_DYNSYM : VG_SYMSRC_SYMTAB;
		return 0;
	}
	rc = symbol_of(s, st, symimg, res->static_address, true, shared, &sym);
	if (rc == 0) {
		res->nearest_symbol = sym_display_name(s, sym.name, true);
		res->nearest_offset = res->static_address - sym.vaddr;
	}
	return rc == NEED_EXCLUSIVE ? rc : 0;
}

/* A C++ function whose DWARF has no linkage name (a member of a local
 * class, a lambda) is named by DW_AT_name alone ("bump", "operator()").
 * When the ELF symbol is that very function (same entry) and mangled, its
 * demangled name is the qualified one: shown instead, as llvm-symbolizer
 * and eu-addr2line show it.  C names keep the DWARF name (aliases). */
static void qualify_outer_frame(struct vg_sym_result *res,
				const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;

	if (!dw->n_frames)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || outer->name_is_linkage ||
	    !res->has_symbol || !res->symbol_raw || strncmp(res->symbol_raw, "_Z", 2) != 0 ||
	    res->symbol_address - bias != outer->entry || res->symbol == res->symbol_raw)
		return;
	res->frames[dw->n_frames - 1].function = res->symbol;
}

/* How public a C name looks: "__GI___clock_gettime" (glibc's internal
 * alias) < "__clock_gettime" < "clock_gettime". */
static int public_rank(const char *n)
{
	int r = 0;

	if (strncmp(n, "__GI_", 5) == 0)
		return -1;
	while (n[r] == '_')
		r++;
	return -r;
}

/* The concrete function of a frame taken from DWARF is named by its
 * linkage name, which for C is an asm alias where one was given (glibc's
 * hidden_proto: "__GI_sigaltstack", "__GI___clock_gettime").  When the
 * ELF symbol at the same entry is another name of that very function and
 * a more public one (the symbol lookup already ranks aliases: global over
 * local, default version, fewer underscores), the frame takes it, as
 * gdb and perf name it.  Not for clones ("f.constprop.0": the DWARF name
 * "f" is the better one) nor C++ (the mangled names are the same). */
static void public_outer_frame(struct vg_symbolizer *s, struct vg_sym_result *res,
			       const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;
	struct vg_sym_frame *f;

	if (!dw->n_frames || !res->has_symbol || !res->symbol)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	f = &res->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || !f->function ||
	    res->symbol_address - bias != outer->entry ||
	    strchr(res->symbol, '.') || strncmp(res->symbol_raw, "_Z", 2) == 0 ||
	    strncmp(f->function, "_Z", 2) == 0 || strcmp(f->function, res->symbol) == 0)
		return;
	if (public_rank(res->symbol) > public_rank(f->function))
		f->function = res->symbol;
	(void)s;
}

/* Under --no-demangle a frame is named by its linkage name: a C++
 * function whose DWARF has only DW_AT_name ("operator()" of a lambda)
 * takes the mangled ELF symbol at its entry. */
static void linkage_outer_frame(struct vg_symbolizer *s, struct vg_sym_result *res,
				const struct vg_dw_result *dw, uint64_t bias)
{
	const struct vg_dw_frame *outer;

	if (!(s->flags & VG_SYM_NO_DEMANGLE) || !dw->n_frames || !res->has_symbol)
		return;
	outer = &dw->frames[dw->n_frames - 1];
	if (dw->truncated || outer->inlined || outer->name_is_linkage ||
	    res->symbol_address - bias != outer->entry ||
	    strncmp(res->symbol_raw, "_Z", 2) != 0)
		return;
	res->frames[dw->n_frames - 1].function = res->symbol;
}

static int fill_frames(struct vg_symbolizer *s, struct image_state *st,
		       struct vg_sym_result *res, bool shared, struct vg_error *err)
{
	struct vg_dw_result dw;

	if (st->cached) {
		/* The persistent index: never corrupt DWARF (such DWARF is
		 * not kept), nothing left to build.  A part of the file that
		 * fails its checks (first looked at now) makes the DWARF
		 * answer instead, and the file is rewritten. */
		if (vg_symindex_lookup(st->cached->index, res->static_address, &dw) != -EBADMSG)
			goto found;
		if (shared)
			return NEED_EXCLUSIVE;
		sym_drop_cached_index(s, st);
	}
	if (!st->ix)
		return 0;
	/* dwindex builds CUs as lookups need them, and may start the
	 * prefetch thread: the cold path stays under the exclusive lock
	 * until every CU is indexed (ix_shared); from then on its tables
	 * are only read, and a batch's two threads look up side by side. */
	if (shared) {
		if (!st->ix_shared ||
		    vg_dwindex_lookup(st->ix, res->static_address, &dw) == -ENOMEM)
			return NEED_EXCLUSIVE;
		goto found;
	}
	/* -ENOENT (no CU covers it) still fills dw: no frames, no line;
	 * -ENOMEM (its CU could not be indexed) must not pass for that. */
	if (vg_dwindex_lookup(st->ix, res->static_address, &dw) == -ENOMEM)
		return vg_error_set(err, -ENOMEM, "out of memory indexing the DWARF of %s",
				    st->img->path[0] ? st->img->path : "(image)");
	sym_maybe_prefetch(s, st);
	if (vg_dwindex_corrupt(st->ix) && !st->corrupt_warned) {
		st->corrupt_warned = true;
		sym_warn(s, "the DWARF of %s (%s) is corrupt in places libdw refused to read; "
		     "answers from it may lack inline frames or lines",
		     st->img->path[0] ? st->img->path : "(image)",
		     st->dbg->path ? st->dbg->path : "embedded");
	}
	/* After the warning above: once complete, the index's corruption
	 * is final, and shared lookups do not look at it. */
	if (!st->ix_shared && vg_dwindex_complete(st->ix))
		st->ix_shared = true;
found:
	if (dw.n_frames == 0 && !dw.has_line)
		return 0;
	for (size_t i = 0; i < dw.n_frames; i++) {
		res->frames[i] = (struct vg_sym_frame){
			.function = sym_display_name_unversioned(s, dw.frames[i].name),
			.file = dw.frames[i].file,
			.line = dw.frames[i].line,
			.column = dw.frames[i].column,
			.inlined = dw.frames[i].inlined,
		};
	}
	res->n_frames = dw.n_frames;
	res->frames_truncated = dw.truncated;
	qualify_outer_frame(res, &dw, st->img->bias);
	public_outer_frame(s, res, &dw, st->img->bias);
	linkage_outer_frame(s, res, &dw, st->img->bias);
	if (dw.has_line) {
		res->file = dw.file;
		res->line = dw.line;
		res->column = dw.column;
	}
	return 0;
}

/* No symbol: is the address inside a function the image's .eh_frame
 * describes (a stripped one), rather than in padding? */
static int fill_unnamed_function(struct image_state *st, struct vg_sym_result *res,
				 bool shared)
{
	uint64_t start, end;

	if (shared && !vg_image_functions_read(st->img))
		return NEED_EXCLUSIVE;
	if (vg_image_function_at(st->img, res->static_address, &start, &end) < 0)
		return 0;
	res->function_start = start + st->img->bias;
	res->function_end = end + st->img->bias;
	return 0;
}

static const char *unnamed_why(struct vg_sym_result *res)
{
	snprintf(res->why_text, sizeof(res->why_text),
		 "no symbol covers this address, but the .eh_frame of the image describes a function at 0x%" PRIx64
		 "-0x%" PRIx64 " that contains it: its symbol was stripped",
		 res->function_start, res->function_end);
	return res->why_text;
}

/* One lookup under s->lock: held for writing, or (shared) for reading,
 * when it returns NEED_EXCLUSIVE as soon as it meets what only a writer
 * may do. */
static int lookup_locked(struct vg_symbolizer *s, uint64_t addr,
			 struct vg_sym_result *res, bool shared, struct vg_error *err)
{
	const struct vg_image *img;
	struct image_state *st;
	enum vg_sym_source sym_source;
	bool from_dwarf;
	int rc;

	if (vg_addr_is_kernel(addr) && s->target) {
		if (shared)
			return NEED_EXCLUSIVE;
		if (!(s->flags & VG_SYM_NO_KERNEL))
			lookup_kernel(s, addr, res);
		else
			res->why = "kernel address (kernel symbols not requested)";
		return 0;
	}
	img = find_image(s, addr);
	if (shared && s->target && sym_now_ns() - s->last_refresh_ns >= VG_SYM_REFRESH_NS) {
		/* Only an image confirmed within the second needs no
		 * refresh (still_mapped below). */
		st = img ? sym_state_of(s, img) : NULL;
		if (!st || sym_now_ns() - st->checked_ns >= VG_SYM_REFRESH_NS)
			return NEED_EXCLUSIVE;
	} else if (s->target && sym_now_ns() - s->last_refresh_ns >= VG_SYM_REFRESH_NS &&
	    (img ? !still_mapped(s, img, addr) : may_be_new_image(s, addr))) {
		rc = sym_refresh_locked(s, err);
		if (rc == -ESRCH && img) {
			/* The process is gone: samples drained after its exit
			 * ran in the maps it last had, which still hold img. */
			vg_error_clear(err);
		} else if (rc < 0) {
			return rc;
		} else {
			img = find_image(s, addr);
		}
	}
	if (!img) {
		if (shared)
			return NEED_EXCLUSIVE;
		if (lookup_perfmap(s, addr, res))
			return 0;
		res->why = no_image_reason(s, addr, res);
		return 0;
	}
	st = sym_state_of(s, img);
	res->image = img;
	res->image_path = img->path;
	res->static_address = addr - img->bias;
	if (shared && !st->looked)
		return NEED_EXCLUSIVE;
	/* Checked here: perf put 9% of an indexed libc batch on the call
	 * itself (a 4.7 KB frame set up, for the first lookup's work). */
	rc = st->looked ? 0 : sym_ensure_debug(s, st, err);
	if (rc < 0)
		return rc;
	rc = fill_symbol(s, st, res, shared, &sym_source);
	if (rc == 0)
		rc = fill_frames(s, st, res, shared, err);
	if (rc == 0 && !res->has_symbol)
		rc = fill_unnamed_function(st, res, shared);
	if (rc)
		return rc;
	from_dwarf = res->n_frames > 0 || res->file;
	if (res->n_frames == 0 && res->function_start) {
		res->frames[0] = (struct vg_sym_frame){
			.function = sym_unnamed_name(s, res->function_start),
			.file = res->file, .line = res->line, .column = res->column,
		};
		res->n_frames = res->frames[0].function ? 1 : 0;
	}
	if (res->n_frames == 0 && res->has_symbol) {
		/* No DWARF scope (a function compiled without debug info, or
		 * hand-written assembly): the symbol is the function, at the
		 * line the line table gives, if any (llvm-symbolizer does the
		 * same). */
		res->frames[0] = (struct vg_sym_frame){
			.function = res->symbol, .file = res->file,
			.line = res->line, .column = res->column,
		};
		res->n_frames = 1;
		if (res->file)
			res->why = "no DWARF scope covers this address: the function is the symbol";
	}
	if (from_dwarf) {
		res->source = source_of(st->dbg->source);
	} else {
		res->source = !res->has_symbol && res->function_start ? VG_SYMSRC_EH_FRAME
								       : sym_source;
		if (!res->has_symbol && res->function_start)
			res->why = unnamed_why(res);
		else if (st->why_no_dwarf) {
			res->why = st->why_no_dwarf;
			res->why_is_image_note = true;
		}
		else if (res->has_symbol)
			res->why = "no DWARF scope or line covers this address";
		else if (res->nearest_symbol)
			res->why = "padding between functions: no symbol, DWARF scope or line covers this address (nearest_symbol is a hint)";
		else
			res->why = "no symbol, DWARF scope or line covers this address";
	}
	if (!res->has_symbol && !res->why && res->function_start)
		res->why = unnamed_why(res);
	if (!res->has_symbol && !res->why)
		res->why = res->nearest_symbol
			? "padding between functions: no symbol covers this address (nearest_symbol is a hint)"
			: "no symbol covers this address";
	return 0;
}

static void result_clear(struct vg_sym_result *res, uint64_t addr)
{
	memset(res, 0, offsetof(struct vg_sym_result, frames));
	res->n_frames = 0;
	res->frames_truncated = false;
	res->file = NULL;
	res->line = res->column = 0;
	res->why = NULL;
	res->why_is_image_note = false;
	res->address = addr;
}

/* Under the shared lock first: once an image's debug info is found and
 * its persistent index answers (or every CU of its DWARF is indexed in
 * memory), lookups change nothing but what has a lock of its own (the
 * index's first checks, the name caches), and two threads look up side
 * by side.  Anything else (the first lookup in an image, the cold DWARF
 * index still being built, a refresh, the kernel, JIT code) is made
 * again under the exclusive lock. */
int vg_sym_lookup(struct vg_symbolizer *s, uint64_t addr,
		  struct vg_sym_result *res, struct vg_error *err)
{
	int rc;

	result_clear(res, addr);
	pthread_rwlock_rdlock(&s->lock);
	rc = lookup_locked(s, addr, res, true, err);
	pthread_rwlock_unlock(&s->lock);
	if (rc != NEED_EXCLUSIVE)
		return rc;
	result_clear(res, addr);
	pthread_rwlock_wrlock(&s->lock);
	rc = lookup_locked(s, addr, res, false, err);
	pthread_rwlock_unlock(&s->lock);
	return rc;
}

void vg_sym_hold(struct vg_symbolizer *s)
{
	pthread_rwlock_rdlock(&s->lock);
}

void vg_sym_release(struct vg_symbolizer *s)
{
	pthread_rwlock_unlock(&s->lock);
}

/* With the shared lock held: only an image already looked up in
 * (st->looked) is touched, and only its index (the persistent one, else
 * the in-memory one, which hints only at CUs already indexed); anything
 * else is left to the lookup itself. */
void vg_sym_prefetch_held(struct vg_symbolizer *s, uint64_t addr, bool records)
{
	const struct vg_image *img;
	const struct image_state *st;

	if (vg_addr_is_kernel(addr) && s->target)
		return;
	img = find_image(s, addr);
	if (!img)
		return;
	st = sym_state_of(s, img);
	if (!st || !st->looked)
		return;
	if (st->cached && records)
		vg_symindex_prefetch_records(st->cached->index, addr - img->bias);
	else if (st->cached)
		vg_symindex_prefetch(st->cached->index, addr - img->bias);
	else if (st->ix && !records)
		vg_dwindex_prefetch_lookup(st->ix, addr - img->bias);
}

/* vg_sym_lookup with the shared lock already held (vg_sym_hold). */
int vg_sym_lookup_held(struct vg_symbolizer *s, uint64_t addr,
		       struct vg_sym_result *res, struct vg_error *err)
{
	int rc;

	result_clear(res, addr);
	rc = lookup_locked(s, addr, res, true, err);
	if (rc != NEED_EXCLUSIVE)
		return rc;
	pthread_rwlock_unlock(&s->lock);
	result_clear(res, addr);
	pthread_rwlock_wrlock(&s->lock);
	rc = lookup_locked(s, addr, res, false, err);
	pthread_rwlock_unlock(&s->lock);
	pthread_rwlock_rdlock(&s->lock);
	return rc;
}

const char *vg_sym_source_name(enum vg_sym_source src)
{
	switch (src) {
	case VG_SYMSRC_DWARF:
		return "dwarf";
	case VG_SYMSRC_SYMTAB:
		return "symtab";
	case VG_SYMSRC_DYNSYM:
		return "dynsym";
	case VG_SYMSRC_DEBUGLINK:
		return "debuglink";
	case VG_SYMSRC_BUILD_ID_DIR:
		return "build-id-dir";
	case VG_SYMSRC_MINIDEBUGINFO:
		return "minidebuginfo";
	case VG_SYMSRC_DEBUGINFOD:
		return "debuginfod";
	case VG_SYMSRC_KALLSYMS:
		return "kallsyms";
	case VG_SYMSRC_EH_FRAME:
		return "eh_frame";
	case VG_SYMSRC_PERF_MAP:
		return "perf-map";
	default:
		return "none";
	}
}
