/* tgt_globals - initialized globals at known values; built PIE and non-PIE.
 * usage: tgt_globals TRUTHFILE
 * Writes its objects (biases, build-ids) and every global below, then waits
 * until killed.  The globals are non-static and used so they stay in .symtab. */
#include <stdint.h>

#include <time.h>
#include <unistd.h>

#include "truth.h"

__attribute__((used)) volatile unsigned long long vg_magic = 0x1122334455667788ULL;
__attribute__((used)) volatile char vg_text[32] = "vigil reads this";
__attribute__((used)) volatile int vg_neg = -123456;
__attribute__((used)) volatile double vg_double = 2.5;
__attribute__((used)) volatile float vg_float = -0.75f;
__attribute__((used)) volatile unsigned short vg_u16 = 0xbeef;
__attribute__((used)) volatile unsigned long long *volatile vg_ptr = &vg_magic;
/* Differs between two runs of this same binary (pid namespace test). */
__attribute__((used)) volatile unsigned long long vg_nonce;

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	truth_init(TRUTH_MAX_SECONDS);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	vg_nonce = (unsigned long long)ts.tv_nsec * 2654435761u ^ (unsigned long long)ts.tv_sec ^
		   (unsigned long long)getpid() << 32;
	FILE *f = truth_begin(argv[1]);
	truth_objects(f);
	truth_symbol(f, "vg_magic", &vg_magic, sizeof(vg_magic));
	truth_symbol(f, "vg_text", vg_text, sizeof(vg_text));
	truth_symbol(f, "vg_neg", &vg_neg, sizeof(vg_neg));
	truth_symbol(f, "vg_double", &vg_double, sizeof(vg_double));
	truth_symbol(f, "vg_float", &vg_float, sizeof(vg_float));
	truth_symbol(f, "vg_u16", &vg_u16, sizeof(vg_u16));
	truth_symbol(f, "vg_ptr", &vg_ptr, sizeof(vg_ptr));
	truth_symbol(f, "vg_nonce", &vg_nonce, sizeof(vg_nonce));
	fprintf(f, "state ready\n");
	truth_end(f, argv[1]);
	truth_wait_forever();
}
