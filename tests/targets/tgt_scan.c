/* tgt_scan - values at known places, for `vigil scan` (tests/e2e/scan_*.sh).
 * usage: tgt_scan TRUTH [HEAP_MIB]      (HEAP_MIB >= 8, default 256)
 *
 * At start:
 *  (a) a HEAP_MIB heap block (malloc, every byte written 0) with the i32
 *      VALUE 0x5eed1234 planted at 8 places (4 aligned, 4 not: one across
 *      a page boundary and the 4 MiB boundary of its mapping, one in the
 *      last 4 bytes), and one copy in a local of main (the stack);
 *  (b) g_counter (.data), COUNTER_BASE + the number of SIGUSR1 received;
 *      g_decoy[3] (.data) hold COUNTER_BASE for good (what a narrowing
 *      must drop);
 *  (c) g_stats (.data), four u32 fields of which only .ticks changes: +STEP
 *      on each SIGUSR2;
 *  (d) g_root -> heap A, *(A + 24) -> heap B, CHAIN_VALUE at B + 40 (B
 *      more than 16 KiB past A: no shorter chain from g_root);
 *  (e) NUNMAP separate anonymous rw regions of 256 KiB (holes between
 *      them), each holding UNMAP_VALUE at offset 100, and one more
 *      region that stays (the "keep" region, UNMAP_VALUE at offset 100);
 *      on SIGHUP the NUNMAP regions are unmapped.
 * Signals are taken with a signalfd by the main loop: no handler and no
 * global flag changes, and the increments are `lock add` to memory, so the
 * new values never pass through a register that could be spilled to the
 * stack (a scan for them finds exactly the global).  After each signal the
 * truth is rewritten with the counts and "state uU-sS-hH".
 *
 * Truth lines besides pid/obj/sym (g_counter, g_decoy, g_stats, g_root)/state:
 *   value 0x5eed1234  value_dec N   the i32 planted, hex and decimal
 *   plant 0xADDR aligned|unaligned  (8 lines, ascending)
 *   stack 0xADDR                    the copy in main's frame
 *   heap_block 0xSTART SIZE
 *   counter_base N  usr1 N          g_counter == counter_base + usr1
 *   field 0xADDR  field_step N  usr2 N   g_stats.ticks (g_stats+4)
 *   chain_a 0xA  chain_b 0xB  chain_target 0xB+40  chain_value N
 *   unmap 0xSTART 0xEND             (NUNMAP lines)  keep 0xSTART 0xEND
 *   unmap_value N  hup N            hup 1: the unmap regions are gone
 * Built -O2 and -z now (no lazy binding writing .got.plt after the start). */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "truth.h"

#define VALUE 0x5eed1234u
#define VALUE_STR "1592594996"
#define COUNTER_BASE 0x3a7c0000u
#define COUNTER_BASE_STR "981204992"
#define STEP 1000003u
#define STEP_STR "1000003"
#define CHAIN_VALUE 0x77aa55ccu
#define CHAIN_VALUE_STR "2007651788"
#define UNMAP_VALUE 0x0ddba11fu
#define UNMAP_VALUE_STR "232497439"
#define NUNMAP 4
#define UNMAP_SIZE (256u << 10)
#define NPLANT 8

struct stats {
	uint32_t hp, ticks, mana, gold;
};

__attribute__((used)) volatile uint32_t g_counter = COUNTER_BASE;
__attribute__((used)) volatile uint32_t g_decoy[3] = { COUNTER_BASE, COUNTER_BASE, COUNTER_BASE };
__attribute__((used)) struct stats g_stats = { 0x11110001u, 0x22220000u, 0x33330003u, 0x44440004u };
__attribute__((used)) unsigned char *volatile g_root;

static unsigned char *block;
static size_t block_size;
static uintptr_t plants[NPLANT];
static unsigned char *unmap_regions[NUNMAP];
static unsigned char *keep_region;

static void die(const char *what)
{
	fprintf(stderr, "tgt_scan: %s failed\n", what);
	exit(99);
}

static int cmp_addr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

static void plant_value(void)
{
	uintptr_t b = (uintptr_t)block, map = b & ~(uintptr_t)4095;
	size_t s = block_size;
	plants[0] = b;                       /* aligned, first bytes */
	plants[1] = b + 4097;                /* unaligned */
	plants[2] = map + (4u << 20) - 2;    /* across a page and 4 MiB of the mapping */
	plants[3] = b + s / 2 + 4094;        /* unaligned, across a page */
	plants[4] = b + s / 2 + 8192;        /* aligned */
	plants[5] = b + s / 4 * 3 + 12;      /* aligned */
	plants[6] = b + s - 4096 + 1;        /* unaligned */
	plants[7] = b + s - 4;               /* aligned, last bytes */
	for (int i = 0; i < NPLANT; i++) {
		if (plants[i] < b || plants[i] + 4 > b + s)
			die("plant placement");
		uint32_t v = VALUE;
		memcpy((void *)plants[i], &v, 4);    /* an immediate store at -O2 */
	}
	qsort(plants, NPLANT, sizeof(plants[0]), cmp_addr);
}

static unsigned char *map_rw(void *at, size_t size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0);
	void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED || (at && p != at))
		die("mmap");
	memset(p, 0x5a, size);
	uint32_t v = UNMAP_VALUE;
	memcpy((unsigned char *)p + 100, &v, 4);
	return p;
}

/* NUNMAP + 1 regions with a hole after each, so none merges with another. */
static void map_regions(void)
{
	size_t span = 2 * (NUNMAP + 1) * (size_t)UNMAP_SIZE;
	unsigned char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		die("mmap reservation");
	if (munmap(r, span) != 0)
		die("munmap reservation");
	for (int i = 0; i < NUNMAP; i++)
		unmap_regions[i] = map_rw(r + 2 * i * (size_t)UNMAP_SIZE, UNMAP_SIZE);
	keep_region = map_rw(r + 2 * NUNMAP * (size_t)UNMAP_SIZE, UNMAP_SIZE);
}

static void write_truth(const char *path, volatile uint32_t *stack_copy,
			unsigned usr1, unsigned usr2, unsigned hup, int ready)
{
	FILE *f = truth_begin(path);
	truth_objects(f);
	truth_symbol(f, "g_counter", &g_counter, sizeof(g_counter));
	truth_symbol(f, "g_decoy", g_decoy, sizeof(g_decoy));
	truth_symbol(f, "g_stats", &g_stats, sizeof(g_stats));
	truth_symbol(f, "g_root", &g_root, sizeof(g_root));
	fputs("value 0x5eed1234\nvalue_dec " VALUE_STR "\n", f);
	for (int i = 0; i < NPLANT; i++)
		fprintf(f, "plant 0x%llx %s\n", (unsigned long long)plants[i],
			plants[i] % 4 ? "unaligned" : "aligned");
	fprintf(f, "stack 0x%llx\n", (unsigned long long)(uintptr_t)stack_copy);
	fprintf(f, "heap_block 0x%llx %zu\n", (unsigned long long)(uintptr_t)block, block_size);
	fputs("counter_base " COUNTER_BASE_STR "\n", f);
	fprintf(f, "usr1 %u\n", usr1);
	fprintf(f, "field 0x%llx\n", (unsigned long long)(uintptr_t)&g_stats.ticks);
	fputs("field_step " STEP_STR "\n", f);
	fprintf(f, "usr2 %u\n", usr2);
	unsigned char *a = g_root, *b = *(unsigned char **)(a + 24);
	fprintf(f, "chain_a 0x%llx\nchain_b 0x%llx\nchain_target 0x%llx\n",
		(unsigned long long)(uintptr_t)a, (unsigned long long)(uintptr_t)b,
		(unsigned long long)(uintptr_t)(b + 40));
	fputs("chain_value " CHAIN_VALUE_STR "\n", f);
	for (int i = 0; i < NUNMAP; i++)
		fprintf(f, "unmap 0x%llx 0x%llx\n", (unsigned long long)(uintptr_t)unmap_regions[i],
			(unsigned long long)(uintptr_t)(unmap_regions[i] + UNMAP_SIZE));
	fprintf(f, "keep 0x%llx 0x%llx\n", (unsigned long long)(uintptr_t)keep_region,
		(unsigned long long)(uintptr_t)(keep_region + UNMAP_SIZE));
	fputs("unmap_value " UNMAP_VALUE_STR "\n", f);
	fprintf(f, "hup %u\n", hup);
	if (ready)
		fputs("state ready\n", f);
	else
		fprintf(f, "state u%u-s%u-h%u\n", usr1, usr2, hup);
	truth_end(f, path);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	unsigned long mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
	if (mib < 8)
		die("HEAP_MIB >= 8");
	/* The signals are read from a signalfd: block them before anything. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		die("sigprocmask");
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd");

	block_size = mib << 20;
	block = malloc(block_size);
	if (!block)
		die("malloc");
	memset(block, 0, block_size);
	plant_value();
	volatile uint32_t stack_copy = VALUE;

	/* A spacer keeps B + 40 more than 4096 bytes past A: no depth-1 chain
	 * *(g_root)+OFF reaches it within the default --max-offset. */
	unsigned char *a = calloc(1, 64), *spacer = calloc(1, 16 << 10), *b = calloc(1, 128);
	if (!a || !spacer || !b || b < a + 4096)
		die("calloc");
	*(unsigned char **)(a + 24) = b;
	uint32_t cv = CHAIN_VALUE;
	memcpy(b + 40, &cv, 4);
	g_root = a;

	map_regions();

	unsigned usr1 = 0, usr2 = 0, hup = 0;
	write_truth(argv[1], &stack_copy, usr1, usr2, hup, 1);
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo == SIGUSR1) {
			__atomic_fetch_add(&g_counter, 1, __ATOMIC_RELAXED);
			usr1++;
		} else if (si.ssi_signo == SIGUSR2) {
			__atomic_fetch_add(&g_stats.ticks, STEP, __ATOMIC_RELAXED);
			usr2++;
		} else if (si.ssi_signo == SIGHUP && !hup) {
			for (int i = 0; i < NUNMAP; i++)
				if (munmap(unmap_regions[i], UNMAP_SIZE) != 0)
					die("munmap");
			hup = 1;
		}
		write_truth(argv[1], &stack_copy, usr1, usr2, hup, 0);
	}
}
