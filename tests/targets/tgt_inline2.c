/* tgt_inline2.c - the second translation unit of tgt_inline: families
 * 40..71 (see tgt_inline_family.h), so lookups must pick the right
 * compilation unit and inlined frames come from headers included by both. */
#include <stddef.h>
#include <stdint.h>

#include "tgt_inline.h"

#define TI_FAM 40
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 41
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 42
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 43
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 44
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 45
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 46
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 47
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 48
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 49
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 50
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 51
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 52
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 53
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 54
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 55
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 56
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 57
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 58
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 59
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 60
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 61
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 62
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 63
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 64
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 65
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 66
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 67
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 68
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 69
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 70
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 71
#include "tgt_inline_family.h"
#undef TI_FAM

typedef uint64_t (*ti_work_fn)(const uint64_t *, size_t);
typedef uint64_t (*ti_rec_fn)(uint64_t, unsigned);

static const ti_work_fn ti2_works[] = {
	fam40_work,
	fam41_work,
	fam42_work,
	fam43_work,
	fam44_work,
	fam45_work,
	fam46_work,
	fam47_work,
	fam48_work,
	fam49_work,
	fam50_work,
	fam51_work,
	fam52_work,
	fam53_work,
	fam54_work,
	fam55_work,
	fam56_work,
	fam57_work,
	fam58_work,
	fam59_work,
	fam60_work,
	fam61_work,
	fam62_work,
	fam63_work,
	fam64_work,
	fam65_work,
	fam66_work,
	fam67_work,
	fam68_work,
	fam69_work,
	fam70_work,
	fam71_work,
};

static const ti_rec_fn ti2_recs[] = {
	fam40_rec,
	fam41_rec,
	fam42_rec,
	fam43_rec,
	fam44_rec,
	fam45_rec,
	fam46_rec,
	fam47_rec,
	fam48_rec,
	fam49_rec,
	fam50_rec,
	fam51_rec,
	fam52_rec,
	fam53_rec,
	fam54_rec,
	fam55_rec,
	fam56_rec,
	fam57_rec,
	fam58_rec,
	fam59_rec,
	fam60_rec,
	fam61_rec,
	fam62_rec,
	fam63_rec,
	fam64_rec,
	fam65_rec,
	fam66_rec,
	fam67_rec,
	fam68_rec,
	fam69_rec,
	fam70_rec,
	fam71_rec,
};

/* Recursion through a static inline helper that gcc may inline into itself
 * a few levels deep before it gives up. */
static inline uint64_t ti2_fold_step(const uint64_t *v, size_t n, unsigned depth)
{
	if (n < 2 || depth == 0)
		return n ? ti_mix(v[0]) : 0;
	size_t h = n / 2;
	return ti_hash(ti2_fold(v, h, depth - 1), ti2_fold(v + h, n - h, depth - 1));
}

__attribute__((noinline)) uint64_t ti2_fold(const uint64_t *v, size_t n, unsigned depth)
{
	return ti2_fold_step(v, n, depth) + ti_checksum(v, n < 4 ? n : 4);
}

__attribute__((noinline)) uint64_t ti2_run_all(uint64_t *v, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < sizeof(ti2_works) / sizeof(ti2_works[0]); i++)
		sum = ti_hash(sum, ti2_works[i](v, n)) + ti2_recs[i](v[i % n], (unsigned)i % 7);
	return sum + ti2_fold(v, n, 5);
}
