/* image.h - one ELF file mapped by the target (or given with --bin), and the
 * set of them for a target.
 *
 * Each mapped file is opened once, keyed by device + inode (+ build-id when
 * known).  The file is opened, in order, through /proc/PID/map_files/START-END
 * (the exact mapped inode, even if unlinked or replaced; needs CAP_SYS_ADMIN
 * or CAP_CHECKPOINT_RESTORE), /proc/PID/root/PATH (the target's mount
 * namespace; checked against the mapping's dev+inode so a replaced file is
 * never used silently), /proc/PID/exe for the main executable (the exact
 * inode without CAP_SYS_ADMIN), and, for an image none of these opens, the ELF
 * headers read from target memory.  `via` says which path served.
 * Where the kernel has PROCMAP_QUERY, the build-id it reads from the mapped
 * file itself (no open needed) fills in a missing one and cross-checks the
 * file routes: a file whose build-id differs is refused with a warning.
 * Non-ELF64 and non-x86-64 files are rejected before any header is trusted. */
#ifndef VG_IMAGE_H
#define VG_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/loadbias.h"
#include "target/maps.h"
#include "target/mem.h"
#include "target/target.h"
#include "util/error.h"

enum vg_image_via {
	VG_VIA_NONE = 0,
	VG_VIA_MAP_FILES,   /* "map_files" */
	VG_VIA_ROOT,        /* "proc_root" */
	VG_VIA_MEMORY,      /* "target_memory" */
	VG_VIA_PATH,        /* "path": a host path (--bin, offline) */
	VG_VIA_EXE,         /* "proc_exe": the main executable via /proc/PID/exe */
};

struct vg_symbol {
	uint64_t vaddr;     /* ELF virtual address (static) */
	uint64_t size;
	const char *name;   /* borrowed from the ELF string table */
	bool from_dynsym;
	/* STT_GNU_IFUNC: vaddr is the resolver, which the dynamic linker
	 * calls once to pick the implementation (elf/ifunc.h). */
	bool ifunc;
};

struct vg_image {
	char *path;                 /* canonical path in the target ("" if none) */
	char *open_path;            /* what was actually opened */
	enum vg_image_via via;
	bool deleted;
	bool is_main;               /* the target's executable (/proc/PID/exe) */
	uint64_t dev, inode;
	/* The opened file's size and mtime when it was opened (0 for an
	 * image read from memory): with dev and inode, which file it was
	 * (a persistent index records its DWARF file's, sym/symindex.h). */
	uint64_t file_size;
	int64_t mtime_sec, mtime_nsec;
	uint8_t build_id[64];
	size_t build_id_len;        /* 0: none */
	/* The build-id came from the kernel (PROCMAP_QUERY), not from a note
	 * in the bytes vigil opened: that route had none. */
	bool build_id_from_kernel;
	/* Symbols come from a .dynsym found through PT_DYNAMIC, because the
	 * section headers were not available (image rebuilt from memory). */
	bool dynsym_from_dynamic;
	uint16_t e_type;            /* ET_EXEC, ET_DYN */
	struct vg_load *loads;
	size_t n_loads;
	uint64_t bias;              /* runtime = static + bias */
	enum vg_bias_method bias_method;
	uint64_t lo, hi;            /* runtime range covered by its mappings */
	/* End of its PT_LOADs' memory image (bias + p_vaddr + p_memsz, page
	 * aligned): past hi when the tail of .bss is mapped anonymously after
	 * the last file page, as the kernel and ld.so do.  == hi otherwise. */
	uint64_t mem_hi;
	struct vg_image_priv *priv; /* fd, Elf*, symbol table (lazy) */
};

struct vg_images {
	struct vg_image **images;
	size_t n;
	size_t n_denied;   /* ELF files no route could open for lack of permission */
	/* The live process these images are mapped in (borrowed, outlives
	 * the set), or NULL offline: its memory holds the relocated slots
	 * that say which implementation an IFUNC selected. */
	const struct vg_target *target;
};

/* Open one ELF file by host path (for --bin and offline use).  -ENOENT,
 * -EACCES, -ENOEXEC (not ELF64 x86-64, truncated).  bias = 0. */
int vg_image_open_path(const char *path, struct vg_image **out,
		       struct vg_error *err);
struct vg_image *vg_image_free(struct vg_image *img);

/* Parse an ELF file held in memory (fuzzing, images rebuilt from target
 * memory).  buf is copied: the caller keeps it.  label names the bytes in
 * messages (NULL: "(memory)").  Same checks and errors as
 * vg_image_open_path; via = VG_VIA_NONE, path = "", bias = 0.  When the
 * bytes have no symbol table section but a PT_DYNAMIC naming DT_SYMTAB,
 * DT_STRTAB and a hash table, that .dynsym serves the lookups
 * (dynsym_from_dynamic). */
int vg_image_open_memory(const void *buf, size_t len, const char *label,
			 struct vg_image **out, struct vg_error *err);

/* Every file-backed image the target maps, with its bias.  Regions whose
 * file is not ELF (fonts, locale archives) are skipped; an ELF that cannot be
 * opened by any route becomes a target warning, not a failure. */
int vg_images_load(struct vg_target *t, const struct vg_maps *maps,
		   struct vg_mem *mem, struct vg_images **out,
		   struct vg_error *err);
/* As vg_images_load, but only the images that hold one of addrs[0..n):
 * an address belongs to the ELF file mapped last at or below it (its
 * .bss tail included), the vDSO when inside it.  A question about one address
 * opens one file, not every library the process maps (on a VM, 0.4 ms
 * of a 4 ms `vigil sym PID ADDR`), and warns about no other. */
int vg_images_load_only(struct vg_target *t, const struct vg_maps *maps,
			struct vg_mem *mem, const uint64_t *addrs, size_t n_addrs,
			struct vg_images **out, struct vg_error *err);
struct vg_images *vg_images_free(struct vg_images *s);

/* The image whose mappings cover addr, or whose .bss tail (up to mem_hi)
 * does, or NULL.  Borrowed. */
const struct vg_image *vg_images_find(const struct vg_images *s, uint64_t addr);
/* The main executable, or NULL. */
const struct vg_image *vg_images_main(const struct vg_images *s);
/* The image whose path equals name, else the first whose path ends with
 * "/name" (e.g. "libc.so.6"); *n_matches (if non-NULL) counts the
 * candidates, so callers can refuse an ambiguous file name. */
const struct vg_image *vg_images_by_name(const struct vg_images *s,
					 const char *name, size_t *n_matches);

/* Symbol lookups in .symtab, then .dynsym (static addresses).  The name
 * lookup returns 0 and fills *sym, or -ENOENT; a name with no symbol of
 * its own finds a GCC clone of it ("NAME.part.0", "NAME.isra.0"), whose
 * DWARF name vigil prints as NAME.  Borrowed until img is freed. */
int vg_image_symbol_by_name(const struct vg_image *img, const char *name,
			    struct vg_symbol *sym);
/* Is name a thread-local (STT_TLS) symbol of img?  Those have no address of
 * their own (one copy per thread), so the lookups above never return them;
 * this lets a caller say why a name was not found. */
bool vg_image_has_tls_symbol(const struct vg_image *img, const char *name);

/* The symbol table of img's separate debug file (a stripped library with
 * libc6-dbg: its .symtab has the local names, e.g. __strcmp_avx2), kept
 * with img.  vg_image_debug_symbols says whether one was looked for
 * (*looked) and returns it, or NULL; vg_image_adopt_debug_symbols stores
 * the result of that search (dbg may be NULL: none) and takes dbg.  Names
 * found in it are borrowed until img is freed. */
const struct vg_image *vg_image_debug_symbols(const struct vg_image *img, bool *looked);
void vg_image_adopt_debug_symbols(const struct vg_image *img, struct vg_image *dbg);

/* Every relocated pointer slot of img that refers to a function: the
 * static addresses (r_offset) of the R_X86_64_IRELATIVE relocations whose
 * addend is resolver_vaddr (pass UINT64_MAX for none: img does not define
 * it), and of the R_X86_64_JUMP_SLOT, GLOB_DAT and 64 relocations whose
 * .dynsym symbol is called name (NULL: none), in .rela.dyn and .rela.plt.
 * *slots is malloc'ed (NULL when *n is 0).  -ENOMEM only. */
int vg_image_function_slots(const struct vg_image *img, const char *name,
			    uint64_t resolver_vaddr, uint64_t **slots, size_t *n);

/* Have img's symbol table (vg_image_symbol_at, _before, vg_image_symtab)
 * and its .eh_frame functions (vg_image_function_at) been read?  Those
 * read it on first use; once read, lookups only read and several threads
 * may make them.  A caller that shares img between threads reads the
 * tables first under its own exclusive lock. */
bool vg_image_symbols_read(const struct vg_image *img);
bool vg_image_functions_read(const struct vg_image *img);

/* Innermost symbol containing static address vaddr; -ENOENT if none. */
int vg_image_symbol_at(const struct vg_image *img, uint64_t vaddr,
		       struct vg_symbol *sym);

/* The function containing static address vaddr according to .eh_frame
 * (its FDE's [start, end)), symbol or not: a stripped function is still
 * described there.  -ENOENT if no FDE covers vaddr (padding, or no
 * .eh_frame).  Not thread-safe (the table is read on first use). */
int vg_image_function_at(const struct vg_image *img, uint64_t vaddr,
			 uint64_t *start, uint64_t *end);

/* The nearest symbol starting at or below vaddr, sized or not, whether or
 * not it covers vaddr: a hint for addresses in padding between functions.
 * -ENOENT if none. */
int vg_image_symbol_before(const struct vg_image *img, uint64_t vaddr,
			   struct vg_symbol *sym);

/* img's symbol table by address (loaded at first use) as symtab.h's
 * lookups read it, for the persistent symbol index to keep: 0, or -ENOENT
 * (no symbols).  Valid while img lives.  Record i of it as a symbol:
 * vg_image_symbol_nth (i < t->n). */
struct vg_symtab;
int vg_image_symtab(const struct vg_image *img, struct vg_symtab *t);
void vg_image_symbol_nth(const struct vg_image *img, size_t i, struct vg_symbol *sym);

/* The libelf handle of img (borrowed; owned by img) and its file
 * descriptor (-1 for an image held in memory).  For the debug-info layer,
 * which reads sections vigil's own lookups do not. */
struct Elf;
struct Elf *vg_image_elf(const struct vg_image *img);
/* Whether elf has a section of that name with contents (not NOBITS). */
bool vg_elf_has_section(struct Elf *elf, const char *name);
int vg_image_fd(const struct vg_image *img);

/* Lower-case hex of the build-id into buf ("" if none); returns buf. */
char *vg_image_build_id_hex(const struct vg_image *img, char *buf, size_t size);

enum vg_bin_match {
	VG_BIN_UNKNOWN = 0,  /* "unknown": no build-id and no comparable bytes */
	VG_BIN_MATCH,        /* "match" */
	VG_BIN_MISMATCH,     /* "mismatch" */
};

/* Is bin the same file as the running image?  Build-ids when both have
 * one; otherwise compares the file bytes of bin's read-only PT_LOADs with
 * target memory at running->bias + vaddr.  how: "build_id", "content", "none". */
enum vg_bin_match vg_image_compare(const struct vg_image *bin,
				   const struct vg_image *running,
				   struct vg_mem *mem, const char **how);

const char *vg_image_via_name(enum vg_image_via v);
const char *vg_bin_match_name(enum vg_bin_match m);

#endif
