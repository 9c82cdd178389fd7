/* bpf_log.h - libbpf's messages, kept instead of printed: the library
 * never prints.  Every loader of a BPF program in libvigil (the probe's
 * programs, vigil stack's task iterator) routes them here first.  In
 * perf/ because both commands load BPF programs and a command's folder is
 * not included by another's. */
#ifndef VG_PERF_BPF_LOG_H
#define VG_PERF_BPF_LOG_H

#include <stddef.h>

/* Route libbpf's messages to the calling thread's log (dropped outside a
 * vg_bpf_log_start .. _end window) instead of stderr.  Idempotent. */
void vg_bpf_libbpf_quiet(void);
/* Keep what libbpf says on this thread from now (a load begins). */
void vg_bpf_log_start(void);
/* Forget it (the load is over). */
void vg_bpf_log_end(void);
/* The verifier's reason: the kept log's last line that is not libbpf's
 * own framing, the closing statistics or blank ("" when none). */
void vg_bpf_log_reason(char *out, size_t size);
/* The same reason from a verifier log the caller gave the kernel itself
 * (a light skeleton's load): log[0, len), which need not end in a NUL. */
void vg_bpf_log_reason_of(const char *log, size_t len, char *out, size_t size);

#endif
