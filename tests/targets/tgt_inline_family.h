/* tgt_inline_family.h - one "family" of functions, included once per
 * family number: #define TI_FAM <n>, #include "tgt_inline_family.h".
 * (An X-include rather than one big macro so that every function has its
 * own source lines, as real code does.)  Each family is five functions:
 *   famN_leaf  static inline   -> ti_hash -> ti_mix -> ti_rotate (header)
 *   famN_mid   static inline   a loop over famN_leaf
 *   famN_top   always_inline   a loop over famN_mid
 *   famN_work  noinline        famN_top + ti_checksum: 5+ levels of inlining
 *   famN_rec   noinline        C recursion through famN_leaf */
#ifndef TI_FAM
#error "define TI_FAM before including tgt_inline_family.h"
#endif

#define TI_CAT2(a, b, c) a##b##c
#define TI_CAT(a, b, c) TI_CAT2(a, b, c)
#define TI_FN(suffix) TI_CAT(fam, TI_FAM, suffix)

static inline uint64_t TI_FN(_leaf)(uint64_t x)
{
	uint64_t h = ti_hash(x, (uint64_t)TI_FAM * 0x100000001b3ULL);
	if (h & 1)
		h = ti_rotate(h, TI_FAM % 61 + 1);
	return h ^ (x >> (TI_FAM % 17));
}

static inline uint64_t TI_FN(_mid)(uint64_t x, int rounds)
{
	uint64_t s = x;
	for (int i = 0; i < rounds; i++)
		s = TI_FN(_leaf)(s + (uint64_t)i);
	return s;
}

TI_ALWAYS uint64_t TI_FN(_top)(const uint64_t *v, size_t n)
{
	uint64_t acc = TI_FAM;
	for (size_t i = 0; i < n; i++)
		acc ^= TI_FN(_mid)(v[i], (int)(i & 3) + 1);
	return acc;
}

static __attribute__((noinline)) uint64_t TI_FN(_work)(const uint64_t *v, size_t n)
{
	uint64_t a = TI_FN(_top)(v, n);
	return a + ti_checksum(v, n / 2);
}

static __attribute__((noinline)) uint64_t TI_FN(_rec)(uint64_t x, unsigned depth)
{
	if (depth == 0)
		return TI_FN(_leaf)(x);
	uint64_t l = TI_FN(_rec)(x * 3 + 1, depth - 1);
	return TI_FN(_leaf)(l ^ depth);
}

#undef TI_FN
#undef TI_CAT
#undef TI_CAT2
