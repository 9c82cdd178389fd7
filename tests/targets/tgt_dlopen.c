/* tgt_dlopen - loads a library in the middle of its life.
 * usage: tgt_dlopen TRUTHFILE LIBPATH [now]
 * Without "now": writes "state ready", waits for SIGUSR1, then dlopens
 * LIBPATH and rewrites the truth file with "state loaded".  With "now" it
 * loads at once (used when LIBPATH exists only in the target's mount
 * namespace).  Then waits until killed. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	int now = argc > 3 && strcmp(argv[3], "now") == 0;
	if (!now) {
		sigset_t set;
		int sig;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		FILE *f = truth_begin(argv[1]);
		truth_objects(f);
		fprintf(f, "state ready\n");
		truth_end(f, argv[1]);
		sigwait(&set, &sig);
	}
	void *counter = truth_load_vgtestlib(argv[2]);
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "vglib_counter", counter, sizeof(unsigned long long));
	fprintf(f, "state loaded\n");
	truth_end(f, argv[1]);
	truth_wait_forever();
}
