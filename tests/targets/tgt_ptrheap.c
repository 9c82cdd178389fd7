/* tgt_ptrheap - a heap shaped like redis's keyspace with one known pointer
 * chain and many decoys, for `vigil scan --pointers-to` ranking
 * (tests/e2e/scan_pointers_rank.sh).
 * usage: tgt_ptrheap TRUTH LIBPATH      (LIBPATH: libvgtestlib.so)
 *
 * The real chain, as redis 7.0 keeps a key's value (server.db -> db[0].dict
 * -> ht_table[0] -> bucket 3 -> entry->v.val):
 *   g_server+64 (db) -> db+0 (dict) -> dict+8 (table) -> table+24 (bucket 3)
 *   -> entry+8 (val) -> the value object = ADDR
 *   expression *(*(*(*(*(g_server+64))+8)+24)+8), depth 5, offsets
 *   0 8 24 8 0.
 * Decoys that also reach ADDR, each ranked first by some plausible rule:
 *   shallow  *(g_arena)+1000         depth 1, one large offset
 *   wide     *(*(g_cache)+512)       depth 2, a large offset
 *   unaligned *(*(*(*(g_names))+5)+8) depth 4, offsets summing to 13, but
 *            through a pointer 3 bytes into a buffer (a string's pointer)
 *   library  *(*(vglib_counter)+8)   depth 2, offsets summing to 8, from a
 *            library's global
 * and NOISE small objects (64 bytes, 4 pointers each to random others,
 * reached from g_noise_roots): a wide search on them grows until it is cut,
 * as on a real heap.  Value objects are allocated before the entries, so no
 * entry lies just below its value (a shorter coincidental chain).
 *
 * Truth lines besides pid/obj/sym/state:
 *   chain_target 0xADDR
 *   real EXPRESSION       real_offsets 0 8 24 8 0
 *   decoy KIND EXPRESSION (KIND: shallow wide unaligned library) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

#define NBUCKETS 64
#define NOISE 40000
#define NOISE_ROOTS 64

struct entry {                  /* redis dictEntry */
	void *key;
	void *val;
	struct entry *next;
};

struct dict {                   /* redis 7.0 dict */
	void *type;
	struct entry **table[2];
	unsigned long used[2];
	long rehashidx;
};

struct db {
	struct dict *dict;
	struct dict *expires;
	long id;
};

struct obj {                    /* redis robj */
	uint32_t type_encoding;
	uint32_t refcount;
	void *ptr;
};

struct server {
	char before_db[64];
	struct db *db;
	long hz;
};

__attribute__((used)) struct server g_server;
__attribute__((used)) unsigned char *volatile g_arena;
__attribute__((used)) unsigned char *volatile g_cache;
__attribute__((used)) void **volatile g_names;
__attribute__((used)) void *volatile g_noise_roots[NOISE_ROOTS];

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fprintf(stderr, "tgt_ptrheap: calloc failed\n");
		exit(99);
	}
	return p;
}

/* A redis-like sds string: the pointer is past a 3-byte header, so it is
 * not 8-aligned. */
static char *sds(const char *text)
{
	size_t len = strlen(text);
	char *h = xcalloc(len + 4);

	h[0] = (char)len;
	memcpy(h + 3, text, len);
	return h + 3;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static size_t pick(size_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (size_t)(rng % n);
}

/* Malloc'd and freed (then unmapped: it is over the mmap threshold), so
 * no global of the program points at every noise object. */
static void ***noise;

static void make_noise(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		noise[i] = xcalloc(64);
}

static void link_noise(void)
{
	for (size_t i = 0; i < NOISE; i++)
		for (int f = 0; f < 4; f++)
			noise[i][f] = noise[pick(NOISE)];
	for (size_t i = 0; i < NOISE_ROOTS; i++)
		g_noise_roots[i] = noise[pick(NOISE)];
}

int main(int argc, char **argv)
{
	struct obj *vals[NBUCKETS];
	struct entry *entries[NBUCKETS];
	char text[32];

	if (argc != 3) {
		fprintf(stderr, "usage: tgt_ptrheap TRUTH LIBPATH\n");
		return 99;
	}
	truth_init(TRUTH_MAX_SECONDS);
	void *counter = truth_load_vgtestlib(argv[2]);

	noise = xcalloc(NOISE * sizeof(*noise));
	make_noise(0, NOISE / 2);
	/* The values first, then the entries: see the note at the top. */
	for (int i = 0; i < NBUCKETS; i++) {
		snprintf(text, sizeof(text), "value-%d", i);
		vals[i] = xcalloc(sizeof(struct obj));
		vals[i]->refcount = 1;
		vals[i]->ptr = sds(text);
	}
	struct dict *d = xcalloc(sizeof(*d));
	struct entry **table = xcalloc(NBUCKETS * sizeof(*table));
	for (int i = 0; i < NBUCKETS; i++) {
		snprintf(text, sizeof(text), "key:%d", i);
		entries[i] = xcalloc(sizeof(struct entry));
		entries[i]->key = sds(text);
		entries[i]->val = vals[i];
		/* Some buckets chain two entries, as collisions do. */
		if (i % 4 == 1) {
			entries[i]->next = entries[i - 1];
			table[i - 1] = NULL;
		}
		table[i] = entries[i];
		d->used[0]++;
	}
	d->table[0] = table;
	d->rehashidx = -1;
	struct db *db = xcalloc(3 * sizeof(*db));
	db[0].dict = d;
	g_server.db = db;
	g_server.hz = 10;
	make_noise(NOISE / 2, NOISE);
	link_noise();
	free(noise);
	noise = NULL;

	struct entry *e3 = table[3];
	unsigned char *target = (unsigned char *)e3->val;

	/* The decoys. */
	g_arena = target - 1000;
	g_cache = xcalloc(4096);
	*(void **)(g_cache + 512) = target;
	unsigned char *buf = xcalloc(32);
	*(void **)(buf + 8) = e3;
	g_names = xcalloc(32);
	g_names[0] = buf + 3;
	*(void *volatile *)counter = e3;

	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "g_server", &g_server, sizeof(g_server));
	fprintf(f, "chain_target 0x%llx\n", (unsigned long long)(uintptr_t)target);
	fputs("real *(*(*(*(*(g_server+64))+8)+24)+8)\nreal_offsets 0 8 24 8 0\n", f);
	fputs("decoy shallow *(g_arena)+1000\n"
	      "decoy wide *(*(g_cache)+512)\n"
	      "decoy unaligned *(*(*(*(g_names))+5)+8)\n"
	      "decoy library *(*(vglib_counter)+8)\n", f);
	fputs("state ready\n", f);
	truth_end(f, argv[1]);
	truth_wait_forever();
}
