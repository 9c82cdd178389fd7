/* tgt_sym - code at known lines, for `vigil sym` (built -O2 -g).
 * usage: tgt_sym TRUTHFILE [now] [LIB...]
 *
 * Runs every function below once, then writes for each address a
 * symbolizer must explain a "sym NAME ..." line (runtime and static
 * address) and its expected frames ("frame NAME IDX FUNCTION FILE LINE
 * INLINED", innermost first), and "state ready".  The lines are __LINE__
 * values the functions recorded while running:
 *   sym_leaf, sym_multi   &function: the line of the first statement, which
 *                         shares the line of the signature, so the entry
 *                         row of the line table is that line whatever
 *                         statement gcc schedules first
 *   ret_call              a return address taken by a noinline callee: in
 *                         sym_caller, on the line of the call
 *   call_inline           return address - 1 (in the call instruction) of a
 *                         call made inside two inlined helpers: sym_inl_inner
 *                         (inlined) <- sym_inl_outer (inlined) <- sym_outer
 *   ret_inline            that return address itself: in whichever of the
 *                         three scopes gcc scheduled the next instruction, so
 *                         its frames are a tail of those of call_inline
 * The callers and the inlined helpers are written on one line each, so
 * that every instruction of a scope is on its recorded line: the answers do
 * not depend on how gcc schedules (e.g. the code after a call).
 * Then for each LIB (a libvgsym*.so): waits for SIGUSR1 (unless "now"),
 * dlcloses the previous LIB, dlopens this one, and rewrites the truth with
 * "sym libfn ..." and its frame and "state libN" (N counts from 1).
 *
 * Built twice: tgt_sym_alt (-DTGT_SYM_ALT) has one more function first, so
 * the same functions sit at other addresses (a "different binary"). */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "libvgsym.h"
#include "truth.h"

#define NOINLINE __attribute__((noinline, noclone, used))
#define ALWAYS_INLINE static inline __attribute__((always_inline))

volatile int sym_sink;
static volatile int leaf_line, multi_line, call_line, inl_inner_line,
	inl_outer_line, outer_line;
static void *volatile callee_ret, *volatile inl_ret;

#ifdef TGT_SYM_ALT
int sym_alt_first(int x);
NOINLINE int sym_alt_first(int x)
{
	for (int i = 0; i < x; i++)
		sym_sink += i * x ^ (sym_sink >> 3);
	for (int i = 0; i < x; i++)
		sym_sink -= i * 7 ^ (sym_sink << 2);
	return sym_sink;
}
#endif

int sym_leaf(int x);
int sym_multi(int x);
int sym_callee(int x);
int sym_caller(int x);
void *sym_probe(void);
int sym_outer(int x);

NOINLINE int sym_leaf(int x) { leaf_line = __LINE__; return x * 3 + sym_sink; }

NOINLINE int sym_multi(int x) { multi_line = __LINE__;
	int y = x * 3;
	for (int i = 0; i < x; i++)
		y += sym_sink * i;
	return y;
}

NOINLINE int sym_callee(int x)
{
	callee_ret = __builtin_return_address(0);
	return x + sym_sink;
}

NOINLINE int sym_caller(int x) { int r = sym_callee(x) * 5; sym_sink += r; call_line = __LINE__; return r + 1; }

NOINLINE void *sym_probe(void)
{
	return __builtin_return_address(0);
}

ALWAYS_INLINE int sym_inl_inner(int x) { inl_ret = sym_probe(); inl_inner_line = __LINE__; return x + 1; }

ALWAYS_INLINE int sym_inl_outer(int x) { int y = x * 2; y += sym_inl_inner(y); inl_outer_line = __LINE__; return y; }

NOINLINE int sym_outer(int x) { int z = sym_inl_outer(x) * 3; outer_line = __LINE__; return z - sym_sink; }

static void write_truth(const char *path, const char *state,
			const struct vgsym_info *lib)
{
	FILE *f = truth_begin(path);
	truth_objects(f);
	truth_symbol(f, "sym_leaf", (void *)sym_leaf, 1);
	truth_frame(f, "sym_leaf", 0, "sym_leaf", __FILE__, leaf_line, 0);
	truth_symbol(f, "sym_multi", (void *)sym_multi, 1);
	truth_frame(f, "sym_multi", 0, "sym_multi", __FILE__, multi_line, 0);
	truth_symbol(f, "ret_call", callee_ret, 1);
	truth_frame(f, "ret_call", 0, "sym_caller", __FILE__, call_line, 0);
	/* The call instruction is in the innermost scope; the instruction after
	 * it may be scheduled code of any of the three (the chain's tail). */
	const char *inl[] = {"call_inline", "ret_inline"};
	for (int i = 0; i < 2; i++) {
		truth_symbol(f, inl[i], (char *)inl_ret - (i == 0), 1);
		truth_frame(f, inl[i], 0, "sym_inl_inner", __FILE__, inl_inner_line, 1);
		truth_frame(f, inl[i], 1, "sym_inl_outer", __FILE__, inl_outer_line, 1);
		truth_frame(f, inl[i], 2, "sym_outer", __FILE__, outer_line, 0);
	}
	if (lib) {
		truth_symbol(f, "libfn", lib->address, 1);
		truth_frame(f, "libfn", 0, lib->function, lib->file, lib->line, 0);
	}
	fprintf(f, "state %s\n", state);
	truth_end(f, path);
}

static void *load(const char *path, struct vgsym_info *info)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "tgt_sym: %s\n", dlerror());
		exit(99);
	}
	void (*describe)(struct vgsym_info *) =
		(void (*)(struct vgsym_info *))dlsym(h, "vgsym_describe");
	if (!describe) {
		fprintf(stderr, "tgt_sym: no vgsym_describe in '%s'\n", path);
		exit(99);
	}
	describe(info);
	return h;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	int arg = 2, now = argc > 2 && strcmp(argv[2], "now") == 0;
	if (now)
		arg++;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

#ifdef TGT_SYM_ALT
	sym_sink += sym_alt_first(argc);
#endif
	sym_sink += sym_leaf(argc) + sym_multi(argc) + sym_caller(argc) + sym_outer(argc);
	write_truth(argv[1], "ready", NULL);

	void *handle = NULL;
	for (int n = 1; arg < argc; arg++, n++) {
		int sig;
		if (!now)
			sigwait(&set, &sig);
		if (handle && dlclose(handle) != 0) {
			fprintf(stderr, "tgt_sym: dlclose: %s\n", dlerror());
			return 99;
		}
		struct vgsym_info info;
		handle = load(argv[arg], &info);
		char state[16];
		snprintf(state, sizeof(state), "lib%d", n);
		write_truth(argv[1], state, &info);
	}
	truth_wait_forever();
}
