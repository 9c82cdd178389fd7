/* image_priv.h - an ELF image's private state, shared by image.c
 * (opening, the in-memory .dynsym, --bin matching), symbols.c (the symbol
 * table) and images.c (a target's images).  Not part of the library's
 * interface: image.h is. */
#ifndef VG_ELF_IMAGE_PRIV_H
#define VG_ELF_IMAGE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "elf/fde.h"
#include "elf/image.h"
#include "util/bucket.h"

/* Starts as struct vg_symtab_head (symtab.h): the lookups by address. */
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
	/* Where a search by address starts (a bisection of libc6-dbg's or
	 * a 20,000-function program's symbols missed the cache at most
	 * steps of a batch). */
	struct vg_bucket syms_by_addr;
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

/* off + len lies inside size bytes. */
bool image_range_ok(uint64_t off, uint64_t len, uint64_t size);

/* Opens an ELF image over fd (image.c).  Takes fd (closed on failure
 * too).  *not_elf says the file is no ELF at all.  0 or -errno. */
int image_open_fd(int fd, const char *label, struct vg_image **out,
		  bool *not_elf, struct vg_error *err);

/* Opens an ELF image over buf (image.c).  Takes buf (freed on failure
 * too).  lenient: section headers outside buf are dropped, not refused. */
int image_open_buffer(char *buf, size_t len, const char *label, bool lenient,
		      struct vg_image **out, bool *not_elf,
		      struct vg_error *err);

/* Gives an in-memory image without symbol sections the .dynsym that
 * PT_DYNAMIC points at (image.c).  1 if done, 0 if not applicable,
 * -ENOMEM. */
int image_add_dynamic_symbols(struct vg_image *img);

/* Loads p's symbol table once (symbols.c).  0 or -errno. */
int image_load_symbols(struct vg_image_priv *p);

#endif
