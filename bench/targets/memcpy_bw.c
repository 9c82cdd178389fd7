/* memcpy_bw: the memory-bandwidth reference for bench/read.sh.
 *
 *   memcpy_bw [SIZE_MIB] [CHUNK_KIB] [REPS]     (defaults 1024 1024 5)
 *
 * Reading another process's memory into a buffer (process_vm_readv,
 * /proc/PID/mem) is, at best, a memcpy from a large source that is not in
 * cache into a small destination that is. This measures exactly that: copy a
 * filled SIZE_MIB source, CHUNK_KIB at a time, into one CHUNK_KIB buffer; best
 * of REPS passes. It also reports a large-to-large memcpy (source and
 * destination both SIZE_MIB/2, both out of cache) for reference.
 * Output: lines "name GB/s" (GB = 1e9 bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 0x5a, n); /* fault everything in before timing */
    return p;
}

int main(int argc, char **argv)
{
    size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
    size_t chunk = (size_t)(argc > 2 ? atol(argv[2]) : 1024) << 10;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (size == 0 || chunk == 0 || chunk > size || reps < 1) {
        fprintf(stderr, "usage: %s [SIZE_MIB] [CHUNK_KIB] [REPS]\n", argv[0]);
        return 2;
    }
    char *src = map(size);
    char *dst = map(chunk);
    volatile char sink = 0;

    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (size_t off = 0; off + chunk <= size; off += chunk) {
            memcpy(dst, src + off, chunk);
            sink ^= dst[off % chunk];
        }
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    printf("memcpy_to_chunk %.2f\n", (double)size / best / 1e9);

    size_t half = size / 2;
    best = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        memcpy(src + half, src, half);
        sink ^= src[size - 1];
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    printf("memcpy_large %.2f\n", (double)half / best / 1e9);
    (void)sink;
    return 0;
}
