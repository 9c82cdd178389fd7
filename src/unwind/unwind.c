/* unwind.c - frames from a sample's registers and stack copy: by CFI
 * (unwind/cfi.h) with a cache of compiled rows, and by frame pointers.
 *
 * Each image's CFI is opened on the first IP that falls in it.  Each row,
 * once compiled, is kept in one 2-way set-associative cache shared by all
 * images, keyed by (image id, static lookup address), so a warm unwind
 * never calls libdw and never allocates.  Image ids are never reused, so
 * dropping an image after a refresh needs no cache sweep. */
#include "unwind/unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NDW VG_DWARF_NREGS
#define DW_RA VG_DWARF_RA
#define DW_SP VG_DWARF_SP
#define PERF_SP VG_PERF_SP
#define PERF_IP VG_PERF_IP

#define CACHE_SLOTS 4096       /* power of two (2-way sets); ~180 bytes each: ~0.7 MiB */
/* The cache is mapped zero-filled and written only where rows are
 * filled, so it costs the pages a run uses: a `vigil stack` of a few
 * dozen frames writes a few dozen of its ~180 pages.  From calloc it was
 * memory glibc had to clear (its mmap threshold had risen past 0.7 MiB
 * by then, and the heap held freed bytes): all ~180 pages written at
 * start, 218 of the 340 page faults of `vigil stack PID` on a sleep, at
 * ~10 us each on a VM that shadows page tables (now 176 faults, 8.6 ->
 * 6.9 ms to the first line).  `touched` marks the CACHE_REGION-byte
 * regions a fill wrote: freeing visits only the slots inside them, the
 * others being still all zero (no row, nothing to free). */
#define CACHE_BYTES ((size_t)CACHE_SLOTS * sizeof(struct slot))
#define CACHE_REGION 4096
#define CACHE_REGIONS ((CACHE_BYTES + CACHE_REGION - 1) / CACHE_REGION)

/* One cached row: key/image_id identify the lookup that made it. */
struct slot {
	uint64_t key;
	uint32_t image_id;
	struct vg_cfi_row row;
};

/* The CFI of one image of the current set, opened on first use. */
struct image_cfi {
	const struct vg_image *img;
	uint32_t id;
	bool tried;           /* open attempted (result in cfi) */
	struct vg_cfi *cfi;   /* NULL: none (every IP in it is NO_CFI) */
};

struct vg_unwinder {
	pid_t pid;
	const struct vg_images *images;
	struct image_cfi *cfi;   /* parallel to images->images (sorted by lo) */
	size_t n_cfi;
	uint32_t next_id;
	struct slot *cache;      /* CACHE_SLOTS, mapped (see CACHE_BYTES) */
	uint64_t touched[(CACHE_REGIONS + 63) / 64];
	struct vg_unwind_stats stats;
};

/* The first and last CACHE_REGION-byte regions slot i lies in. */
static void slot_regions(size_t i, size_t *first, size_t *last)
{
	*first = i * sizeof(struct slot) / CACHE_REGION;
	*last = ((i + 1) * sizeof(struct slot) - 1) / CACHE_REGION;
}

/* Marks the regions slot s lies in as written. */
static void touch(struct vg_unwinder *u, const struct slot *s)
{
	size_t first, last;

	slot_regions((size_t)(s - u->cache), &first, &last);
	for (size_t r = first; r <= last; r++)
		u->touched[r / 64] |= 1ull << (r % 64);
}

/* Whether a fill may have written slot i: a write marks every region
 * of its slot, so a slot with one region unmarked is still all zero
 * (and clearing it would write a page nothing else wrote). */
static bool touched(const struct vg_unwinder *u, size_t i)
{
	size_t first, last;

	slot_regions(i, &first, &last);
	for (size_t r = first; r <= last; r++)
		if (!(u->touched[r / 64] & 1ull << (r % 64)))
			return false;
	return true;
}

static void cfi_close(struct image_cfi *c)
{
	c->cfi = vg_cfi_free(c->cfi);
}

static void cfi_open(struct vg_unwinder *u, struct image_cfi *c)
{
	Elf *elf = (Elf *)vg_image_elf(c->img);

	c->tried = true;
	if (!elf)
		return;
	vg_cfi_open(elf, &c->cfi, NULL);
	u->stats.images_opened++;
}

static void cfi_init(struct vg_unwinder *u, struct image_cfi *c,
		     const struct vg_image *img)
{
	memset(c, 0, sizeof *c);
	c->img = img;
	c->id = u->next_id++;
}

int vg_unwinder_new(pid_t pid, const struct vg_images *images,
		    struct vg_unwinder **out, struct vg_error *err)
{
	struct vg_unwinder *u;
	int r;

	*out = NULL;
	u = calloc(1, sizeof *u);
	if (!u)
		return vg_error_set(err, -ENOMEM, "cannot allocate the unwinder for pid %d",
				    (int)pid);
	u->pid = pid;
	u->next_id = 1;
	u->cache = mmap(NULL, CACHE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (u->cache == MAP_FAILED) {
		free(u);
		return vg_error_set(err, -ENOMEM,
				    "cannot allocate the unwind row cache for pid %d",
				    (int)pid);
	}
	r = vg_unwinder_set_images(u, images, err);
	if (r < 0) {
		vg_unwinder_free(u);
		return r;
	}
	*out = u;
	return 0;
}

struct vg_unwinder *vg_unwinder_free(struct vg_unwinder *u)
{
	if (!u)
		return NULL;
	for (size_t i = 0; i < u->n_cfi; i++)
		cfi_close(&u->cfi[i]);
	free(u->cfi);
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (touched(u, i))
			vg_cfi_row_clear(&u->cache[i].row);
	munmap(u->cache, CACHE_BYTES);
	free(u);
	return NULL;
}

int vg_unwinder_set_images(struct vg_unwinder *u, const struct vg_images *images,
			   struct vg_error *err)
{
	size_t n = images ? images->n : 0;
	struct image_cfi *fresh = NULL;

	if (n) {
		fresh = calloc(n, sizeof *fresh);
		if (!fresh) {
			for (size_t i = 0; i < u->n_cfi; i++)
				cfi_close(&u->cfi[i]);
			free(u->cfi);
			u->cfi = NULL;
			u->n_cfi = 0;
			u->images = NULL;
			return vg_error_set(err, -ENOMEM,
					    "cannot allocate the unwind state of %zu images of pid %d",
					    n, (int)u->pid);
		}
	}
	/* Both sets are alive here (the caller's contract), so an equal
	 * pointer is the same image object: it keeps its CFI, its id, and
	 * with the id its cached rows. */
	for (size_t i = 0; i < n; i++) {
		const struct vg_image *img = images->images[i];
		size_t j;

		for (j = 0; j < u->n_cfi; j++)
			if (u->cfi[j].img == img)
				break;
		if (j < u->n_cfi) {
			fresh[i] = u->cfi[j];
			u->cfi[j].img = NULL;   /* moved */
		} else {
			cfi_init(u, &fresh[i], img);
		}
	}
	for (size_t j = 0; j < u->n_cfi; j++)
		if (u->cfi[j].img)
			cfi_close(&u->cfi[j]);
	free(u->cfi);
	u->cfi = fresh;
	u->n_cfi = n;
	u->images = images;
	return 0;
}

/* The state slot of img: the image array is sorted by lo and ours is
 * parallel to it. */
static struct image_cfi *cfi_of(struct vg_unwinder *u, const struct vg_image *img)
{
	size_t lo = 0, hi = u->n_cfi;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->cfi[mid].img->lo < img->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < u->n_cfi && u->cfi[lo].img == img)
		return &u->cfi[lo];
	for (size_t i = 0; i < u->n_cfi; i++)   /* unsorted set: still right */
		if (u->cfi[i].img == img)
			return &u->cfi[i];
	return NULL;
}

static size_t slot_of(uint32_t id, uint64_t key)
{
	uint64_t h = (key ^ (uint64_t)id << 40) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 52) & (CACHE_SLOTS - 1);
}

/* The compiled row for static address key of image c (never NULL). */
static const struct vg_cfi_row *row_at(struct vg_unwinder *u, struct image_cfi *c,
				       uint64_t key)
{
	/* Two ways per set: two hot addresses that hash alike (a few in a
	 * hundred stacks, with ASLR) do not evict each other on every
	 * sample.  A miss moves way 0 to way 1 and fills way 0. */
	struct slot *w0 = &u->cache[slot_of(c->id, key) & ~(size_t)1], *w1 = w0 + 1, *s;

	for (s = w0; s <= w1; s++) {
		if (s->row.state != VG_ROW_EMPTY && s->image_id == c->id && s->key == key) {
			u->stats.rows_cached++;
			return &s->row;
		}
	}
	u->stats.rows_decoded++;
	if (w0->row.state == VG_ROW_EMPTY) {
		s = w0;
	} else if (w1->row.state == VG_ROW_EMPTY) {
		s = w1;
	} else {
		vg_cfi_row_clear(&w1->row);
		*w1 = *w0;
		touch(u, w1);
		w0->row.exprs = NULL;   /* moved with the row */
		s = w0;
	}
	touch(u, s);
	if (!c->tried)
		cfi_open(u, c);
	vg_cfi_row_clear(&s->row);
	s->key = key;
	s->image_id = c->id;
	vg_cfi_row_find(c->cfi, key, &s->row);
	return &s->row;
}

static bool load8(const uint8_t *stack, size_t len, uint64_t sp0, uint64_t addr,
		  uint64_t *v);

/* JIT code has no image and so no CFI, but the JITs that name their code
 * in /tmp/perf-PID.map (V8, HotSpot, .NET) keep a frame pointer in it:
 * one step through rbp (saved rbp at [rbp], return address at [rbp+8]),
 * as perf --call-graph fp would, when the frame lies in the copied stack
 * above the current sp.  Only callee-saved rbp survives: the other
 * registers become unknown. */
static bool fp_step(struct vg_cfi_frame *f, const uint8_t *stack, size_t stack_len,
		    uint64_t sp0)
{
	const uint32_t need = 1u << VG_DWARF_BP | 1u << DW_SP;
	uint64_t bp = f->r[VG_DWARF_BP], next, ra;

	if ((f->known & need) != need || bp < f->r[DW_SP] || bp & 7 ||
	    !load8(stack, stack_len, sp0, bp, &next) ||
	    !load8(stack, stack_len, sp0, bp + 8, &ra) || ra == 0)
		return false;
	f->r[DW_RA] = ra;
	f->r[DW_SP] = bp + 16;
	f->r[VG_DWARF_BP] = next;
	f->known = need | 1u << DW_RA;
	return true;
}

int vg_unwind_dwarf(struct vg_unwinder *u, const struct vg_regs *regs,
		    const uint8_t *stack, size_t stack_len, uint64_t *ips,
		    bool *exact, size_t max, size_t *n, enum vg_unwind_stop *why)
{
	struct vg_cfi_frame f;
	bool exact_ip = true;   /* frame 0, or the caller of a signal frame */
	bool jit_seen = false;  /* a frame in no image was stepped through */
	uint64_t sp0;

	*n = 0;
	*why = VG_UNWIND_NO_REGISTER;
	if ((regs->mask & (1ull << PERF_IP | 1ull << PERF_SP)) !=
	    (1ull << PERF_IP | 1ull << PERF_SP))
		return 0;
	vg_cfi_frame_of(regs, &f);
	sp0 = f.r[DW_SP];
	if (!stack)
		stack_len = 0;
	for (;;) {
		uint64_t ip = f.r[DW_RA];
		const struct vg_image *img;
		struct image_cfi *c;
		const struct vg_cfi_row *row;

		if (*n == max) {
			*why = VG_UNWIND_MAX_FRAMES;
			return 0;
		}
		if (exact)
			exact[*n] = exact_ip;
		ips[(*n)++] = ip;
		img = vg_images_find(u->images, ip);
		c = img ? cfi_of(u, img) : NULL;
		if (!c) {
			if (!img && fp_step(&f, stack, stack_len, sp0)) {
				exact_ip = false;
				jit_seen = true;
				continue;
			}
			*why = VG_UNWIND_NO_IMAGE;
			return 0;
		}
		/* A return address follows the call, which may be the last
		 * instruction of the function (a noreturn call) and then
		 * belongs to the next function's row: look up the call.
		 * glibc starts the FDE of __restore_rt one nop early so that
		 * this lookup finds it too. */
		row = row_at(u, c, ip - img->bias - (exact_ip ? 0 : 1));
		/* The handler "returned" into the trampoline: its address
		 * is not after a call. */
		if (row->signal && exact)
			exact[*n - 1] = true;
		if (vg_cfi_row_step(row, &f, stack, stack_len, sp0, why) < 0) {
			/* Below JIT code, the runtime's own stubs often have no
			 * CFI either (V8's builtins in node's binary) but keep
			 * the frame pointer the JIT code relies on. */
			if (*why != VG_UNWIND_NO_CFI || !jit_seen ||
			    !fp_step(&f, stack, stack_len, sp0))
				return 0;
			exact_ip = false;
			continue;
		}
		exact_ip = row->signal;
		if (f.r[DW_RA] == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return 0;
		}
	}
}

/* The 8 bytes at addr, when they lie wholly in the copy made at sp0. */
static bool load8(const uint8_t *stack, size_t len, uint64_t sp0, uint64_t addr,
		  uint64_t *v)
{
	if (addr < sp0 || addr - sp0 > len || len - (addr - sp0) < 8)
		return false;
	memcpy(v, stack + (addr - sp0), 8);
	return true;
}

void vg_unwind_fp(const struct vg_regs *regs, const uint8_t *stack,
		  size_t stack_len, uint64_t *ips, size_t max, size_t *n,
		  enum vg_unwind_stop *why)
{
	const uint64_t need = 1ull << PERF_IP | 1ull << PERF_SP | 1ull << 6;
	uint64_t sp0, bp, floor;

	*n = 0;
	*why = VG_UNWIND_NO_REGISTER;
	if (max == 0) {
		*why = VG_UNWIND_MAX_FRAMES;
		return;
	}
	if (!(regs->mask & 1ull << PERF_IP))
		return;
	ips[(*n)++] = regs->regs[PERF_IP];
	if ((regs->mask & need) != need)
		return;
	if (!stack)
		stack_len = 0;
	sp0 = regs->regs[PERF_SP];
	bp = regs->regs[6];
	floor = sp0;
	for (;;) {
		uint64_t next, ra;

		if (*n == max) {
			*why = VG_UNWIND_MAX_FRAMES;
			return;
		}
		if (bp == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return;
		}
		if (bp < floor || bp & 7) {
			*why = VG_UNWIND_BAD_FRAME;
			return;
		}
		if (!load8(stack, stack_len, sp0, bp, &next) ||
		    !load8(stack, stack_len, sp0, bp + 8, &ra)) {
			*why = VG_UNWIND_STACK_END;
			return;
		}
		if (ra == 0) {
			*why = VG_UNWIND_OUTERMOST;
			return;
		}
		ips[(*n)++] = ra;
		floor = bp + 16;
		bp = next;
	}
}

void vg_unwinder_stats(const struct vg_unwinder *u, struct vg_unwind_stats *st)
{
	*st = u->stats;
}

const char *vg_unwind_stop_name(enum vg_unwind_stop why)
{
	static const char *const names[] = {
		[VG_UNWIND_OUTERMOST] = "outermost",
		[VG_UNWIND_STACK_END] = "stack_end",
		[VG_UNWIND_NO_CFI] = "no_cfi",
		[VG_UNWIND_UNSUPPORTED] = "unsupported_rule",
		[VG_UNWIND_NO_IMAGE] = "no_image",
		[VG_UNWIND_NO_REGISTER] = "missing_register",
		[VG_UNWIND_BAD_FRAME] = "bad_frame",
		[VG_UNWIND_MAX_FRAMES] = "max_frames",
	};

	if ((unsigned)why < sizeof names / sizeof names[0] && names[why])
		return names[why];
	return "unknown";
}
