/* many_maps: a process with N (default 10000) separate memory mappings, for
 * bench/maps.sh.
 *
 *   many_maps [N]
 *
 * Reserves N pages in one anonymous read-write mapping, then mprotects every
 * other page to read-only: neighbouring pages differ in protection, so the
 * kernel cannot merge them and /proc/PID/maps shows N distinct VMAs (rw-p,
 * r--p, rw-p, ...). The usual file-backed ELF images (the executable, libc,
 * ld.so) and [heap]/[stack]/[vdso] come on top, as in any process.
 * Prints "ready <first address> <N>" and sleeps until killed (or until its
 * parent dies).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    if (n < 1) {
        fprintf(stderr, "usage: %s [N >= 1]\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    long page = sysconf(_SC_PAGESIZE);
    char *base = mmap(NULL, (size_t)n * (size_t)page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        base[i * page] = (char)i; /* touch: resident, like real data */
        if (i % 2 == 1 && mprotect(base + i * page, (size_t)page, PROT_READ) != 0) {
            perror("mprotect (raise vm.max_map_count?)");
            return 1;
        }
    }
    printf("ready %p %ld\n", (void *)base, n);
    fflush(stdout);
    for (;;)
        pause();
}
