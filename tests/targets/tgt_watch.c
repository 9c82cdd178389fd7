/* tgt_watch - a target that counts its own writes, for `vigil watch`.
 * usage: tgt_watch TRUTH MODE [ARGS...]
 *   threads K   K register stores to g_cell, split over 4 threads: 2 exist
 *               before the go, 2 are created after it
 *   single K    K register stores to g_cell by the main thread
 *   exit K      the same, then exit(0) (no wait)
 *   kinds R     R times each: register store, immediate store and
 *               `lock add` to g_cell; `rep movsb` of 64 bytes into g_buf;
 *               read(2) of 64 bytes from a pipe into g_rbuf
 *   allkinds R  R times each: the 18 instruction kinds of storekinds.c
 *               (vgk_*), libc memcpy and memset, read(2) and the vDSO's
 *               clock_gettime, all into g_area.cell (g_area+56)
 *   libcstack R R times: main -> vgw_libc_outer -> vgw_libc_inner -> libc's
 *               memset of 64 bytes over g_buf (libc keeps no frame
 *               pointers: a frame-pointer walk from inside memset loses
 *               vgw_libc_inner, a CFI walk does not)
 *   follow M N  N leaf writes through g_ptr (gen 0), then M times: re-point
 *               g_ptr to the next object, sleep 100 ms, N leaf writes
 *   chain M N   the expression g_head->mid->tail->val (three pointer
 *               hops): N writes through it (gen 0), then M times: re-point
 *               the middle pointer g_head->mid to the next g_cmids[g]
 *               (whose tail is g_ctails[g]), sleep 100 ms, one write to
 *               the old tail's val (no longer reachable: a decoy that must
 *               not count), N writes through the path
 *   tls K       thread-local: two threads each write K values to their own
 *               copy of __thread g_tls_cell, thread 0 through
 *               vgw_store_tls_a, thread 1 through vgw_store_tls_b (each
 *               store its own label: the emulation can follow thread 0's
 *               alone, as a breakpoint on thread 0's copy does)
 *
 * Writes the truth (truth.h) with "state ready", waits for SIGUSR1 (the
 * go: sent once vigil has armed), does the writes, rewrites the truth with
 * what it did and "state done", then waits until killed (exit: exits).
 *
 * Every store of interest is inline asm in its own noipa function, with a
 * global label right after the store instruction: the label is the trap IP
 * a data breakpoint gives for that store, and its file offset is what
 * VIGIL_WATCH_EMULATE_TRAPS needs ("emu NAME 0xFILEOFF PATH" lines).  Each
 * such function is one source line, followed on that line by an enum
 * holding __LINE__: the line the store's DWARF row has ("line NAME N").
 *
 * Truth lines besides pid/obj/sym/state:
 *   mode MODE, arg NAME VALUE, line NAME N,
 *   emu NAME 0xFILEOFF 0xRUNTIME 0xSTATIC PATH   (the label after store NAME)
 *   thread IDX TID LATE COUNT 0xFIRSTVALUE   (threads/single/exit: thread IDX wrote
 *                                             FIRSTVALUE + i for i < COUNT)
 *   kinds_reg R 0xFIRSTVALUE, ... (kinds: what was written)
 *   gen IDX 0xPOINTER LEAFWRITES 0xFIRSTVALUE (follow; chain: POINTER is
 *                                             the tail, and 0xMIDSLOT follows:
 *                                             where the tail pointer was read)
 *   decoys N                                  (chain)
 *   tls IDX TID 0xADDR 0xERRNO COUNT 0xFIRST   (tls: thread IDX's g_tls_cell
 *                                             and errno are at ADDR and ERRNO;
 *                                             it wrote FIRST + i, i < COUNT) */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

#define NTHREADS 4
#define NEARLY 2
#define MAX_OBJS 64

struct obj {
	uint64_t tag;
	uint64_t field;                /* the leaf: --follow g_ptr+8 */
};

__attribute__((used, aligned(64))) uint64_t g_cell;
__attribute__((used, aligned(64))) unsigned char g_buf[64];
__attribute__((used, aligned(64))) unsigned char g_rbuf[64];
__attribute__((used, aligned(64))) struct obj g_objs[MAX_OBJS];
__attribute__((used, aligned(64))) struct obj *g_ptr = &g_objs[0];
/* Other aligned slots (five watches, three follows). */
__attribute__((used, aligned(64))) uint64_t g_more[8];
__attribute__((used, aligned(64))) struct obj *g_ptrs[4] = { &g_objs[1], &g_objs[2], &g_objs[3], &g_objs[4] };
/* chain: g_head->mid->tail->val. */
struct ctail { uint64_t tag; int64_t val; };
struct cmid { uint64_t tag; struct ctail *tail; };
struct chead { uint64_t tag; struct cmid *mid; };
__attribute__((used, aligned(64))) struct ctail g_ctails[MAX_OBJS];
__attribute__((used, aligned(64))) struct cmid g_cmids[MAX_OBJS];
__attribute__((used, aligned(64))) struct chead g_chead = { 1, &g_cmids[0] };
__attribute__((used, aligned(64))) struct chead *g_head = &g_chead;
__attribute__((used)) struct chead **g_headp = &g_head;   /* one hop too many */
__attribute__((used)) struct cmid *g_nomid;                /* a null hop */
/* tls: one copy per thread. */
__attribute__((used, aligned(64))) __thread uint64_t g_tls_cell;
/* Read-only: a write watch must be refused. */
__attribute__((used, aligned(64))) const uint64_t g_rodata = 0x0123456789abcdefULL;

/* The stores.  One line each (see above); noipa: no clone, no inlining, so
 * each label is emitted once. */
void vgw_store_reg(uint64_t v);
void vgw_store_imm(void);
void vgw_lock_add(void);
void vgw_rep_movsb(void *d, const void *s, size_t n);
long vgw_read(int fd);
void vgw_repoint(struct obj *p);
void vgw_store_leaf(struct obj *p, uint64_t v);
void vgw_set_mid(struct chead *h, struct cmid *m);
void vgw_store_val(struct ctail *t, int64_t v);
void vgw_store_tls_a(uint64_t v);
void vgw_store_tls_b(uint64_t v);
void vgw_store_decoy(struct ctail *t, int64_t v);
#define VGW __attribute__((noipa)) void
VGW vgw_store_reg(uint64_t v) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_reg\nvgw_after_reg:" : "=m"(g_cell) : "a"(v)); } enum { LINE_REG = __LINE__ };
VGW vgw_store_imm(void) { __asm__ volatile("movq $0x1234abcd, %0\n\t.globl vgw_after_imm\nvgw_after_imm:" : "=m"(g_cell)); } enum { LINE_IMM = __LINE__ };
VGW vgw_lock_add(void) { __asm__ volatile("lock addq $1, %0\n\t.globl vgw_after_lock\nvgw_after_lock:" : "+m"(g_cell)); } enum { LINE_LOCK = __LINE__ };
VGW vgw_rep_movsb(void *d, const void *s, size_t n) { __asm__ volatile("rep movsb\n\t.globl vgw_after_rep\nvgw_after_rep:" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); } enum { LINE_REP = __LINE__ };
__attribute__((noipa)) long vgw_read(int fd) { return read(fd, g_rbuf, sizeof(g_rbuf)); } enum { LINE_READ = __LINE__ };
VGW vgw_repoint(struct obj *p) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_repoint\nvgw_after_repoint:" : "=m"(g_ptr) : "r"(p)); } enum { LINE_REPOINT = __LINE__ };
VGW vgw_store_leaf(struct obj *p, uint64_t v) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_leaf\nvgw_after_leaf:" : "=m"(p->field) : "a"(v)); } enum { LINE_LEAF = __LINE__ };
VGW vgw_set_mid(struct chead *h, struct cmid *m) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_setmid\nvgw_after_setmid:" : "=m"(h->mid) : "r"(m)); } enum { LINE_SETMID = __LINE__ };
VGW vgw_store_val(struct ctail *t, int64_t v) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_val\nvgw_after_val:" : "=m"(t->val) : "a"(v)); } enum { LINE_VAL = __LINE__ };
VGW vgw_store_tls_a(uint64_t v) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_tls_a\nvgw_after_tls_a:" : "=m"(g_tls_cell) : "a"(v)); } enum { LINE_TLS_A = __LINE__ };
VGW vgw_store_tls_b(uint64_t v) { __asm__ volatile("movq %1, %0\n\t.globl vgw_after_tls_b\nvgw_after_tls_b:" : "=m"(g_tls_cell) : "a"(v)); } enum { LINE_TLS_B = __LINE__ };
VGW vgw_store_decoy(struct ctail *t, int64_t v) { __asm__ volatile("movq %1, %0" : "=m"(t->val) : "a"(v)); }

extern char vgw_after_setmid[], vgw_after_val[], vgw_after_tls_a[], vgw_after_tls_b[];
extern char vgw_after_reg[], vgw_after_imm[], vgw_after_lock[], vgw_after_rep[],
	vgw_after_repoint[], vgw_after_leaf[];


/* allkinds: every way of writing memory that storekinds.c (the recorded
 * hardware traces) exercises, each writing the 8-byte cell g_area.cell
 * (g_area+56), one line each with a label after the store (the trap IP of
 * the last or only trap; emulation puts its uprobe there).  libc's
 * memcpy/memset, read(2) and the vDSO's clock_gettime write it too, but
 * have no label: real breakpoints only. */
struct area {
	_Alignas(64) unsigned char before[56];
	uint64_t cell;                 /* the watched 8 bytes: g_area+56 */
	unsigned char after[64];
};
struct sixteen { unsigned char b[16]; };
__attribute__((used)) struct area g_area;
static unsigned char g_src[128];
static uint64_t g_old;
#define KL(name) ".globl vgk_after_" #name "\nvgk_after_" #name ":"

__attribute__((noipa)) void vgk_mov_reg(uint64_t v);
__attribute__((noipa)) void vgk_mov_imm(void);
__attribute__((noipa)) void vgk_mov_byte_mid(void);
__attribute__((noipa)) void vgk_straddle(uint64_t v);
__attribute__((noipa)) void vgk_lock_add(void);
__attribute__((noipa)) void vgk_add_reg(uint64_t v);
__attribute__((noipa)) void vgk_inc(void);
__attribute__((noipa)) void vgk_bts(void);
__attribute__((noipa)) void vgk_xchg(uint64_t v);
__attribute__((noipa)) void vgk_cmpxchg(uint64_t v);
__attribute__((noipa)) void vgk_setcc(int a, int b);
__attribute__((noipa)) void vgk_pop_mem(uint64_t v);
__attribute__((noipa)) void vgk_movnti(uint64_t v);
__attribute__((noipa)) void vgk_sse_store(uint64_t v);
__attribute__((noipa)) void vgk_stosq(uint64_t v);
__attribute__((noipa)) void vgk_rep_movsb(void);
__attribute__((noipa)) void vgk_rep_movsq(void);
__attribute__((noipa)) void vgk_rep_stosb(void);
__attribute__((noipa)) void vgk_mov_reg(uint64_t v) { __asm__ volatile("movq %1, %0\n\t" KL(mov_reg) : "=m"(g_area.cell) : "r"(v)); } enum { LINE_K_MOV_REG = __LINE__ };
__attribute__((noipa)) void vgk_mov_imm(void) { __asm__ volatile("movq $0x1234abcd, %0\n\t" KL(mov_imm) : "=m"(g_area.cell)); } enum { LINE_K_MOV_IMM = __LINE__ };
__attribute__((noipa)) void vgk_mov_byte_mid(void) { __asm__ volatile("movb $0x5a, %0\n\t" KL(mov_byte_mid) : "=m"(((unsigned char *)&g_area.cell)[3])); } enum { LINE_K_MOV_BYTE_MID = __LINE__ };
__attribute__((noipa)) void vgk_straddle(uint64_t v) { __asm__ volatile("movq %1, %0\n\t" KL(straddle) : "=m"(*(uint64_t *)((char *)&g_area.cell + 4)) : "r"(v)); } enum { LINE_K_STRADDLE = __LINE__ };
__attribute__((noipa)) void vgk_lock_add(void) { __asm__ volatile("lock addq $1, %0\n\t" KL(lock_add) : "+m"(g_area.cell)); } enum { LINE_K_LOCK_ADD = __LINE__ };
__attribute__((noipa)) void vgk_add_reg(uint64_t v) { __asm__ volatile("addq %1, %0\n\t" KL(add_reg) : "+m"(g_area.cell) : "r"(v)); } enum { LINE_K_ADD_REG = __LINE__ };
__attribute__((noipa)) void vgk_inc(void) { __asm__ volatile("incq %0\n\t" KL(inc) : "+m"(g_area.cell)); } enum { LINE_K_INC = __LINE__ };
__attribute__((noipa)) void vgk_bts(void) { __asm__ volatile("btsq $7, %0\n\t" KL(bts) : "+m"(g_area.cell)); } enum { LINE_K_BTS = __LINE__ };
__attribute__((noipa)) void vgk_xchg(uint64_t v) { __asm__ volatile("xchgq %1, %0\n\t" KL(xchg) : "+m"(g_area.cell), "+r"(v)); } enum { LINE_K_XCHG = __LINE__ };
__attribute__((noipa)) void vgk_cmpxchg(uint64_t v) { __asm__ volatile("lock cmpxchgq %2, %0\n\t" KL(cmpxchg) : "+m"(g_area.cell), "+a"(g_old) : "r"(v)); } enum { LINE_K_CMPXCHG = __LINE__ };
__attribute__((noipa)) void vgk_setcc(int a, int b) { __asm__ volatile("cmpl %2, %1; setl %0\n\t" KL(setcc) : "=m"(*(unsigned char *)&g_area.cell) : "r"(a), "r"(b)); } enum { LINE_K_SETCC = __LINE__ };
__attribute__((noipa)) void vgk_pop_mem(uint64_t v) { __asm__ volatile("pushq %1; popq %0\n\t" KL(pop_mem) : "=m"(g_area.cell) : "r"(v)); } enum { LINE_K_POP_MEM = __LINE__ };
__attribute__((noipa)) void vgk_movnti(uint64_t v) { __asm__ volatile("movnti %1, %0\n\t" KL(movnti) : "=m"(g_area.cell) : "r"(v)); } enum { LINE_K_MOVNTI = __LINE__ };
__attribute__((noipa)) void vgk_sse_store(uint64_t v) { __asm__ volatile("movq %1, %%xmm0; punpcklqdq %%xmm0, %%xmm0; movdqu %%xmm0, %0\n\t" KL(sse_store) : "=m"(*(struct sixteen *)((char *)&g_area.cell - 8)) : "r"(v) : "xmm0"); } enum { LINE_K_SSE_STORE = __LINE__ };
__attribute__((noipa)) void vgk_stosq(uint64_t v) { void *d = &g_area.cell; __asm__ volatile("stosq\n\t" KL(stosq) : "+D"(d) : "a"(v) : "memory"); } enum { LINE_K_STOSQ = __LINE__ };
__attribute__((noipa)) void vgk_rep_movsb(void) { void *d = &g_area, *sp = g_src; size_t n = 64; __asm__ volatile("rep movsb\n\t" KL(rep_movsb) : "+D"(d), "+S"(sp), "+c"(n) : : "memory"); } enum { LINE_K_REP_MOVSB = __LINE__ };
__attribute__((noipa)) void vgk_rep_movsq(void) { void *d = &g_area, *sp = g_src; size_t n = 8; __asm__ volatile("rep movsq\n\t" KL(rep_movsq) : "+D"(d), "+S"(sp), "+c"(n) : : "memory"); } enum { LINE_K_REP_MOVSQ = __LINE__ };
__attribute__((noipa)) void vgk_rep_stosb(void) { void *d = &g_area; size_t n = 64; __asm__ volatile("rep stosb\n\t" KL(rep_stosb) : "+D"(d), "+c"(n) : "a"(0x77) : "memory"); } enum { LINE_K_REP_STOSB = __LINE__ };
__attribute__((noipa)) long vgk_read(int fd);
__attribute__((noipa)) long vgk_read(int fd) { return read(fd, &g_area, 64); } enum { LINE_K_READ = __LINE__ };
__attribute__((noipa)) void vgk_clock(void);
__attribute__((noipa)) void vgk_clock(void) { clock_gettime(CLOCK_MONOTONIC, (struct timespec *)&g_area.cell); } enum { LINE_K_CLOCK = __LINE__ };
static void *(*volatile g_memcpy)(void *, const void *, size_t) = memcpy;   /* libc's own */
static void *(*volatile g_memset)(void *, int, size_t) = memset;
extern char vgk_after_mov_reg[], vgk_after_mov_imm[], vgk_after_mov_byte_mid[], vgk_after_straddle[], vgk_after_lock_add[], vgk_after_add_reg[], vgk_after_inc[], vgk_after_bts[], vgk_after_xchg[], vgk_after_cmpxchg[], vgk_after_setcc[], vgk_after_pop_mem[], vgk_after_movnti[], vgk_after_sse_store[], vgk_after_stosq[], vgk_after_rep_movsb[], vgk_after_rep_movsq[], vgk_after_rep_stosb[];
static const struct { const char *name; const char *label; int line; } allkinds[] = {
	{ "mov_reg", vgk_after_mov_reg, LINE_K_MOV_REG },
	{ "mov_imm", vgk_after_mov_imm, LINE_K_MOV_IMM },
	{ "mov_byte_mid", vgk_after_mov_byte_mid, LINE_K_MOV_BYTE_MID },
	{ "straddle", vgk_after_straddle, LINE_K_STRADDLE },
	{ "lock_add", vgk_after_lock_add, LINE_K_LOCK_ADD },
	{ "add_reg", vgk_after_add_reg, LINE_K_ADD_REG },
	{ "inc", vgk_after_inc, LINE_K_INC },
	{ "bts", vgk_after_bts, LINE_K_BTS },
	{ "xchg", vgk_after_xchg, LINE_K_XCHG },
	{ "cmpxchg", vgk_after_cmpxchg, LINE_K_CMPXCHG },
	{ "setcc", vgk_after_setcc, LINE_K_SETCC },
	{ "pop_mem", vgk_after_pop_mem, LINE_K_POP_MEM },
	{ "movnti", vgk_after_movnti, LINE_K_MOVNTI },
	{ "sse_store", vgk_after_sse_store, LINE_K_SSE_STORE },
	{ "stosq", vgk_after_stosq, LINE_K_STOSQ },
	{ "rep_movsb", vgk_after_rep_movsb, LINE_K_REP_MOVSB },
	{ "rep_movsq", vgk_after_rep_movsq, LINE_K_REP_MOVSQ },
	{ "rep_stosb", vgk_after_rep_stosb, LINE_K_REP_STOSB },
};

/* libcstack: two frames of ours above libc's memset, each a call (the
 * empty asm after it: no tail jump), so each is on the stack. */
__attribute__((noipa)) void vgw_libc_inner(void);
__attribute__((noipa)) void vgw_libc_outer(void);
__attribute__((noipa)) void vgw_libc_inner(void) { g_memset(g_buf, 0x5a, 64); __asm__ volatile("" ::: "memory"); }
__attribute__((noipa)) void vgw_libc_outer(void) { vgw_libc_inner(); __asm__ volatile("" ::: "memory"); }

static const char *truth_path, *mode;
static long arg1, arg2;

/* threads / exit */
static pthread_barrier_t start_bar;
static struct {
	pid_t tid;
	int late;
	long count;
	uint64_t first;
} th[NTHREADS];

/* kinds */
static uint64_t kinds_first_reg;

/* follow, chain */
static struct {
	uint64_t pointer;
	long writes;
	uint64_t first;
	uint64_t mid_slot;
} gens[MAX_OBJS];
static long chain_decoys;

/* tls */
#define NTLS 2
static struct {
	pid_t tid;
	uint64_t addr, errno_addr, first;
	long count;
} tls[NTLS];

static void die(const char *what)
{
	fprintf(stderr, "tgt_watch: %s\n", what);
	exit(99);
}

static void write_truth(const char *state)
{
	FILE *f = truth_begin(truth_path);
	truth_objects(f);
	fprintf(f, "mode %s\n", mode);
	fprintf(f, "arg 1 %ld\narg 2 %ld\n", arg1, arg2);
	truth_symbol(f, "g_cell", &g_cell, sizeof(g_cell));
	truth_symbol(f, "g_buf", g_buf, sizeof(g_buf));
	truth_symbol(f, "g_rbuf", g_rbuf, sizeof(g_rbuf));
	truth_symbol(f, "g_ptr", &g_ptr, sizeof(g_ptr));
	truth_symbol(f, "g_objs", g_objs, sizeof(g_objs));
	truth_symbol(f, "g_more", g_more, sizeof(g_more));
	truth_symbol(f, "g_ptrs", g_ptrs, sizeof(g_ptrs));
	truth_symbol(f, "g_rodata", &g_rodata, sizeof(g_rodata));
	fprintf(f, "line reg %d\nline imm %d\nline lock %d\nline rep %d\nline read %d\n"
		"line repoint %d\nline leaf %d\n", LINE_REG, LINE_IMM, LINE_LOCK, LINE_REP,
		LINE_READ, LINE_REPOINT, LINE_LEAF);
	truth_emu(f, "reg", vgw_after_reg);
	truth_emu(f, "imm", vgw_after_imm);
	truth_emu(f, "lock", vgw_after_lock);
	truth_emu(f, "rep", vgw_after_rep);
	truth_emu(f, "repoint", vgw_after_repoint);
	truth_emu(f, "leaf", vgw_after_leaf);
	truth_emu(f, "setmid", vgw_after_setmid);
	truth_emu(f, "val", vgw_after_val);
	fprintf(f, "line setmid %d\nline val %d\n", LINE_SETMID, LINE_VAL);
	truth_emu(f, "tls_a", vgw_after_tls_a);
	truth_emu(f, "tls_b", vgw_after_tls_b);
	fprintf(f, "line tls_a %d\nline tls_b %d\n", LINE_TLS_A, LINE_TLS_B);
	if (!strcmp(mode, "tls"))
		for (int i = 0; i < NTLS; i++)
			fprintf(f, "tls %d %d 0x%llx 0x%llx %ld 0x%llx\n", i, (int)tls[i].tid,
				(unsigned long long)tls[i].addr, (unsigned long long)tls[i].errno_addr,
				!strcmp(state, "done") ? tls[i].count : 0L,
				(unsigned long long)tls[i].first);
	truth_symbol(f, "g_head", &g_head, sizeof(g_head));
	truth_symbol(f, "g_chead", &g_chead, sizeof(g_chead));
	truth_symbol(f, "g_cmids", g_cmids, sizeof(g_cmids));
	if (!strcmp(mode, "allkinds")) {
		truth_symbol(f, "g_area", &g_area, sizeof(g_area));
		for (size_t i = 0; i < sizeof(allkinds) / sizeof(allkinds[0]); i++) {
			char name[40];
			snprintf(name, sizeof(name), "k_%s", allkinds[i].name);
			fprintf(f, "line %s %d\n", name, allkinds[i].line);
			truth_emu(f, name, allkinds[i].label);
		}
		fprintf(f, "line k_read %d\nline k_clock %d\n", LINE_K_READ, LINE_K_CLOCK);
	}
	if (!strcmp(state, "done")) {
		if (!strcmp(mode, "threads") || !strcmp(mode, "single") || !strcmp(mode, "exit")) {
			int n = !strcmp(mode, "threads") ? NTHREADS : 1;
			long total = 0;
			for (int i = 0; i < n; i++) {
				fprintf(f, "thread %d %d %d %ld 0x%llx\n", i, (int)th[i].tid, th[i].late,
					th[i].count, (unsigned long long)th[i].first);
				total += th[i].count;
			}
			fprintf(f, "total %ld\n", total);
		} else if (!strcmp(mode, "kinds")) {
			fprintf(f, "kinds_reg %ld 0x%llx\n", arg1, (unsigned long long)kinds_first_reg);
			fprintf(f, "kinds_imm %ld 0x1234abcd\n", arg1);
			fprintf(f, "kinds_lock %ld\nkinds_rep %ld 64\nkinds_read %ld 64\n", arg1, arg1, arg1);
		} else if (!strcmp(mode, "follow")) {
			for (long g = 0; g <= arg1; g++)
				fprintf(f, "gen %ld 0x%llx %ld 0x%llx\n", g, (unsigned long long)gens[g].pointer,
					gens[g].writes, (unsigned long long)gens[g].first);
		} else if (!strcmp(mode, "chain")) {
			for (long g = 0; g <= arg1; g++)
				fprintf(f, "gen %ld 0x%llx %ld 0x%llx 0x%llx\n", g,
					(unsigned long long)gens[g].pointer, gens[g].writes,
					(unsigned long long)gens[g].first,
					(unsigned long long)gens[g].mid_slot);
			fprintf(f, "decoys %ld\n", chain_decoys);
		}
		fprintf(f, "g_cell 0x%llx\n", (unsigned long long)g_cell);
	}
	fprintf(f, "state %s\n", state);
	truth_end(f, truth_path);
}

static void do_reg_stores(int idx)
{
	__atomic_store_n(&th[idx].tid, gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&start_bar);      /* early threads: wait for the go */
	for (long i = 0; i < th[idx].count; i++) {
		vgw_store_reg(th[idx].first + (uint64_t)i);
		/* Paced: 4 threads trapping flat out filled vigil's 1 MiB ring
		 * before an ASan vigil on a loaded machine drained it (423 of
		 * 2000 samples lost, reported as such).  This test is about
		 * whose write each sample is; a loss is counted and reported
		 * (test_perf_event checks its accounting). */
		if (i % 50 == 49)
			nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
}

static void *tls_worker(void *arg)
{
	int idx = (int)(long)arg;

	tls[idx].addr = (uint64_t)(uintptr_t)&g_tls_cell;
	tls[idx].errno_addr = (uint64_t)(uintptr_t)&errno;
	__atomic_store_n(&tls[idx].tid, gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&start_bar);      /* the go */
	for (long i = 0; i < tls[idx].count; i++) {
		if (idx == 0)
			vgw_store_tls_a(tls[idx].first + (uint64_t)i);
		else
			vgw_store_tls_b(tls[idx].first + (uint64_t)i);
	}
	return NULL;
}

static void *worker(void *arg)
{
	do_reg_stores((int)(long)arg);
	return NULL;
}

static void wait_go(void)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigwait(&set, &sig) != 0)
		die("sigwait");
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		die("usage: tgt_watch TRUTH threads|single|exit|kinds K | follow M N");
	truth_init(TRUTH_MAX_SECONDS);
	truth_path = argv[1];
	mode = argv[2];
	for (int i = 0; i < MAX_OBJS; i++)   /* g_head->mid->tail->val reachable in every mode */
		g_cmids[i].tail = &g_ctails[i];
	arg1 = strtol(argv[3], NULL, 10);
	arg2 = argc > 4 ? strtol(argv[4], NULL, 10) : 0;

	/* SIGUSR1 blocked in every thread: the main thread takes it by sigwait. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (!strcmp(mode, "threads")) {
		pthread_t t[NTHREADS];
		/* 4 workers + main (which only releases them). */
		pthread_barrier_init(&start_bar, NULL, NTHREADS + 1);
		for (int i = 0; i < NTHREADS; i++) {
			th[i].late = i >= NEARLY;
			th[i].count = arg1 / NTHREADS + (i < arg1 % NTHREADS);
			th[i].first = ((uint64_t)(i + 1) << 40) | 0x5eed00000ULL;
		}
		for (int i = 0; i < NEARLY; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(long)i))
				die("pthread_create");
		while (!__atomic_load_n(&th[0].tid, __ATOMIC_ACQUIRE) ||
		       !__atomic_load_n(&th[1].tid, __ATOMIC_ACQUIRE))
			msleep(1);
		write_truth("ready");
		wait_go();
		for (int i = NEARLY; i < NTHREADS; i++) {
			int e = pthread_create(&t[i], NULL, worker, (void *)(long)i);
			if (e) {
				fprintf(stderr, "tgt_watch: pthread_create after the go: %s\n", strerror(e));
				exit(99);
			}
		}
		pthread_barrier_wait(&start_bar);
		for (int i = 0; i < NTHREADS; i++)
			pthread_join(t[i], NULL);
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "single") || !strcmp(mode, "exit")) {
		pthread_barrier_init(&start_bar, NULL, 1);
		th[0].count = arg1;
		th[0].first = 0xe1100000ULL;
		write_truth("ready");
		wait_go();
		do_reg_stores(0);
		write_truth("done");
		if (!strcmp(mode, "exit"))
			return 0;
		truth_wait_forever();
	} else if (!strcmp(mode, "kinds")) {
		unsigned char src[64];
		int p[2];
		if (pipe(p))
			die("pipe");
		memset(src, 0x77, sizeof(src));
		kinds_first_reg = 0x7e600000ULL;
		write_truth("ready");
		wait_go();
		for (long i = 0; i < arg1; i++) {
			vgw_store_reg(kinds_first_reg + (uint64_t)i);
			vgw_store_imm();
			vgw_lock_add();
			vgw_rep_movsb(g_buf, src, sizeof(src));
			if (write(p[1], src, sizeof(src)) != (ssize_t)sizeof(src))
				die("write to the pipe");
			if (vgw_read(p[0]) != (long)sizeof(g_rbuf))
				die("read from the pipe");
		}
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "allkinds")) {
		int p[2];
		if (pipe(p))
			die("pipe");
		for (int i = 0; i < 128; i++)
			g_src[i] = (unsigned char)(0x80 + i);
		write_truth("ready");
		wait_go();
		for (long r = 0; r < arg1; r++) {
			vgk_mov_reg(0x7e600000 + (uint64_t)r); vgk_mov_imm(); vgk_mov_byte_mid();
			vgk_straddle(0xabcdef00 + (uint64_t)r); vgk_lock_add(); vgk_add_reg(3); vgk_inc();
			vgk_bts(); vgk_xchg(0x55 + (uint64_t)r); vgk_cmpxchg(0x66 + (uint64_t)r);
			vgk_setcc((int)r, 1); vgk_pop_mem(0x99 + (uint64_t)r); vgk_movnti(0x44 + (uint64_t)r);
			vgk_sse_store(0x1111111111111111ULL); vgk_stosq(0x88 + (uint64_t)r);
			vgk_rep_movsb(); vgk_rep_movsq(); vgk_rep_stosb();
			g_memcpy(&g_area, g_src, 64);
			g_memset(&g_area, 0x33, 64);
			if (write(p[1], g_src, 64) != 64 || vgk_read(p[0]) != 64)
				die("pipe");
			vgk_clock();
		}
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "libcstack")) {
		write_truth("ready");
		wait_go();
		for (long r = 0; r < arg1; r++)
			vgw_libc_outer();
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "follow")) {
		if (arg1 < 0 || arg1 >= MAX_OBJS || arg2 < 0)
			die("follow M N: M < 64");
		write_truth("ready");
		wait_go();
		for (long g = 0; g <= arg1; g++) {
			if (g > 0) {
				vgw_repoint(&g_objs[g]);
				msleep(100);           /* vigil re-binds before the leaf writes */
			}
			gens[g].pointer = (uint64_t)(uintptr_t)g_ptr;
			gens[g].writes = arg2;
			gens[g].first = ((uint64_t)g << 32) | 0xf0000ULL;
			for (long i = 0; i < arg2; i++)
				vgw_store_leaf(g_ptr, gens[g].first + (uint64_t)i);
		}
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "tls")) {
		pthread_t t[NTLS];

		pthread_barrier_init(&start_bar, NULL, NTLS + 1);
		for (int i = 0; i < NTLS; i++) {
			tls[i].count = arg1;
			tls[i].first = ((uint64_t)(i + 1) << 32) | 0x71500ULL;
			if (pthread_create(&t[i], NULL, tls_worker, (void *)(long)i))
				die("pthread_create");
		}
		for (int i = 0; i < NTLS; i++)
			while (!__atomic_load_n(&tls[i].tid, __ATOMIC_ACQUIRE))
				msleep(1);
		write_truth("ready");
		wait_go();
		pthread_barrier_wait(&start_bar);
		for (int i = 0; i < NTLS; i++)
			pthread_join(t[i], NULL);
		write_truth("done");
		truth_wait_forever();
	} else if (!strcmp(mode, "chain")) {
		if (arg1 < 0 || arg1 >= MAX_OBJS || arg2 < 0)
			die("chain M N: M < 64");
		write_truth("ready");
		wait_go();
		for (long g = 0; g <= arg1; g++) {
			if (g > 0) {
				struct ctail *old = g_head->mid->tail;

				vgw_set_mid(g_head, &g_cmids[g]);
				msleep(100);           /* vigil re-binds before the writes */
				vgw_store_decoy(old, -1);   /* unreachable now: not counted */
				chain_decoys++;
			}
			gens[g].pointer = (uint64_t)(uintptr_t)g_head->mid->tail;
			gens[g].mid_slot = (uint64_t)(uintptr_t)&g_head->mid->tail;
			gens[g].writes = arg2;
			gens[g].first = (uint64_t)-((g + 1) * 1000);   /* negative: a signed leaf */
			for (long i = 0; i < arg2; i++)
				vgw_store_val(g_head->mid->tail, (int64_t)(gens[g].first + (uint64_t)i));
		}
		write_truth("done");
		truth_wait_forever();
	}
	die("unknown mode");
}
