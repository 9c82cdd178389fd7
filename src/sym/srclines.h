/* srclines.h - where the code of a source line is: the rows of FILE:LINE
 * in an image's DWARF line tables (vigil probe FILE:LINE).
 *
 * A row counts when its file's path ends with FILE at a '/' boundary, as
 * the line table names it or joined to its CU's compilation directory and
 * normalized ("tests/x.c" matches "/src/b/../tests/x.c").  The rows of the
 * line are grouped by the innermost function or inlined-call instance
 * containing them (one per inlined copy of the line), and each group gives
 * one hit: its first is_stmt row, else its lowest address.  The DWARF is
 * the symbolizer's own (vg_symbolizer_dwarf): libdw stays behind sym/. */
#ifndef VG_SYM_SRCLINES_H
#define VG_SYM_SRCLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "sym/symbolizer.h"
#include "util/error.h"

struct vg_line_hit {
	uint64_t addr;          /* static: add the image's bias */
	char *path;             /* the source file, absolute and normalized as
				 * the symbolizer names it */
};

struct vg_line_row;

/* One search over any number of images: set file and line, zero the rest. */
struct vg_line_search {
	const char *file;       /* FILE as given */
	uint32_t line;
	/* Over the images searched so far, for the error when none has code. */
	bool file_seen;         /* some CU has a matching source file */
	uint32_t below, above;  /* nearest lines with code; 0: none */
	size_t n_dwarf_images;
	/* private */
	struct vg_line_row *rows;
	size_t n_rows, cap_rows;
	const char *comp_dir;   /* of the CU being scanned */
	const char *last_src;   /* one comparison per distinct file name */
	bool last_match;
};

/* The hits of img (none without DWARF), in no particular order: *hits is
 * malloc'ed, freed with vg_line_hits_free.  0, or -ENOMEM with err. */
int vg_line_search_image(struct vg_line_search *ls, struct vg_symbolizer *sym,
			 struct vg_image *img, struct vg_line_hit **hits, size_t *n,
			 struct vg_error *err);
void vg_line_hits_free(struct vg_line_hit *hits, size_t n);
/* Frees what the search holds (not file). */
void vg_line_search_clear(struct vg_line_search *ls);

#endif
