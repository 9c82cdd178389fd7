/* symindex.c - the persistent DWARF index: serialise dwindex's tables into
 * one flat file, check such a file before believing it, look up in it.
 * The layout is in symindex.h; the lookup mirrors dwindex.c's (same
 * searches, same chain walk), so that answers are byte-identical. */
#include "sym/symindex.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/symtab.h"
#include "sym/dwindex_priv.h"
#include "util/bucket.h"
#include "util/crc32c.h"
#include "util/ranges.h"
#include "util/vec.h"

#define SX_MAGIC "VIGILSX"     /* 8 bytes with its NUL */
#define NONE32 UINT32_MAX
/* Strings are checksummed in chunks of this many bytes, the symbol
 * table in chunks of this many records (with their running maximum of
 * ends): a first answer checks the lines it reads and a few around
 * them, not the whole section (libc's symbol table is 325 KiB; on a VM
 * a first read costs ~2.5 us per page).  1 KiB, not 4 (format version
 * 6): a batch of 2,048 libc addresses reads a line or two of most
 * chunks once, and checking 4 KiB for each was a fifth of its CPU
 * samples (9.1 -> 8.1 ms; a one-address answer 0.1 ms sooner). */
#define STR_CHUNK 1024u
#define SYM_CHUNK 32u
/* The CUs' tables (scopes, segments, row addresses, rows: one span of
 * the file) are checksummed in chunks of this many bytes, each checked
 * when a search first reads it (format version 6): the first answer in
 * the generated binary's 2 MB CU checked the whole CU, a fifth of its
 * CPU time. */
#define TAB_CHUNK 1024u
/* A CU is checked by chunk for its first lookups (a one-address answer
 * checks 4 to 7 chunks), then whole at this one: a batch's lookups then
 * ask nothing per read (a chunk's state per read was 4% of the
 * instructions of a batch in the generated binary, 5% in libc).  (At
 * the lookup that is one per 8 of the CU's chunks instead, 2,048 libc
 * addresses took 0.3 ms less, 100,000 of the generated binary's 3 ms
 * more.) */
#define WHOLE_AT_LOOKUP 4u
/* Locks over the first checks of CUs and chunks (by index modulo). */
#define CHECK_STRIPES 8
/* Records per bucket of a CU's stored bucket tables (util/bucket.h):
 * rows, segments. */
#define ROW_PER_BUCKET 16u
#define SEG_PER_BUCKET 8u

enum { SEC_RANGES, SEC_CUS, SEC_SCOPES, SEC_SEGS, SEC_ROW_ADDR, SEC_ROWS,
       SEC_CU_BUCKETS, SEC_STRINGS, SEC_STR_CRC, SEC_SYMS, SEC_SYM_MAX_END,
       SEC_SYM_BUCKETS, SEC_SYM_CRC, SEC_TAB_CRC, N_SEC };
/* The sections of the checksummed-by-chunk table span. */
static const int tab_secs[] = { SEC_SCOPES, SEC_SEGS, SEC_ROW_ADDR, SEC_ROWS };

struct sx_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t file_size;
	/* CRC-32C of this header (with this field zero) and of the ranges,
	 * cus and str_crc sections: what every lookup reads.  A CU's bucket
	 * tables are covered by its sx_cu.crc, its other tables by tab_crc
	 * per TAB_CHUNK, the strings by str_crc per STR_CHUNK, each checked
	 * at first use.  tab_crc itself is not covered: a wrong entry can
	 * only fail its chunk, never pass a bad one. */
	uint32_t crc;
	uint32_t key_len;
	char key[VG_SYMINDEX_KEY_MAX + 1];
	struct { uint64_t off, size; } sec[N_SEC];
	/* The ELF symbol table (SEC_SYMS, SEC_SYM_MAX_END, SEC_SYM_BUCKETS,
	 * SEC_SYM_CRC): which file's (sym_of, the caller's tag; 0: none
	 * kept), the CRC-32C of the bucket table and of SEC_SYM_CRC (checked
	 * at the first symbol lookup; SEC_SYM_CRC holds one CRC-32C per
	 * SYM_CHUNK records and their max ends, each checked when a search
	 * first reads the chunk), and the bucket table's first key and
	 * width. */
	uint32_t sym_of, sym_crc;
	uint64_t sym_bucket_base;
	uint32_t sym_bucket_shift, pad;
	/* struct vg_symindex_origin (version 5): covered by crc, trusted
	 * for nothing but to compare with a file found now. */
	uint32_t origin_source, pad2;
	uint64_t origin_dev, origin_ino, origin_size;
	int64_t origin_mtime_sec, origin_mtime_nsec;
};

/* tests/fuzz/fuzz_symindex.c reads the key here. */
_Static_assert(offsetof(struct sx_header, crc) == 24, "header layout");
_Static_assert(offsetof(struct sx_header, key_len) == 28, "header layout");
_Static_assert(offsetof(struct sx_header, key) == 32, "header layout");
/* tests/e2e/sym_index.sh finds the sections here. */
_Static_assert(offsetof(struct sx_header, sec) == 288, "header layout");
/* tests/e2e/sym_index_vouched.sh finds the origin here. */
_Static_assert(offsetof(struct sx_header, origin_source) == 536, "header layout");
_Static_assert(sizeof(struct sx_header) == 584, "header layout");

struct sx_range { uint64_t lo, hi; uint32_t cu, pad; };
VG_RANGE_HEAD_CHECK(struct sx_range, lo, hi);
/* A CU: its slices of scopes, segs and rows (row_addr alike), and of
 * cu_buckets: its rows' bucket table, then its segments' from word
 * seg_bucket of it (each struct sx_bucket and first[n_buckets + 1], or
 * the struct alone with n_buckets 0: none), bucket_words uint32_t in
 * all, their CRC-32C in crc.  The tables are stored so that a first
 * lookup neither reads the CU's rows nor builds them. */
struct sx_cu {
	uint32_t scope0, n_scopes, seg0, n_segs, row0, n_rows, bucket0, bucket_words;
	uint32_t crc, seg_bucket;
};
struct sx_bucket { uint32_t base_lo, base_hi, shift, n_buckets; };
struct sx_scope {
	uint64_t entry;
	uint32_t name, parent, call_file, call_line, call_column;
	uint8_t linkage, inlined, pad[2];
};
struct sx_seg { uint64_t lo; uint32_t scope, pad; };
struct sx_row { uint32_t file, line, colend; };
/* Starts as struct vg_symtab_head: symtab.h's lookups read it in place. */
struct sx_sym {
	uint64_t vaddr, size, limit;
	uint32_t name;
	uint8_t dyn, ifunc, pad[2];
};
_Static_assert(offsetof(struct sx_sym, vaddr) == offsetof(struct vg_symtab_head, vaddr) &&
	       offsetof(struct sx_sym, size) == offsetof(struct vg_symtab_head, size) &&
	       offsetof(struct sx_sym, limit) == offsetof(struct vg_symtab_head, limit),
	       "struct sx_sym starts as struct vg_symtab_head");

static const size_t rec_size[N_SEC] = {
	sizeof(struct sx_range), sizeof(struct sx_cu), sizeof(struct sx_scope),
	sizeof(struct sx_seg), sizeof(uint64_t), sizeof(struct sx_row),
	sizeof(uint32_t), 1, sizeof(uint32_t), sizeof(struct sx_sym), sizeof(uint64_t),
	sizeof(uint32_t), sizeof(uint32_t), sizeof(uint32_t),
};

struct vg_symindex {
	const struct sx_range *ranges;
	size_t n_ranges;
	uint64_t *max_hi;       /* max hi of ranges[0..i]: overlapping CUs */
	/* Where find_cu's search starts: libc's 2,083 ranges took 7% of an
	 * indexed batch's samples to bisect, twice per address with the
	 * prefetch hint. */
	struct vg_bucket range_bucket;
	const struct sx_cu *cus;
	size_t n_cus;
	const struct sx_scope *scopes;
	const struct sx_seg *segs;
	const uint64_t *row_addr;
	const struct sx_row *rows;
	const uint32_t *cu_buckets;
	size_t n_scopes, n_segs, n_rows, n_cu_buckets;
	/* The span of the file that holds scopes, segs, row_addr and rows,
	 * and its chunks' checksums and states (as chunk_state). */
	const uint8_t *tab;
	size_t tab_len, n_tab_chunks;
	const uint32_t *tab_crc;
	uint8_t *tab_state;
	/* Per CU: every chunk of its slices checked (as cu_state), and its
	 * lookups so far, up to WHOLE_AT_LOOKUP. */
	uint8_t *cu_whole;
	uint32_t *cu_lookups;
	const char *strings;
	size_t n_strings;
	const uint32_t *str_crc;
	bool no_crc;            /* VG_SYMINDEX_NO_CRC */
	/* vg_symindex_prefetch_records does something (records_outgrow_l2). */
	bool prefetch_records;
	/* This index among every one opened by the process (the memo's key:
	 * unlike the address, never that of another index later). */
	uint64_t serial;
	/* Checked at first use: per CU 0 not yet, 1 good, 2 bad; per
	 * string chunk likewise.  Two threads may look up at once (vigil
	 * sym's batch): a state is read with acquire and published with
	 * release, after what it vouches for (the CU's buckets, a chunk's
	 * last NUL); a lock makes each first check happen once (striped:
	 * two threads first in two CUs check them side by side). */
	uint8_t *cu_state, *chunk_state;
	pthread_mutex_t check_lock[CHECK_STRIPES];
	size_t n_chunks;
	/* Per string chunk that passed its checksum: the offset of its last
	 * NUL (+1; 0: none), so that a string starting before it needs no
	 * scan for its end. */
	uint32_t *chunk_nul_end;
	/* The ELF symbol table, if kept (sym_of != 0): its bucket table and
	 * chunk checksums checked at the first symbol lookup (sym_state as
	 * cu_state), each chunk of records when a search first reads it
	 * (sym_chunk_state, as chunk_state). */
	uint32_t sym_of, sym_crc;
	uint8_t sym_state;
	struct vg_symindex_origin origin;
	const struct sx_sym *syms;
	const uint64_t *sym_max_end;
	size_t n_syms;
	const uint32_t *sym_chunk_crc;
	uint8_t *sym_chunk_state;
	size_t n_sym_chunks;
	/* The stored bucket table; first points into the file (never
	 * freed). */
	struct vg_bucket sym_bucket;
};

/* ------------------------------------------------------------------ */
/* writing                                                              */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int buf_put(struct buf *b, const void *p, size_t n)
{
	if (VG_GROW(b->p, b->cap, b->len + n))
		return -ENOMEM;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* Strings stored once: by content (an FNV-1a hash), with a table by
 * pointer in front, since most references repeat one pointer (a CU's
 * file names, an abstract origin's name). */
struct interner {
	struct buf strings;
	const char **ptr_keys;
	uint32_t *ptr_vals;
	size_t ptr_n, ptr_cap;
	uint32_t *str_offs;     /* NONE32: empty */
	uint64_t *str_hash;
	size_t str_n, str_cap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t fnv(const char *s, size_t *len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = s;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	*len = (size_t)(p - s);
	return h;
}

static int rehash(struct interner *in, bool by_ptr)
{
	if (by_ptr) {
		size_t cap = in->ptr_cap ? in->ptr_cap * 2 : 4096;
		const char **k = calloc(cap, sizeof(*k));
		uint32_t *v = malloc(cap * sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < in->ptr_cap; i++) {
			size_t h;

			if (!in->ptr_keys[i])
				continue;
			for (h = mix((uintptr_t)in->ptr_keys[i]) & (cap - 1); k[h];
			     h = (h + 1) & (cap - 1))
				;
			k[h] = in->ptr_keys[i];
			v[h] = in->ptr_vals[i];
		}
		free(in->ptr_keys);
		free(in->ptr_vals);
		in->ptr_keys = k;
		in->ptr_vals = v;
		in->ptr_cap = cap;
	} else {
		size_t cap = in->str_cap ? in->str_cap * 2 : 4096;
		uint32_t *o = malloc(cap * sizeof(*o));
		uint64_t *hs = malloc(cap * sizeof(*hs));

		if (!o || !hs) {
			free(o);
			free(hs);
			return -ENOMEM;
		}
		memset(o, 0xff, cap * sizeof(*o));
		for (size_t i = 0; i < in->str_cap; i++) {
			size_t h;

			if (in->str_offs[i] == NONE32)
				continue;
			for (h = in->str_hash[i] & (cap - 1); o[h] != NONE32; h = (h + 1) & (cap - 1))
				;
			o[h] = in->str_offs[i];
			hs[h] = in->str_hash[i];
		}
		free(in->str_offs);
		free(in->str_hash);
		in->str_offs = o;
		in->str_hash = hs;
		in->str_cap = cap;
	}
	return 0;
}

/* The offset of s in the string section (added if new); NONE32 for NULL.
 * -ENOMEM/-EOVERFLOW as a negative int64. */
static int64_t intern(struct interner *in, const char *s)
{
	size_t h, len;
	uint64_t hv;
	uint32_t off;

	if (!s)
		return NONE32;
	if ((in->ptr_n + 1) * 2 > in->ptr_cap && rehash(in, true))
		return -ENOMEM;
	for (h = mix((uintptr_t)s) & (in->ptr_cap - 1); in->ptr_keys[h];
	     h = (h + 1) & (in->ptr_cap - 1))
		if (in->ptr_keys[h] == s)
			return in->ptr_vals[h];
	size_t ph = h;

	if ((in->str_n + 1) * 2 > in->str_cap && rehash(in, false))
		return -ENOMEM;
	hv = fnv(s, &len);
	for (h = hv & (in->str_cap - 1); in->str_offs[h] != NONE32; h = (h + 1) & (in->str_cap - 1))
		if (in->str_hash[h] == hv &&
		    strcmp((const char *)in->strings.p + in->str_offs[h], s) == 0)
			break;
	if (in->str_offs[h] == NONE32) {
		if (in->strings.len + len + 1 >= NONE32)
			return -EOVERFLOW;
		in->str_offs[h] = (uint32_t)in->strings.len;
		in->str_hash[h] = hv;
		in->str_n++;
		if (buf_put(&in->strings, s, len + 1))
			return -ENOMEM;
	}
	off = in->str_offs[h];
	in->ptr_keys[ph] = s;
	in->ptr_vals[ph] = off;
	in->ptr_n++;
	return off;
}

static void interner_free(struct interner *in)
{
	free(in->strings.p);
	free(in->ptr_keys);
	free(in->ptr_vals);
	free(in->str_offs);
	free(in->str_hash);
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The bucket table over n keys (stride bytes apart) into b, as the
 * reader takes it: struct sx_bucket, then first[] when there is one. */
static int put_bucket(struct buf *b, const void *keys, size_t stride, size_t n,
		      unsigned per_bucket)
{
	struct vg_bucket t;
	struct sx_bucket h = { 0 };
	int rc = 0;

	if (vg_bucket_build(&t, keys, stride, n, per_bucket) < 0)
		return -ENOMEM;
	if (t.first)
		h = (struct sx_bucket){ .base_lo = (uint32_t)t.base,
					.base_hi = (uint32_t)(t.base >> 32),
					.shift = t.shift, .n_buckets = t.n_buckets };
	if (buf_put(b, &h, sizeof(h)) ||
	    (t.first && buf_put(b, t.first, ((size_t)t.n_buckets + 1) * sizeof(uint32_t))))
		rc = -ENOMEM;
	vg_bucket_free(&t);
	return rc;
}

/* One CU's tables into the sections; *sx its entry. */
static int put_cu(struct cu *c, struct buf *sec, struct interner *in,
		  struct sx_cu *sx)
{
	size_t bucket0 = sec[SEC_CU_BUCKETS].len / sizeof(uint32_t);
	int64_t o;

	*sx = (struct sx_cu){
		.scope0 = (uint32_t)(sec[SEC_SCOPES].len / sizeof(struct sx_scope)),
		.n_scopes = (uint32_t)c->n_scopes,
		.seg0 = (uint32_t)(sec[SEC_SEGS].len / sizeof(struct sx_seg)),
		.n_segs = (uint32_t)c->n_segs,
		.row0 = (uint32_t)(sec[SEC_ROWS].len / sizeof(struct sx_row)),
		.n_rows = (uint32_t)c->n_rows,
		.bucket0 = (uint32_t)bucket0,
	};
	for (size_t i = 0; i < c->n_scopes; i++) {
		const struct scope *s = &c->scopes[i];
		struct sx_scope x = {
			.entry = s->entry, .parent = s->parent,
			.call_line = s->call_line, .call_column = s->call_column,
			.linkage = s->linkage, .inlined = s->inlined,
		};

		if ((o = intern(in, s->name)) < 0)
			return (int)o;
		x.name = (uint32_t)o;
		/* dwindex composes call-site names lazily; here, all of them. */
		x.call_file = NONE32;
		if (s->inlined) {
			if ((o = intern(in, dwindex_file_name(c, s->call_file))) < 0)
				return (int)o;
			x.call_file = (uint32_t)o;
		}
		if (buf_put(&sec[SEC_SCOPES], &x, sizeof(x)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_segs; i++) {
		struct sx_seg x = { .lo = c->segs[i].lo, .scope = c->segs[i].scope };

		if (buf_put(&sec[SEC_SEGS], &x, sizeof(x)))
			return -ENOMEM;
	}
	if (c->n_rows && buf_put(&sec[SEC_ROW_ADDR], c->row_addr, c->n_rows * sizeof(uint64_t)))
		return -ENOMEM;
	for (size_t i = 0; i < c->n_rows; i++) {
		const struct row *r = &c->rows[i];
		struct sx_row x = {
			.line = r->line,
			.colend = r->column | ((uint32_t)r->end_sequence << 31),
		};

		if ((o = intern(in, r->file)) < 0)
			return (int)o;
		x.file = (uint32_t)o;
		if (buf_put(&sec[SEC_ROWS], &x, sizeof(x)))
			return -ENOMEM;
	}
	/* The reader's searches start where these say (bucket.h); built
	 * here, once, not by every run's first lookup. */
	if (put_bucket(&sec[SEC_CU_BUCKETS], c->row_addr, sizeof(uint64_t), c->n_rows,
		       ROW_PER_BUCKET) < 0)
		return -ENOMEM;
	sx->seg_bucket = (uint32_t)(sec[SEC_CU_BUCKETS].len / sizeof(uint32_t) - bucket0);
	if (put_bucket(&sec[SEC_CU_BUCKETS], c->n_segs ? &c->segs[0].lo : NULL,
		       sizeof(struct seg), c->n_segs, SEG_PER_BUCKET) < 0)
		return -ENOMEM;
	sx->bucket_words = (uint32_t)(sec[SEC_CU_BUCKETS].len / sizeof(uint32_t) - bucket0);
	return 0;   /* crc: seal_all */
}

/* The table span [off, off + len) of a file whose sections are at h's
 * offsets: from the first of tab_secs to the end of the last. */
static void tab_span(const struct sx_header *h, size_t *off, size_t *len)
{
	size_t lo = SIZE_MAX, hi = 0;

	for (size_t i = 0; i < sizeof(tab_secs) / sizeof(tab_secs[0]); i++) {
		const int s = tab_secs[i];

		if (!h->sec[s].size)
			continue;
		if (h->sec[s].off < lo)
			lo = h->sec[s].off;
		if (h->sec[s].off + h->sec[s].size > hi)
			hi = h->sec[s].off + h->sec[s].size;
	}
	*off = lo == SIZE_MAX ? 0 : lo;
	*len = lo == SIZE_MAX ? 0 : hi - lo;
}

/* The CRC-32C the header holds: the header with its crc field zero, then
 * the ranges, cus and str_crc sections.  h: the header, bounds checked. */
static uint32_t header_crc(const uint8_t *p, const struct sx_header *h)
{
	static const int covered[] = { SEC_RANGES, SEC_CUS, SEC_STR_CRC };
	uint32_t crc, zero = 0;

	crc = vg_crc32c(0, p, offsetof(struct sx_header, crc));
	crc = vg_crc32c(crc, &zero, sizeof(zero));
	crc = vg_crc32c(crc, p + offsetof(struct sx_header, crc) + sizeof(zero),
			sizeof(*h) - offsetof(struct sx_header, crc) - sizeof(zero));
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++)
		crc = vg_crc32c(crc, p + h->sec[covered[i]].off, h->sec[covered[i]].size);
	return crc;
}

/* The symbol table of img into the sections, its names interned; the
 * bucket parameters into *h. */
static int put_syms(const struct vg_image *img, struct buf *sec, struct interner *in,
		    struct sx_header *h)
{
	struct vg_symtab t;
	struct vg_bucket own = { 0 };
	const struct vg_bucket *b;
	int rc = 0;

	if (vg_image_symtab(img, &t) < 0)
		return 0;  /* no symbols: none kept, the ELF answers */
	for (size_t i = 0; i < t.n; i++) {
		const struct vg_symtab_head *hd = (const void *)((const uint8_t *)t.recs + i * t.stride);
		struct vg_symbol sym;
		struct sx_sym x = { .vaddr = hd->vaddr, .size = hd->size, .limit = hd->limit };
		int64_t o;

		vg_image_symbol_nth(img, i, &sym);
		if ((o = intern(in, sym.name)) < 0)
			return (int)o;
		x.name = (uint32_t)o;
		x.dyn = sym.from_dynsym;
		x.ifunc = sym.ifunc;
		if (buf_put(&sec[SEC_SYMS], &x, sizeof(x)))
			return -ENOMEM;
	}
	if (t.n && buf_put(&sec[SEC_SYM_MAX_END], t.max_end, t.n * sizeof(uint64_t)))
		return -ENOMEM;
	b = t.by_addr;
	if (t.n && (!b->first || b->n != t.n)) {
		if (vg_bucket_build(&own, t.recs, t.stride, t.n, 4) < 0)
			return -ENOMEM;
		b = &own;
	}
	if (t.n) {
		h->sym_bucket_base = b->base;
		h->sym_bucket_shift = b->shift;
		if (buf_put(&sec[SEC_SYM_BUCKETS], b->first, ((size_t)b->n_buckets + 1) * sizeof(uint32_t)))
			rc = -ENOMEM;
	}
	vg_bucket_free(&own);
	return rc;
}

static void set_origin(struct sx_header *h, const struct vg_symindex_origin *o)
{
	h->origin_source = o->source;
	h->origin_dev = o->dev;
	h->origin_ino = o->ino;
	h->origin_size = o->size;
	h->origin_mtime_sec = o->mtime_sec;
	h->origin_mtime_nsec = o->mtime_nsec;
}

/* The header checksum of file (whose header h is) into it. */
static void seal(uint8_t *file, struct sx_header *h)
{
	h->crc = header_crc(file, h);
	memcpy(file + offsetof(struct sx_header, crc), &h->crc, sizeof(h->crc));
}

/* first + n within total, without overflow. */
static bool slice_ok(uint32_t first, uint32_t n, size_t total)
{
	return (uint64_t)first + n <= total;
}

/* The CRC-32C of each chunk of n bytes of data, as many as there are,
 * into the n_crc entries at crc (the file's, unaligned-safe). */
static void chunk_crcs(uint8_t *crc, size_t n_crc, const uint8_t *data, size_t n, size_t chunk)
{
	for (size_t k = 0; k < n_crc && k * chunk < n; k++) {
		uint32_t c = vg_crc32c(0, data + k * chunk, n - k * chunk < chunk ? n - k * chunk : chunk);

		memcpy(crc + k * sizeof(c), &c, sizeof(c));
	}
}

/* The CRC-32C of symbol chunk k of n symbols: its records, then their
 * running maximum of ends (the writer's and the reader's). */
static uint32_t sym_chunk_crc(const void *syms, const void *max_end, size_t n, size_t k)
{
	size_t first = k * SYM_CHUNK, m = n - first < SYM_CHUNK ? n - first : SYM_CHUNK;
	uint32_t crc = vg_crc32c(0, (const uint8_t *)syms + first * sizeof(struct sx_sym),
				 m * sizeof(struct sx_sym));

	return vg_crc32c(crc, (const uint8_t *)max_end + first * sizeof(uint64_t),
			 m * sizeof(uint64_t));
}

/* Every checksum of file (its header h, sections within it) from what
 * it holds: each CU's of its bucket tables, of each chunk of the tables,
 * of the strings and of the symbols, the symbol table's, the header's.
 * The writer's last step, and vg_symindex_reseal's; a part that is not
 * where its checksum says (a slice out of bounds) is left unsealed. */
static void seal_all(uint8_t *file, struct sx_header *h)
{
	const uint8_t *buckets = file + h->sec[SEC_CU_BUCKETS].off;
	size_t n_bucket_words = h->sec[SEC_CU_BUCKETS].size / sizeof(uint32_t);
	size_t n_syms = h->sec[SEC_SYMS].size / sizeof(struct sx_sym);
	size_t tab_off, tab_len;

	for (size_t i = 0; i < h->sec[SEC_CUS].size / sizeof(struct sx_cu); i++) {
		uint8_t *at = file + h->sec[SEC_CUS].off + i * sizeof(struct sx_cu);
		struct sx_cu c;

		memcpy(&c, at, sizeof(c));
		if (!slice_ok(c.bucket0, c.bucket_words, n_bucket_words))
			continue;
		c.crc = vg_crc32c(0, buckets + (size_t)c.bucket0 * sizeof(uint32_t),
				  (size_t)c.bucket_words * sizeof(uint32_t));
		memcpy(at, &c, sizeof(c));
	}
	tab_span(h, &tab_off, &tab_len);
	chunk_crcs(file + h->sec[SEC_TAB_CRC].off, h->sec[SEC_TAB_CRC].size / sizeof(uint32_t),
		   file + tab_off, tab_len, TAB_CHUNK);
	chunk_crcs(file + h->sec[SEC_STR_CRC].off, h->sec[SEC_STR_CRC].size / sizeof(uint32_t),
		   file + h->sec[SEC_STRINGS].off, h->sec[SEC_STRINGS].size, STR_CHUNK);
	/* A symbol chunk: its records, then their max ends. */
	if (h->sec[SEC_SYM_MAX_END].size / sizeof(uint64_t) >= n_syms) {
		for (size_t k = 0; k < h->sec[SEC_SYM_CRC].size / sizeof(uint32_t) &&
				   k * SYM_CHUNK < n_syms; k++) {
			uint32_t c = sym_chunk_crc(file + h->sec[SEC_SYMS].off,
						   file + h->sec[SEC_SYM_MAX_END].off, n_syms, k);

			memcpy(file + h->sec[SEC_SYM_CRC].off + k * sizeof(c), &c, sizeof(c));
		}
	}
	if (h->sym_of) {
		h->sym_crc = vg_crc32c(0, file + h->sec[SEC_SYM_BUCKETS].off, h->sec[SEC_SYM_BUCKETS].size);
		h->sym_crc = vg_crc32c(h->sym_crc, file + h->sec[SEC_SYM_CRC].off,
				       h->sec[SEC_SYM_CRC].size);
	}
	memcpy(file, h, sizeof(*h));
	seal(file, h);
}

int vg_symindex_serialize(struct vg_dwindex *ix, const struct vg_image *sym_img,
			  uint32_t sym_of, const struct vg_symindex_origin *origin,
			  const char *key, uint8_t **out, size_t *out_len)
{
	struct buf sec[N_SEC] = { 0 };
	struct interner in = { 0 };
	struct sx_header h = { .magic = SX_MAGIC, .version = VG_SYMINDEX_VERSION,
			       .header_size = sizeof(struct sx_header) };
	const struct cu_range *ranges;
	size_t n_ranges, n_cus = vg_dwindex_cus(ix, NULL), total;
	uint8_t *file = NULL;
	int rc;

	*out = NULL;
	*out_len = 0;
	if (strlen(key) > VG_SYMINDEX_KEY_MAX)
		return -EINVAL;
	rc = dwindex_build_all(ix);
	if (rc < 0)
		return rc;
	if (vg_dwindex_corrupt(ix) || vg_dwindex_missing_dwo(ix))
		return -EINVAL;
	ranges = dwindex_ranges(ix, &n_ranges);
	for (size_t i = 0; i < n_ranges; i++) {
		struct sx_range x = { ranges[i].lo, ranges[i].hi, ranges[i].cu, 0 };

		if (buf_put(&sec[SEC_RANGES], &x, sizeof(x)))
			goto oom;
	}
	for (size_t i = 0; i < n_cus; i++) {
		struct sx_cu x;

		rc = put_cu(dwindex_cu(ix, i), sec, &in, &x);
		if (rc < 0)
			goto fail;
		if (buf_put(&sec[SEC_CUS], &x, sizeof(x)))
			goto oom;
	}
	if (sym_img && sym_of) {
		rc = put_syms(sym_img, sec, &in, &h);
		if (rc < 0)
			goto fail;
		if (sec[SEC_SYMS].len)
			h.sym_of = sym_of;
	}
	/* Every count is a uint32_t in the file. */
	for (int s = 0; s < N_SEC; s++)
		if (sec[s].len / rec_size[s] >= NONE32) {
			rc = -EINVAL;
			goto fail;
		}
	sec[SEC_STRINGS] = in.strings;
	in.strings = (struct buf){ 0 };
	total = pad8(sizeof(h));
	for (int s = 0; s < N_SEC; s++) {
		size_t tab_off, tab_len;

		/* The checksum sections' sizes follow from what they cover,
		 * laid out before them; their values are seal_all's. */
		if (s == SEC_STR_CRC)
			sec[s].len = (sec[SEC_STRINGS].len + STR_CHUNK - 1) / STR_CHUNK * sizeof(uint32_t);
		if (s == SEC_SYM_CRC)
			sec[s].len = (sec[SEC_SYMS].len / sizeof(struct sx_sym) + SYM_CHUNK - 1) /
				     SYM_CHUNK * sizeof(uint32_t);
		if (s == SEC_TAB_CRC) {
			tab_span(&h, &tab_off, &tab_len);
			sec[s].len = (tab_len + TAB_CHUNK - 1) / TAB_CHUNK * sizeof(uint32_t);
		}
		h.sec[s].off = total;
		h.sec[s].size = sec[s].len;
		total += pad8(sec[s].len);
	}
	h.file_size = total;
	if (origin && origin->source)
		set_origin(&h, origin);
	h.key_len = (uint32_t)strlen(key);
	memcpy(h.key, key, h.key_len);
	file = calloc(1, total);
	if (!file)
		goto oom;
	memcpy(file, &h, sizeof(h));
	for (int s = 0; s < N_SEC; s++)
		if (sec[s].p && sec[s].len)
			memcpy(file + h.sec[s].off, sec[s].p, sec[s].len);
	seal_all(file, &h);
	*out = file;
	*out_len = total;
	rc = 0;
	goto done;
oom:
	rc = -ENOMEM;
fail:
	free(file);
done:
	for (int s = 0; s < N_SEC; s++)
		free(sec[s].p);
	interner_free(&in);
	return rc;
}

int vg_symindex_restamp(const void *data, size_t len, const struct vg_symindex_origin *o,
			uint8_t **out)
{
	struct sx_header h;
	uint8_t *file = malloc(len);

	*out = NULL;
	if (!file)
		return -ENOMEM;
	memcpy(file, data, len);
	memcpy(&h, file, sizeof(h));
	set_origin(&h, o);
	memcpy(file, &h, sizeof(h));
	seal(file, &h);
	*out = file;
	return 0;
}

/* ------------------------------------------------------------------ */
/* checking                                                             */

/* Do the scope and segment tables outgrow the second-level cache?  Only
 * then does a batch's lookup miss at the scope record that
 * vg_symindex_prefetch_records fetches ahead: libc's (0.6 MB) stay in a
 * 1 MiB L2, and the step's extra searches took 54 -> 62 ms of CPU time
 * over 100,000 addresses; the generated binary's (10 MB) missed, and the
 * step took 71 -> 66 ms. */
static bool records_outgrow_l2(const struct vg_symindex *x)
{
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (l2 <= 0)
		l2 = 1l << 20;
	return x->n_scopes * sizeof(struct sx_scope) + x->n_segs * sizeof(struct sx_seg) >
	       (size_t)l2;
}

/* The last serial handed to an opened index (struct vg_symindex). */
static uint64_t next_serial;

/* The header of the len bytes at p into *h, and each section's count
 * of records into n: magic, version, sizes, each section within the file
 * and a whole number of records. */
static int header_check(const uint8_t *p, size_t len, struct sx_header *h, size_t n[N_SEC],
			struct vg_error *err)
{
	if (len < sizeof(*h))
		return vg_error_set(err, -EINVAL, "truncated (%zu bytes, shorter than its header)", len);
	memcpy(h, p, sizeof(*h));
	if (memcmp(h->magic, SX_MAGIC, sizeof(h->magic)) != 0)
		return vg_error_set(err, -EINVAL, "not a vigil symbol index (bad magic)");
	if (h->version != VG_SYMINDEX_VERSION || h->header_size != sizeof(*h))
		return vg_error_set(err, -EINVAL, "format version %u, this vigil reads %u",
				    h->version, VG_SYMINDEX_VERSION);
	if (h->file_size != len)
		return vg_error_set(err, -EINVAL, "truncated or extended (%zu bytes, its header says %llu)",
				    len, (unsigned long long)h->file_size);
	for (int s = 0; s < N_SEC; s++) {
		if (h->sec[s].off % 8 || h->sec[s].off < sizeof(*h) || h->sec[s].off > len ||
		    h->sec[s].size > len - h->sec[s].off || h->sec[s].size % rec_size[s])
			return vg_error_set(err, -EINVAL, "section %d out of bounds", s);
		n[s] = h->sec[s].size / rec_size[s];
	}
	return 0;
}

int vg_symindex_reseal(void *data, size_t len, struct vg_error *err)
{
	struct sx_header h;
	size_t n[N_SEC];
	int rc = header_check(data, len, &h, n, err);

	if (rc < 0)
		return rc;
	seal_all(data, &h);
	return 0;
}

int vg_symindex_open_mem(const void *data, size_t len, const char *key,
			 unsigned flags, struct vg_symindex **out, struct vg_error *err)
{
	const uint8_t *p = data;
	struct sx_header h;
	struct vg_symindex *x;
	size_t n[N_SEC];
	int rc;

	*out = NULL;
	rc = header_check(p, len, &h, n, err);
	if (rc < 0)
		return rc;
	if (!(flags & VG_SYMINDEX_NO_CRC) && header_crc(p, &h) != h.crc)
		return vg_error_set(err, -EINVAL, "checksum mismatch (corrupt)");
	if (h.key_len > VG_SYMINDEX_KEY_MAX || h.key_len != strlen(key) ||
	    memcmp(h.key, key, h.key_len) != 0)
		return vg_error_set(err, -EINVAL, "built for another file (key differs)");
	x = calloc(1, sizeof(*x));
	if (!x)
		return vg_error_set(err, -ENOMEM, "out of memory");
	for (int i = 0; i < CHECK_STRIPES; i++)
		pthread_mutex_init(&x->check_lock[i], NULL);
	x->no_crc = (flags & VG_SYMINDEX_NO_CRC) != 0;
	x->ranges = (const void *)(p + h.sec[SEC_RANGES].off);
	x->n_ranges = n[SEC_RANGES];
	x->cus = (const void *)(p + h.sec[SEC_CUS].off);
	x->n_cus = n[SEC_CUS];
	x->scopes = (const void *)(p + h.sec[SEC_SCOPES].off);
	x->n_scopes = n[SEC_SCOPES];
	x->segs = (const void *)(p + h.sec[SEC_SEGS].off);
	x->n_segs = n[SEC_SEGS];
	x->row_addr = (const void *)(p + h.sec[SEC_ROW_ADDR].off);
	x->rows = (const void *)(p + h.sec[SEC_ROWS].off);
	x->n_rows = n[SEC_ROWS];
	x->cu_buckets = (const void *)(p + h.sec[SEC_CU_BUCKETS].off);
	x->n_cu_buckets = n[SEC_CU_BUCKETS];
	{
		size_t off, tab_len;

		tab_span(&h, &off, &tab_len);
		x->tab = p + off;
		x->tab_len = tab_len;
		x->n_tab_chunks = (tab_len + TAB_CHUNK - 1) / TAB_CHUNK;
	}
	x->tab_crc = (const void *)(p + h.sec[SEC_TAB_CRC].off);
	x->prefetch_records = (flags & VG_SYMINDEX_PREFETCH_RECORDS) || records_outgrow_l2(x);
	x->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
	x->strings = (const char *)(p + h.sec[SEC_STRINGS].off);
	x->n_strings = n[SEC_STRINGS];
	x->str_crc = (const void *)(p + h.sec[SEC_STR_CRC].off);
	x->n_chunks = (x->n_strings + STR_CHUNK - 1) / STR_CHUNK;
	x->sym_of = h.sym_of;
	x->sym_crc = h.sym_crc;
	x->origin = (struct vg_symindex_origin){
		.source = h.origin_source, .dev = h.origin_dev, .ino = h.origin_ino,
		.size = h.origin_size, .mtime_sec = h.origin_mtime_sec,
		.mtime_nsec = h.origin_mtime_nsec,
	};
	x->syms = (const void *)(p + h.sec[SEC_SYMS].off);
	x->n_syms = n[SEC_SYMS];
	x->sym_max_end = (const void *)(p + h.sec[SEC_SYM_MAX_END].off);
	x->sym_chunk_crc = (const void *)(p + h.sec[SEC_SYM_CRC].off);
	x->n_sym_chunks = (x->n_syms + SYM_CHUNK - 1) / SYM_CHUNK;
	/* The bucket table's bounds now; its order, with the symbols', at
	 * the first symbol lookup. */
	x->sym_bucket = (struct vg_bucket){
		.base = h.sym_bucket_base, .shift = h.sym_bucket_shift,
		.n_buckets = n[SEC_SYM_BUCKETS] ? (uint32_t)(n[SEC_SYM_BUCKETS] - 1) : 0,
		.n = (uint32_t)x->n_syms,
		.first = (uint32_t *)(uintptr_t)(p + h.sec[SEC_SYM_BUCKETS].off),
	};
	if (h.sym_of && (!x->n_syms || n[SEC_SYM_MAX_END] != x->n_syms ||
			 n[SEC_SYM_CRC] != x->n_sym_chunks ||
			 n[SEC_SYM_BUCKETS] < 2 || n[SEC_SYM_BUCKETS] - 1 >= NONE32 ||
			 x->n_syms >= NONE32 || h.sym_bucket_shift > 63))
		goto bad;
	if (!h.sym_of && (x->n_syms || n[SEC_SYM_MAX_END] || n[SEC_SYM_BUCKETS] ||
			  n[SEC_SYM_CRC]))
		goto bad;
	if (n[SEC_ROW_ADDR] != n[SEC_ROWS] || n[SEC_STR_CRC] != x->n_chunks ||
	    n[SEC_TAB_CRC] != x->n_tab_chunks ||
	    (x->n_strings && x->strings[x->n_strings - 1] != '\0'))
		goto bad;
	x->max_hi = malloc((x->n_ranges ? x->n_ranges : 1) * sizeof(uint64_t));
	x->cu_state = calloc(x->n_cus ? x->n_cus : 1, 1);
	x->chunk_state = calloc(x->n_chunks ? x->n_chunks : 1, 1);
	x->tab_state = calloc(x->n_tab_chunks ? x->n_tab_chunks : 1, 1);
	x->cu_whole = calloc(x->n_cus ? x->n_cus : 1, 1);
	x->cu_lookups = calloc(x->n_cus ? x->n_cus : 1, sizeof(*x->cu_lookups));
	x->sym_chunk_state = calloc(x->n_sym_chunks ? x->n_sym_chunks : 1, 1);
	x->chunk_nul_end = calloc(x->n_chunks ? x->n_chunks : 1, sizeof(*x->chunk_nul_end));
	if (!x->max_hi || !x->cu_state || !x->chunk_state || !x->chunk_nul_end ||
	    !x->sym_chunk_state || !x->tab_state || !x->cu_whole || !x->cu_lookups) {
		vg_symindex_free(x);
		return vg_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < x->n_ranges; i++) {
		const struct sx_range *r = &x->ranges[i];

		if (r->cu >= x->n_cus || r->hi <= r->lo || (i && r->lo < r[-1].lo))
			goto bad;
	}
	vg_ranges_max_hi(x->max_hi, x->ranges, sizeof(*x->ranges), x->n_ranges);
	/* Out of memory only leaves find_cu bisecting. */
	(void)vg_bucket_build(&x->range_bucket, x->ranges, sizeof(*x->ranges), x->n_ranges, 4);
	/* Each CU's tables are checked (checksum, references, order) at
	 * its first lookup: a first answer does not read the whole file. */
	*out = x;
	return 0;
bad:
	vg_symindex_free(x);
	return vg_error_set(err, -EINVAL, "inconsistent tables (a reference out of bounds or out of order)");
}

/* The bucket table stored at word *at of the CU's bucket words (which
 * end at end), over n keys, checked; *at moves past it.  Its bounds and
 * order: vg_bucket_span hands out first[d] and first[d + 1] as a
 * search's slice, within n when they never decrease and end at n.  The
 * values are the CU's checksum's. */
static bool cu_bucket_good(const struct vg_symindex *x, size_t *at, size_t end, size_t n)
{
	struct sx_bucket h;
	const uint32_t *first;

	if (end - *at < sizeof(h) / sizeof(uint32_t))
		return false;
	memcpy(&h, x->cu_buckets + *at, sizeof(h));
	*at += sizeof(h) / sizeof(uint32_t);
	if (!h.n_buckets)
		return true;    /* none: the search bisects the whole slice */
	if (h.shift > 63 || h.n_buckets >= NONE32 || end - *at < (size_t)h.n_buckets + 1 || !n)
		return false;
	first = x->cu_buckets + *at;
	*at += (size_t)h.n_buckets + 1;
	if (first[0] != 0 || first[h.n_buckets] != n)
		return false;
	for (uint32_t d = 0; d < h.n_buckets; d++)
		if (first[d] > first[d + 1])
			return false;
	return true;
}

/* The bucket table at w (checked by cu_bucket_good) over n keys, as
 * util/bucket.h takes it, pointing into the file.  Read at each use, not
 * copied per CU: a copy was an anonymous page written for every 64 CUs a
 * batch reached (31 page faults in libc's). */
static inline struct vg_bucket cu_bucket_at(const uint32_t *w, size_t n)
{
	struct sx_bucket h;

	memcpy(&h, w, sizeof(h));
	if (!h.n_buckets)
		return (struct vg_bucket){ 0 };
	return (struct vg_bucket){ .base = h.base_lo | (uint64_t)h.base_hi << 32, .shift = h.shift,
				   .n_buckets = h.n_buckets, .n = (uint32_t)n,
				   .first = (uint32_t *)(uintptr_t)(w + sizeof(h) / sizeof(uint32_t)) };
}

/* CU c's (checked) bucket table of its rows. */
static inline struct vg_bucket cu_rows_bucket(const struct vg_symindex *x, const struct sx_cu *c)
{
	return cu_bucket_at(x->cu_buckets + c->bucket0, c->n_rows);
}

/* CU c's (checked) bucket table of its segments. */
static inline struct vg_bucket cu_segs_bucket(const struct vg_symindex *x, const struct sx_cu *c)
{
	return cu_bucket_at(x->cu_buckets + c->bucket0 + c->seg_bucket, c->n_segs);
}

/* A CU, checked once: its slices within their sections, and its stored
 * bucket tables (checksum, bounds, order), which then start its
 * searches.  Its other tables are checked by chunk as a search reads
 * them (tab_vouch), and not every reference and the order of every row
 * (that was a fifth of a one-address answer's CPU time on a 2.4 MB CU):
 * the order is what the checksums vouch for, since the writer sorted
 * it, and a search over keys out of order stays within its slice, only
 * answering wrong; each reference is checked where a lookup follows it
 * (scope indices in vg_symindex_lookup, string offsets in str()), so
 * that a file whose checksums pass by chance or design cannot make a
 * lookup read out of bounds. */
static bool cu_check(const struct vg_symindex *x, const struct sx_cu *c)
{
	size_t at = c->bucket0, end;

	if (!slice_ok(c->scope0, c->n_scopes, x->n_scopes) ||
	    !slice_ok(c->seg0, c->n_segs, x->n_segs) ||
	    !slice_ok(c->row0, c->n_rows, x->n_rows) ||
	    !slice_ok(c->bucket0, c->bucket_words, x->n_cu_buckets))
		return false;
	if (!x->no_crc &&
	    vg_crc32c(0, x->cu_buckets + c->bucket0, (size_t)c->bucket_words * sizeof(uint32_t)) != c->crc)
		return false;
	end = at + c->bucket_words;
	return cu_bucket_good(x, &at, end, c->n_rows) && at == (size_t)c->bucket0 + c->seg_bucket &&
	       cu_bucket_good(x, &at, end, c->n_segs) && at == end;
}

/* *state (0: not checked yet, 1 good, 2 bad) after check() ran once,
 * whichever thread got there first; the others wait for its verdict. */
static bool checked_once(struct vg_symindex *x, uint8_t *state, size_t stripe,
			 bool (*check)(struct vg_symindex *, size_t), size_t arg)
{
	uint8_t v = __atomic_load_n(state, __ATOMIC_ACQUIRE);

	if (v)
		return v == 1;
	pthread_mutex_lock(&x->check_lock[stripe % CHECK_STRIPES]);
	v = __atomic_load_n(state, __ATOMIC_RELAXED);
	if (!v) {
		v = check(x, arg) ? 1 : 2;
		__atomic_store_n(state, v, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&x->check_lock[stripe % CHECK_STRIPES]);
	return v == 1;
}

/* A check that only computes and records (a chunk's checksum): it
 * takes no lock, so that two threads never wait for each other on it
 * (behind a stripe lock, a 1 KiB chunk's check could wait for a 2 MB
 * CU's on the same stripe).  Two threads may both run it; they reach the same verdict
 * and record the same values, atomically, before the verdict is
 * published. */
static bool checked_lockless(struct vg_symindex *x, uint8_t *state,
			     bool (*check)(struct vg_symindex *, size_t), size_t arg)
{
	uint8_t v = __atomic_load_n(state, __ATOMIC_ACQUIRE);

	if (v)
		return v == 1;
	v = check(x, arg) ? 1 : 2;
	__atomic_store_n(state, v, __ATOMIC_RELEASE);
	return v == 1;
}

static bool cu_check_nth(struct vg_symindex *x, size_t i)
{
	return cu_check(x, &x->cus[i]);
}

static bool cu_good(struct vg_symindex *x, const struct sx_cu *c)
{
	size_t i = (size_t)(c - x->cus);

	return checked_once(x, &x->cu_state[i], i, cu_check_nth, i);
}

/* The symbol table, checked once: the checksum of its bucket table and
 * chunk checksums, and the bucket table's bounds.  The records are
 * checked by chunk as a search reads them (sym_vouch); their order and
 * running maximum of ends are the chunk's checksum's (as a CU's order,
 * cu_good): out of order, the search answers wrong but stays within the
 * table; a name is checked when an answer reads it. */
static bool syms_check(struct vg_symindex *x, size_t unused)
{
	const struct vg_bucket *b = &x->sym_bucket;

	(void)unused;
	if (!x->no_crc) {
		uint32_t crc = vg_crc32c(0, b->first, ((size_t)b->n_buckets + 1) * sizeof(uint32_t));

		crc = vg_crc32c(crc, x->sym_chunk_crc, x->n_sym_chunks * sizeof(uint32_t));
		if (crc != x->sym_crc)
			return false;
	}
	/* count_le reads first[d] and first[d + 1] for d < n_buckets and
	 * searches between them: in bounds when they never decrease and
	 * end at n. */
	if (b->first[0] != 0 || b->first[b->n_buckets] != x->n_syms)
		return false;
	for (uint32_t d = 0; d < b->n_buckets; d++)
		if (b->first[d] > b->first[d + 1])
			return false;
	return true;
}

static inline bool syms_good(struct vg_symindex *x)
{
	return checked_once(x, &x->sym_state, 0, syms_check, 0);
}

/* Symbol chunk k: its records' and max ends' checksum. */
static bool sym_chunk_check(struct vg_symindex *x, size_t k)
{
	return x->no_crc || sym_chunk_crc(x->syms, x->sym_max_end, x->n_syms, k) ==
			    x->sym_chunk_crc[k];
}

/* symtab.h's vouch: records [first, end) (and their max ends), each
 * chunk checked once. */
static bool sym_vouch(void *ctx, size_t first, size_t end)
{
	struct vg_symindex *x = ctx;

	for (size_t k = first / SYM_CHUNK; k * SYM_CHUNK < end; k++)
		if (!checked_lockless(x, &x->sym_chunk_state[k], sym_chunk_check, k))
			return false;
	return true;
}

/* The string chunk k: its checksum, and where its last NUL ends. */
static bool chunk_check(struct vg_symindex *x, size_t k)
{
	size_t off = k * STR_CHUNK;
	size_t n = x->n_strings - off < STR_CHUNK ? x->n_strings - off : STR_CHUNK;
	const char *nul;

	if (!x->no_crc && vg_crc32c(0, x->strings + off, n) != x->str_crc[k])
		return false;
	nul = memrchr(x->strings + off, '\0', n);
	__atomic_store_n(&x->chunk_nul_end[k], nul ? (uint32_t)(nul - x->strings) + 1 : 0,
			 __ATOMIC_RELAXED);
	return true;
}

/* The string chunk k, checked (once, unless two threads race to it). */
static bool chunk_good(struct vg_symindex *x, size_t k)
{
	return checked_lockless(x, &x->chunk_state[k], chunk_check, k);
}

/* Table chunk k: its checksum. */
static bool tab_chunk_check(struct vg_symindex *x, size_t k)
{
	size_t off = k * TAB_CHUNK;
	size_t n = x->tab_len - off < TAB_CHUNK ? x->tab_len - off : TAB_CHUNK;

	return x->no_crc || vg_crc32c(0, x->tab + off, n) == x->tab_crc[k];
}

/* Table chunks [first, last], each checked once. */
static bool tab_chunks_good(struct vg_symindex *x, size_t first, size_t last)
{
	for (size_t k = first; k <= last; k++)
		if (!checked_lockless(x, &x->tab_state[k], tab_chunk_check, k))
			return false;
	return true;
}

/* The chunks that the len bytes at p, within the table span, touch. */
static bool tab_bytes_good(struct vg_symindex *x, const void *p, size_t len)
{
	size_t off = (size_t)((const uint8_t *)p - x->tab);

	return !len || tab_chunks_good(x, off / TAB_CHUNK, (off + len - 1) / TAB_CHUNK);
}

/* Every chunk that CU i's slices (checked) touch. */
static bool cu_whole_check(struct vg_symindex *x, size_t i)
{
	const struct sx_cu *c = &x->cus[i];

	return tab_bytes_good(x, x->scopes + c->scope0,
			      (size_t)c->n_scopes * sizeof(struct sx_scope)) &&
	       tab_bytes_good(x, x->segs + c->seg0, (size_t)c->n_segs * sizeof(struct sx_seg)) &&
	       tab_bytes_good(x, x->row_addr + c->row0, (size_t)c->n_rows * sizeof(uint64_t)) &&
	       tab_bytes_good(x, x->rows + c->row0, (size_t)c->n_rows * sizeof(struct sx_row));
}

/* A lookup's CU (checked): whole once every chunk it touches passed,
 * and then read without asking. */
struct cu_view {
	const struct sx_cu *c;
	size_t i;
	bool whole;
};

/* One more lookup in CU i (not whole, not failed whole): the
 * WHOLE_AT_LOOKUP-th checks the rest of it (a chunk that fails there
 * leaves the CU to be read by chunk, and fails the lookup that reads
 * it).  Is it whole now?  Only that lookup checks, so no lock: under a
 * stripe lock, a 2 MB CU's check would hold up other CUs' first
 * lookups. */
static bool cu_count_lookup(struct vg_symindex *x, size_t i)
{
	return __atomic_add_fetch(&x->cu_lookups[i], 1, __ATOMIC_RELAXED) == WHOLE_AT_LOOKUP &&
	       checked_lockless(x, &x->cu_whole[i], cu_whole_check, i);
}

/* The view of c (checked) for a lookup, which counts (lookup true), or
 * for the prefetch hint. */
static inline void cu_view(struct vg_symindex *x, const struct sx_cu *c, bool lookup,
			   struct cu_view *v)
{
	uint8_t whole;

	v->c = c;
	v->i = (size_t)(c - x->cus);
	whole = __atomic_load_n(&x->cu_whole[v->i], __ATOMIC_ACQUIRE);
	v->whole = whole == 1 || (whole == 0 && lookup && cu_count_lookup(x, v->i));
}

/* May the len > 0 bytes at p, within v's slices, be read?  Each chunk
 * they touch is checked once.  Inlined: every search and record read of
 * a lookup asks. */
static inline bool tab_vouch(struct vg_symindex *x, const struct cu_view *v, const void *p,
			     size_t len)
{
	size_t off, first, last;

	if (v->whole)
		return true;
	off = (size_t)((const uint8_t *)p - x->tab);
	first = off / TAB_CHUNK;
	last = (off + len - 1) / TAB_CHUNK;
	if (first == last && __atomic_load_n(&x->tab_state[first], __ATOMIC_ACQUIRE) == 1)
		return true;
	return tab_chunks_good(x, first, last);
}

struct vg_symindex *vg_symindex_free(struct vg_symindex *x)
{
	if (x) {
		for (int i = 0; i < CHECK_STRIPES; i++)
			pthread_mutex_destroy(&x->check_lock[i]);
		free(x->chunk_nul_end);
		free(x->max_hi);
		vg_bucket_free(&x->range_bucket);
		free(x->cu_state);
		free(x->chunk_state);
		free(x->tab_state);
		free(x->cu_whole);
		free(x->cu_lookups);
		free(x->sym_chunk_state);
		free(x);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* lookup (dwindex.c's, over the file's tables)                         */

/* The string at off, once every chunk it spans passed its checksum;
 * *bad set otherwise.  The section ends in NUL (checked at open), so the
 * walk ends. */
static const char *str_slow(struct vg_symindex *x, uint32_t off, bool *bad)
{
	size_t pos = off;

	if (off >= x->n_strings) {
		*bad = true;
		return NULL;
	}
	for (size_t k = off / STR_CHUNK;; k++) {
		size_t end = (k + 1) * STR_CHUNK < x->n_strings ? (k + 1) * STR_CHUNK : x->n_strings;

		if (!chunk_good(x, k)) {
			*bad = true;
			return NULL;
		}
		if (memchr(x->strings + pos, '\0', end - pos))
			return x->strings + off;
		pos = end;
	}
}

/* Inlined where the lookups call it (half a million calls in a batch of
 * 100,000 addresses): the common case is a checked chunk whose last NUL
 * ends the string. */
static inline const char *str(struct vg_symindex *x, uint32_t off, bool *bad)
{
	if (off == NONE32)
		return NULL;
	if (off < x->n_strings &&
	    __atomic_load_n(&x->chunk_state[off / STR_CHUNK], __ATOMIC_ACQUIRE) == 1 &&
	    off < __atomic_load_n(&x->chunk_nul_end[off / STR_CHUNK], __ATOMIC_RELAXED))
		return x->strings + off;
	return str_slow(x, off, bad);
}

static const struct sx_cu *find_cu(const struct vg_symindex *x, uint64_t addr)
{
	size_t n_le = vg_bucket_count_le(&x->range_bucket, x->ranges, sizeof(*x->ranges),
					 x->n_ranges, addr);
	size_t i = vg_ranges_prev_containing(x->ranges, sizeof(*x->ranges), x->max_hi, n_le, addr);

	return i == SIZE_MAX ? NULL : &x->cus[x->ranges[i].cu];
}

/* How many of v's n keys (stride bytes apart) are <= addr, by the
 * bucket table b; the keys searched are vouched for first (*bad set and
 * 0 if they fail). */
static inline size_t count_le(struct vg_symindex *x, const struct cu_view *v,
			      const struct vg_bucket *b, const void *keys, size_t stride, size_t n,
			      uint64_t addr, bool *bad)
{
	size_t lo, hi;

	vg_bucket_span(b, n, addr, &lo, &hi);
	if (lo < hi && !tab_vouch(x, v, (const uint8_t *)keys + lo * stride, (hi - lo) * stride)) {
		*bad = true;
		return 0;
	}
	return vg_sorted_count_le_in(keys, stride, lo, hi, addr);
}

/* How many of v's rows start at or below addr. */
static inline size_t rows_le(struct vg_symindex *x, const struct cu_view *v, uint64_t addr,
			      bool *bad)
{
	struct vg_bucket b = cu_rows_bucket(x, v->c);

	return count_le(x, v, &b, x->row_addr + v->c->row0, sizeof(uint64_t),
			v->c->n_rows, addr, bad);
}

/* The row of an address with n_le rows at or below it in v, or NULL
 * (none, or an end-of-sequence row: no line there; or its chunk failed
 * its check: *bad). */
static const struct sx_row *row_at(struct vg_symindex *x, const struct cu_view *v, size_t n_le,
				   bool *bad)
{
	const struct sx_row *r;

	if (n_le == 0)
		return NULL;
	r = &x->rows[v->c->row0 + n_le - 1];
	if (!tab_vouch(x, v, r, sizeof(*r))) {
		*bad = true;
		return NULL;
	}
	return r->colend >> 31 ? NULL : r;
}

/* The scope of the segment addr is in (NONE32: a gap, or none, or its
 * chunk failed its check: *bad). */
static inline uint32_t find_scope(struct vg_symindex *x, const struct cu_view *v,
				  uint64_t addr, bool *bad)
{
	const struct sx_seg *segs = x->segs + v->c->seg0;
	struct vg_bucket b = cu_segs_bucket(x, v->c);
	size_t lo = count_le(x, v, &b, &segs->lo, sizeof(*segs), v->c->n_segs,
			     addr, bad);

	if (lo == 0)
		return NONE32;
	if (!tab_vouch(x, v, &segs[lo - 1], sizeof(*segs))) {
		*bad = true;
		return NONE32;
	}
	return segs[lo - 1].scope;
}

void vg_symindex_prefetch(const struct vg_symindex *x, uint64_t addr)
{
	const struct sx_cu *c = find_cu(x, addr);
	struct vg_bucket rows, segs;
	size_t lo, hi;

	/* Only a CU already checked: its buckets are checked, its pages
	 * mapped (a prefetch of an unmapped page is dropped anyway). */
	if (!c || __atomic_load_n(&x->cu_state[c - x->cus], __ATOMIC_ACQUIRE) != 1)
		return;
	rows = cu_rows_bucket(x, c);
	segs = cu_segs_bucket(x, c);
	vg_bucket_span(&rows, c->n_rows, addr, &lo, &hi);
	if (lo < hi) {
		vg_prefetch_span(x->row_addr + c->row0 + lo, (hi - lo) * sizeof(uint64_t));
		vg_prefetch_span(x->rows + c->row0 + lo, (hi - lo) * sizeof(struct sx_row));
	}
	vg_bucket_span(&segs, c->n_segs, addr, &lo, &hi);
	if (lo < hi)
		vg_prefetch_span(x->segs + c->seg0 + lo, (hi - lo) * sizeof(struct sx_seg));
}

/* The searches of the last two vg_symindex_prefetch_records on this
 * thread, for the lookup of the same address a key or two later: in a
 * batch of the generated binary, the CU, row and scope searches of each
 * address were made twice, the second time in cached lines (a fifth of
 * the lookup's samples).  Only from a CU already checked. */
struct sx_memo {
	uint64_t serial;        /* the index's; 0: empty */
	uint64_t addr;
	size_t cu, n_le_row;    /* rows at or below addr */
	uint32_t scope;
};

static _Thread_local struct sx_memo memo[2];
static _Thread_local unsigned memo_next;

static const struct sx_memo *memo_find(const struct vg_symindex *x, uint64_t addr)
{
	for (int i = 0; i < 2; i++)
		if (memo[i].serial == x->serial && memo[i].addr == addr)
			return &memo[i];
	return NULL;
}

void vg_symindex_prefetch_records(struct vg_symindex *x, uint64_t addr)
{
	struct sx_memo *m;
	const struct sx_cu *c;
	struct cu_view v;
	size_t row;
	uint32_t s;
	bool bad = false;

	if (!x->prefetch_records || !(c = find_cu(x, addr)))
		return;
	if (__atomic_load_n(&x->cu_state[c - x->cus], __ATOMIC_ACQUIRE) != 1)
		return;
	cu_view(x, c, false, &v);
	/* The chunks these searches read are checked here, a lookup
	 * before the lookup would (a memo from unchecked chunks could not
	 * be taken; a batch of the generated binary starts a chunk every
	 * few addresses). */
	s = find_scope(x, &v, addr, &bad);
	row = rows_le(x, &v, addr, &bad);
	if (bad)
		return;
	if (s < c->n_scopes)
		__builtin_prefetch(&x->scopes[c->scope0 + s]);
	if (row)
		__builtin_prefetch(&x->rows[c->row0 + row - 1]);
	m = &memo[memo_next++ & 1];
	*m = (struct sx_memo){ .serial = x->serial, .addr = addr, .cu = v.i, .n_le_row = row,
			       .scope = s };
}

int vg_symindex_lookup(struct vg_symindex *x, uint64_t addr,
		       struct vg_dw_result *res)
{
	/* Only an index whose hint takes that step leaves memos. */
	const struct sx_memo *m = x->prefetch_records ? memo_find(x, addr) : NULL;
	const struct sx_cu *c;
	const struct sx_row *row;
	struct cu_view v;
	bool bad = false;
	uint32_t s;

	dw_result_clear(res);
	if (m) {
		/* Its CU was checked, and what its searches read, when the
		 * memo was made. */
		c = &x->cus[m->cu];
		cu_view(x, c, true, &v);
		row = row_at(x, &v, m->n_le_row, &bad);
		s = m->scope;
	} else {
		c = find_cu(x, addr);
		if (!c)
			return -ENOENT;
		if (!cu_good(x, c))
			return -EBADMSG;
		cu_view(x, c, true, &v);
		row = row_at(x, &v, rows_le(x, &v, addr, &bad), &bad);
		s = find_scope(x, &v, addr, &bad);
	}
	if (bad)
		return -EBADMSG;
	if (row) {
		res->file = str(x, row->file, &bad);
		res->line = row->line;
		res->column = row->colend & 0x7fffffffu;
		res->has_line = true;
	}
	for (uint32_t hops = 0; s != NONE32 && hops < c->n_scopes; hops++) {
		const struct sx_scope *sc;
		struct vg_dw_frame *up;

		if (s >= c->n_scopes || !tab_vouch(x, &v, &x->scopes[c->scope0 + s], sizeof(*sc))) {
			bad = true;
			break;
		}
		sc = &x->scopes[c->scope0 + s];
		if (!dw_result_push(res, str(x, sc->name, &bad), sc->linkage, sc->inlined,
				    sc->entry))
			break;
		if (!sc->inlined)
			break;
		up = dw_result_next(res);
		if (up) {
			up->file = str(x, sc->call_file, &bad);
			up->line = sc->call_line;
			up->column = sc->call_column;
		}
		s = sc->parent;
	}
	return bad ? -EBADMSG : 0;
}

/* ------------------------------------------------------------------ */
/* the ELF symbol table                                                 */

bool vg_symindex_has_symbols(const struct vg_symindex *x, uint32_t of)
{
	return of && x->sym_of == of;
}

void vg_symindex_origin(const struct vg_symindex *x, struct vg_symindex_origin *o)
{
	*o = x->origin;
}

static int sym_answer(struct vg_symindex *x, size_t i, struct vg_symbol *sym)
{
	const struct sx_sym *s;
	bool bad = false;

	if (i == VG_SYMTAB_BAD)
		return -EBADMSG;
	if (i == SIZE_MAX)
		return -ENOENT;
	s = &x->syms[i];
	*sym = (struct vg_symbol){ .vaddr = s->vaddr, .size = s->size,
				   .name = str(x, s->name, &bad),
				   .from_dynsym = s->dyn, .ifunc = s->ifunc };
	return bad || !sym->name ? -EBADMSG : 0;
}

static inline bool sym_table(struct vg_symindex *x, uint32_t of, struct vg_symtab *t, int *rc)
{
	if (!vg_symindex_has_symbols(x, of)) {
		*rc = -ENODATA;
		return false;
	}
	if (!syms_good(x)) {
		*rc = -EBADMSG;
		return false;
	}
	*t = (struct vg_symtab){ .recs = x->syms, .stride = sizeof(*x->syms), .n = x->n_syms,
				 .max_end = x->sym_max_end, .by_addr = &x->sym_bucket,
				 .vouch = sym_vouch, .vouch_ctx = x };
	return true;
}

int vg_symindex_symbol_at(struct vg_symindex *x, uint32_t of, uint64_t vaddr,
			  struct vg_symbol *sym)
{
	struct vg_symtab t;
	int rc;

	if (!sym_table(x, of, &t, &rc))
		return rc;
	return sym_answer(x, vg_symtab_at(&t, vaddr), sym);
}

int vg_symindex_symbol_before(struct vg_symindex *x, uint32_t of, uint64_t vaddr,
			      struct vg_symbol *sym)
{
	struct vg_symtab t;
	int rc;

	if (!sym_table(x, of, &t, &rc))
		return rc;
	return sym_answer(x, vg_symtab_before(&t, vaddr), sym);
}
