/* test_scan.c - vg_scan_first / vg_scan_narrow / vg_scan_refresh against a
 * forked child.  The child maps its own regions (each fenced by PROT_NONE
 * pages, so each is one VMA), reports their addresses, and then obeys
 * commands from the parent: write bytes, munmap, mprotect.  Scans are
 * limited to the child's own regions (a forked test process also has the
 * parent's heap and, under ASan, terabytes of shadow mappings), and every
 * expected match set is exact. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "testutil.h"

#include "scan/scan.h"
#include "scan/value.h"
#include "target/maps.h"

#define PG 4096u
#define MAIN_LEN ((size_t)12 << 20)   /* three default chunks */
#define VICTIM_LEN ((size_t)16 * PG)
#define RND_LEN ((size_t)64 * PG + 3 * PG)
#define MANY_LEN ((size_t)2 << 20)
#define CH ((size_t)64 << 10)      /* the chunk most tests use */

/* The planted value: 0x5eed1234. */
#define V32 0x5eed1234u

struct layout {
	uint64_t lo, hi;             /* the whole reservation */
	uint64_t main, victim, rnd;
};

struct cmd {
	uint32_t op;                 /* 'w' write, 'u' munmap, 'p' PROT_NONE, 'q' quit */
	uint32_t len;
	uint64_t addr;
	uint8_t val[16];             /* 'w': the bytes XOR 0xa5 (never in clear here) */
};

struct kid {
	pid_t pid;
	int cmd, rep;
	struct layout l;
	struct vg_maps *all;
	struct vg_maps sub;          /* the regions inside [l.lo, l.hi) */
};

/* Small-alphabet pseudo-random bytes: many matches for patterns made of
 * the same bytes. */
static const uint8_t alphabet[4] = { 0x00, 0x3f, 0x80, 0xf0 };

static void child_main(int in, int out)
{
	size_t total = PG + MAIN_LEN + PG + VICTIM_LEN + PG + RND_LEN + PG;
	uint8_t *r = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct layout l;
	uint32_t x = 12345;
	struct cmd c;

	if (r == MAP_FAILED)
		_exit(2);
#if defined(__SANITIZE_ADDRESS__)
	/* A fresh mapping where the parent's allocator once had a freed
	 * block still has its poisoned shadow. */
	ASAN_UNPOISON_MEMORY_REGION(r, total);
#endif
	l.lo = (uint64_t)(uintptr_t)r;
	l.hi = l.lo + total;
	l.main = l.lo + PG;
	l.victim = l.main + MAIN_LEN + PG;
	l.rnd = l.victim + VICTIM_LEN + PG;
	if (mprotect((void *)(uintptr_t)l.main, MAIN_LEN, PROT_READ | PROT_WRITE) ||
	    mprotect((void *)(uintptr_t)l.victim, VICTIM_LEN, PROT_READ | PROT_WRITE) ||
	    mprotect((void *)(uintptr_t)l.rnd, RND_LEN, PROT_READ | PROT_WRITE))
		_exit(3);
	memset((void *)(uintptr_t)l.main, 0, MAIN_LEN);
	memset((void *)(uintptr_t)l.victim, 0, VICTIM_LEN);
	for (size_t i = 0; i < RND_LEN; i++) {
		x = x * 1103515245u + 12345u;
		/* The first 16 KiB from two bytes only: 8-byte values occur. */
		((uint8_t *)(uintptr_t)l.rnd)[i] = alphabet[(x >> 16) & (i < 16384 ? 1 : 3)];
	}
	if (write(out, &l, sizeof(l)) != sizeof(l))
		_exit(4);
	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		char ack = 'k';

		if (c.op == 'w') {
			for (uint32_t i = 0; i < c.len; i++)
				((volatile uint8_t *)(uintptr_t)c.addr)[i] = c.val[i] ^ 0xa5;
		} else if (c.op == 'u') {
			if (munmap((void *)(uintptr_t)c.addr, c.len))
				ack = 'e';
		} else if (c.op == 'p') {
			if (mprotect((void *)(uintptr_t)c.addr, c.len, PROT_NONE))
				ack = 'e';
		} else {
			_exit(0);
		}
		memset(&c, 0, sizeof(c));
		if (write(out, &ack, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

static void kid_cmd(struct kid *k, uint32_t op, uint64_t addr, const void *val,
		    uint32_t len)
{
	struct cmd c = { .op = op, .len = len, .addr = addr };
	char ack;

	if (val) {
		assert_true(len <= sizeof(c.val));
		for (uint32_t i = 0; i < len; i++)
			c.val[i] = ((const uint8_t *)val)[i] ^ 0xa5;
	}
	assert_int_equal(write(k->cmd, &c, sizeof(c)), sizeof(c));
	assert_int_equal(read(k->rep, &ack, 1), 1);
	assert_int_equal(ack, 'k');
}

static void kid_write(struct kid *k, uint64_t addr, const void *val, uint32_t len)
{
	kid_cmd(k, 'w', addr, val, len);
}

static void kid_put32(struct kid *k, uint64_t addr, uint32_t v)
{
	kid_write(k, addr, &v, 4);
}

/* Load the maps and keep the regions of the reservation. */
static void kid_maps(struct kid *k)
{
	struct vg_error err = { 0 };
	size_t n = 0;

	if (k->all) {
		free(k->sub.regions);
		vg_maps_free(k->all);
	}
	assert_int_equal(vg_maps_load(k->pid, 0, &k->all, NULL, &err), 0);
	memset(&k->sub, 0, sizeof(k->sub));
	k->sub.regions = calloc(k->all->n, sizeof(*k->sub.regions));
	assert_non_null(k->sub.regions);
	for (size_t i = 0; i < k->all->n; i++) {
		const struct vg_region *r = &k->all->regions[i];

		if (r->start >= k->l.lo && r->end <= k->l.hi)
			k->sub.regions[n++] = *r;
	}
	k->sub.n = n;
}

static void kid_start(struct kid *k)
{
	int p[2], fd;

	memset(k, 0, sizeof(*k));
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	k->pid = tu_fork_pipe(&fd);
	assert_true(k->pid >= 0);
	if (k->pid == 0) {
		close(p[1]);
		child_main(p[0], fd);
	}
	close(p[0]);
	k->cmd = p[1];
	k->rep = fd;
	assert_int_equal(read(fd, &k->l, sizeof(k->l)), sizeof(k->l));
	kid_maps(k);
	/* main, victim, rnd, each alone, and the four fences. */
	assert_int_equal(k->sub.n, 7);
	assert_int_equal(k->sub.regions[1].start, k->l.main);
	assert_int_equal(k->sub.regions[1].end, k->l.main + MAIN_LEN);
	assert_int_equal(k->sub.regions[3].start, k->l.victim);
	assert_int_equal(k->sub.regions[5].start, k->l.rnd);
}

static void kid_stop(struct kid *k)
{
	int st;

	close(k->cmd);
	close(k->rep);
	assert_int_equal(waitpid(k->pid, &st, 0), k->pid);
	free(k->sub.regions);
	vg_maps_free(k->all);
}

/* A maps table with only region i of the child's. */
static struct vg_maps one_region(struct kid *k, struct vg_region *keep, size_t i)
{
	struct vg_maps m = { 0 };

	*keep = k->sub.regions[i];
	m.regions = keep;
	m.n = 1;
	return m;
}

static struct vg_scan_opts opts_for(const struct vg_scan_value *v, bool aligned,
				    size_t chunk, unsigned threads)
{
	struct vg_scan_opts o = { 0 };

	o.value = v;
	o.aligned = aligned;
	o.chunk = chunk;
	o.threads = threads;
	vg_scan_select_parse("writable", &o.select);
	return o;
}

static void scan_ok(struct kid *k, const struct vg_maps *m, const struct vg_scan_opts *o,
		    struct vg_match_set *s, struct vg_scan_stats *st)
{
	struct vg_error err = { 0 };
	int rc = vg_scan_first(k->pid, m, o, s, st, &err);

	if (rc != 0)
		fail_msg("vg_scan_first: %d %s", rc, err.msg);
}

static void assert_addrs(const struct vg_match_set *s, const uint64_t *want, size_t n)
{
	if (s->n != n) {
		for (size_t i = 0; i < s->n; i++)
			print_message("got 0x%llx\n", (unsigned long long)s->addr[i]);
		for (size_t i = 0; i < n; i++)
			print_message("want 0x%llx\n", (unsigned long long)want[i]);
	}
	assert_int_equal(s->n, n);
	for (size_t i = 0; i < n; i++)
		if (s->addr[i] != want[i])
			fail_msg("match %zu: 0x%llx, want 0x%llx", i,
				 (unsigned long long)s->addr[i], (unsigned long long)want[i]);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- first scan ------------------------------------------------------ */

static void test_i32_planted(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	uint64_t m, all[16], al[16];
	size_t n = 0, na = 0;
	/* Offsets in main: aligned ones, unaligned ones, across a page, across
	 * chunk boundaries of CH (by 1, 2, 3 bytes), just before and just
	 * after a boundary, and the last 4 bytes of the region. */
	static const size_t offs[] = {
		0, 101, 3 * PG + 8, 2 * PG - 1, 5 * CH - 1, 7 * CH - 2, 9 * CH - 3,
		11 * CH - 4, 12 * CH - 1, 13 * CH, 2 * ((size_t)4 << 20) - 2, MAIN_LEN - 4,
	};

	kid_start(&k);
	m = k.l.main;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		kid_put32(&k, m + offs[i], V32);
		all[n++] = m + offs[i];
		if (offs[i] % 4 == 0)
			al[na++] = m + offs[i];
	}
	qsort(all, n, sizeof(all[0]), u64_cmp);
	qsort(al, na, sizeof(al[0]), u64_cmp);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_I32, "0x5eed1234", 0, &v, NULL), 0);

	/* Every chunk size and thread count finds exactly the same. */
	static const struct { size_t chunk; unsigned threads; } cfg[] = {
		{ CH, 1 }, { CH, 2 }, { PG, 2 }, { 0, 2 }, { 3 * PG + 1, 3 },
	};
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		o = opts_for(&v, false, cfg[c].chunk, cfg[c].threads);
		scan_ok(&k, &k.sub, &o, &s, &st);
		assert_addrs(&s, all, n);
		assert_int_equal(s.value_size, 4);
		assert_null(s.variant);
		for (size_t i = 0; i < s.n; i++)
			assert_memory_equal(s.value + 4 * i, v.raw, 4);
		assert_int_equal(st.bytes_total, MAIN_LEN + VICTIM_LEN + RND_LEN);
		assert_int_equal(st.bytes_scanned, st.bytes_total);
		assert_int_equal(st.bytes_skipped, 0);
		assert_int_equal(st.regions_scanned, 3);
		assert_int_equal(st.regions_skipped, 0);
		assert_int_equal(st.matches, n);
		assert_false(st.interrupted);
		vg_match_set_clear(&s);

		o.aligned = true;
		scan_ok(&k, &k.sub, &o, &s, &st);
		assert_addrs(&s, al, na);
		vg_match_set_clear(&s);
	}
	/* u32 and i32 are the same bytes. */
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "1592594996", 0, &v, NULL), 0);
	o = opts_for(&v, false, 0, 0);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, all, n);
	vg_match_set_clear(&s);
	kid_stop(&k);
}

static void test_other_types(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	uint64_t m;

	kid_start(&k);
	m = k.l.main;

	/* i64: aligned, unaligned, straddling a chunk boundary. */
	uint64_t q = 0x1122334455667788u;
	kid_write(&k, m + 8000, &q, 8);
	kid_write(&k, m + 16003, &q, 8);
	kid_write(&k, m + 3 * CH - 5, &q, 8);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_I64, "0x1122334455667788", 0, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 8000, m + 16003, m + 3 * CH - 5 }, 3);
	vg_match_set_clear(&s);
	o.aligned = true;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 8000 }, 1);
	vg_match_set_clear(&s);

	/* i16 -2 (fe ff): two plants, one at an odd address. */
	int16_t h = -2;
	kid_write(&k, m + 20000, &h, 2);
	kid_write(&k, m + 20011, &h, 2);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_I16, "-2", 0, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 20000, m + 20011 }, 2);
	vg_match_set_clear(&s);
	o.aligned = true;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 20000 }, 1);
	vg_match_set_clear(&s);

	/* f64 3.25 within 0.001: in range, out of range, NaN, unaligned. */
	double d[] = { 3.25, 3.2505, 3.26, -3.25, NAN, 3.2495 };
	uint64_t at[] = { m + 40000, m + 40016, m + 40032, m + 40048, m + 40064, m + 40081 };
	for (size_t i = 0; i < 6; i++)
		kid_write(&k, at[i], &d[i], 8);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_F64, "3.25", 0.001, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ at[0], at[1], at[5] }, 3);
	assert_memory_equal(s.value + 8, &d[1], 8);
	vg_match_set_clear(&s);
	o.aligned = true;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ at[0], at[1] }, 2);
	vg_match_set_clear(&s);

	/* f32 0.1 with epsilon 0: the float 0.1f, not its neighbour. */
	float f[] = { 0.1f, 0.1f, 0.1f };
	uint32_t fb;

	memcpy(&fb, &f[1], 4);
	fb++;                        /* the next float up */
	memcpy(&f[1], &fb, 4);
	uint64_t fat[] = { m + 50000, m + 50008, m + 50017 };
	for (size_t i = 0; i < 3; i++)
		kid_write(&k, fat[i], &f[i], 4);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_F32, "0.1", 0, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ fat[0], fat[2] }, 2);
	vg_match_set_clear(&s);

	/* str: UTF-8 at an odd address, UTF-16LE, and UTF-8 across a chunk
	 * boundary; the stored value is zero-padded to the UTF-16 length. */
	static const char u8[] = "Z\xc3\xa9!";                 /* "Zé!" */
	static const uint8_t u16[] = { 'Z', 0, 0xe9, 0, '!', 0 };
	kid_write(&k, m + 60001, u8, 4);
	kid_write(&k, m + 60100, u16, 6);
	kid_write(&k, m + 5 * CH - 2, u8, 4);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_STR, u8, 0, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 60001, m + 60100, m + 5 * CH - 2 }, 3);
	assert_int_equal(s.value_size, 6);
	assert_non_null(s.variant);
	assert_int_equal(s.variant[0], 0);
	assert_int_equal(s.variant[1], 1);
	assert_int_equal(s.variant[2], 0);
	assert_memory_equal(s.value, "Z\xc3\xa9!\0\0", 6);
	assert_memory_equal(s.value + 6, u16, 6);
	assert_int_equal(vg_match_set_len(&s, &v, 0), 4);
	assert_int_equal(vg_match_set_len(&s, &v, 1), 6);
	assert_int_equal(vg_match_set_len(&s, NULL, 0), 6);
	vg_match_set_clear(&s);
	vg_scan_value_clear(&v);

	/* bytes with a wildcard: the matched bytes are stored as they are. */
	static const uint8_t b1[] = { 0xde, 0xad, 0x00, 0xef };
	static const uint8_t b2[] = { 0xde, 0xad, 0x77, 0xef };
	static const uint8_t b3[] = { 0xde, 0xad, 0x77, 0xee };
	kid_write(&k, m + 70000, b1, 4);
	kid_write(&k, m + 70101, b2, 4);
	kid_write(&k, m + 70200, b3, 4);
	kid_write(&k, m + 7 * CH - 1, b2, 4);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_BYTES, "de ad ?? ef", 0, &v, NULL), 0);
	o = opts_for(&v, false, CH, 2);
	o.aligned = true;   /* ignored for patterns */
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 70000, m + 70101, m + 7 * CH - 1 }, 3);
	assert_memory_equal(s.value, b1, 4);
	assert_memory_equal(s.value + 4, b2, 4);
	assert_int_equal(s.variant[1], 0);
	vg_match_set_clear(&s);
	vg_scan_value_clear(&v);
	kid_stop(&k);
}

/* ---- the random region against a naive scan -------------------------- */

struct naive {
	enum vg_scan_type t;
	const char *text;
	double eps;
};

static bool naive_at(const struct vg_scan_value *v, const uint8_t *p, size_t avail,
		     unsigned *var)
{
	size_t w = vg_scan_type_width(v->type);

	if (w) {
		if (avail < w)
			return false;
		if (v->type == VG_SCAN_F32 || v->type == VG_SCAN_F64) {
			double x;

			if (v->type == VG_SCAN_F32) {
				float f;

				memcpy(&f, p, 4);
				x = f;
			} else {
				memcpy(&x, p, 8);
			}
			return isfinite(x) && x - v->f <= v->epsilon && v->f - x <= v->epsilon;
		}
		return memcmp(p, v->raw, w) == 0;
	}
	for (size_t k = 0; k < v->npat; k++) {
		const struct vg_scan_pattern *pt = &v->pat[k];
		bool ok = avail >= pt->len;

		for (size_t i = 0; ok && i < pt->len; i++)
			ok = pt->mask && !pt->mask[i] ? true : p[i] == pt->bytes[i];
		if (ok) {
			*var = (unsigned)k;
			return true;
		}
	}
	return false;
}

static void test_random_vs_naive(void **state)
{
	static const struct naive cases[] = {
		{ VG_SCAN_U8, "0x3f", 0 },
		{ VG_SCAN_I16, "0x3f80", 0 },
		{ VG_SCAN_U16, "0x8000", 0 },
		{ VG_SCAN_U32, "0x3f800000", 0 },
		{ VG_SCAN_I32, "-16777216", 0 },        /* 00 00 00 ff: never */
		{ VG_SCAN_U64, "0x3f8000003f800000", 0 },
		{ VG_SCAN_U64, "0xf0", 0 },
		{ VG_SCAN_U64, "0x3f00003f003f3f00", 0 },
		{ VG_SCAN_I64, "0x3f3f3f3f3f3f3f3f", 0 },
		{ VG_SCAN_F32, "1", 0 },
		{ VG_SCAN_F32, "1", 1e-4 },
		{ VG_SCAN_F32, "0.75", 0.01 },
		{ VG_SCAN_F32, "0", 1e-30 },
		{ VG_SCAN_F64, "0", 1e-300 },
		{ VG_SCAN_F64, "1", 0 },
		{ VG_SCAN_F64, "1", 1e-9 },
		{ VG_SCAN_STR, "?", 0 },
		{ VG_SCAN_STR, "?\x3f", 0 },
		{ VG_SCAN_BYTES, "3f ?? 80", 0 },
		{ VG_SCAN_BYTES, "?? f0 f0 ?? 3f", 0 },
		{ VG_SCAN_BYTES, "80 3f 80 3f 80", 0 },
	};
	static const size_t chunks[] = { PG, 3 * PG, 0 };
	struct kid k;
	struct vg_region keep;
	struct vg_maps m;
	uint8_t *data = malloc(RND_LEN);
	struct iovec l = { data, RND_LEN }, r;
	struct vg_match_set s;
	struct vg_scan_stats st;
	uint64_t *want = malloc(RND_LEN * sizeof(uint64_t));

	assert_non_null(data);
	assert_non_null(want);
	kid_start(&k);
	r.iov_base = (void *)(uintptr_t)k.l.rnd;
	r.iov_len = RND_LEN;
	assert_int_equal(process_vm_readv(k.pid, &l, 1, &r, 1, 0), (ssize_t)RND_LEN);
	m = one_region(&k, &keep, 5);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct vg_scan_value v;
		size_t w;

		assert_int_equal(vg_scan_value_parse(cases[c].t, cases[c].text, cases[c].eps,
						     &v, NULL), 0);
		w = vg_scan_type_width(v.type);
		for (int aligned = 0; aligned <= 1; aligned++) {
			size_t n = 0;

			for (size_t p = 0; p < RND_LEN; p++) {
				unsigned var = 0;

				if (aligned && w && p % w)
					continue;
				if (naive_at(&v, data + p, RND_LEN - p, &var))
					want[n++] = k.l.rnd + p;
			}
			/* The data is fixed: every case but these has matches. */
			if (c == 4 || (aligned && (c == 5 || c == 6)))
				assert_int_equal(n, 0);
			else
				assert_true(n > 0);
			for (size_t ci = 0; ci < 3; ci++) {
				{
					unsigned th = ci == 1 ? 1 : 2;
					struct vg_scan_opts o = opts_for(&v, aligned, chunks[ci], th);

					scan_ok(&k, &m, &o, &s, &st);
					if (s.n != n)
						print_message("case %zu aligned %d chunk %zu threads %u\n",
							      c, aligned, chunks[ci], th);
					assert_addrs(&s, want, n);
					for (size_t i = 0; i < s.n; i++) {
						size_t len = vg_match_set_len(&s, &v, i);
						unsigned var = 0;

						assert_true(naive_at(&v, data + (s.addr[i] - k.l.rnd),
								     RND_LEN - (s.addr[i] - k.l.rnd), &var));
						if (s.variant)
							assert_int_equal(s.variant[i], var);
						assert_memory_equal(s.value + i * s.value_size,
								    data + (s.addr[i] - k.l.rnd), len);
					}
					vg_match_set_clear(&s);
				}
			}
		}
		vg_scan_value_clear(&v);
	}
	free(want);
	free(data);
	kid_stop(&k);
}

/* ---- unreadable memory ----------------------------------------------- */

static void test_vanished(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	uint64_t m;

	kid_start(&k);
	m = k.l.main;
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	kid_put32(&k, m + 8 * PG + 100, V32);
	kid_put32(&k, m + 11 * PG - 2, V32);       /* runs into the hole: gone */
	kid_put32(&k, m + 12 * PG, V32);           /* in the hole */
	kid_put32(&k, m + 14 * PG, V32);           /* right after it */
	kid_put32(&k, m + 31 * PG + 7, V32);       /* after the PROT_NONE page */
	kid_put32(&k, k.l.victim + 4 * PG, V32);   /* region that will vanish */
	kid_maps(&k);

	/* The maps were read; now the victim goes, three pages of main are
	 * unmapped and one is made unreadable. */
	kid_cmd(&k, 'u', k.l.victim, NULL, VICTIM_LEN);
	kid_cmd(&k, 'u', m + 11 * PG, NULL, 3 * PG);
	kid_cmd(&k, 'p', m + 30 * PG, NULL, PG);
	for (unsigned th = 1; th <= 2; th++) {
		o = opts_for(&v, false, CH, th);
		scan_ok(&k, &k.sub, &o, &s, &st);
		assert_addrs(&s, (uint64_t[]){ m + 8 * PG + 100, m + 14 * PG, m + 31 * PG + 7 }, 3);
		assert_int_equal(st.regions_skipped, 1);
		assert_int_equal(st.regions_scanned, 2);
		assert_int_equal(st.bytes_skipped, VICTIM_LEN + 4 * PG);
		assert_int_equal(st.bytes_total, MAIN_LEN + VICTIM_LEN + RND_LEN);
		assert_int_equal(st.bytes_scanned, st.bytes_total - st.bytes_skipped);
		vg_match_set_clear(&s);
	}
	/* Default chunk: the hole is inside the first chunk. */
	o = opts_for(&v, false, 0, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_int_equal(s.n, 3);
	assert_int_equal(st.bytes_skipped, VICTIM_LEN + 4 * PG);
	vg_match_set_clear(&s);
	kid_stop(&k);
}

/* A region over VG_SCAN_MAX_REGION (a sanitizer's shadow: terabytes of
 * rw address space) is counted, not read: here one that is not even
 * mapped, so reading it would show up as bytes_skipped. */
static void test_too_large(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_maps m = { 0 };
	struct vg_region *regs;

	kid_start(&k);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	kid_put32(&k, k.l.main + 8 * PG + 100, V32);
	kid_maps(&k);
	regs = calloc(k.sub.n + 1, sizeof(*regs));
	assert_non_null(regs);
	memcpy(regs, k.sub.regions, k.sub.n * sizeof(*regs));
	regs[k.sub.n] = regs[1];   /* main: an rw-p anonymous region */
	regs[k.sub.n].start = 0x400000000000ull;
	regs[k.sub.n].end = regs[k.sub.n].start + VG_SCAN_MAX_REGION + PG;
	m.regions = regs;
	m.n = k.sub.n + 1;
	o = opts_for(&v, false, 0, 2);
	scan_ok(&k, &m, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ k.l.main + 8 * PG + 100 }, 1);
	assert_int_equal(st.regions_too_large, 1);
	assert_int_equal(st.regions_skipped, 1);
	assert_int_equal(st.bytes_skipped, 0);
	assert_int_equal(st.bytes_total, MAIN_LEN + VICTIM_LEN + RND_LEN);
	vg_match_set_clear(&s);
	free(regs);
	kid_stop(&k);
}

static void test_dead(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_error err = { 0 };
	struct vg_narrow n = { .op = VG_NARROW_CHANGED };
	int status;

	kid_start(&k);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	kid_put32(&k, k.l.main + 64, V32);
	o = opts_for(&v, false, CH, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_int_equal(s.n, 1);

	/* A zombie has no memory left to read. */
	kill(k.pid, SIGKILL);
	tu_wait_zombie(k.pid);
	assert_int_equal(vg_scan_narrow(k.pid, &s, &v, &n, &st, &err), -ESRCH);
	assert_int_equal(err.code, -ESRCH);
	assert_int_equal(s.n, 1);
	vg_error_clear(&err);
	{
		struct vg_match_set s2;

		assert_int_equal(vg_scan_first(k.pid, &k.sub, &o, &s2, &st, &err), -ESRCH);
		assert_int_equal(s2.n, 0);
	}
	/* Reaped. */
	assert_int_equal(waitpid(k.pid, &status, 0), k.pid);
	vg_error_clear(&err);
	{
		struct vg_match_set s2;
		char want[128];

		assert_int_equal(vg_scan_first(k.pid, &k.sub, &o, &s2, &st, &err), -ESRCH);
		snprintf(want, sizeof(want), "cannot read memory of pid %d: the process has exited",
			 (int)k.pid);
		assert_string_equal(err.msg, want);
	}
	vg_match_set_clear(&s);
	close(k.cmd);
	close(k.rep);
	free(k.sub.regions);
	vg_maps_free(k.all);
}

static volatile uint32_t parent_word = 1;

static int scan_parent_as_nobody(void)
{
	struct vg_region r = { 0 };
	struct vg_maps m = { 0 };
	struct vg_scan_value v;
	struct vg_scan_opts o;
	struct vg_match_set s;
	struct vg_error err = { 0 };

	r.start = (uint64_t)(uintptr_t)&parent_word / PG * PG;
	r.end = r.start + PG;
	strcpy(r.perms, "rw-p");
	vg_region_set_perms(&r);
	r.kind = VG_REGION_ANON;
	r.path = (char *)"";
	m.regions = &r;
	m.n = 1;
	if (vg_scan_value_parse(VG_SCAN_U32, "1", 0, &v, NULL))
		return 1;
	o = opts_for(&v, false, 0, 1);
	if (vg_scan_first(getppid(), &m, &o, &s, NULL, &err) != -EPERM)
		return 2;
	if (strstr(err.msg, "permission denied") == NULL)
		return 3;
	return 0;
}

static void test_eperm(void **state)
{
	tu_as_nobody(scan_parent_as_nobody);
}

/* ---- stop and progress ----------------------------------------------- */

struct prog {
	volatile sig_atomic_t *stop;
	int calls;
	uint64_t last_scanned;
};

static void on_progress(void *arg, const struct vg_scan_stats *st)
{
	struct prog *p = arg;

	__atomic_fetch_add(&p->calls, 1, __ATOMIC_RELAXED);
	p->last_scanned = st->bytes_scanned;
	*p->stop = 1;
}

static void test_stop_progress(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	volatile sig_atomic_t stop = 1;
	struct prog p = { &stop, 0, 0 };

	kid_start(&k);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	kid_put32(&k, k.l.main + 64, V32);

	/* Stopped before it starts: nothing read, interrupted. */
	o = opts_for(&v, false, CH, 2);
	o.stop = &stop;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_true(st.interrupted);
	assert_int_equal(st.bytes_scanned, 0);
	assert_int_equal(s.n, 0);
	vg_match_set_clear(&s);

	/* The first progress report (after the first chunk) stops it. */
	stop = 0;
	o.progress = on_progress;
	o.progress_arg = &p;
	o.interval_ms = 1000;
	o.threads = 1;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.last_scanned, CH);
	assert_true(st.interrupted);
	assert_int_equal(st.bytes_scanned, CH);
	assert_int_equal(st.regions_scanned, 0);
	assert_int_equal(s.n, 1);
	vg_match_set_clear(&s);

	/* Two threads: stopped early too. */
	stop = 0;
	p.calls = 0;
	o.threads = 2;
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_int_equal(p.calls, 1);
	assert_true(st.interrupted);
	assert_true(st.bytes_scanned < st.bytes_total);
	vg_match_set_clear(&s);
	kid_stop(&k);
}

/* ---- narrowing ------------------------------------------------------- */

static void copy_set(struct vg_match_set *dst, const struct vg_match_set *src)
{
	vg_match_set_init(dst, src->type, src->value_size);
	for (size_t i = 0; i < src->n; i++)
		assert_int_equal(vg_match_set_push(dst, src->addr[i], src->value + i * src->value_size,
						   src->variant ? src->variant[i] : 0), 0);
}

static void narrow_ok(struct kid *k, struct vg_match_set *s, const struct vg_scan_value *v,
		      const struct vg_narrow *n, struct vg_scan_stats *st)
{
	struct vg_error err = { 0 };
	int rc = vg_scan_narrow(k->pid, s, v, n, st, &err);

	if (rc)
		fail_msg("vg_scan_narrow: %d %s", rc, err.msg);
}

static struct vg_narrow nar(enum vg_narrow_op op, enum vg_scan_type t, const char *a,
			    const char *b)
{
	struct vg_narrow n;

	memset(&n, 0, sizeof(n));
	n.op = op;
	if (a)
		assert_int_equal(vg_scan_value_parse(t, a, 0, &n.a, NULL), 0);
	if (b)
		assert_int_equal(vg_scan_value_parse(t, b, 0, &n.b, NULL), 0);
	return n;
}

static void test_narrow_numbers(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s, c;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_narrow n;
	uint64_t p[6];
	uint32_t val;

	kid_start(&k);
	for (size_t i = 0; i < 6; i++) {
		p[i] = k.l.main + i * 500 * PG + i;   /* some unaligned */
		kid_put32(&k, p[i], V32);
	}
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	o = opts_for(&v, false, 0, 0);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, p, 6);

	/* p0 +5, p1 -1, p2 same, p3 = 0, p4 +5, p5 same. */
	kid_put32(&k, p[0], V32 + 5);
	kid_put32(&k, p[1], V32 - 1);
	kid_put32(&k, p[3], 0);
	kid_put32(&k, p[4], V32 + 5);

	copy_set(&c, &s);
	n = nar(VG_NARROW_UNCHANGED, VG_SCAN_U32, NULL, NULL);
	narrow_ok(&k, &c, NULL, &n, &st);
	assert_addrs(&c, (uint64_t[]){ p[2], p[5] }, 2);
	vg_match_set_clear(&c);

	copy_set(&c, &s);
	n = nar(VG_NARROW_DECREASED, VG_SCAN_U32, NULL, NULL);
	narrow_ok(&k, &c, NULL, &n, &st);
	assert_addrs(&c, (uint64_t[]){ p[1], p[3] }, 2);
	val = 0;
	assert_memory_equal(c.value + 4, &val, 4);
	vg_match_set_clear(&c);

	copy_set(&c, &s);
	n = nar(VG_NARROW_DECREASED_BY, VG_SCAN_U32, "1", NULL);
	narrow_ok(&k, &c, NULL, &n, &st);
	assert_addrs(&c, (uint64_t[]){ p[1] }, 1);
	vg_match_set_clear(&c);

	copy_set(&c, &s);
	n = nar(VG_NARROW_RANGE, VG_SCAN_U32, "1592594995", "1592594996");
	narrow_ok(&k, &c, NULL, &n, &st);
	assert_addrs(&c, (uint64_t[]){ p[1], p[2], p[5] }, 3);
	vg_match_set_clear(&c);

	n = nar(VG_NARROW_INCREASED, VG_SCAN_U32, NULL, NULL);
	narrow_ok(&k, &s, NULL, &n, &st);
	assert_addrs(&s, (uint64_t[]){ p[0], p[4] }, 2);
	assert_int_equal(st.matches, 2);
	assert_int_equal(st.matches_unreadable, 0);
	val = V32 + 5;
	assert_memory_equal(s.value, &val, 4);
	assert_memory_equal(s.value + 4, &val, 4);

	/* p0 +3 more: changed keeps p0 only; then eq and increased-by. */
	kid_put32(&k, p[0], V32 + 8);
	copy_set(&c, &s);
	n = nar(VG_NARROW_INCREASED_BY, VG_SCAN_U32, "3", NULL);
	narrow_ok(&k, &c, NULL, &n, &st);
	assert_addrs(&c, (uint64_t[]){ p[0] }, 1);
	vg_match_set_clear(&c);

	n = nar(VG_NARROW_CHANGED, VG_SCAN_U32, NULL, NULL);
	narrow_ok(&k, &s, NULL, &n, &st);
	assert_addrs(&s, (uint64_t[]){ p[0] }, 1);
	n = nar(VG_NARROW_EQ, VG_SCAN_U32, "1592595004", NULL);
	narrow_ok(&k, &s, NULL, &n, &st);
	assert_addrs(&s, (uint64_t[]){ p[0] }, 1);
	n = nar(VG_NARROW_EQ, VG_SCAN_U32, "1592594996", NULL);
	narrow_ok(&k, &s, NULL, &n, &st);
	assert_int_equal(s.n, 0);
	vg_match_set_clear(&s);
	kid_stop(&k);
}

static void test_narrow_unreadable_refresh(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_narrow n = { .op = VG_NARROW_UNCHANGED };
	struct vg_error err = { 0 };
	uint64_t vic, want[64];
	size_t nw = 0;
	uint8_t now[4 * 64];
	bool readable[64];

	kid_start(&k);
	vic = k.l.victim;
	/* Dense matches in the victim (several per page, one across the page
	 * boundary 3|4), a few in main around them. */
	kid_put32(&k, k.l.main + 5, V32);
	for (size_t pg = 0; pg < 8; pg++)
		for (size_t j = 0; j < 4; j++)
			kid_put32(&k, vic + pg * PG + j * 700 + pg, V32);
	kid_put32(&k, vic + 4 * PG - 2, V32);
	kid_put32(&k, vic + VICTIM_LEN - 12, V32);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0x5eed1234", 0, &v, NULL), 0);
	o = opts_for(&v, false, 0, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_int_equal(s.n, 1 + 32 + 1 + 1);

	/* Pages 4 and 5 of the victim go; page 6 becomes PROT_NONE. */
	kid_cmd(&k, 'u', vic + 4 * PG, NULL, 2 * PG);
	kid_cmd(&k, 'p', vic + 6 * PG, NULL, PG);
	for (size_t i = 0; i < s.n; i++) {
		uint64_t a = s.addr[i];

		if (a + 4 > vic + 4 * PG && a < vic + 7 * PG)
			continue;
		want[nw++] = a;
	}
	assert_int_equal(nw, 1 + 4 * 4 + 4 + 1);

	/* Refresh: unreadable ones keep their old value. */
	assert_int_equal(vg_scan_refresh(k.pid, &s, now, readable, &err), 0);
	for (size_t i = 0, w = 0; i < s.n; i++) {
		bool r = w < nw && want[w] == s.addr[i];

		assert_int_equal(readable[i], r);
		w += r;
		assert_memory_equal(now + 4 * i, v.raw, 4);
	}

	narrow_ok(&k, &s, NULL, &n, &st);
	assert_addrs(&s, want, nw);
	assert_int_equal(st.matches, nw);
	assert_int_equal(st.matches_unreadable, 35 - nw);
	vg_match_set_clear(&s);
	kid_stop(&k);
}

static void test_narrow_patterns(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s, c;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_narrow n;
	struct vg_error err = { 0 };
	static const uint8_t u16[] = { 'h', 0, 'p', 0 };
	uint64_t m;

	kid_start(&k);
	m = k.l.main;
	kid_write(&k, m + 100, "hp", 2);
	kid_write(&k, m + 201, u16, 4);
	kid_write(&k, m + 300, "hp", 2);
	assert_int_equal(vg_scan_value_parse(VG_SCAN_STR, "hp", 0, &v, NULL), 0);
	o = opts_for(&v, false, 0, 2);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 100, m + 201, m + 300 }, 3);
	assert_int_equal(s.variant[1], 1);

	/* The first loses a letter, the UTF-16 one changes after the match
	 * (irrelevant), the third is untouched. */
	kid_write(&k, m + 100, "h", 1);
	kid_write(&k, m + 101, "q", 1);
	kid_write(&k, m + 205, "xx", 2);
	copy_set(&c, &s);
	n = nar(VG_NARROW_CHANGED, VG_SCAN_STR, NULL, NULL);
	narrow_ok(&k, &c, &v, &n, &st);
	assert_addrs(&c, (uint64_t[]){ m + 100 }, 1);
	assert_memory_equal(c.value, "hq\0\0", 4);
	vg_match_set_clear(&c);

	copy_set(&c, &s);
	n = nar(VG_NARROW_UNCHANGED, VG_SCAN_STR, NULL, NULL);
	narrow_ok(&k, &c, &v, &n, &st);
	assert_addrs(&c, (uint64_t[]){ m + 201, m + 300 }, 2);
	vg_match_set_clear(&c);

	n = nar(VG_NARROW_EQ, VG_SCAN_STR, NULL, NULL);
	assert_int_equal(vg_scan_narrow(k.pid, &s, NULL, &n, &st, &err), -EINVAL);
	narrow_ok(&k, &s, &v, &n, &st);
	assert_addrs(&s, (uint64_t[]){ m + 201, m + 300 }, 2);
	n = nar(VG_NARROW_INCREASED, VG_SCAN_U8, NULL, NULL);
	vg_error_clear(&err);
	assert_int_equal(vg_scan_narrow(k.pid, &s, &v, &n, &st, &err), -EINVAL);
	vg_match_set_clear(&s);
	vg_scan_value_clear(&v);

	/* bytes with a wildcard: EQ re-matches the mask. */
	assert_int_equal(vg_scan_value_parse(VG_SCAN_BYTES, "aa ?? bb", 0, &v, NULL), 0);
	kid_write(&k, m + 1000, "\xaa\x01\xbb", 3);
	kid_write(&k, m + 1100, "\xaa\x02\xbb", 3);
	scan_ok(&k, &k.sub, &o, &s, &st);
	assert_addrs(&s, (uint64_t[]){ m + 1000, m + 1100 }, 2);
	kid_write(&k, m + 1001, "\x09", 1);
	kid_write(&k, m + 1102, "\xbc", 1);
	n = nar(VG_NARROW_EQ, VG_SCAN_BYTES, NULL, NULL);
	narrow_ok(&k, &s, &v, &n, &st);
	assert_addrs(&s, (uint64_t[]){ m + 1000 }, 1);
	assert_memory_equal(s.value, "\xaa\x09\xbb", 3);
	vg_match_set_clear(&s);
	vg_scan_value_clear(&v);
	kid_stop(&k);
}

/* Many matches: every aligned word of the first 2 MiB of main. */
static void test_narrow_many(void **state)
{
	struct kid k;
	struct vg_scan_value v;
	struct vg_match_set s;
	struct vg_scan_stats st;
	struct vg_scan_opts o;
	struct vg_narrow n;
	struct vg_region keep;
	struct vg_maps m;
	uint32_t x = 7;
	size_t want = 0;

	kid_start(&k);
	m = one_region(&k, &keep, 1);
	keep.end = keep.start + MANY_LEN;
	/* Zeros everywhere: u32 0 at every aligned offset. */
	assert_int_equal(vg_scan_value_parse(VG_SCAN_U32, "0", 0, &v, NULL), 0);
	o = opts_for(&v, true, 0, 2);
	scan_ok(&k, &m, &o, &s, &st);
	assert_int_equal(s.n, MANY_LEN / 4);
	for (size_t i = 0; i < s.n; i++)
		if (s.addr[i] != k.l.main + 4 * i)
			fail_msg("match %zu at 0x%llx", i, (unsigned long long)s.addr[i]);
	/* Change every 1000th word (pages in between unchanged), then unmap
	 * page 10 and page 300 (one in each half when two threads narrow). */
	for (size_t i = 0; i < MANY_LEN / 4; i += 1000) {
		kid_put32(&k, k.l.main + 4 * i, x);
		if (i / 1024 != 10 && i / 1024 != 300)
			want++;
	}
	kid_cmd(&k, 'u', k.l.main + 10 * PG, NULL, PG);
	kid_cmd(&k, 'u', k.l.main + 300 * PG, NULL, PG);
	n = nar(VG_NARROW_CHANGED, VG_SCAN_U32, NULL, NULL);
	narrow_ok(&k, &s, NULL, &n, &st);
	assert_int_equal(s.n, want);
	assert_int_equal(st.matches, want);
	assert_int_equal(st.matches_unreadable, 2 * PG / 4);
	for (size_t i = 0, j = 0; i < MANY_LEN / 4; i += 1000) {
		if (i / 1024 == 10 || i / 1024 == 300)
			continue;
		assert_int_equal(s.addr[j], k.l.main + 4 * i);
		assert_memory_equal(s.value + 4 * j, &x, 4);
		j++;
	}
	vg_match_set_clear(&s);
	kid_stop(&k);
}

static void test_match_set(void **state)
{
	struct vg_match_set s;

	vg_match_set_init(&s, VG_SCAN_STR, 6);
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(vg_match_set_push(&s, 0x1000 + i, "abcdef", (uint8_t)(i & 1)), 0);
	assert_int_equal(s.n, 100);
	assert_true(s.cap >= 100);
	assert_int_equal(s.addr[99], 0x1000 + 99);
	assert_memory_equal(s.value + 6 * 99, "abcdef", 6);
	assert_int_equal(s.variant[99], 1);
	vg_match_set_clear(&s);
	assert_int_equal(s.n, 0);
	assert_null(s.addr);
	vg_match_set_init(&s, VG_SCAN_I64, 8);
	assert_int_equal(vg_match_set_push(&s, 8, "12345678", 0), 0);
	assert_null(s.variant);
	assert_int_equal(vg_match_set_len(&s, NULL, 0), 8);
	vg_match_set_clear(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_set),
		cmocka_unit_test(test_i32_planted),
		cmocka_unit_test(test_other_types),
		cmocka_unit_test(test_random_vs_naive),
		cmocka_unit_test(test_vanished),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_dead),
		cmocka_unit_test(test_eperm),
		cmocka_unit_test(test_stop_progress),
		cmocka_unit_test(test_narrow_numbers),
		cmocka_unit_test(test_narrow_unreadable_refresh),
		cmocka_unit_test(test_narrow_patterns),
		cmocka_unit_test(test_narrow_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
