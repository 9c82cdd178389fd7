/* target_env.c - struct vg_decode_env answered by vg_mem, the symbolizer
 * and the fd describer.
 *
 * A data address is named only when a symbol covers it (has_symbol with a
 * size): the nearest symbol below a heap or stack address is no name for
 * it, so padding hints (nearest_symbol) are not used. */
#include "stack/target_env.h"

#include <stdio.h>

#include "sym/symbolizer.h"
#include "target/mem.h"

static int env_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return vg_decode_env_mem_read(((struct vg_target_env *)ctx)->mem, addr, buf, len);
}

bool vg_target_env_name_data(void *symbolizer, uint64_t addr, char *buf, size_t size,
			     uint64_t *start)
{
	struct vg_sym_result res;

	if (!symbolizer || vg_sym_lookup(symbolizer, addr, &res, NULL) < 0 || !res.has_symbol ||
	    !res.symbol || res.offset >= (res.symbol_size ? res.symbol_size : 1))
		return false;
	if (res.offset)
		snprintf(buf, size, "%s+%llu", res.symbol, (unsigned long long)res.offset);
	else
		snprintf(buf, size, "%s", res.symbol);
	if (start)
		*start = res.symbol_address;
	return true;
}

static bool env_name(void *ctx, uint64_t addr, char *buf, size_t size, uint64_t *start)
{
	return vg_target_env_name_data(((struct vg_target_env *)ctx)->sym, addr, buf, size, start);
}

static bool env_fd(void *ctx, int fd, char *buf, size_t size)
{
	return vg_fd_describer_text(((struct vg_target_env *)ctx)->fds, fd, buf, size);
}

struct vg_decode_env vg_target_env_decode(struct vg_target_env *e)
{
	return (struct vg_decode_env){
		.ctx = e,
		.read = e && e->mem ? env_read : NULL,
		.name_data = e && e->sym ? env_name : NULL,
		.describe_fd = e && e->fds ? env_fd : NULL,
	};
}
