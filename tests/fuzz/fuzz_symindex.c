/* fuzz_symindex.c - libFuzzer harness for the persistent symbol index
 * loader (sym/symindex.h): a cache file is untrusted input.
 *
 * The input is a whole index file.  It is checked three times: as it is
 * (most mutations then fail a checksum, which must be said, not crashed
 * on), with VG_SYMINDEX_NO_CRC, so that the bounds, reference and order
 * checks behind the checksums are reached too, and resealed with one
 * byte then changed (try_resealed), so that the lookups' checks by chunk
 * fail where they read it.  The key asked for is the
 * one the file claims (bytes 28..31 its length, the key from byte 32: the
 * header of symindex.c), else the key check would stop every input.  A file that is accepted is then looked up at every range's
 * ends and at addresses taken from the input, each after the two
 * prefetch hints a batch gives (the second forced on: these tables are
 * small): each answer must keep
 * vg_dw_result's promises (frames within bounds, strings terminated),
 * and so are the kept ELF symbol table's lookups (vg_symindex_symbol_at
 * and _before, under the tags a caller uses: each has one name).  With
 * the second hint, each answer must also equal the one of the same file
 * opened without it (the lookup reuses the hint's searches: symindex.c's
 * memo).
 * Seeds (tests/fuzz/corpus/symindex/) are indexes of small real binaries
 * written by `vigil sym --index`.  Built by tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/symindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY_LEN_AT 28
#define KEY_AT 32

static void check_answer(const struct vg_dw_result *r)
{
	volatile size_t sink = 0;

	if (r->n_frames > VG_DW_MAX_FRAMES)
		abort();
	for (size_t i = 0; i < r->n_frames; i++) {
		if (r->frames[i].name)
			sink += strlen(r->frames[i].name);
		if (r->frames[i].file)
			sink += strlen(r->frames[i].file);
	}
	if (r->file)
		sink += strlen(r->file);
	(void)sink;
}

static void check_symbols(struct vg_symindex *x, uint64_t a)
{
	volatile size_t sink = 0;
	struct vg_symbol sym;

	/* 1: embedded DWARF's tag, 2: a build-id directory's (the
	 * symbolizer tags a table with its enum vg_debug_source). */
	for (uint32_t of = 1; of <= 2; of++) {
		if (vg_symindex_symbol_at(x, of, a, &sym) == 0) {
			if (!sym.name)
				abort();
			sink += strlen(sym.name);
		}
		if (vg_symindex_symbol_before(x, of, a, &sym) == 0) {
			if (!sym.name)
				abort();
			sink += strlen(sym.name);
		}
	}
	(void)sink;
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The same answer, field by field. */
static void check_same(int rc, const struct vg_dw_result *a, int rc_plain,
		       const struct vg_dw_result *b)
{
	if (rc != rc_plain)
		abort();
	if (rc < 0)
		return;
	if (a->n_frames != b->n_frames || a->truncated != b->truncated ||
	    a->has_line != b->has_line || a->line != b->line || a->column != b->column ||
	    !same_text(a->file, b->file))
		abort();
	for (size_t i = 0; i < a->n_frames; i++) {
		const struct vg_dw_frame *f = &a->frames[i], *g = &b->frames[i];

		if (!same_text(f->name, g->name) || f->name_is_linkage != g->name_is_linkage ||
		    !same_text(f->file, g->file) || f->line != g->line ||
		    f->column != g->column || f->inlined != g->inlined || f->entry != g->entry)
			abort();
	}
}

static void try_open(const uint8_t *buf, size_t size, const char *key, unsigned flags)
{
	static struct vg_dw_result r, r_plain;
	struct vg_symindex *x = NULL, *plain = NULL;
	struct vg_error err = { 0 };

	if (vg_symindex_open_mem(buf, size, key, flags, &x, &err) < 0) {
		if (!err.msg[0])
			abort();  /* a refusal always says why */
		return;
	}
	/* The oracle for the second hint's memo: the file without it. */
	if ((flags & VG_SYMINDEX_PREFETCH_RECORDS) &&
	    vg_symindex_open_mem(buf, size, key, flags & ~VG_SYMINDEX_PREFETCH_RECORDS,
				 &plain, &err) < 0)
		abort();  /* the same file, the same checks */
	/* Addresses from the input, then around every 8-byte word that may
	 * be a range bound. */
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t a;

		memcpy(&a, buf + i, 8);
		for (int d = -1; d <= 1; d++) {
			/* The batch's hints read the tables too. */
			int rc;

			vg_symindex_prefetch(x, a + (uint64_t)d);
			vg_symindex_prefetch_records(x, a + (uint64_t)d);
			rc = vg_symindex_lookup(x, a + (uint64_t)d, &r);
			check_answer(&r);
			check_symbols(x, a + (uint64_t)d);
			if (plain)
				check_same(rc, &r, vg_symindex_lookup(plain, a + (uint64_t)d, &r_plain),
					   &r_plain);
		}
	}
	vg_symindex_free(plain);
	vg_symindex_free(x);
}

/* The input resealed (vg_symindex_reseal: every checksum true to what
 * it holds) and, when its last byte is odd, one byte of it then changed
 * where its last but one to last but four bytes say: a file edited by
 * someone who recomputed the checksums, with one piece left wrong.  So
 * the checks of chunks, CUs, whole CUs and the symbol table fail where
 * a lookup reads that piece, with the checksums on (unreached otherwise:
 * a mutation fails the header's first). */
static void try_resealed(const uint8_t *data, size_t size, const char *key)
{
	struct vg_error err = { 0 };
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return;
	memcpy(buf, data, size);
	if (vg_symindex_reseal(buf, size, &err) == 0) {
		if (size >= 8 && (data[size - 1] & 1)) {
			uint32_t at;

			memcpy(&at, data + size - 5, sizeof(at));
			buf[at % size] ^= 0x5a;
		}
		try_open(buf, size, key, 0);
		try_open(buf, size, key, VG_SYMINDEX_PREFETCH_RECORDS);
	} else if (!err.msg[0]) {
		abort();  /* a refusal always says why */
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char key[VG_SYMINDEX_KEY_MAX + 1] = "";
	uint8_t *buf;
	uint32_t klen = 0;

	if (size >= KEY_AT + VG_SYMINDEX_KEY_MAX) {
		memcpy(&klen, data + KEY_LEN_AT, 4);
		if (klen > VG_SYMINDEX_KEY_MAX)
			klen = VG_SYMINDEX_KEY_MAX;
		memcpy(key, data + KEY_AT, klen);
		key[klen] = '\0';
	}
	/* 8-byte aligned, as a mapping is. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	try_open(buf, size, key, 0);
	try_open(buf, size, key, VG_SYMINDEX_NO_CRC | VG_SYMINDEX_PREFETCH_RECORDS);
	free(buf);
	try_resealed(data, size, key);
	return 0;
}
