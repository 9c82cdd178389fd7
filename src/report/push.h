/* push.h - a profile sent to a Pyroscope-compatible ingest endpoint
 * (`vigil profile --every 10s --push URL`): one HTTP POST per period of
 * the gzipped pprof, its metadata in the query string as Pyroscope's
 * ingest API takes it:
 *
 *   POST URL/ingest?name=SERVICE{k=v,...}&from=S&until=S&format=pprof
 *                   &spyName=vigil&sampleRate=HZ
 *
 * HTTP is libcurl's, loaded with dlopen on the first push (as libdw loads
 * libdebuginfod), so that a vigil run that pushes nothing maps no TLS
 * library and a machine without libcurl still runs every other command. */
#ifndef VG_PUSH_H
#define VG_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define VG_PUSH_MAX_LABELS 16

struct vg_push_opts {
	const char *url;          /* http(s)://HOST[:PORT][/PATH]; /ingest is appended
				   * unless the path already ends with it */
	const char *service;      /* the application name */
	const char *labels[VG_PUSH_MAX_LABELS];  /* "key=value" */
	size_t n_labels;
};

/* Refuse what would make a wrong request, before profiling: a URL that is
 * not http(s), an empty service or one with {},= in it, a label that is not
 * key=value with a key of [A-Za-z_][A-Za-z0-9_.]* and a value without ,{}=.
 * 0 or -EINVAL with a sentence. */
int vg_push_check(const struct vg_push_opts *o, struct vg_error *err);

/* POST one pprof (body, len bytes) of [from_s, until_s) (Unix seconds),
 * sampled at hz.  0 when the server answered 2xx; otherwise -EIO with
 * *status the HTTP status (0: no answer) and a sentence that names it,
 * -ENOSYS when libcurl cannot be loaded, -ENOMEM. */
int vg_push_pprof(const struct vg_push_opts *o, const void *body, size_t len,
		  uint64_t from_s, uint64_t until_s, uint64_t hz, long *status,
		  struct vg_error *err);

#endif
