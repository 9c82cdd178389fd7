/* libvgprof - the library tgt_profile dlopens in the middle of a profile
 * (tests/e2e/profile_dlopen.sh): all of the target's time is then spent in
 * vgprof_hot, a function no image mapped at the start of the profile has. */
static volatile unsigned long long vgprof_acc;

__attribute__((noipa)) void vgprof_hot(unsigned units);
__attribute__((noipa)) void vgprof_hot(unsigned units)
{
	for (unsigned i = 0; i < units * 20000u; i++)
		vgprof_acc = vgprof_acc * 53 + i;
}
