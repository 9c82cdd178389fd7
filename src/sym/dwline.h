/* dwline.h - one CU's DWARF line program decoded straight into the
 * caller's rows, for the DWARF index (dwindex.c).
 *
 * Why not dwarf_getsrclines: libdw keeps a 48-byte Dwarf_Line per row for
 * the life of the handle, builds them through a malloc'd list node per row
 * and sorts them with qsort, all to hand out rows the index copies and
 * thins anyway.  On a program of 1.3 M rows that was four fifths of the
 * page faults of a cold batch and half of its CPU time.  This decoder
 * emits each row once, in program order, and keeps nothing.
 *
 * It covers the common encoding only (DWARF 2 to 5, 32-bit offsets, the
 * standard forms of DWARF 5's file tables) and answers DWLINE_USE_LIBDW
 * for anything else, corrupt data included: the caller then asks libdw,
 * which gives today's answers and today's errors.  Input is untrusted
 * (tests/fuzz/fuzz_dwline.c).  Never prints, never allocates beyond the
 * file table. */
#ifndef VG_SYM_DWLINE_H
#define VG_SYM_DWLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections a line program reads, as libdw has them (decompressed). */
struct dwline_sections {
	const uint8_t *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
};

/* A file-table entry: the name as libdw composes it is dir "/" name when
 * name is relative and dir is not NULL, else name. */
struct dwline_file {
	const char *dir;
	const char *name;
};

struct dwline_header {
	unsigned version;
	/* libdw's numbering: for DWARF < 5 entry 0 is "???" (no file). */
	struct dwline_file *files;      /* malloc'd; dwline_header_free */
	size_t n_files;
	const uint8_t *program, *end;
	uint8_t min_insn_len, default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *opcode_lengths;  /* [opcode_base - 1], opcode 1 first */
	unsigned address_size;
};

enum { DWLINE_OK = 0, DWLINE_USE_LIBDW = 1 };

/* Reads the header and file table of the program at offset in sec.line.
 * comp_dir is the CU's DW_AT_comp_dir (directory 0 before DWARF 5).
 * DWLINE_OK, DWLINE_USE_LIBDW, or -ENOMEM. */
int dwline_header_read(const struct dwline_sections *sec, uint64_t offset,
		       unsigned address_size, const char *comp_dir,
		       struct dwline_header *h);
void dwline_header_free(struct dwline_header *h);

/* At most this many rows (each takes a byte of program at least). */
static inline size_t dwline_max_rows(const struct dwline_header *h)
{
	return (size_t)(h->end - h->program);
}

/* One row, in program order.  Non-zero stops the run with that value. */
typedef int (*dwline_emit_fn)(void *arg, uint64_t addr, uint32_t file,
			      uint32_t line, uint32_t column, bool end_sequence);

/* Runs the program: DWLINE_OK, DWLINE_USE_LIBDW (rows already emitted
 * are to be dropped), or what emit returned. */
int dwline_run(const struct dwline_header *h, dwline_emit_fn emit, void *arg);

#endif
