/* vgtestlib - the shared library the dlopen/deleted/namespace targets load.
 * vglib_counter has a known initial value the tests read back. */
__attribute__((used)) volatile unsigned long long vglib_counter = 0xc0ffee0012345678ULL;
__attribute__((used)) volatile char vglib_name[16] = "vgtestlib";

unsigned long long vglib_bump(void);
unsigned long long vglib_bump(void)
{
	return ++vglib_counter;
}
