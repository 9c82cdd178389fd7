/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

pid_t tu_fork_pipe(int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[pid == 0 ? 0 : 1]);
	*fd = p[pid == 0 ? 1 : 0];
	return pid;
}

FILE *tu_spawn(const char *path, pid_t *pid)
{
	FILE *in;
	int fd;

	*pid = tu_fork_pipe(&fd);
	assert_true(*pid >= 0);
	if (*pid == 0) {
		dup2(fd, 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	in = fdopen(fd, "r");
	assert_non_null(in);
	return in;
}

void tu_wait_zombie(pid_t pid)
{
	for (int i = 0; i < 3000; i++) {
		char path[64], buf[256];
		FILE *f;
		char *rp = NULL;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		if (f && fgets(buf, sizeof(buf), f))
			rp = strrchr(buf, ')');
		if (f)
			fclose(f);
		if (rp && rp[2] == 'Z')
			return;
		usleep(1000);
	}
}

void tu_as_nobody(int (*fn)(void))
{
	pid_t child = fork();
	int st;

	assert_true(child >= 0);
	if (child == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(77);
		_exit(fn());
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}
