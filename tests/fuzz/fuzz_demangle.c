/* fuzz_demangle.c - libFuzzer harness for vg_demangle (libiberty plus the
 * rewrites to llvm-symbolizer's spelling) on hostile symbol names.
 *
 * The input, cut at its first NUL, is a symbol name.  vg_demangle must not
 * crash, hang or leak; it returns NULL for anything without a "_Z"/"_R"
 * prefix or longer than 4096 bytes, and otherwise NULL or a non-empty
 * string.  Built by tests/fuzz/run.sh. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *out;
	size_t len;
	bool mangled;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	len = strlen(name);
	mangled = len >= 2 && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
	out = vg_demangle(name);
	if (out && (!mangled || len > 4096 || !out[0]))
		abort();
	free(out);
	free(name);
	return 0;
}
