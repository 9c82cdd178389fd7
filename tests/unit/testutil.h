/* testutil.h - child processes for the unit tests that observe a live one.
 *
 * Not a test itself (the name is not test_*): tests/unit/meson.build links
 * it into the tests that use it.  Failures inside are cmocka failures of
 * the calling test. */
#ifndef VG_TESTUTIL_H
#define VG_TESTUTIL_H

#include <stdio.h>
#include <sys/types.h>

/* fork() with a pipe from child to parent.  In the child: returns 0 and *fd
 * is the write end.  In the parent: returns the child's pid and *fd is the
 * read end (the caller closes it).  -1 if the pipe or the fork failed. */
pid_t tu_fork_pipe(int *fd);

/* Run the program at path with its stdout into the returned stream; *pid
 * is the child's.  Fails the test if it cannot. */
FILE *tu_spawn(const char *path, pid_t *pid);

/* Wait (up to 3 s) until /proc/PID/stat shows task pid as a zombie: an
 * exited child not yet reaped, or a thread-group leader that called
 * pthread_exit while its threads run on. */
void tu_wait_zombie(pid_t pid);

/* Run fn in a child as user and group nobody (65534) and assert that it
 * returns 0; skip the test when the ids cannot be dropped (not root).
 * fn's non-zero return says which of its checks failed. */
void tu_as_nobody(int (*fn)(void));

#endif
