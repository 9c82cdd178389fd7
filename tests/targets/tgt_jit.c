/* tgt_jit - code that no ELF image holds, named the way JITs name theirs:
 * in /tmp/perf-PID.map, for `vigil sym` and `vigil profile`.
 * usage: tgt_jit TRUTHFILE LATE_MS|usr1
 *
 * Two copies of a counting loop are copied into an anonymous mapping made
 * executable (mmap, mprotect: no file behind it).  The map names the first
 * twice: "jit_stale" over 64 bytes, then "jit_hot_loop" over its 9 bytes;
 * the later line wins, as perf reads it.  A line that does not parse sits
 * between them.  The second copy ("jit_late_loop") is named only after
 * LATE_MS (or on SIGUSR1, with "usr1": a test that must see a reader
 * answer before the append sends it then), appended to the same file, and
 * only then called: a reader must read the file again as it grows.  Truth:
 *   pid PID
 *   map PATH                     the perf map (the test removes it)
 *   hot 0xSTART 0xLOOP           jit_hot_loop's entry and its loop
 *   late 0xSTART 0xLOOP          the same for jit_late_loop
 *   state ready                  (and "state late" once appended)
 * Then loops for ever in the JIT code. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

/* uint64_t f(uint64_t n): counts n down to 0, n > 0.
 *   0: 48 89 f8   mov %rdi,%rax
 *   3: 48 ff c8   dec %rax
 *   6: 75 fb      jne 3
 *   8: c3         ret */
static const uint8_t spin_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
#define LOOP_OFF 3
#define LATE_OFF 0x100

static volatile sig_atomic_t g_go;

static void on_usr1(int sig)
{
	(void)sig;
	g_go = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void append_map(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

int main(int argc, char **argv)
{
	typedef uint64_t (*spin_fn)(uint64_t);
	char map[64], line[256];
	uint8_t *code;
	spin_fn hot, late;
	uint64_t late_ms, t0;
	bool appended = false, on_signal;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: tgt_jit TRUTHFILE LATE_MS|usr1\n");
		return 2;
	}
	truth_init(TRUTH_MAX_SECONDS);
	on_signal = strcmp(argv[2], "usr1") == 0;
	late_ms = on_signal ? 0 : strtoull(argv[2], NULL, 10);
	signal(SIGUSR1, on_usr1);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	memcpy(code, spin_code, sizeof(spin_code));
	memcpy(code + LATE_OFF, spin_code, sizeof(spin_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 99;
	}
	hot = (spin_fn)(void *)code;
	late = (spin_fn)(void *)(code + LATE_OFF);

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	snprintf(line, sizeof(line), "%lx 40 jit_stale\nnot a perf map line\n%lx 9 jit_hot_loop\n",
		 (unsigned long)(uintptr_t)code, (unsigned long)(uintptr_t)code);
	append_map(map, line);

	f = truth_begin(argv[1]);
	fprintf(f, "pid %d\n", (int)getpid());
	fprintf(f, "map %s\n", map);
	fprintf(f, "hot 0x%lx 0x%lx\n", (unsigned long)(uintptr_t)code,
		(unsigned long)(uintptr_t)(code + LOOP_OFF));
	fprintf(f, "late 0x%lx 0x%lx\n", (unsigned long)(uintptr_t)(code + LATE_OFF),
		(unsigned long)(uintptr_t)(code + LATE_OFF + LOOP_OFF));
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);

	t0 = now_ms();
	for (;;) {
		hot(20000000);
		if (!appended && (on_signal ? g_go : now_ms() - t0 >= late_ms)) {

			snprintf(line, sizeof(line), "%lx 9 jit_late_loop\n",
				 (unsigned long)(uintptr_t)late);
			append_map(map, line);
			appended = true;
			f = truth_begin(argv[1]);
			fprintf(f, "pid %d\nmap %s\n", (int)getpid(), map);
			fprintf(f, "hot 0x%lx 0x%lx\n", (unsigned long)(uintptr_t)code,
				(unsigned long)(uintptr_t)(code + LOOP_OFF));
			fprintf(f, "late 0x%lx 0x%lx\n", (unsigned long)(uintptr_t)late,
				(unsigned long)(uintptr_t)(code + LATE_OFF + LOOP_OFF));
			fprintf(f, "state ready\nstate late\n");
			truth_end(f, argv[1]);
		}
		if (appended)
			late(20000000);
	}
}
