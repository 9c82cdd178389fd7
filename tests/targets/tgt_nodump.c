/* tgt_nodump - a process that makes itself not dumpable, for the messages
 * of tests/e2e/target_kinds.sh.
 * usage: tgt_nodump TRUTH
 * Calls prctl(PR_SET_DUMPABLE, 0) (as a program with secrets does, and as
 * the kernel does on exec of a setuid, setgid or file-capability program),
 * then writes "pid N" and "state ready" to TRUTH and sleeps until killed. */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 2 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return 2;
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "pid %d\nstate ready\n", (int)getpid());
	if (fclose(f) != 0)
		return 2;
	for (;;)
		pause();
}
