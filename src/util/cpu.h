/* cpu.h - which instruction set extensions this process may use.
 *
 * Read from what ld.so found at startup (glibc's <sys/platform/x86.h>,
 * 2.33 and later), not from __builtin_cpu_supports: that links libgcc's
 * __cpu_indicator_init, a constructor that runs some twenty CPUID
 * instructions in every vigil process, and in a VM each one traps to the
 * hypervisor (1.5 us apiece on a Firecracker guest).  "Active" is what
 * the hardware has and the kernel enabled (AVX2 needs the OS to save the
 * YMM state), as __builtin_cpu_supports means it. */
#ifndef VG_UTIL_CPU_H
#define VG_UTIL_CPU_H

#include <stdbool.h>

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

/* glibc 2.32 has the header with CPU_FEATURE_USABLE only. */
#if defined(__x86_64__) && defined(CPU_FEATURE_ACTIVE)
static inline bool vg_cpu_sse42(void) { return CPU_FEATURE_ACTIVE(SSE4_2); }
static inline bool vg_cpu_avx2(void) { return CPU_FEATURE_ACTIVE(AVX2); }
#elif defined(__x86_64__)
static inline bool vg_cpu_sse42(void) { return __builtin_cpu_supports("sse4.2"); }
static inline bool vg_cpu_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
static inline bool vg_cpu_sse42(void) { return false; }
static inline bool vg_cpu_avx2(void) { return false; }
#endif

#endif
