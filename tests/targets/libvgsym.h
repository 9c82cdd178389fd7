/* libvgsym.h - what libvgsym_a.so / libvgsym_b.so tell tgt_sym about
 * themselves: one function of theirs, its address and the line of its first
 * statement (recorded when it runs). */
#ifndef VG_TARGET_LIBVGSYM_H
#define VG_TARGET_LIBVGSYM_H

struct vgsym_info {
	const char *function;
	const char *file;
	void *address;
	int line;
};

/* Every libvgsym*.so exports this one (dlsym'ed by tgt_sym). */
void vgsym_describe(struct vgsym_info *info);

#endif
