/* filter.h - vigil probe --filter parsed against a function's parameters
 * (filter.c says the syntax). */
#ifndef VG_PROBE_FILTER_H
#define VG_PROBE_FILTER_H

#include <stddef.h>

#include "probe/bpf.h"
#include "sym/params.h"
#include "util/error.h"

/* terms has room for VG_BPF_FILTER_MAX_TERMS; -EINVAL with a one-line
 * reason (syntax, unknown parameter, too many terms). */
int vg_probe_filter_parse(const char *expr, const struct vg_sym_param *params, size_t n_params,
			  struct vg_bpf_filter_term *terms, size_t *n, struct vg_error *err);

#endif
