/* sym_addr.h - `vigil sym`'s input lines and arguments as addresses. */
#ifndef VIGIL_CLI_SYM_ADDR_H
#define VIGIL_CLI_SYM_ADDR_H

#include <stdbool.h>
#include <stdint.h>

#include "sym/symbolizer.h"
#include "util/error.h"

/* spec as 0xHEX, bare hex (offline, i.e. --bin, or from standard input)
 * or @0xHEX (offline): the common forms of a batch, read without
 * vg_addr_parse.  Touches nothing shared (a batch's second thread reads
 * its lines with it); false for any other form. */
bool sym_addr_hex(bool offline, const char *spec, bool from_stdin, uint64_t *addr);

/* spec as any ADDR form against s's images (symbol+off, IMAGE:off, ...),
 * bare hex taken as an address where only addresses are expected.  0, or
 * -1 with err saying why. */
int sym_addr_resolve(struct vg_symbolizer *s, bool offline, const char *spec,
		     bool from_stdin, uint64_t *addr, struct vg_error *err);

#endif
