/* big_buffer: a process holding SIZE bytes (default 1 GiB) of filled anonymous
 * memory, for bench/read.sh.
 *
 *   big_buffer [SIZE_MIB]
 *
 * Every 8-byte word i holds i * 0x9E3779B97F4A7C15 (a pattern, not zeros: the
 * zero page would make reads unrealistically cheap, and the checksum check in
 * read.sh would prove nothing). Every page is therefore touched and resident.
 * Prints "ready <hex address without 0x> <size in bytes>" and sleeps until
 * killed (or until its parent dies).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 1024;
    if (mib < 1) {
        fprintf(stderr, "usage: %s [SIZE_MIB >= 1]\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    size_t size = (size_t)mib << 20;
    uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (size_t i = 0; i < size / 8; i++)
        p[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    printf("ready %lx %zu\n", (unsigned long)(uintptr_t)p, size);
    fflush(stdout);
    for (;;)
        pause();
}
