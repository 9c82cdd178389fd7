/* truth.h - ground truth written by the e2e target programs.
 *
 * A target knows facts about itself that vigil must rediscover from outside
 * (load biases, build-ids, addresses and bytes of its globals).  It writes
 * them as lines "KEY WORDS..." to a temporary file and renames it into place,
 * so a test never sees half a file.  Line formats:
 *   pid PID
 *   state WORD
 *   obj main|lib|other 0xBIAS BUILDID|- PATH      (one per dl_iterate_phdr object)
 *   sym NAME 0xRUNTIME 0xSTATIC SIZE HEXBYTES IMAGEPATH
 *   frame NAME IDX FUNCTION FILE LINE INLINED     (expected frame of sym NAME)
 *   KEY VALUE                                     (target specific)
 * PATH is the canonical path (realpath) so that it equals what the kernel
 * prints in /proc/PID/maps; it is the last field and may contain spaces. */
#ifndef VG_TARGET_TRUTH_H
#define VG_TARGET_TRUTH_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Safety net for every target: die with the parent (the test) and after
 * max_seconds in any case, so no target outlives a crashed test. */
void truth_init(unsigned max_seconds);

/* max_seconds for a target that lives as long as its test: longer than
 * the longest meson timeout of an e2e test (180 s), so a test that is
 * slow on a loaded machine fails by its own timeout, saying so, and never
 * because its targets killed themselves halfway (json_schema, 74 s at
 * load average 8 with the ASan build, uses its first targets to the
 * end). */
#define TRUTH_MAX_SECONDS 600


/* Open "<path>.tmp" for writing; exits the program on failure. */
FILE *truth_begin(const char *path);
/* Flush, close and rename "<path>.tmp" to path; exits on failure. */
void truth_end(FILE *f, const char *path);

/* "pid" line plus one "obj" line per loaded object. */
void truth_objects(FILE *f);
/* One "sym" line for the object at addr (size bytes). */
void truth_symbol(FILE *f, const char *name, const volatile void *addr,
		  size_t size);

/* One "frame" line: frame IDX (0 = innermost) a symbolizer must give for
 * the address written as "sym NAME"; file is reduced to its basename
 * (pass __FILE__), inlined is 0 or 1. */
void truth_frame(FILE *f, const char *name, int idx, const char *function,
		 const char *file, int line, int inlined);

/* One "emu NAME 0xFILEOFF 0xRUNTIME 0xSTATIC PATH" line: where, in the
 * main executable, the label right after a store is, for
 * VIGIL_WATCH_EMULATE_TRAPS (tests/e2e/lib.sh watch_env); exits 99 when
 * label is not in it. */
void truth_emu(FILE *f, const char *name, const void *label);

/* dlopen path (libvgtestlib.so or a copy, RTLD_NOW | RTLD_LOCAL) and
 * return the address of its vglib_counter; exits 99 with the reason. */
void *truth_load_vgtestlib(const char *path);

/* Wait (5 s at most, else exit 99) until thread tid of this process is
 * inside system call nr (/proc/self/task/TID/syscall): a thread that said
 * where it will block is then really blocked there, which no fixed sleep
 * guarantees on a loaded machine. */
void truth_wait_in_syscall(pid_t tid, long nr);

/* Sleep until killed. */
void truth_wait_forever(void) __attribute__((noreturn));

#endif
