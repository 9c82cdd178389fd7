/* debuginfo.c - find the DWARF and the best symbol table of an image.
 *
 * Walks the sources of debuginfo.h in order and keeps the first debug file
 * that libdw accepts (dwarf_begin_elf).  Every candidate is opened through
 * vg_image_open_path, so it must be an ELF64 x86-64 file with every section
 * inside the file, and is then checked against the image: a .gnu_debuglink
 * candidate by the link's CRC32 (zlib's crc32 of the whole file, as
 * binutils computes it), every candidate by build-id when both files have
 * one.  A refused candidate adds one "PATH: reason" line to `tried` and the
 * walk goes on to the next candidate of the list; nothing is ever derived
 * from a path that did not open.  vg_debuginfo_vouched is the one
 * shortcut: it stands for a file that an earlier run opened and checked
 * (a persistent index written from it records its device, inode, size
 * and mtime) and that is still that file, and opens nothing; the caller
 * searches again when it needs the file itself.
 *
 * MiniDebugInfo (.gnu_debugdata) is an xz stream holding an ELF with a
 * .symtab of the local function symbols that `strip` removed; it has no
 * DWARF and is only read when nothing better gave a symbol table.  The
 * decompressed size and the decoder's memory are capped: the section comes
 * from the target's file and must not make vigil allocate without bound.
 *
 * debuginfod is asked only when DEBUGINFOD_URLS is non-empty: the library
 * would otherwise do nothing useful, and with its progress function and
 * verbose output cleared it never prints.  This module reads that one
 * variable; everything else comes from opts.  libdebuginfod is loaded then
 * (dlopen), as libdw itself does, not linked: it brings libcurl and its TLS,
 * Kerberos and LDAP libraries, some thirty, into every vigil run for a
 * feature most runs never use, and a machine without libdebuginfod1 still
 * runs vigil.  Its header still types the calls.
 *
 * Not done: DW_AT_GNU_dwo (split DWARF) files and .gnu_debugaltlink (dwz)
 * files are left to libdw, which opens the alternate file itself, relative to
 * the debug file, when a DIE refers to it. */
#include "elf/debuginfo.h"

#include <dirent.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/debuginfod.h>

#include "elf/inflate.h"
#include "util/dynlib.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
/* MiniDebugInfo holds a symbol table only; even for the largest libraries
 * it stays far below these. */
#define MINIDEBUG_OUT_MAX (256u << 20)
#define MINIDEBUG_MEMLIMIT (64u << 20)

struct finder {
	struct vg_image *img;
	const char *target_root;  /* NULL: host paths only */
	const char *debug_dir;
	bool no_debuginfod;
	bool defer_dwarf;
	struct vg_debuginfo *d;
	/* A debug file that opened and matched but has no DWARF: kept for its
	 * .symtab unless a later file with DWARF has one too. */
	struct vg_image *symbols_only;
	enum vg_debug_source symbols_only_source;
	size_t tried_len;
	bool oom;
};

const char *vg_debug_source_name(enum vg_debug_source s)
{
	switch (s) {
	case VG_DEBUG_EMBEDDED:
		return "dwarf";
	case VG_DEBUG_BUILD_ID_DIR:
		return "build-id-dir";
	case VG_DEBUG_DEBUGLINK:
		return "debuglink";
	case VG_DEBUG_DEBUGINFOD:
		return "debuginfod";
	case VG_DEBUG_MINIDEBUGINFO:
		return "minidebuginfo";
	case VG_DEBUG_NONE:
	default:
		return "none";
	}
}

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

static void note(struct finder *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append one line to d->tried. */
static void note(struct finder *f, const char *fmt, ...)
{
	char *line = NULL, *grown;
	size_t n;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0) {
		f->oom = true;
		return;
	}
	n = (size_t)r;
	grown = realloc(f->d->tried, f->tried_len + n + 2);
	if (!grown) {
		free(line);
		f->oom = true;
		return;
	}
	f->d->tried = grown;
	if (f->tried_len)
		grown[f->tried_len++] = '\n';
	memcpy(grown + f->tried_len, line, n + 1);
	f->tried_len += n;
	free(line);
}

static const char *open_reason(int r)
{
	switch (r) {
	case -ENOENT:
		return "no such file";
	case -EACCES:
	case -EPERM:
		return "permission denied";
	case -ENOEXEC:
		return "not an ELF64 x86-64 executable or library, or truncated";
	case -ENOMEM:
		return "out of memory";
	default:
		return strerror(-r);
	}
}

/* The section named name, or NULL. */
static Elf_Scn *section_by_name(Elf *elf, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0) {
			if (out)
				*out = sh;
			return scn;
		}
	}
	return NULL;
}

static bool has_symtab(const struct vg_image *img)
{
	Elf *elf = vg_image_elf(img);
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
		    sh.sh_size > 0)
			return true;
	}
	return false;
}

/* .debug_info with bytes in the file; a debug file from
 * `objcopy --only-keep-debug` of an image without DWARF has none, and the
 * stripped image keeps only a NOBITS header. */
static bool has_debug_info(Elf *elf)
{
	GElf_Shdr sh;

	if (section_by_name(elf, ".debug_info", &sh))
		return sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
	if (section_by_name(elf, ".zdebug_info", &sh))
		return sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
	return false;
}

/* libdw's handle on elf, its compressed sections decompressed fast
 * first (elf/inflate.h).  d keeps the in-memory copy the handle reads:
 * every caller makes the handle d's Dwarf when it is not NULL. */
static Dwarf *begin_dwarf(struct vg_debuginfo *d, Elf *elf)
{
	struct vg_inflated *keep;
	Dwarf *dw = vg_dwarf_begin(elf, &keep);

	vg_inflated_free(d->inflated);
	d->inflated = keep;
	return dw;
}

static const char *label_of(const struct vg_image *img)
{
	if (img->path && img->path[0])
		return img->path;
	if (img->open_path && img->open_path[0])
		return img->open_path;
	return "(image)";
}

/* ------------------------------------------------------------------ */
/* CRC                                                                  */

int vg_debuglink_crc(int fd, uint32_t *crc)
{
	unsigned char buf[64 * 1024];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	*crc = (uint32_t)c;
	return 0;
}

/* ------------------------------------------------------------------ */
/* taking a candidate                                                   */

struct check {
	bool crc;            /* check the .gnu_debuglink CRC */
	uint32_t want_crc;
};

/* Is dbg the debug file of f->img?  Returns false with a note if not. */
static bool matches(struct finder *f, struct vg_image *dbg, const char *path,
		    const struct check *ck)
{
	const struct vg_image *img = f->img;

	if (img->inode && dbg->dev == img->dev && dbg->inode == img->inode) {
		note(f, "%s: is the image itself", path);
		return false;
	}
	if (ck && ck->crc) {
		uint32_t crc;
		int r = vg_debuglink_crc(vg_image_fd(dbg), &crc);

		if (r < 0) {
			note(f, "%s: cannot read it for its CRC: %s", path,
			     strerror(-r));
			return false;
		}
		if (crc != ck->want_crc) {
			note(f, "%s: CRC mismatch (file 0x%08x, .gnu_debuglink wants 0x%08x)",
			     path, crc, ck->want_crc);
			return false;
		}
	}
	if (img->build_id_len && dbg->build_id_len &&
	    (img->build_id_len != dbg->build_id_len ||
	     memcmp(img->build_id, dbg->build_id, img->build_id_len) != 0)) {
		char a[160], b[160];

		note(f, "%s: build-id mismatch (file %s, image %s)", path,
		     vg_image_build_id_hex(dbg, b, sizeof(b)),
		     vg_image_build_id_hex(img, a, sizeof(a)));
		return false;
	}
	return true;
}

/* Keep dbg (which matched): as the DWARF file when libdw accepts it,
 * else as a symbol table when it has one.  Takes dbg.  Returns true when
 * the DWARF is found and the search is over. */
static bool take(struct finder *f, struct vg_image *dbg, const char *path,
		 enum vg_debug_source src)
{
	struct vg_debuginfo *d = f->d;
	Dwarf *dw = NULL;

	if (has_debug_info(vg_image_elf(dbg))) {
		if (!f->defer_dwarf) {
			dw = begin_dwarf(d, vg_image_elf(dbg));
			if (!dw)
				note(f, "%s: DWARF not readable: %s", path,
				     dwarf_errmsg(-1));
		}
	} else {
		note(f, "%s: has no .debug_info", path);
	}
	if (dw || (f->defer_dwarf && has_debug_info(vg_image_elf(dbg)))) {
		d->dwarf = dw;
		d->dwarf_deferred = !dw;
		d->dwarf_image = dbg;
		d->owns_dwarf_image = true;
		d->source = src;
		free(d->path);
		d->path = strdup(path);
		if (!d->path)
			f->oom = true;
		return true;
	}
	if (!f->symbols_only && has_symtab(dbg)) {
		f->symbols_only = dbg;
		f->symbols_only_source = src;
		return false;
	}
	vg_image_free(dbg);
	return false;
}

/* Open one candidate path, check it and take it.  Returns true when the
 * DWARF is found. */
static bool try_path(struct finder *f, const char *path, const struct check *ck,
		     enum vg_debug_source src)
{
	struct vg_error err = { 0 };
	struct vg_image *dbg = NULL;
	int r;

	r = vg_image_open_path(path, &dbg, &err);
	if (r < 0) {
		if (r == -ENOMEM)
			f->oom = true;
		note(f, "%s: %s", path, open_reason(r));
		return false;
	}
	if (!matches(f, dbg, path, ck)) {
		vg_image_free(dbg);
		return false;
	}
	return take(f, dbg, path, src);
}

/* A path as the target sees it: first under target_root, then on the host
 * when that is another file. */
static bool try_target_path(struct finder *f, const char *path,
			    const struct check *ck, enum vg_debug_source src)
{
	struct stat in_root, on_host;
	char *rooted = NULL;
	bool root_exists, found;

	if (!f->target_root || path[0] != '/')
		return try_path(f, path, ck, src);
	if (asprintf(&rooted, "%s%s", f->target_root, path) < 0) {
		f->oom = true;
		return false;
	}
	root_exists = stat(rooted, &in_root) == 0;
	found = try_path(f, rooted, ck, src);
	free(rooted);
	if (found)
		return true;
	if (root_exists && stat(path, &on_host) == 0 &&
	    on_host.st_dev == in_root.st_dev && on_host.st_ino == in_root.st_ino)
		return false;
	return try_path(f, path, ck, src);
}

/* ------------------------------------------------------------------ */
/* the sources                                                          */

static bool try_embedded(struct finder *f)
{
	struct vg_debuginfo *d = f->d;
	Elf *elf = vg_image_elf(f->img);
	Dwarf *dw;

	if (!has_debug_info(elf))
		return false;
	if (f->defer_dwarf) {
		d->dwarf_deferred = true;
		d->dwarf_image = f->img;
		d->owns_dwarf_image = false;
		d->source = VG_DEBUG_EMBEDDED;
		return true;
	}
	dw = begin_dwarf(d, elf);
	if (!dw) {
		note(f, "%s: embedded DWARF not readable: %s",
		     label_of(f->img), dwarf_errmsg(-1));
		return false;
	}
	d->dwarf = dw;
	d->dwarf_image = f->img;
	d->owns_dwarf_image = false;
	d->source = VG_DEBUG_EMBEDDED;
	return true;
}

/* DEBUG_DIR/.build-id/xx/rest.debug of img into *path: 0, -ENOENT (no
 * build-id of two bytes or more: xx/rest needs them), -ENOMEM. */
static int build_id_path(const struct vg_image *img, const char *debug_dir, char **path)
{
	char hex[2 * sizeof(img->build_id) + 1];

	*path = NULL;
	if (img->build_id_len < 2)
		return -ENOENT;
	vg_image_build_id_hex(img, hex, sizeof(hex));
	if (asprintf(path, "%s/.build-id/%.2s/%s.debug", debug_dir, hex, hex + 2) < 0) {
		*path = NULL;
		return -ENOMEM;
	}
	return 0;
}

static bool try_build_id_dir(struct finder *f)
{
	char *path;
	bool found;
	int r = build_id_path(f->img, f->debug_dir, &path);

	f->oom |= r == -ENOMEM;
	if (r < 0)
		return false;
	found = try_target_path(f, path, NULL, VG_DEBUG_BUILD_ID_DIR);
	free(path);
	return found;
}

/* Read .gnu_debuglink: a NUL-terminated file name, padding to 4 bytes,
 * then the CRC32 (little-endian, as the file).  Returns false when the
 * image has none or it is malformed (with a note). */
static bool read_debuglink(struct finder *f, char **name, uint32_t *crc)
{
	Elf_Scn *scn = section_by_name(vg_image_elf(f->img), ".gnu_debuglink",
				       NULL);
	Elf_Data *data;
	const char *buf;
	size_t len, crc_off;

	if (!scn)
		return false;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf) {
		note(f, "%s: .gnu_debuglink not readable", label_of(f->img));
		return false;
	}
	buf = data->d_buf;
	len = strnlen(buf, data->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len == data->d_size || crc_off + 4 > data->d_size) {
		note(f, "%s: .gnu_debuglink is malformed", label_of(f->img));
		return false;
	}
	/* A name with a '/' would let the image send vigil anywhere; binutils
	 * only ever writes a base name. */
	if (memchr(buf, '/', len)) {
		note(f, "%s: .gnu_debuglink names a path, not a file name",
		     label_of(f->img));
		return false;
	}
	memcpy(crc, buf + crc_off, sizeof(*crc));
	*name = strndup(buf, len);
	if (!*name) {
		f->oom = true;
		return false;
	}
	return true;
}

/* DIR of the image: its path's directory, "." for a bare name. */
static char *image_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static bool try_debuglink(struct finder *f)
{
	struct check ck = { .crc = true };
	char *name = NULL, *dir = NULL, *abs_dir = NULL;
	const char *mirror_dir;
	char *paths[3] = { NULL, NULL, NULL };
	bool found = false;

	if (!read_debuglink(f, &name, &ck.want_crc))
		return false;
	if (!f->img->path || !f->img->path[0]) {
		note(f, "%s: .gnu_debuglink '%s' not looked up: the image's path is unknown",
		     label_of(f->img), name);
		free(name);
		return false;
	}
	dir = image_dir(f->img->path);
	if (!dir) {
		f->oom = true;
		goto out;
	}
	/* The mirror tree under debug_dir is keyed by absolute directories;
	 * a relative --bin path is made absolute on the host. */
	mirror_dir = dir;
	if (dir[0] != '/' && !f->target_root) {
		abs_dir = realpath(dir, NULL);
		if (abs_dir)
			mirror_dir = abs_dir;
	}
	if (asprintf(&paths[0], "%s/%s", dir, name) < 0 ||
	    asprintf(&paths[1], "%s/.debug/%s", dir, name) < 0 ||
	    asprintf(&paths[2], "%s%s%s/%s", f->debug_dir,
		     mirror_dir[0] == '/' ? "" : "/", mirror_dir, name) < 0) {
		f->oom = true;
		goto out;
	}
	for (size_t i = 0; i < 3 && !found && !f->oom; i++)
		found = try_target_path(f, paths[i], &ck, VG_DEBUG_DEBUGLINK);
out:
	for (size_t i = 0; i < 3; i++)
		free(paths[i]);
	free(abs_dir);
	free(dir);
	free(name);
	return found;
}

/* libdebuginfod, loaded when a search first asks a server: linking it
 * brings libcurl, GnuTLS, Kerberos and LDAP (30 libraries) into every
 * start of every command, 8,600 symbol relocations, most of vigil's
 * startup, for a feature used only with DEBUGINFOD_URLS set. */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_verbose_fd)(debuginfod_client *, int);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} dfd;
static const char *const dfd_soname[] = { "libdebuginfod.so.1" };
static const struct vg_dynlib_fn dfd_fns[] = {
	{ "debuginfod_begin", (void **)&dfd.begin },
	{ "debuginfod_end", (void **)&dfd.end },
	{ "debuginfod_set_progressfn", (void **)&dfd.set_progressfn },
	{ "debuginfod_set_verbose_fd", (void **)&dfd.set_verbose_fd },
	{ "debuginfod_find_debuginfo", (void **)&dfd.find_debuginfo },
};
static struct vg_dynlib dfd_lib = VG_DYNLIB(dfd_soname, dfd_fns);

static bool try_debuginfod(struct finder *f)
{
	const struct vg_image *img = f->img;
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *path = NULL;
	char hex[2 * sizeof(img->build_id) + 1];
	const char *why;
	int fd;
	bool found;

	f->d->debuginfod = f->no_debuginfod ? VG_DEBUGINFOD_DISABLED
			   : !urls || !urls[0] ? VG_DEBUGINFOD_UNSET
			   : !img->build_id_len ? VG_DEBUGINFOD_NO_BUILD_ID
			   : VG_DEBUGINFOD_ASKED;
	if (f->d->debuginfod != VG_DEBUGINFOD_ASKED)
		return false;
	if (!vg_dynlib_get(&dfd_lib, &why)) {
		note(f, "debuginfod: %s", why);
		return false;
	}
	c = dfd.begin();
	if (!c) {
		note(f, "debuginfod: cannot start the client");
		return false;
	}
	/* DEBUGINFOD_PROGRESS and DEBUGINFOD_VERBOSE would make the library
	 * write to stderr; libvigil never prints. */
	dfd.set_progressfn(c, NULL);
	dfd.set_verbose_fd(c, -1);
	fd = dfd.find_debuginfo(c, img->build_id, (int)img->build_id_len, &path);
	dfd.end(c);
	if (fd < 0) {
		note(f, "debuginfod %s: build-id %s: %s", urls,
		     vg_image_build_id_hex(img, hex, sizeof(hex)),
		     fd == -ENOENT ? "not found on the servers" : strerror(-fd));
		free(path);
		return false;
	}
	close(fd);
	found = path && try_path(f, path, NULL, VG_DEBUG_DEBUGINFOD);
	free(path);
	return found;
}

/* xz-decompress the whole of in, at most MINIDEBUG_OUT_MAX bytes. */
static int unxz(const uint8_t *in, size_t in_len, uint8_t **out,
		size_t *out_len, const char **why)
{
	lzma_stream s = LZMA_STREAM_INIT;
	uint8_t *buf = NULL;
	size_t cap = 0;
	lzma_ret ret;
	int code = -EINVAL;

	*why = NULL;
	if (lzma_stream_decoder(&s, MINIDEBUG_MEMLIMIT, 0) != LZMA_OK) {
		*why = "cannot start the xz decoder";
		return -ENOMEM;
	}
	s.next_in = in;
	s.avail_in = in_len;
	do {
		if (s.avail_out == 0) {
			size_t ncap = cap ? 2 * cap : 4 * in_len + 4096;
			uint8_t *nb;

			if (cap >= MINIDEBUG_OUT_MAX) {
				*why = "larger than 256 MiB decompressed";
				break;
			}
			if (ncap > MINIDEBUG_OUT_MAX)
				ncap = MINIDEBUG_OUT_MAX;
			nb = realloc(buf, ncap);
			if (!nb) {
				*why = "out of memory";
				code = -ENOMEM;
				break;
			}
			buf = nb;
			s.next_out = buf + cap;
			s.avail_out = ncap - cap;
			cap = ncap;
		}
		ret = lzma_code(&s, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (!*why && ret != LZMA_STREAM_END) {
		*why = ret == LZMA_MEMLIMIT_ERROR ? "needs too much memory to decompress" :
			ret == LZMA_MEM_ERROR ? "out of memory" :
			"not a valid xz stream";
		if (ret == LZMA_MEM_ERROR)
			code = -ENOMEM;
	}
	*out_len = cap - s.avail_out;
	lzma_end(&s);
	if (*why) {
		free(buf);
		return code;
	}
	*out = buf;
	return 0;
}

/* The MiniDebugInfo ELF of the image, or NULL. */
static struct vg_image *open_minidebuginfo(struct finder *f)
{
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	struct vg_error err = { 0 };
	struct vg_image *mini = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	const char *why;
	char *label = NULL;
	int r;

	scn = section_by_name(vg_image_elf(f->img), ".gnu_debugdata", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS)
		return NULL;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size) {
		note(f, "%s: .gnu_debugdata not readable", label_of(f->img));
		return NULL;
	}
	r = unxz(data->d_buf, data->d_size, &buf, &len, &why);
	if (r < 0) {
		if (r == -ENOMEM)
			f->oom = true;
		note(f, "%s: .gnu_debugdata: %s", label_of(f->img), why);
		return NULL;
	}
	if (asprintf(&label, "%s[.gnu_debugdata]", label_of(f->img)) < 0) {
		free(buf);
		f->oom = true;
		return NULL;
	}
	r = vg_image_open_memory(buf, len, label, &mini, &err);
	free(buf);
	if (r < 0) {
		if (r == -ENOMEM)
			f->oom = true;
		note(f, "%s: %s", label, open_reason(r));
		free(label);
		return NULL;
	}
	free(label);
	if (!has_symtab(mini)) {
		note(f, "%s: .gnu_debugdata has no .symtab", label_of(f->img));
		return vg_image_free(mini);
	}
	return mini;
}

/* ------------------------------------------------------------------ */
/* the symbol table                                                     */

static void choose_symbols(struct finder *f)
{
	struct vg_debuginfo *d = f->d;
	struct vg_image *mini;

	d->symbol_image = f->img;
	d->symbol_source = VG_DEBUG_NONE;
	d->owns_symbol_image = false;
	if (has_symtab(f->img))
		return;
	if (d->dwarf_image && d->dwarf_image != f->img &&
	    has_symtab(d->dwarf_image)) {
		d->symbol_image = d->dwarf_image;
		d->symbol_source = d->source;
		return;
	}
	if (f->symbols_only) {
		d->symbol_image = f->symbols_only;
		d->symbol_source = f->symbols_only_source;
		d->owns_symbol_image = true;
		f->symbols_only = NULL;
		if (!d->path && !(d->path = strdup(d->symbol_image->open_path)))
			f->oom = true;
		return;
	}
	mini = open_minidebuginfo(f);
	if (mini) {
		d->symbol_image = mini;
		d->symbol_source = VG_DEBUG_MINIDEBUGINFO;
		d->owns_symbol_image = true;
	}
}

/* ------------------------------------------------------------------ */

int vg_debuginfo_find(struct vg_image *img,
		      const struct vg_debuginfo_opts *opts,
		      struct vg_debuginfo **out, struct vg_error *err)
{
	static const struct vg_debuginfo_opts defaults = { 0 };
	struct finder f = { .img = img };
	bool (*const sources[])(struct finder *) = {
		try_embedded, try_build_id_dir, try_debuglink, try_debuginfod,
	};

	*out = NULL;
	if (!opts)
		opts = &defaults;
	f.target_root = opts->target_root && opts->target_root[0] ?
		opts->target_root : NULL;
	f.debug_dir = opts->debug_dir ? opts->debug_dir : DEFAULT_DEBUG_DIR;
	f.no_debuginfod = opts->no_debuginfod;
	f.defer_dwarf = opts->defer_dwarf;
	f.d = calloc(1, sizeof(*f.d));
	if (!f.d)
		goto oom;
	f.d->debuginfod = VG_DEBUGINFOD_NOT_NEEDED;
	f.d->tried = strdup("");
	if (!f.d->tried)
		goto oom;
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (sources[i](&f) || f.oom)
			break;
	if (f.oom)
		goto oom;
	choose_symbols(&f);
	vg_image_free(f.symbols_only);
	f.symbols_only = NULL;
	if (f.oom)
		goto oom;
	*out = f.d;
	return 0;
oom:
	vg_image_free(f.symbols_only);
	vg_debuginfo_free(f.d);
	return vg_error_set(err, -ENOMEM,
			    "out of memory looking for the debug info of '%s'",
			    label_of(img));
}

int vg_debuginfo_first_file(const struct vg_image *img,
			    const struct vg_debuginfo_opts *opts, char **path,
			    struct stat *st)
{
	const char *root = opts && opts->target_root && opts->target_root[0] ?
		opts->target_root : NULL;
	char *host, *rooted = NULL;
	int r;

	*path = NULL;
	/* try_embedded comes first: with DWARF of its own, img is its own
	 * debug file. */
	if (has_debug_info(vg_image_elf(img)))
		return -ENOENT;
	r = build_id_path(img, opts && opts->debug_dir ? opts->debug_dir : DEFAULT_DEBUG_DIR,
			  &host);
	if (r < 0)
		return r;
	/* try_target_path's order: the target's file first, the host's
	 * when the target has none there. */
	if (root && host[0] == '/') {
		if (asprintf(&rooted, "%s%s", root, host) < 0) {
			free(host);
			return -ENOMEM;
		}
		if (stat(rooted, st) == 0 && S_ISREG(st->st_mode)) {
			free(host);
			*path = rooted;
			return 0;
		}
		free(rooted);
	}
	if (stat(host, st) == 0 && S_ISREG(st->st_mode)) {
		*path = host;
		return 0;
	}
	free(host);
	return -ENOENT;
}

struct vg_debuginfo *vg_debuginfo_vouched(const struct vg_image *img, const char *path,
					  bool file_has_symtab)
{
	bool own_symtab = has_symtab(img);
	struct vg_debuginfo *d;

	/* choose_symbols: img's own table first, then the debug file's;
	 * without either, MiniDebugInfo, which needs img read. */
	if (!own_symtab && !file_has_symtab)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->source = VG_DEBUG_BUILD_ID_DIR;
	d->debuginfod = VG_DEBUGINFOD_NOT_NEEDED;
	d->vouched = true;
	d->symbol_image = own_symtab ? (struct vg_image *)img : NULL;
	d->symbol_source = own_symtab ? VG_DEBUG_NONE : VG_DEBUG_BUILD_ID_DIR;
	d->path = strdup(path);
	d->tried = strdup("");
	if (!d->path || !d->tried)
		return vg_debuginfo_free(d);
	return d;
}

int vg_debuginfo_open_dwarf(struct vg_debuginfo *d)
{
	if (d->dwarf)
		return 0;
	if (!d->dwarf_deferred || !d->dwarf_image)
		return -ENOENT;
	d->dwarf_deferred = false;
	d->dwarf = begin_dwarf(d, vg_image_elf(d->dwarf_image));
	return d->dwarf ? 0 : -EINVAL;
}

const struct vg_image *vg_debuginfo_symbols(const struct vg_image *img,
					    const char *target_root,
					    bool no_debuginfod)
{
	struct vg_debuginfo_opts opts = {
		.target_root = target_root,
		.no_debuginfod = no_debuginfod,
	};
	struct vg_debuginfo *d = NULL;
	struct vg_image *syms = NULL;
	const struct vg_image *have;
	bool looked;

	have = vg_image_debug_symbols(img, &looked);
	if (looked || !img)
		return have;
	/* The image set hands out const images; the search only reads img. */
	if (vg_debuginfo_find((struct vg_image *)img, &opts, &d, NULL) < 0)
		return NULL;   /* out of memory: looked for again next time */
	if (d->symbol_source != VG_DEBUG_NONE && d->symbol_image &&
	    d->symbol_image != img) {
		syms = d->symbol_image;
		/* Keep the file, drop the DWARF that read it. */
		if (syms == d->dwarf_image)
			d->owns_dwarf_image = false;
		else
			d->owns_symbol_image = false;
	}
	vg_debuginfo_free(d);
	vg_image_adopt_debug_symbols(img, syms);
	return syms;
}

struct vg_debuginfo *vg_debuginfo_free(struct vg_debuginfo *d)
{
	if (!d)
		return NULL;
	/* The Dwarf reads the Elf of its image: end it first. */
	if (d->dwarf)
		dwarf_end(d->dwarf);
	vg_inflated_free(d->inflated);
	if (d->owns_symbol_image && d->symbol_image != d->dwarf_image)
		vg_image_free(d->symbol_image);
	if (d->owns_dwarf_image)
		vg_image_free(d->dwarf_image);
	free(d->path);
	free(d->tried);
	free(d);
	return NULL;
}

static bool list_has(const char *list, const char *want, const char *alt)
{
	FILE *f = fopen(list, "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = strcmp(line, want) == 0 || (alt && strcmp(line, alt) == 0);
	}
	fclose(f);
	return found;
}

bool vg_debuginfo_owner_package(const char *path, char *buf, size_t size)
{
	const char *dir = "/var/lib/dpkg/info";
	char alt[PATH_MAX], list[PATH_MAX];
	const char *altp = NULL;
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (!path || path[0] != '/')
		return false;
	/* Merged /usr: the list may name /lib/... for /usr/lib/... */
	if (strncmp(path, "/usr/", 5) == 0)
		altp = path + 4;
	else if (snprintf(alt, sizeof(alt), "/usr%s", path) < (int)sizeof(alt))
		altp = alt;
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *colon;

		if (n < 6 || strcmp(e->d_name + n - 5, ".list") != 0 ||
		    snprintf(list, sizeof(list), "%s/%s", dir, e->d_name) >= (int)sizeof(list) ||
		    !list_has(list, path, altp))
			continue;
		snprintf(buf, size, "%.*s", (int)(n - 5), e->d_name);
		/* "libc6:amd64" -> "libc6" */
		if ((colon = strchr(buf, ':')))
			*colon = '\0';
		found = true;
	}
	closedir(d);
	return found;
}
