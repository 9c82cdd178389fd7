/* tgt_print - globals of every kind `vigil print` shows: nested structs,
 * arrays of structs, a union, plain and flag enums, bit-fields, char
 * arrays and char *, a pointer chain, floats, bool, a function pointer, a
 * typedef, a static of the same name in two files (tgt_print_b.c), a
 * thread-local, and objects that straddle or sit in unmapped memory.
 * usage: tgt_print TRUTHFILE
 * Writes, besides the usual truth, one line per expression:
 *   expect TAB EXPR TAB TEXT
 * where TEXT is what gdb prints for it, formatted here by the program
 * from its own values and addresses; and the addresses and offsets the
 * JSON must give.  Then waits until killed. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "truth.h"

enum color { RED, GREEN, BLUE };
enum perm { PERM_READ = 1, PERM_WRITE = 2, PERM_EXEC = 4 };

struct limits {
	int max;
	int min;
};
typedef struct limits limits_t;

int handler(int x);

struct config {
	int port;
	char name[16];
	struct limits limits;
	double ratio;
	float scale;
	bool enabled;
	enum color color;
	enum perm perms;
	unsigned flags_a : 3;
	int flags_b : 5;
	unsigned flags_c : 1;
	const char *greeting;
	int (*handler)(int);
};

union num {
	int i;
	float f;
	unsigned char b[4];
};

struct node {
	int id;
	struct node *next;
};

struct entry {
	short key;
	long value;
};

struct pair {
	long a;
	long b;
};

/* "named\tSYMBOL\tOFF\tLEN\t0xADDR\tEXPR": the LEN bytes at ADDR, OFF
 * into SYMBOL, are what EXPR names (the innermost object holding them). */
static void named_len(FILE *f, const char *symbol, const void *base, const void *at,
		      size_t len, const char *expr)
{
	fprintf(f, "named\t%s\t%zu\t%zu\t0x%llx\t%s\n", symbol,
		(size_t)((const char *)at - (const char *)base), len,
		(unsigned long long)(uintptr_t)at, expr);
}

static void named(FILE *f, const char *symbol, const void *base, const void *at,
		  const char *expr)
{
	named_len(f, symbol, base, at, 1, expr);
}

__attribute__((noinline, used)) int handler(int x)
{
	return x + 1;
}

__attribute__((used)) struct config g_config = {
	8080, "demo", { 100, 1 }, 2.5, 0.75f, true, BLUE, PERM_READ | PERM_EXEC,
	5, -3, 1, "hello", handler,
};
__attribute__((used)) struct entry g_table[3] = { { 1, 10 }, { 2, -20 }, { 3, 30 } };
__attribute__((used)) union num g_num = { .i = 0x3f800000 };
__attribute__((used)) struct node g_nodes[3] = {
	{ 0, &g_nodes[1] }, { 1, &g_nodes[2] }, { 2, NULL },
};
__attribute__((used)) struct node *g_head = &g_nodes[0];
__attribute__((used)) int g_zeros[16];
__attribute__((used)) enum perm g_perm_odd = (enum perm)(PERM_READ | 8);
__attribute__((used)) enum color g_color = GREEN;
__attribute__((used)) float g_pi_f = 3.14159f;
__attribute__((used)) double g_pi = 3.14159265358979;
__attribute__((used)) bool g_flag = true;
__attribute__((used)) char g_letter = 'A';
__attribute__((used)) unsigned long g_big = ~0ul;
__attribute__((used)) limits_t g_lim = { 7, 3 };
/* A typedef name in a cast before a unary operator: "(count_t)*g_intp". */
typedef long count_t;
__attribute__((used)) count_t g_count = 42;
__attribute__((used)) int *g_intp = &g_config.limits.max;
__attribute__((used)) static int g_static = 111;
/* An ELF alias: DWARF knows only g_aliased (as glibc's
 * program_invocation_short_name is __progname). */
__attribute__((used)) int g_aliased = 99;
extern int g_alias __attribute__((alias("g_aliased")));
__attribute__((used)) __thread int g_tls = 5;
/* Larger than the 1 MiB vigil reads of one value. */
__attribute__((used)) char g_huge_text[2 << 20] = "start";
__attribute__((used)) int g_huge_ints[300000];
/* A pair whose second half lies on an unmapped page, and one wholly there. */
__attribute__((used)) struct pair *g_edge;
__attribute__((used)) struct pair *g_gone;

int *tgt_print_b_static(void);

/* Threads with their own g_tls and errno, parked until killed. */
struct tls_thread {
	pthread_t th;
	int value;
	pid_t tid;
	int ready;
};

static void *tls_thread_main(void *arg)
{
	struct tls_thread *t = arg;

	g_tls = t->value;
	errno = t->value + 1;
	t->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* A char array as gdb prints it: one trailing NUL dropped, runs of more
 * than 10 equal chars as 'c' <repeats N times>, octal escapes.  Enough for
 * the arrays above. */
static void put_chars(FILE *f, const unsigned char *s, size_t n)
{
	bool in_q = false, any = false;

	if (n && s[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n;) {
		size_t run = 1;

		while (i + run < n && s[i + run] == s[i])
			run++;
		if (run > 10) {
			fprintf(f, "%s'%s' <repeats %zu times>", in_q ? "\", " : any ? ", " : "",
				s[i] == 0 ? "\\000" : (char[]){ (char)s[i], 0 }, run);
			in_q = false;
			i += run;
		} else {
			if (!in_q)
				fputs(any ? ", \"" : "\"", f);
			in_q = true;
			for (; run--; i++) {
				if (s[i] < 0x20 || s[i] >= 0x7f)
					fprintf(f, "\\%03o", s[i]);
				else
					fputc(s[i], f);
			}
		}
		any = true;
	}
	if (in_q)
		fputc('"', f);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m;
	FILE *f;

	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m + page, (size_t)page) != 0)
		return 99;
	g_edge = (struct pair *)(m + page - 8);
	g_edge->a = 7;
	g_gone = (struct pair *)(m + page + 64);
	g_tls = 6;
	static struct tls_thread threads[2] = { { .value = 100 }, { .value = 200 } };

	for (int i = 0; i < 2; i++)
		if (pthread_create(&threads[i].th, NULL, tls_thread_main, &threads[i]) != 0)
			return 99;
	for (int i = 0; i < 2; i++)
		while (!__atomic_load_n(&threads[i].ready, __ATOMIC_ACQUIRE))
			usleep(1000);

	f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "g_config", &g_config, sizeof(g_config));
	/* How vigil read and scan name bytes inside these globals. */
	named(f, "g_config", &g_config, &g_config.port, "g_config.port");
	named(f, "g_config", &g_config, (char *)&g_config.port + 2, "g_config.port+2");
	named(f, "g_config", &g_config, &g_config.name[3], "g_config.name[3]");
	named(f, "g_config", &g_config, &g_config.limits.max, "g_config.limits.max");
	named(f, "g_config", &g_config, &g_config.limits.min, "g_config.limits.min");
	{
		/* The bytes between limits (ints) and ratio (a double). */
		size_t pad = offsetof(struct config, limits) + sizeof(struct limits);
		char text[64];

		if (pad >= offsetof(struct config, ratio))
			return 1;
		snprintf(text, sizeof(text), "g_config+%zu (padding)", pad);
		named(f, "g_config", &g_config, (char *)&g_config + pad, text);
	}
	named(f, "g_table", g_table, &g_table[1].value, "g_table[1].value");
	named(f, "g_table", g_table, &g_table[2].key, "g_table[2].key");
	named(f, "g_table", g_table, (char *)&g_table[2].value + 7, "g_table[2].value+7");
	named(f, "g_nodes", g_nodes, &g_nodes[2].next, "g_nodes[2].next");
	named(f, "g_zeros", g_zeros, &g_zeros[5], "g_zeros[5]");
	named(f, "g_lim", &g_lim, &g_lim.min, "g_lim.min");
	named(f, "g_big", &g_big, (char *)&g_big + 3, "g_big+3");
	named_len(f, "g_config", &g_config, &g_config, sizeof(g_config), "g_config");
	named_len(f, "g_config", &g_config, &g_config.port, sizeof(g_config.port), "g_config.port");
	named_len(f, "g_config", &g_config, &g_config.limits, sizeof(g_config.limits),
		  "g_config.limits");
	named_len(f, "g_config", &g_config, g_config.name, 4, "g_config.name");
	named_len(f, "g_config", &g_config, &g_config.name[2], 3, "g_config.name+2");
	named_len(f, "g_table", g_table, &g_table[1], sizeof(g_table[1]), "g_table[1]");
	named_len(f, "g_table", g_table, &g_table[1].value, sizeof(g_table[1].value),
		  "g_table[1].value");
	fprintf(f, "expect\tg_config\t{port = 8080, name = ");
	put_chars(f, (const unsigned char *)g_config.name, sizeof(g_config.name));
	fprintf(f, ", limits = {max = 100, min = 1}, ratio = 2.5, scale = 0.75, enabled = true, "
		   "color = BLUE, perms = (PERM_READ | PERM_EXEC), flags_a = 5, flags_b = -3, "
		   "flags_c = 1, greeting = %p \"hello\", handler = %p <handler>}\n",
		(const void *)g_config.greeting, (void *)g_config.handler);
	fprintf(f, "expect\tg_config.limits\t{max = 100, min = 1}\n");
	fprintf(f, "expect\tg_config.limits.max\t100\n");
	fprintf(f, "expect\tg_config.name\t");
	put_chars(f, (const unsigned char *)g_config.name, sizeof(g_config.name));
	fputc('\n', f);
	fprintf(f, "expect\tg_config.greeting\t%p \"hello\"\n", (const void *)g_config.greeting);
	fprintf(f, "expect\tg_config.handler\t(int (*)(int)) %p <handler>\n", (void *)g_config.handler);
	fprintf(f, "expect\tg_config.perms\t(PERM_READ | PERM_EXEC)\n");
	fprintf(f, "expect\tg_config.flags_b\t-3\n");
	fprintf(f, "expect\t-g_config.port * 2\t-16160\n");
	fprintf(f, "expect\tg_table\t{{key = 1, value = 10}, {key = 2, value = -20}, {key = 3, value = 30}}\n");
	fprintf(f, "expect\tg_table[1].value\t-20\n");
	fprintf(f, "expect\tg_table[1 + 1].key\t3\n");
	fprintf(f, "expect\t&g_table[2]\t(struct entry *) %p <g_table+32>\n", (void *)&g_table[2]);
	fprintf(f, "expect\tsizeof g_table\t%zu\n", sizeof(g_table));
	fprintf(f, "expect\tsizeof(struct config)\t%zu\n", sizeof(struct config));
	fprintf(f, "expect\tg_num\t{i = %d, f = 1, b = ", g_num.i);
	put_chars(f, g_num.b, sizeof(g_num.b));
	fprintf(f, "}\n");
	fprintf(f, "expect\tg_head\t(struct node *) %p <g_nodes>\n", (void *)g_head);
	fprintf(f, "expect\t*g_head\t{id = 0, next = %p <g_nodes+%zu>}\n", (void *)g_nodes[0].next,
		sizeof(struct node));
	fprintf(f, "expect\tg_head->next->next->id\t2\n");
	fprintf(f, "expect\t*(struct node *)%p\t{id = 1, next = %p <g_nodes+%zu>}\n", (void *)&g_nodes[1],
		(void *)&g_nodes[2], 2 * sizeof(struct node));
	fprintf(f, "expect\tg_zeros\t{0 <repeats 16 times>}\n");
	fprintf(f, "expect\tg_perm_odd\t(PERM_READ | unknown: 0x8)\n");
	fprintf(f, "expect\tg_color\tGREEN\n");
	fprintf(f, "expect\tg_pi_f\t%.9g\n", (double)g_pi_f);
	fprintf(f, "expect\tg_pi\t%.17g\n", g_pi);
	fprintf(f, "expect\tg_flag\ttrue\n");
	fprintf(f, "expect\tg_letter\t65 'A'\n");
	fprintf(f, "expect\tg_big\t%lu\n", g_big);
	fprintf(f, "expect\tg_lim\t{max = 7, min = 3}\n");
	/* C's cast/parenthesis ambiguity, resolved by the DWARF's type names. */
	fprintf(f, "expect\t(count_t)*g_intp\t%ld\n", (count_t)*g_intp);
	fprintf(f, "expect\t(count_t)-g_count\t%ld\n", (count_t)-g_count);
	fprintf(f, "expect\t(count_t)~g_count\t%ld\n", (count_t)~g_count);
	fprintf(f, "expect\t-(int)g_count\t%d\n", -(int)g_count);
	fprintf(f, "expect\t(limits_t *)&g_lim\t(limits_t *) %p <g_lim>\n", (void *)&g_lim);
	fprintf(f, "expect\t(g_count) * 2\t%ld\n", (g_count) * 2);
	fprintf(f, "expect\t(g_count) - 2\t%ld\n", (g_count) - 2);
	fprintf(f, "expect\ttgt_print.c:g_static\t%d\n", g_static);
	fprintf(f, "expect\ttgt_print_b.c:g_static\t%d\n", *tgt_print_b_static());
	fprintf(f, "expect\t*g_edge\t{a = 7, b = <unreadable>}\n");
	fprintf(f, "expect\tg_alias\t%d\n", g_alias);
	/* For the JSON checks. */
	fprintf(f, "addr g_head %p\n", (void *)&g_head);
	fprintf(f, "libc_short_name %p %s\n", (void *)program_invocation_short_name,
		program_invocation_short_name);
	fprintf(f, "addr g_nodes %p\n", (void *)g_nodes);
	fprintf(f, "addr g_edge %p\n", (void *)g_edge);
	fprintf(f, "addr g_config.handler %p\n", (void *)g_config.handler);
	fprintf(f, "size struct_config %zu\n", sizeof(struct config));
	fprintf(f, "offset config.limits %zu\n", offsetof(struct config, limits));
	fprintf(f, "offset config.greeting %zu\n", offsetof(struct config, greeting));
	fprintf(f, "offset node.next %zu\n", offsetof(struct node, next));
	/* The main thread's errno moves with every call it makes: not a fact. */
	fprintf(f, "tls %d %d -\n", (int)getpid(), g_tls);
	for (int i = 0; i < 2; i++)
		fprintf(f, "tls %d %d %d\n", (int)threads[i].tid, threads[i].value, threads[i].value + 1);
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	truth_wait_forever();
}
