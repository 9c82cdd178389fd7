/* fuzz_dwline.c - libFuzzer harness for the DWARF line program decoder
 * (sym/dwline.h): a debug file is untrusted input.
 *
 * The input is a .debug_line section whose first unit is decoded; the
 * same bytes serve as .debug_line_str and .debug_str, so that the string
 * offsets of DWARF 5 file tables land somewhere.  Both address sizes and
 * a NULL and a real comp_dir are tried.  Every file-table entry must be
 * terminated strings, the rows no more than dwline_max_rows promises.
 * Seeds (tests/fuzz/corpus/dwline/) are .debug_line sections of small
 * real binaries (objcopy --dump-section).  Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/dwline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct count {
	size_t n, max;
};

static int count_row(void *arg, uint64_t addr, uint32_t file, uint32_t line,
		     uint32_t column, bool end_sequence)
{
	struct count *k = arg;

	(void)addr;
	(void)file;
	(void)line;
	(void)column;
	(void)end_sequence;
	if (++k->n > k->max)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwline_sections sec = { data, data, data, size, size, size };
	volatile size_t sink = 0;

	for (int i = 0; i < 4; i++) {
		struct dwline_header h;
		struct count k = { 0 };

		if (dwline_header_read(&sec, 0, i & 1 ? 4 : 8, i & 2 ? "/build" : NULL, &h) != DWLINE_OK)
			continue;
		for (size_t f = 0; f < h.n_files; f++) {
			sink += strlen(h.files[f].name);
			if (h.files[f].dir)
				sink += strlen(h.files[f].dir);
		}
		k.max = dwline_max_rows(&h);
		(void)dwline_run(&h, count_row, &k);
		dwline_header_free(&h);
	}
	(void)sink;
	return 0;
}
