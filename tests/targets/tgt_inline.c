/* tgt_inline - a target for the symbolizer's differential test
 * (tests/e2e/sym_oracle.sh): -O2 -g code with deep inlining that crosses
 * files (tgt_inline.h, tgt_inline_family.h into this file and
 * tgt_inline2.c), loops, noinline functions, C recursion (direct and
 * mutual) and a few hundred functions.
 * usage: tgt_inline [SEED]          compute, print a checksum, exit 0
 *        tgt_inline --wait TRUTH    also write TRUTH (pid, objects, "func NAME
 *                                   0xRUNTIME" lines, state ready), then wait
 *                                   until killed
 * Families 0..39 are defined here, 40..71 in tgt_inline2.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_inline.h"
#include "truth.h"

#define TI_FAM 0
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 1
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 2
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 3
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 4
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 5
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 6
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 7
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 8
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 9
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 10
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 11
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 12
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 13
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 14
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 15
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 16
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 17
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 18
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 19
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 20
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 21
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 22
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 23
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 24
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 25
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 26
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 27
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 28
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 29
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 30
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 31
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 32
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 33
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 34
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 35
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 36
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 37
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 38
#include "tgt_inline_family.h"
#undef TI_FAM
#define TI_FAM 39
#include "tgt_inline_family.h"
#undef TI_FAM

typedef uint64_t (*ti_work_fn)(const uint64_t *, size_t);
typedef uint64_t (*ti_rec_fn)(uint64_t, unsigned);

static const ti_work_fn ti_works[] = {
	fam0_work,
	fam1_work,
	fam2_work,
	fam3_work,
	fam4_work,
	fam5_work,
	fam6_work,
	fam7_work,
	fam8_work,
	fam9_work,
	fam10_work,
	fam11_work,
	fam12_work,
	fam13_work,
	fam14_work,
	fam15_work,
	fam16_work,
	fam17_work,
	fam18_work,
	fam19_work,
	fam20_work,
	fam21_work,
	fam22_work,
	fam23_work,
	fam24_work,
	fam25_work,
	fam26_work,
	fam27_work,
	fam28_work,
	fam29_work,
	fam30_work,
	fam31_work,
	fam32_work,
	fam33_work,
	fam34_work,
	fam35_work,
	fam36_work,
	fam37_work,
	fam38_work,
	fam39_work,
};
static const ti_rec_fn ti_recs[] = {
	fam0_rec,
	fam1_rec,
	fam2_rec,
	fam3_rec,
	fam4_rec,
	fam5_rec,
	fam6_rec,
	fam7_rec,
	fam8_rec,
	fam9_rec,
	fam10_rec,
	fam11_rec,
	fam12_rec,
	fam13_rec,
	fam14_rec,
	fam15_rec,
	fam16_rec,
	fam17_rec,
	fam18_rec,
	fam19_rec,
	fam20_rec,
	fam21_rec,
	fam22_rec,
	fam23_rec,
	fam24_rec,
	fam25_rec,
	fam26_rec,
	fam27_rec,
	fam28_rec,
	fam29_rec,
	fam30_rec,
	fam31_rec,
	fam32_rec,
	fam33_rec,
	fam34_rec,
	fam35_rec,
	fam36_rec,
	fam37_rec,
	fam38_rec,
	fam39_rec,
};

__attribute__((noinline)) static int ti_is_odd(unsigned n);

/* Mutual recursion that gcc cannot turn into a loop across noinline. */
__attribute__((noinline)) static int ti_is_even(unsigned n)
{
	return n == 0 ? 1 : ti_is_odd(n - 1);
}

__attribute__((noinline)) static int ti_is_odd(unsigned n)
{
	return n == 0 ? 0 : ti_is_even(n - 1);
}

/* Recursive quicksort with the partition (and its inlined helpers) inlined. */
__attribute__((noinline)) static void ti_quicksort(uint64_t *v, size_t n)
{
	while (n > 1) {
		size_t p = ti_partition(v, n);
		if (p < n - 1 - p) {
			ti_quicksort(v, p);
			v += p + 1;
			n -= p + 1;
		} else {
			ti_quicksort(v + p + 1, n - 1 - p);
			n = p;
		}
	}
}

/* A small bytecode interpreter: a switch in a loop, each case inlining. */
__attribute__((noinline)) static uint64_t ti_interpret(const unsigned char *code, size_t len,
						      uint64_t x)
{
	uint64_t stack[16] = {0};
	unsigned sp = 0;
	for (size_t pc = 0; pc < len; pc++) {
		switch (code[pc] & 7) {
		case 0: stack[sp++ & 15] = x; break;
		case 1: x = ti_mix(x); break;
		case 2: x = ti_hash(x, stack[(sp - 1) & 15]); break;
		case 3: x = ti_rotate(x, code[pc] >> 3); break;
		case 4: x += stack[--sp & 15]; break;
		case 5: x = fam3_rec(x, code[pc] & 3); break;
		case 6: x ^= ti2_fold(stack, 16, 2); break;
		default: x = ~x; break;
		}
	}
	return x;
}

static void ti_fill(uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		v[i] = seed = ti_mix(seed + i);
}

static uint64_t ti_compute(uint64_t seed)
{
	uint64_t v[256];
	unsigned char code[64];
	ti_fill(v, 256, seed);
	uint64_t sum = 0;
	for (size_t i = 0; i < sizeof(ti_works) / sizeof(ti_works[0]); i++)
		sum += ti_works[i](v, 256) ^ ti_recs[i](v[i], 6);
	sum ^= ti2_run_all(v, 256);
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (unsigned char)(v[i] >> 13);
	sum += ti_interpret(code, sizeof(code), sum);
	ti_quicksort(v, 256);
	for (size_t i = 1; i < 256; i++)
		if (ti_mix(v[i - 1]) > ti_mix(v[i]))
			return 0; /* quicksort broken: checksum 0 tells */
	return sum + (uint64_t)ti_is_even((unsigned)(seed & 1023));
}

static void ti_write_truth(const char *path)
{
	FILE *f = truth_begin(path);
	truth_objects(f);
	fprintf(f, "func fam0_work 0x%llx\n", (unsigned long long)(uintptr_t)&fam0_work);
	fprintf(f, "func ti_quicksort 0x%llx\n", (unsigned long long)(uintptr_t)&ti_quicksort);
	fprintf(f, "func ti2_run_all 0x%llx\n", (unsigned long long)(uintptr_t)&ti2_run_all);
	fprintf(f, "state ready\n");
	truth_end(f, path);
}

int main(int argc, char **argv)
{
	int wait = argc >= 3 && strcmp(argv[1], "--wait") == 0;
	uint64_t seed = (!wait && argc >= 2) ? strtoull(argv[1], NULL, 0) : 42;
	if (wait)
		truth_init(TRUTH_MAX_SECONDS);
	printf("checksum 0x%016llx\n", (unsigned long long)ti_compute(seed));
	fflush(stdout);
	if (wait) {
		ti_write_truth(argv[2]);
		truth_wait_forever();
	}
	return 0;
}
