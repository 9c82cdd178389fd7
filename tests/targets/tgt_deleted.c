/* tgt_deleted - runs code from a library whose file has been deleted.
 * usage: tgt_deleted TRUTHFILE LIBPATH COPYPATH
 * Copies LIBPATH to COPYPATH, dlopens the copy, deletes it, then writes the
 * truth (the copy's canonical path, bias, build-id, vglib_counter) and waits
 * until killed.  /proc/PID/maps then shows "COPYPATH (deleted)". */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "truth.h"

static int copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out) == 0 && n == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	if (copy(argv[2], argv[3]) != 0) {
		fprintf(stderr, "tgt_deleted: cannot copy %s to %s\n", argv[2], argv[3]);
		return 99;
	}
	void *counter = truth_load_vgtestlib(argv[3]);
	/* Truth first (realpath needs the file), published after the unlink. */
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "vglib_counter", counter, sizeof(unsigned long long));
	fprintf(f, "state deleted\n");
	if (unlink(argv[3]) != 0)
		return 99;
	truth_end(f, argv[1]);
	truth_wait_forever();
}
