/* dwname.h - an address inside a global or file-scope static named as the
 * C expression that reaches it: g_config.limits.max, g_table[3].count,
 * g_buf[17], g_config.port+2 (a byte inside a scalar), g_config+5
 * (padding).  For `vigil read` and `vigil scan`, which show addresses a
 * user would otherwise translate by hand from offsets.
 *
 * The variable is the sized ELF symbol covering the address (as vigil sym
 * names .bss), its type the DWARF of that definition (dwtypes.h: only the
 * CUs walked until the definition is found, only the types on the path
 * built).  A namer keeps each image's type table open across addresses. */
#ifndef VG_SYM_DWNAME_H
#define VG_SYM_DWNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/image.h"
#include "sym/dwtypes.h"

/* The deepest path walked: deeper nesting ends in +N of the last level. */
#define VG_DWNAME_MAX_DEPTH 32

/* Append to buf (holding a NUL-terminated prefix, the variable's name)
 * the members and elements of t that contain the len bytes at off (0
 * counts as 1): ".limits.max", "[3].count", "+2" inside a scalar, "+5
 * (padding)" when byte off is in no member; the walk stops, with "+N"
 * when N > 0, at the innermost object holding all len bytes (4 bytes at
 * the start of a struct name its first int member, 48 the struct).  dt
 * completes declared structs (may be NULL).  false when buf is too small
 * (buf then holds a truncated, still terminated, text). */
bool vg_dwname_path(struct vg_dwtypes *dt, const struct vg_type *t, uint64_t off,
		    uint64_t len, char *buf, size_t size);

struct vg_dwnamer;

/* target_root: "/proc/PID/root" or NULL, as vg_dwtypes_open takes it
 * (copied).  NULL: out of memory. */
struct vg_dwnamer *vg_dwnamer_new(const char *target_root);
struct vg_dwnamer *vg_dwnamer_free(struct vg_dwnamer *n);

/* The expression of the len bytes at static address static_addr of img
 * (vg_dwname_path) into buf: 1 when
 * named, 0 when DWARF does not allow it (no sized symbol there, no DWARF,
 * no definition at that address, buf too small), -ENOMEM.  img is
 * borrowed and must outlive the namer. */
int vg_dwnamer_name(struct vg_dwnamer *n, const struct vg_image *img, uint64_t static_addr,
		    uint64_t len, char *buf, size_t size);

#endif
