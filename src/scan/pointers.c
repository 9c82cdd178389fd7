/* pointers.c - pointer scan: which static slots lead to ADDR through a
 * chain of dereferences and small offsets.
 *
 * Two phases.  Collect: one pass over the readable+writable regions with
 * process_vm_readv in 4 MiB chunks keeps every aligned 8-byte value that
 * points into a readable region, as (value, location) pairs sorted by value
 * (16 bytes per pointer, radix-sorted).  In private anonymous regions only
 * the pages the kernel lists as present or swapped are read (PAGEMAP_SCAN,
 * else /proc/PID/pagemap): the others hold zeros, and reading them would
 * make the target's kernel build page tables for them (ASan reserves a
 * 14 TiB shadow this way).
 *
 * Search: backwards from ADDR, breadth first.  Level k is the set of
 * distinct locations holding a pointer to at most max_offset below a
 * location of level k-1 (level 0 is ADDR); each keeps its links (offset,
 * location below).  A location already seen at a shallower level is not
 * added again: any chain through it there is a longer copy of one found
 * already, so cycles cannot form and links stay O(frontier).  A location in
 * an image (see vg_locate_image) is a chain's base and is not expanded.
 * Chains are counted by paths through the levels and enumerated only up to
 * max_chains.
 *
 * Widening: the search runs with offsets <= 64 first, then 4 times wider
 * up to max_offset, and keeps the chains of every run.  With a wide limit
 * on a real heap almost every heap pointer is near some location of the
 * previous level, so the levels grow until VG_PTR_MAX_FRONTIER cuts them
 * and the chains through small objects (a hash table's entries, 24 bytes
 * in redis) are lost among coincidences; the narrow runs cost little and
 * keep them.  Ranking (cmp_ranked) then puts first what a program's own
 * data looks like.  Never writes to the target. */
#include "scan/pointers.h"
#include "scan/vmread.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "scan/locate.h"
#include "util/vec.h"

#define CHUNK (4u << 20)
#define PAGE 4096u

/* ------------------------------------------------------------------ */
/* PAGEMAP_SCAN (Linux 6.7), declared here for older kernel headers.    */

#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1ull << 3)
#define PAGE_IS_SWAPPED (1ull << 4)
#endif

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

struct ptr {
	uint64_t value, loc;
};

struct collect {
	pid_t pid;
	int pagemap_fd;             /* -1: read every page */
	bool have_scan_ioctl;
	const volatile sig_atomic_t *stop;
	uint64_t *rd_start, *rd_end; /* readable ranges, merged, sorted */
	size_t n_rd;
	size_t rd_hint;
	uint8_t *buf;
	uint64_t *pm;               /* pagemap entries of one chunk */
	struct ptr *ptrs;
	size_t n, cap;
	bool region_short;          /* some bytes of the region unreadable */
	struct vg_ptr_stats *st;
	struct vg_error *err;
	struct vg_progress *progress;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool stopped(const struct collect *c)
{
	return c->stop && *c->stop;
}

static int build_readable(struct collect *c, const struct vg_maps *maps)
{
	size_t cap = 0, cap2 = 0;

	for (size_t i = 0; i < maps->n; i++) {
		const struct vg_region *r = &maps->regions[i];

		if (!r->readable || r->kind == VG_REGION_VVAR ||
		    r->kind == VG_REGION_VSYSCALL)
			continue;
		if (c->n_rd && c->rd_end[c->n_rd - 1] == r->start) {
			c->rd_end[c->n_rd - 1] = r->end;
			continue;
		}
		if (VG_GROW(c->rd_start, cap, c->n_rd + 1) < 0 ||
		    VG_GROW(c->rd_end, cap2, c->n_rd + 1) < 0)
			return -ENOMEM;
		c->rd_start[c->n_rd] = r->start;
		c->rd_end[c->n_rd] = r->end;
		c->n_rd++;
	}
	return 0;
}

/* Does v point into a readable region?  Pointers cluster, so the range of
 * the previous hit is tried before the binary search. */
static bool is_pointer(struct collect *c, uint64_t v)
{
	size_t lo = 0, hi = c->n_rd;

	if (!c->n_rd || v < c->rd_start[0] || v >= c->rd_end[c->n_rd - 1])
		return false;
	if (v >= c->rd_start[c->rd_hint] && v < c->rd_end[c->rd_hint])
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->rd_start[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && v < c->rd_end[lo - 1]) {
		c->rd_hint = lo - 1;
		return true;
	}
	return false;
}

static int scan_bytes(struct collect *c, uint64_t addr, size_t len)
{
	const uint64_t *w = (const uint64_t *)(void *)c->buf;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t v = w[i];

		if (!is_pointer(c, v))
			continue;
		if (c->n == c->cap && VG_GROW(c->ptrs, c->cap, c->n + 1) < 0)
			return vg_error_set(c->err, -ENOMEM,
					    "out of memory after collecting %zu pointers of pid %d; give a smaller --regions set",
					    c->n, (int)c->pid);
		c->ptrs[c->n++] = (struct ptr){ v, addr + 8 * i };
	}
	return 0;
}

/* Read [addr, addr+len) (at most CHUNK) and collect its pointers; pages
 * that cannot be read are skipped one at a time. */
static int read_span(struct collect *c, uint64_t addr, size_t len)
{
	while (len) {
		struct iovec local = { c->buf, len }, remote = { (void *)(uintptr_t)addr, len };
		ssize_t got = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
		size_t skip;
		int r;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && vg_vmread_errno_class(errno) < 0)
			return vg_vmread_fail(c->err, vg_vmread_errno_class(errno), c->pid);
		if (got > 0) {
			got &= ~(ssize_t)7;
			c->st->bytes_scanned += (uint64_t)got;
			vg_progress_add(c->progress, (uint64_t)got);
			r = scan_bytes(c, addr, (size_t)got);
			if (r < 0)
				return r;
			addr += (uint64_t)got;
			len -= (size_t)got;
			continue;
		}
		/* Nothing at addr: a page unmapped or unreadable since the
		 * maps were read; go on with the next one. */
		c->region_short = true;
		skip = PAGE - (size_t)(addr % PAGE);
		if (skip > len)
			skip = len;
		addr += skip;
		len -= skip;
	}
	return 0;
}

static int read_range(struct collect *c, uint64_t start, uint64_t end)
{
	for (uint64_t a = start; a < end; a += CHUNK) {
		size_t len = end - a < CHUNK ? (size_t)(end - a) : CHUNK;
		int r;

		if (stopped(c))
			return 0;
		r = read_span(c, a, len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Present and swapped pages of [start, end) through PAGEMAP_SCAN.
 * Returns 0, or -ENOTTY/-EINVAL when the kernel lacks the ioctl. */
static int read_present_scan(struct collect *c, uint64_t start, uint64_t end)
{
	struct page_region vec[256];
	uint64_t at = start;

	while (at < end && !stopped(c)) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .start = at, .end = end,
			.vec = (uint64_t)(uintptr_t)vec, .vec_len = 256,
			.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
			.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		};
		int n = ioctl(c->pagemap_fd, PAGEMAP_SCAN, &arg);

		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			int r = read_range(c, vec[i].start, vec[i].end);

			if (r < 0)
				return r;
		}
		if (arg.walk_end <= at)
			break;
		at = arg.walk_end;
	}
	return 0;
}

/* The same from the pagemap entries, one 8-byte entry per page. */
static int read_present_entries(struct collect *c, uint64_t start, uint64_t end)
{
	for (uint64_t a = start; a < end && !stopped(c); a += CHUNK) {
		size_t pages = (size_t)((end - a < CHUNK ? end - a : CHUNK) / PAGE);
		ssize_t got = pread(c->pagemap_fd, c->pm, pages * 8, (off_t)(a / PAGE * 8));
		size_t run = 0;

		if (got < 0 || (size_t)got != pages * 8)
			return read_range(c, a, a + pages * PAGE);
		for (size_t i = 0; i <= pages; i++) {
			int r;

			if (i < pages && (c->pm[i] & (PM_PRESENT | PM_SWAPPED))) {
				run++;
				continue;
			}
			if (!run)
				continue;
			r = read_span(c, a + (i - run) * PAGE, run * PAGE);
			if (r < 0)
				return r;
			run = 0;
		}
	}
	return 0;
}

static bool private_anonymous(const struct vg_region *r)
{
	return !r->shared && r->inode == 0 &&
	       (r->kind == VG_REGION_ANON || r->kind == VG_REGION_HEAP ||
		r->kind == VG_REGION_STACK || r->kind == VG_REGION_SPECIAL);
}

static int scan_region(struct collect *c, const struct vg_region *r)
{
	int ret;

	c->region_short = false;
	if (!private_anonymous(r) || c->pagemap_fd < 0) {
		if (c->pagemap_fd < 0 && private_anonymous(r) &&
		    r->end - r->start > VG_PTR_MAX_SPARSE_REGION)
			goto too_large;
		ret = read_range(c, r->start, r->end);
	} else {
		ret = -ENOTTY;
		if (c->have_scan_ioctl) {
			ret = read_present_scan(c, r->start, r->end);
			if (ret == -ENOTTY || ret == -EINVAL || ret == -EOPNOTSUPP)
				c->have_scan_ioctl = false;
		}
		if (!c->have_scan_ioctl) {
			if (r->end - r->start > VG_PTR_MAX_SPARSE_REGION)
				goto too_large;
			ret = read_present_entries(c, r->start, r->end);
		}
	}
	if (c->region_short)
		c->st->regions_skipped++;
	return ret;
too_large:
	c->st->regions_too_large++;
	c->st->regions_skipped++;
	return 0;
}

/* LSD radix sort by value, 16 bits at a time, over the bits any value
 * uses (47 for user addresses: 3 passes). */
static int sort_by_value(struct ptr *p, size_t n)
{
	uint64_t max = 0;
	struct ptr *tmp, *from = p, *to;
	size_t *count;

	for (size_t i = 0; i < n; i++)
		if (p[i].value > max)
			max = p[i].value;
	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(65536 * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	to = tmp;
	for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 16) {
		size_t sum = 0;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(from[i].value >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			size_t k = count[d];

			count[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].value >> shift) & 0xffff]++] = from[i];
		to = from;
		from = from == p ? tmp : p;
	}
	if (from != p)
		memcpy(p, from, n * sizeof(*p));
	free(tmp);
	free(count);
	return 0;
}

static int collect(pid_t pid, const struct vg_maps *maps,
		   const struct vg_ptr_opts *opts, struct collect *c,
		   struct vg_ptr_stats *st, struct vg_error *err)
{
	char path[64];
	int r = 0;

	c->pid = pid;
	c->stop = opts->stop;
	c->progress = opts->progress;
	vg_progress_start(c->progress, 0);   /* sparse regions: no total known */
	c->st = st;
	c->err = err;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	c->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	c->have_scan_ioctl = c->pagemap_fd >= 0;
	c->buf = malloc(CHUNK);
	c->pm = malloc(CHUNK / PAGE * sizeof(*c->pm));
	if (!c->buf || !c->pm || build_readable(c, maps) < 0)
		r = vg_error_set(err, -ENOMEM, "out of memory for the pointer scan");
	for (size_t i = 0; r == 0 && i < maps->n && !stopped(c); i++) {
		const struct vg_region *reg = &maps->regions[i];

		if (reg->readable && reg->writable && reg->kind != VG_REGION_VVAR &&
		    reg->kind != VG_REGION_VSYSCALL)
			r = scan_region(c, reg);
	}
	if (r == 0 && sort_by_value(c->ptrs, c->n) < 0)
		r = vg_error_set(err, -ENOMEM, "out of memory sorting %zu pointers", c->n);
	st->pointers = c->n;
	if (c->pagemap_fd >= 0)
		close(c->pagemap_fd);
	free(c->buf);
	free(c->pm);
	free(c->rd_start);
	free(c->rd_end);
	return r;
}

/* ------------------------------------------------------------------ */
/* search                                                               */

struct link {
	uint64_t loc;        /* the location holding the pointer */
	uint64_t off;        /* below's location - the pointer */
	uint32_t below;      /* node index in the previous level */
};

struct node {
	uint64_t loc;
	size_t first, n_links;  /* in the level's links */
	uint64_t paths;         /* chains from here down to ADDR (saturating) */
	const struct vg_image *image;  /* non-NULL: static, a chain base */
};

struct level {
	struct node *nodes;
	size_t n;
	struct link *links;
	size_t n_links;
};

static int cmp_link(const void *a, const void *b)
{
	const struct link *x = a, *y = b;

	if (x->loc != y->loc)
		return x->loc < y->loc ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->below < y->below ? -1 : x->below > y->below;
}

static size_t first_value_at_least(const struct ptr *p, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].value < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool seen_before(const struct level *lv, unsigned k, uint64_t loc)
{
	for (unsigned j = 0; j < k; j++) {
		size_t lo = 0, hi = lv[j].n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (lv[j].nodes[mid].loc < loc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < lv[j].n && lv[j].nodes[lo].loc == loc)
			return true;
	}
	return false;
}

/* Level k from level k-1.  Returns 0 or -ENOMEM. */
static int build_level(struct level *lv, unsigned k, const struct ptr *p,
		       size_t n_ptrs, const struct vg_ptr_opts *opts,
		       uint64_t limit, const struct vg_images *imgs, bool *capped)
{
	const struct level *prev = &lv[k - 1];
	struct level *cur = &lv[k];
	size_t cap = 0, ncap = 0, w = 0;

	for (size_t j = 0; j < prev->n; j++) {
		uint64_t hi = prev->nodes[j].loc;
		uint64_t lo = hi > limit ? hi - limit : 0;

		if (prev->nodes[j].image || (opts->stop && *opts->stop))
			continue;
		for (size_t i = first_value_at_least(p, n_ptrs, lo);
		     i < n_ptrs && p[i].value <= hi; i++) {
			if (cur->n_links == VG_PTR_MAX_FRONTIER) {
				*capped = true;
				goto links_done;
			}
			if (VG_GROW(cur->links, cap, cur->n_links + 1) < 0)
				return -ENOMEM;
			cur->links[cur->n_links++] = (struct link){
				p[i].loc, hi - p[i].value, (uint32_t)j };
		}
	}
links_done:
	if (cur->n_links)
		qsort(cur->links, cur->n_links, sizeof(*cur->links), cmp_link);
	/* Group links into nodes, dropping locations of shallower levels. */
	for (size_t i = 0; i < cur->n_links;) {
		size_t e = i;
		struct node nd = { .loc = cur->links[i].loc };

		while (e < cur->n_links && cur->links[e].loc == nd.loc)
			e++;
		if (!seen_before(lv, k, nd.loc)) {
			if (VG_GROW(cur->nodes, ncap, cur->n + 1) < 0)
				return -ENOMEM;
			nd.first = w;
			nd.n_links = e - i;
			for (size_t l = i; l < e; l++) {
				uint64_t add = prev->nodes[cur->links[l].below].paths;

				cur->links[w++] = cur->links[l];
				nd.paths = nd.paths > UINT64_MAX - add ? UINT64_MAX
								       : nd.paths + add;
			}
			nd.image = vg_locate_image(imgs, nd.loc);
			cur->nodes[cur->n++] = nd;
		}
		i = e;
	}
	cur->n_links = w;
	return 0;
}

/* ------------------------------------------------------------------ */
/* chains                                                               */

static size_t image_index(const struct vg_images *imgs, const struct vg_image *img)
{
	for (size_t i = 0; i < imgs->n; i++)
		if (imgs->images[i] == img)
			return i;
	return SIZE_MAX;
}

/* Main executable first, then image order. */
static size_t image_rank(const struct vg_images *imgs, const struct vg_image *img)
{
	return img->is_main ? 0 : 1 + image_index(imgs, img);
}

/* A chain with its rank keys (see cmp_ranked). */
struct ranked {
	struct vg_ptr_chain c;
	unsigned misaligned;    /* inner pointers not to a multiple of 8 */
	unsigned base_class;    /* VG_PTR_BASE_* */
	uint64_t offset_sum;
	size_t image_rank;
};

/* The rank: fewer misaligned inner pointers, then the base's class (a
 * named global of the executable first), then the smaller sum of the
 * offsets, then the shorter chain, then image order, offsets (outermost
 * first) and base address to make the order total.  Equal keys mean the
 * same chain (the merge below relies on it). */
static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->misaligned != y->misaligned)
		return x->misaligned < y->misaligned ? -1 : 1;
	if (x->base_class != y->base_class)
		return x->base_class < y->base_class ? -1 : 1;
	if (x->offset_sum != y->offset_sum)
		return x->offset_sum < y->offset_sum ? -1 : 1;
	if (x->c.depth != y->c.depth)
		return x->c.depth < y->c.depth ? -1 : 1;
	if (x->image_rank != y->image_rank)
		return x->image_rank < y->image_rank ? -1 : 1;
	for (unsigned i = 0; i < x->c.depth; i++)
		if (x->c.offsets[i] != y->c.offsets[i])
			return x->c.offsets[i] < y->c.offsets[i] ? -1 : 1;
	if (x->c.base_address != y->c.base_address)
		return x->c.base_address < y->c.base_address ? -1 : 1;
	return 0;
}

struct enumerate {
	const struct level *lv;
	const struct vg_images *imgs;
	struct ranked *out;
	size_t n, max;
};

/* Every path from node idx of level k down to ADDR, smallest offsets
 * first, while there is room; r holds the chain and keys of the levels
 * above. */
static void walk(struct enumerate *e, unsigned k, size_t idx, struct ranked *r)
{
	const struct node *nd = &e->lv[k].nodes[idx];

	for (size_t l = nd->first; l < nd->first + nd->n_links && e->n < e->max; l++) {
		const struct link *ln = &e->lv[k].links[l];
		struct ranked next = *r;

		next.c.offsets[next.c.depth - k] = ln->off;
		next.offset_sum += ln->off;
		/* Below level 1 the pointer leads to a slot that holds a
		 * pointer; an object holding pointers starts 8-aligned, so a
		 * pointer off by a few bytes points into a string or a byte
		 * buffer: a coincidence.  ADDR itself may be any byte. */
		if (k >= 2 && (e->lv[k - 1].nodes[ln->below].loc - ln->off) % 8)
			next.misaligned++;
		if (k == 1)
			e->out[e->n++] = next;
		else
			walk(e, k - 1, ln->below, &next);
	}
}

struct base_order {
	const struct level *L;
	const struct vg_images *imgs;
};

static int cmp_base(const void *a, const void *b, void *arg)
{
	const struct base_order *o = arg;
	const struct node *x = &o->L->nodes[*(const size_t *)a];
	const struct node *y = &o->L->nodes[*(const size_t *)b];
	size_t rx = image_rank(o->imgs, x->image), ry = image_rank(o->imgs, y->image);

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static unsigned base_class(const struct vg_ptr_chain *c)
{
	if (c->image->is_main)
		return c->base_symbol ? VG_PTR_BASE_MAIN_SYMBOL : VG_PTR_BASE_MAIN;
	return c->base_symbol ? VG_PTR_BASE_LIB_SYMBOL : VG_PTR_BASE_OTHER;
}

/* The chains whose base is at level k, bases of the main executable
 * first, until max. */
static int enumerate_level(struct enumerate *e, unsigned k)
{
	const struct level *L = &e->lv[k];
	struct base_order order = { L, e->imgs };
	size_t *bases = NULL, n = 0, cap = 0;

	for (size_t i = 0; i < L->n; i++) {
		if (!L->nodes[i].image)
			continue;
		if (VG_GROW(bases, cap, n + 1) < 0) {
			free(bases);
			return -ENOMEM;
		}
		bases[n++] = i;
	}
	if (n)
		qsort_r(bases, n, sizeof(*bases), cmp_base, &order);
	for (size_t i = 0; i < n && e->n < e->max; i++) {
		const struct node *nd = &L->nodes[bases[i]];
		struct ranked r = {
			.c = {
				.base_address = nd->loc,
				.image = nd->image,
				.base_static = nd->loc - nd->image->bias,
				.depth = k,
			},
			.image_rank = image_rank(e->imgs, nd->image),
		};

		vg_locate_symbol(nd->image, r.c.base_static, &r.c.base_symbol,
				 &r.c.base_symbol_offset);
		r.base_class = base_class(&r.c);
		walk(e, k, bases[i], &r);
	}
	free(bases);
	return 0;
}

static void free_levels(struct level *lv, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		free(lv[k].nodes);
		free(lv[k].links);
	}
}

static int check_opts(pid_t pid, const struct vg_maps *maps,
		      const struct vg_ptr_opts *o, struct vg_error *err)
{
	if (o->depth < 1 || o->depth > VG_PTR_MAX_DEPTH)
		return vg_error_set(err, -EINVAL,
				    "pointer scan depth %u is out of range; give 1 to %d",
				    o->depth, VG_PTR_MAX_DEPTH);
	if (o->max_chains == 0)
		return vg_error_set(err, -EINVAL,
				    "the pointer scan needs room for at least one chain");
	if (!vg_maps_find(maps, o->target))
		return vg_error_set(err, -EFAULT,
				    "0x%" PRIx64 " is not mapped in pid %d; give an address of a match of 'vigil scan'",
				    o->target, (int)pid);
	return 0;
}

/* What one search found. */
struct pass {
	uint64_t chains_found;
	bool truncated, frontier_capped;
};

/* One breadth-first search with every offset <= limit; its chains (up to
 * opts->max_chains) are appended to *out.  Returns 0 or -ENOMEM. */
static int search(const struct ptr *p, size_t n_ptrs, const struct vg_ptr_opts *opts,
		  uint64_t limit, const struct vg_images *imgs,
		  struct ranked **out, size_t *n_out, size_t *cap_out, struct pass *ps)
{
	struct level lv[VG_PTR_MAX_DEPTH + 1] = { 0 };
	struct node addr_node = { .loc = opts->target, .paths = 1 };
	struct enumerate e = { .lv = lv, .imgs = imgs };
	unsigned levels = 1;
	int r = 0;

	memset(ps, 0, sizeof(*ps));
	lv[0].nodes = &addr_node;
	lv[0].n = 1;
	for (unsigned k = 1; k <= opts->depth && !(opts->stop && *opts->stop); k++) {
		r = build_level(lv, k, p, n_ptrs, opts, limit, imgs, &ps->frontier_capped);
		levels = k + 1;
		if (r < 0)
			goto out;
		for (size_t i = 0; i < lv[k].n; i++)
			if (lv[k].nodes[i].image)
				ps->chains_found = ps->chains_found > UINT64_MAX - lv[k].nodes[i].paths
					? UINT64_MAX : ps->chains_found + lv[k].nodes[i].paths;
		/* Enough chains to fill max: a deeper level would only be
		 * cut, and a search with smaller offsets already ran. */
		if (ps->chains_found >= opts->max_chains) {
			if (ps->chains_found > opts->max_chains || k < opts->depth)
				ps->truncated = true;
			break;
		}
	}
	/* Every path counted is enumerated: room for all, or for max. */
	e.max = opts->max_chains < ps->chains_found ? opts->max_chains
						    : (size_t)ps->chains_found;
	r = -ENOMEM;
	if (VG_GROW(*out, *cap_out, *n_out + e.max + 1) < 0)
		goto out;
	e.out = *out + *n_out;
	for (unsigned k = 1; k < levels && e.n < e.max; k++)
		if (enumerate_level(&e, k) < 0)
			goto out;
	*n_out += e.n;
	r = 0;
out:
	lv[0].nodes = NULL;
	free_levels(lv, VG_PTR_MAX_DEPTH + 1);
	return r;
}

int vg_ptr_scan(pid_t pid, const struct vg_maps *maps,
		const struct vg_images *imgs, const struct vg_ptr_opts *opts,
		struct vg_ptr_chain **chains, size_t *n,
		struct vg_ptr_stats *st, struct vg_error *err)
{
	struct collect c = { 0 };
	struct ranked *all = NULL;
	size_t n_all = 0, cap_all = 0, w = 0;
	double t0 = now();
	uint64_t limit;
	int r;

	*chains = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	r = check_opts(pid, maps, opts, err);
	if (r < 0)
		return r;
	r = collect(pid, maps, opts, &c, st, err);
	if (r < 0)
		goto out;
	/* Widen the offsets step by step: a search with small offsets stays
	 * small and finds the chains through small objects, which a wide
	 * search could lose to its caps; each wider one adds to them until
	 * one is cut or the widest has run. */
	limit = opts->max_offset < VG_PTR_FIRST_LIMIT ? opts->max_offset : VG_PTR_FIRST_LIMIT;
	for (;;) {
		struct pass ps;

		r = search(c.ptrs, c.n, opts, limit, imgs, &all, &n_all, &cap_all, &ps);
		if (r < 0) {
			r = vg_error_set(err, -ENOMEM, "out of memory searching pointer chains with offsets <= %" PRIu64,
					 limit);
			goto out;
		}
		st->passes++;
		if (ps.chains_found > st->chains_found)
			st->chains_found = ps.chains_found;
		st->truncated = ps.truncated;
		st->frontier_capped = ps.frontier_capped;
		if (opts->stop && *opts->stop)
			break;
		if (ps.truncated || ps.frontier_capped)
			break;
		st->any_complete = true;
		st->max_offset_complete = limit;
		if (limit >= opts->max_offset)
			break;
		limit = limit > opts->max_offset / VG_PTR_LIMIT_STEP ? opts->max_offset
								     : limit * VG_PTR_LIMIT_STEP;
	}
	free(c.ptrs);
	c.ptrs = NULL;
	st->interrupted = opts->stop && *opts->stop;
	/* A chain found by several searches has the same keys each time. */
	if (n_all)
		qsort(all, n_all, sizeof(*all), cmp_ranked);
	for (size_t i = 0; i < n_all; i++)
		if (w == 0 || cmp_ranked(&all[w - 1], &all[i]) != 0)
			all[w++] = all[i];
	if (w > st->chains_found)
		st->chains_found = w;
	if (w > opts->max_chains) {
		w = opts->max_chains;
		st->truncated = true;
	}
	*chains = malloc((w ? w : 1) * sizeof(**chains));
	if (!*chains) {
		r = vg_error_set(err, -ENOMEM, "out of memory for %zu pointer chains", w);
		goto out;
	}
	for (size_t i = 0; i < w; i++)
		(*chains)[i] = all[i].c;
	*n = w;
out:
	free(c.ptrs);
	free(all);
	st->seconds = now() - t0;
	return r;
}

/* ------------------------------------------------------------------ */
/* text                                                                 */

char *vg_ptr_chain_base(const struct vg_ptr_chain *c, char *buf, size_t size)
{
	if (c->image)
		snprintf(buf, size, "%s+0x%" PRIx64, vg_locate_image_name(c->image),
			 c->base_static);
	else
		snprintf(buf, size, "0x%" PRIx64, c->base_address);
	return buf;
}

/* Append to buf at *at, keeping the NUL and never running past size. */
static void put(char *buf, size_t size, size_t *at, const char *text)
{
	int w = snprintf(buf + *at, size - *at, "%s", text);

	if (w > 0)
		*at += (size_t)w < size - *at ? (size_t)w : size - *at - 1;
}

char *vg_ptr_chain_expression(const struct vg_ptr_chain *c, char *buf,
			      size_t size)
{
	unsigned depth = c->depth < VG_PTR_MAX_DEPTH ? c->depth : VG_PTR_MAX_DEPTH;
	char base[320], off[32];
	size_t at = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	if (c->base_symbol && c->base_symbol_offset)
		snprintf(base, sizeof(base), "%s+%" PRIu64, c->base_symbol,
			 c->base_symbol_offset);
	else if (c->base_symbol)
		snprintf(base, sizeof(base), "%s", c->base_symbol);
	else
		vg_ptr_chain_base(c, base, sizeof(base));
	/* One "*(" per dereference, innermost (the base) first to close. */
	for (unsigned i = 0; i < depth; i++)
		put(buf, size, &at, "*(");
	put(buf, size, &at, base);
	for (unsigned i = 0; i < depth; i++) {
		put(buf, size, &at, ")");
		if (c->offsets[i]) {
			snprintf(off, sizeof(off), "+%" PRIu64, c->offsets[i]);
			put(buf, size, &at, off);
		}
	}
	return buf;
}
