/* watch_writer: 4 threads writing one global, counting their own writes, for
 * bench/watch.sh (vigil watch against perf, bpftrace and gdb).
 *
 *   watch_writer RATE MS LATE
 *     RATE  writes per second, all threads together (0: as fast as possible)
 *     MS    how long the threads write, from the go
 *     LATE  how many of the 4 threads are created after the go (0..4)
 *
 * Prints "addr 0xRUNTIME" (g_watched), "emu 0xFILEOFF 0xSTATIC PATH" (the
 * label bw_after_store: the instruction right after the store, where a data
 * breakpoint traps and where VIGIL_WATCH_EMULATE_TRAPS or `perf probe` puts
 * a uprobe), then "ready", and waits for SIGUSR1 (the go, sent once the tool
 * is attached).  Then the early threads start writing, the late ones are
 * created and write too, every thread stops MS ms after the go, and it
 * prints "writes TOTAL T0 T1 T2 T3" and "seconds S" (go to the last thread's
 * end) and exits.
 *
 * Pacing: each thread is due RATE/4 writes per second since the go; it
 * writes what is due (looking at the clock every 64 writes), then sleeps
 * 1 ms.  Unlimited: checks the clock every 64 writes.  Every write is one call of bw_store(): a single `movq` to
 * g_watched with the global label bw_after_store right after it (noipa: the
 * label is emitted once). */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 4

__attribute__((used, aligned(64))) volatile uint64_t g_watched;
extern char bw_after_store[];

__attribute__((noipa)) void bw_store(uint64_t v);
__attribute__((noipa)) void bw_store(uint64_t v)
{
    __asm__ volatile("movq %1, %0\n\t.globl bw_after_store\nbw_after_store:" : "=m"(g_watched) : "r"(v));
}

static double rate_per_thread;          /* 0: unlimited */
static struct timespec go_ts;
static volatile int go;
static uint64_t counts[NTHREADS];
static struct timespec end_ts[NTHREADS];
static long run_ms;

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void *writer(void *arg)
{
    unsigned idx = (unsigned)(uintptr_t)arg;
    uint64_t n = 0, tag = (uint64_t)idx << 56;
    struct timespec now;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    double limit = (double)run_ms / 1000.0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = since(&go_ts, &now);
        if (t >= limit)
            break;
        if (rate_per_thread == 0) {
            for (int i = 0; i < 64; i++)
                bw_store(tag | n++);
        } else {
            /* At most 64 writes between two looks at the clock: a tool
             * that slows each write cannot make a catch-up burst overrun
             * the end. */
            uint64_t due = (uint64_t)(rate_per_thread * t);
            for (int i = 0; i < 64 && n < due; i++)
                bw_store(tag | n++);
            if (n >= due) {
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
    }
    counts[idx] = n;
    end_ts[idx] = now;
    return NULL;
}

struct find_off { uintptr_t addr; long long off; uintptr_t bias; };

static int find_off_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
    struct find_off *fo = data;
    (void)sz;
    if (info->dlpi_name && *info->dlpi_name)
        return 0;                       /* the main program only */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && fo->addr >= lo && fo->addr < lo + ph->p_filesz) {
            fo->off = (long long)(fo->addr - lo + ph->p_offset);
            fo->bias = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s RATE MS LATE\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[1]);
    run_ms = atol(argv[2]);
    int late = atoi(argv[3]);
    if (rate < 0 || run_ms <= 0 || late < 0 || late > NTHREADS) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    rate_per_thread = rate / NTHREADS;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);       /* inherited by every thread */

    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS - late; i++)
        if (pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)i) != 0)
            return perror("pthread_create"), 1;

    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len < 0)
        return perror("readlink"), 1;
    exe[len] = '\0';
    struct find_off fo = { .addr = (uintptr_t)bw_after_store, .off = -1 };
    dl_iterate_phdr(find_off_cb, &fo);
    if (fo.off < 0)
        return fprintf(stderr, "no file offset for bw_after_store\n"), 1;
    printf("addr 0x%lx\n", (unsigned long)(uintptr_t)&g_watched);
    printf("emu 0x%llx 0x%lx %s\n", fo.off, (unsigned long)((uintptr_t)bw_after_store - fo.bias), exe);
    printf("ready\n");
    fflush(stdout);

    int sig;
    sigwait(&set, &sig);
    clock_gettime(CLOCK_MONOTONIC, &go_ts);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (int i = NTHREADS - late; i < NTHREADS; i++)
        if (pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)i) != 0)
            return perror("pthread_create"), 1;

    uint64_t total = 0;
    double secs = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        total += counts[i];
        double s = since(&go_ts, &end_ts[i]);
        if (s > secs)
            secs = s;
    }
    printf("writes %llu", (unsigned long long)total);
    for (int i = 0; i < NTHREADS; i++)
        printf(" %llu", (unsigned long long)counts[i]);
    printf("\nseconds %.6f\n", secs);
    return 0;
}
