/* compare.c - the compare kernels of a scan (compare.h): a matcher built
 * once from a VALUE, then run over a buffer of target memory.
 *
 * Compare kernels (SSE2, baseline on x86-64; AVX2 when the CPU has it):
 *   aligned integers: a vector equality per lane, four vectors per step,
 *     one movemask for all four, lanes looked at only on a hit;
 *   any other fixed pattern (unaligned integers, str, bytes): up to four
 *     "filter" bytes of the pattern are compared at every offset (one
 *     unaligned load each), and only the offsets where all four agree are
 *     verified against the whole pattern (and its mask);
 *   floats: lo <= x <= hi with the bounds computed once; unaligned floats
 *     load at every byte shift of a 16-byte block.
 * Pure computation: no I/O, no threads. */
#include "scan/compare.h"
#include "util/cpu.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline void hit(struct hits *h, size_t off, unsigned variant)
{
	if (UNLIKELY(h->n == h->cap)) {
		size_t cap = h->cap ? h->cap * 2 : 4096;
		void *p = realloc(h->v, cap * sizeof(*h->v));

		if (!p) {
			h->oom = true;
			return;
		}
		h->v = p;
		h->cap = cap;
	}
	h->v[h->n++] = (uint64_t)off << 1 | variant;
}

/* Pick filter bytes: the significant bytes, preferring ones that are not
 * 0x00 (rare in memory), always the first and last significant ones. */
static void pattern_init(struct pattern *p, const uint8_t *bytes,
			 const uint8_t *mask, size_t len)
{
	size_t first = len, last = 0;

	p->bytes = bytes;
	p->mask = mask;
	p->len = len;
	p->nf = 0;
	for (size_t i = 0; i < len; i++) {
		if (!mask || mask[i]) {
			if (first == len)
				first = i;
			last = i;
		}
	}
	p->fo[p->nf] = first;
	p->fb[p->nf++] = bytes[first];
	if (last != first) {
		p->fo[p->nf] = last;
		p->fb[p->nf++] = bytes[last];
	}
	/* Then non-zero significant bytes from the middle, then any. */
	for (int pass = 0; pass < 2 && p->nf < 4; pass++) {
		for (size_t i = first + 1; i < last && p->nf < 4; i++) {
			bool dup = false;

			if (mask && !mask[i])
				continue;
			if (pass == 0 && bytes[i] == 0)
				continue;
			for (unsigned k = 0; k < p->nf; k++)
				dup |= p->fo[k] == i;
			if (!dup) {
				p->fo[p->nf] = i;
				p->fb[p->nf++] = bytes[i];
			}
		}
	}
}

/* The next float up or down from a non-NaN f (nextafterf without libm). */
static float float_step(float f, bool up)
{
	uint32_t b;

	if (f == 0)
		f = up ? 0.0f : -0.0f;   /* from +0 up, from -0 down */
	memcpy(&b, &f, 4);
	if ((f > 0 || (f == 0 && !(b >> 31))) == up)
		b++;
	else
		b--;
	memcpy(&f, &b, 4);
	return f;
}

void scan_matcher_init(struct matcher *m, const struct vg_scan_value *v,
		       bool aligned)
{
	size_t w = vg_scan_type_width(v->type);

	memset(m, 0, sizeof(*m));
	m->avx2 = vg_cpu_avx2();
	memcpy(m->raw, v->raw, sizeof(m->raw));
	if (w == 0) {
		m->k = K_PATTERNS;
		m->npat = v->npat > 2 ? 2 : v->npat;
		for (size_t i = 0; i < m->npat; i++) {
			pattern_init(&m->pats[i], v->pat[i].bytes, v->pat[i].mask,
				     v->pat[i].len);
			if (v->pat[i].len > m->width)
				m->width = v->pat[i].len;
		}
		return;
	}
	m->width = w;
	if (vg_scan_type_is_float(v->type)) {
		double lo = v->f - v->epsilon, hi = v->f + v->epsilon;

		/* |x - v| <= eps never holds for an infinite x. */
		if (lo < -DBL_MAX)
			lo = -DBL_MAX;
		if (hi > DBL_MAX)
			hi = DBL_MAX;
		m->lo64 = lo;
		m->hi64 = hi;
		/* The floats x with lo <= (double)x <= hi: exactly
		 * lo32 <= x <= hi32. */
		m->lo32 = (float)lo;
		if ((double)m->lo32 < lo)
			m->lo32 = float_step(m->lo32, true);
		m->hi32 = (float)hi;
		if ((double)m->hi32 > hi)
			m->hi32 = float_step(m->hi32, false);
		if (w == 4)
			m->k = aligned ? K_F32 : K_F32_UNALIGNED;
		else
			m->k = aligned ? K_F64 : K_F64_UNALIGNED;
		return;
	}
	if (aligned && w > 1) {
		m->k = K_INT_ALIGNED;
		return;
	}
	m->k = K_PATTERNS;
	m->npat = 1;
	pattern_init(&m->pats[0], m->raw, NULL, w);
}

/* ---- kernels --------------------------------------------------------
 * Each looks at start offsets [p, pend) of buf; every byte a match
 * starting before pend would cover is readable (pend <= segment end -
 * width + 1). */

#define FILTER_BODY(VEC, LOADU, SET1, CMPEQ, AND, MOVEMASK, STEP)		\
	const VEC b0 = SET1((char)pt->fb[0]), b1 = SET1((char)pt->fb[1]);	\
	const VEC b2 = SET1((char)pt->fb[2]), b3 = SET1((char)pt->fb[3]);	\
	const size_t o0 = pt->fo[0], o1 = pt->fo[1], o2 = pt->fo[2], o3 = pt->fo[3]; \
	for (; p + 2 * STEP <= pend; p += 2 * STEP) {				\
		const uint8_t *s = buf + p;					\
		VEC e = CMPEQ(LOADU((const void *)(s + o0)), b0);		\
		VEC f = CMPEQ(LOADU((const void *)(s + STEP + o0)), b0);	\
		if (NF > 1) {							\
			e = AND(e, CMPEQ(LOADU((const void *)(s + o1)), b1));	\
			f = AND(f, CMPEQ(LOADU((const void *)(s + STEP + o1)), b1)); \
		}								\
		if (NF > 2) {							\
			e = AND(e, CMPEQ(LOADU((const void *)(s + o2)), b2));	\
			f = AND(f, CMPEQ(LOADU((const void *)(s + STEP + o2)), b2)); \
		}								\
		if (NF > 3) {							\
			e = AND(e, CMPEQ(LOADU((const void *)(s + o3)), b3));	\
			f = AND(f, CMPEQ(LOADU((const void *)(s + STEP + o3)), b3)); \
		}								\
		uint64_t mk = (uint64_t)(uint32_t)MOVEMASK(e) |		\
			      (uint64_t)(uint32_t)MOVEMASK(f) << STEP;		\
		while (UNLIKELY(mk)) {						\
			unsigned b = (unsigned)__builtin_ctzll(mk);		\
			mk &= mk - 1;						\
			if (NF == (unsigned)pt->len || pattern_at(pt, s + b))	\
				hit(h, p + b, variant);				\
		}								\
	}									\
	for (; p < pend; p++)							\
		if (pattern_at(pt, buf + p))					\
			hit(h, p, variant);

#define DEF_FILTER_SSE2(N)							\
static void filter_sse2_##N(const struct pattern *pt, const uint8_t *buf,	\
			    size_t p, size_t pend, struct hits *h,		\
			    unsigned variant)					\
{										\
	enum { NF = N };							\
	FILTER_BODY(__m128i, _mm_loadu_si128, _mm_set1_epi8, _mm_cmpeq_epi8,	\
		    _mm_and_si128, _mm_movemask_epi8, 16)			\
}
DEF_FILTER_SSE2(1)
DEF_FILTER_SSE2(2)
DEF_FILTER_SSE2(3)
DEF_FILTER_SSE2(4)

#define DEF_FILTER_AVX2(N)							\
__attribute__((target("avx2")))						\
static void filter_avx2_##N(const struct pattern *pt, const uint8_t *buf,	\
			    size_t p, size_t pend, struct hits *h,		\
			    unsigned variant)					\
{										\
	enum { NF = N };							\
	FILTER_BODY(__m256i, _mm256_loadu_si256, _mm256_set1_epi8,		\
		    _mm256_cmpeq_epi8, _mm256_and_si256, _mm256_movemask_epi8, 32) \
}
DEF_FILTER_AVX2(1)
DEF_FILTER_AVX2(2)
DEF_FILTER_AVX2(3)
DEF_FILTER_AVX2(4)

static void scan_pattern(const struct matcher *m, const struct pattern *pt,
			 const uint8_t *buf, size_t p, size_t pend,
			 struct hits *h, unsigned variant)
{
	typedef void (*fn)(const struct pattern *, const uint8_t *, size_t,
			   size_t, struct hits *, unsigned);
	static const fn sse2[] = { filter_sse2_1, filter_sse2_2, filter_sse2_3, filter_sse2_4 };
	static const fn avx2[] = { filter_avx2_1, filter_avx2_2, filter_avx2_3, filter_avx2_4 };

	(m->avx2 ? avx2 : sse2)[pt->nf - 1](pt, buf, p, pend, h, variant);
}

/* Aligned integers: lanes of the width compared at once. */
#define INT_ALIGNED_BODY(VEC, LOADU, CMPEQ, OR, MOVEMASK, STEP, LANEMASK)	\
	for (; p + 4 * STEP <= pend; p += 4 * STEP) {				\
		const uint8_t *s = buf + p;					\
		VEC e0 = CMPEQ(LOADU((const void *)s), v);			\
		VEC e1 = CMPEQ(LOADU((const void *)(s + STEP)), v);		\
		VEC e2 = CMPEQ(LOADU((const void *)(s + 2 * STEP)), v);	\
		VEC e3 = CMPEQ(LOADU((const void *)(s + 3 * STEP)), v);	\
		if (LIKELY(!MOVEMASK(OR(OR(e0, e1), OR(e2, e3)))))		\
			continue;						\
		VEC ev[4] = { e0, e1, e2, e3 };					\
		for (unsigned q = 0; q < 4; q++) {				\
			uint64_t mk = (uint32_t)MOVEMASK(ev[q]);		\
			for (unsigned l = 0; l < STEP; l += W) {		\
				if (((mk >> l) & LANEMASK) == LANEMASK)		\
					hit(h, p + q * STEP + l, 0);		\
			}							\
		}								\
	}									\
	for (; p < pend; p += W)						\
		if (memcmp(buf + p, raw, W) == 0)				\
			hit(h, p, 0);

#define DEF_INT_ALIGNED(N, SET, CMP_SSE, CMP_AVX, LANEMASK)			\
static void int_sse2_##N(const uint8_t *raw, const uint8_t *buf, size_t p,	\
			 size_t pend, struct hits *h)				\
{										\
	enum { W = N };								\
	uint64_t x;								\
	memcpy(&x, raw, 8);							\
	const __m128i v = _mm_set1_##SET;					\
	INT_ALIGNED_BODY(__m128i, _mm_loadu_si128, CMP_SSE, _mm_or_si128,	\
			 _mm_movemask_epi8, 16, LANEMASK)			\
}										\
__attribute__((target("avx2")))						\
static void int_avx2_##N(const uint8_t *raw, const uint8_t *buf, size_t p,	\
			 size_t pend, struct hits *h)				\
{										\
	enum { W = N };								\
	uint64_t x;								\
	memcpy(&x, raw, 8);							\
	const __m256i v = _mm256_set1_##SET;					\
	INT_ALIGNED_BODY(__m256i, _mm256_loadu_si256, CMP_AVX, _mm256_or_si256,	\
			 _mm256_movemask_epi8, 32, LANEMASK)			\
}

/* SSE2 has no 64-bit equality: two 32-bit halves equal = all 8 mask bits. */
#define CMPEQ_SSE_16(a, b) _mm_cmpeq_epi16(a, b)
#define CMPEQ_SSE_32(a, b) _mm_cmpeq_epi32(a, b)
#define CMPEQ_SSE_64(a, b) _mm_cmpeq_epi32(a, b)
#define CMPEQ_AVX_16(a, b) _mm256_cmpeq_epi16(a, b)
#define CMPEQ_AVX_32(a, b) _mm256_cmpeq_epi32(a, b)
#define CMPEQ_AVX_64(a, b) _mm256_cmpeq_epi64(a, b)
DEF_INT_ALIGNED(2, epi16((short)x), CMPEQ_SSE_16, CMPEQ_AVX_16, 0x3u)
DEF_INT_ALIGNED(4, epi32((int)x), CMPEQ_SSE_32, CMPEQ_AVX_32, 0xfu)
DEF_INT_ALIGNED(8, epi64x((long long)x), CMPEQ_SSE_64, CMPEQ_AVX_64, 0xffu)

static void scan_int_aligned(const struct matcher *m, const uint8_t *buf,
			     size_t p, size_t pend, struct hits *h)
{
	size_t w = m->width;

	p = (p + w - 1) / w * w;
	if (p >= pend)
		return;
	if (w == 2)
		(m->avx2 ? int_avx2_2 : int_sse2_2)(m->raw, buf, p, pend, h);
	else if (w == 4)
		(m->avx2 ? int_avx2_4 : int_sse2_4)(m->raw, buf, p, pend, h);
	else
		(m->avx2 ? int_avx2_8 : int_sse2_8)(m->raw, buf, p, pend, h);
}

/* Floats.  Aligned: lanes of the width.  Unaligned: one load per byte
 * shift of each 16- or 32-byte block, the hits of all shifts ordered by
 * offset in one mask. */
static inline bool in_f32(const struct matcher *m, const uint8_t *s)
{
	float x;

	memcpy(&x, s, 4);
	return x >= m->lo32 && x <= m->hi32;
}

static inline bool in_f64(const struct matcher *m, const uint8_t *s)
{
	double x;

	memcpy(&x, s, 8);
	return x >= m->lo64 && x <= m->hi64;
}

#define FLOAT_BODY(VEC, LOADU, SET1, CMPGE, CMPLE, AND, MOVEMASK, LANES, W, INF) \
	const VEC lo = SET1(LOV), hi = SET1(HIV);				\
	const size_t blk = LANES * W;   /* bytes per vector */			\
	if (aligned) {								\
		p = (p + W - 1) / W * W;					\
		for (; p + 4 * blk <= pend; p += 4 * blk) {			\
			unsigned mk[4];						\
			for (unsigned q = 0; q < 4; q++) {			\
				VEC x = LOADU((const void *)(buf + p + q * blk)); \
				mk[q] = (unsigned)MOVEMASK(AND(CMPGE(x, lo), CMPLE(x, hi))); \
			}							\
			if (LIKELY(!(mk[0] | mk[1] | mk[2] | mk[3])))		\
				continue;					\
			for (unsigned q = 0; q < 4; q++)			\
				for (unsigned l = 0; l < LANES; l++)		\
					if (mk[q] >> l & 1)			\
						hit(h, p + q * blk + l * W, 0);	\
		}								\
		for (; p < pend; p += W)					\
			if (INF(m, buf + p))					\
				hit(h, p, 0);					\
		return;								\
	}									\
	for (; p + blk <= pend; p += blk) {					\
		uint64_t any = 0, mk[W];					\
		for (unsigned k = 0; k < W; k++) {				\
			VEC x = LOADU((const void *)(buf + p + k));		\
			mk[k] = (unsigned)MOVEMASK(AND(CMPGE(x, lo), CMPLE(x, hi))); \
			any |= mk[k];						\
		}								\
		if (LIKELY(!any))						\
			continue;						\
		uint64_t bits = 0;						\
		for (unsigned k = 0; k < W; k++)				\
			for (unsigned l = 0; l < LANES; l++)			\
				if (mk[k] >> l & 1)				\
					bits |= (uint64_t)1 << (k + l * W);	\
		while (bits) {							\
			hit(h, p + (size_t)__builtin_ctzll(bits), 0);		\
			bits &= bits - 1;					\
		}								\
	}									\
	for (; p < pend; p++)							\
		if (INF(m, buf + p))						\
			hit(h, p, 0);

#define LOV m->lo32
#define HIV m->hi32
static void f32_sse2(const struct matcher *m, const uint8_t *buf, size_t p,
		     size_t pend, struct hits *h, bool aligned)
{
	FLOAT_BODY(__m128, _mm_loadu_ps, _mm_set1_ps, _mm_cmpge_ps, _mm_cmple_ps,
		   _mm_and_ps, _mm_movemask_ps, 4, 4, in_f32)
}
#define CMPGE_PS256(a, b) _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define CMPLE_PS256(a, b) _mm256_cmp_ps(a, b, _CMP_LE_OQ)
__attribute__((target("avx2")))
static void f32_avx2(const struct matcher *m, const uint8_t *buf, size_t p,
		     size_t pend, struct hits *h, bool aligned)
{
	FLOAT_BODY(__m256, _mm256_loadu_ps, _mm256_set1_ps, CMPGE_PS256, CMPLE_PS256,
		   _mm256_and_ps, _mm256_movemask_ps, 8, 4, in_f32)
}
#undef LOV
#undef HIV
#define LOV m->lo64
#define HIV m->hi64
static void f64_sse2(const struct matcher *m, const uint8_t *buf, size_t p,
		     size_t pend, struct hits *h, bool aligned)
{
	FLOAT_BODY(__m128d, _mm_loadu_pd, _mm_set1_pd, _mm_cmpge_pd, _mm_cmple_pd,
		   _mm_and_pd, _mm_movemask_pd, 2, 8, in_f64)
}
#define CMPGE_PD256(a, b) _mm256_cmp_pd(a, b, _CMP_GE_OQ)
#define CMPLE_PD256(a, b) _mm256_cmp_pd(a, b, _CMP_LE_OQ)
__attribute__((target("avx2")))
static void f64_avx2(const struct matcher *m, const uint8_t *buf, size_t p,
		     size_t pend, struct hits *h, bool aligned)
{
	FLOAT_BODY(__m256d, _mm256_loadu_pd, _mm256_set1_pd, CMPGE_PD256, CMPLE_PD256,
		   _mm256_and_pd, _mm256_movemask_pd, 4, 8, in_f64)
}
#undef LOV
#undef HIV

/* Every match starting in [a, own) of buf that lies within the readable
 * segment [a, b), hits in ascending offset order (per variant; chunk_result
 * merges the variants). */
void scan_range(const struct matcher *m, const uint8_t *buf, size_t a,
		size_t b, size_t own, struct hits *h)
{
	size_t pend;

	if (m->k == K_PATTERNS) {
		for (size_t i = 0; i < m->npat; i++) {
			size_t len = m->pats[i].len;

			if (b - a < len)
				continue;
			pend = b - len + 1 < own ? b - len + 1 : own;
			scan_pattern(m, &m->pats[i], buf, a, pend, h, (unsigned)i);
		}
		return;
	}
	if (b - a < m->width)
		return;
	pend = b - m->width + 1 < own ? b - m->width + 1 : own;
	switch (m->k) {
	case K_INT_ALIGNED:
		scan_int_aligned(m, buf, a, pend, h);
		break;
	case K_F32:
	case K_F32_UNALIGNED:
		(m->avx2 ? f32_avx2 : f32_sse2)(m, buf, a, pend, h, m->k == K_F32);
		break;
	case K_F64:
	case K_F64_UNALIGNED:
		(m->avx2 ? f64_avx2 : f64_sse2)(m, buf, a, pend, h, m->k == K_F64);
		break;
	default:
		break;
	}
}
