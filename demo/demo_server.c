/* demo_server: a small multi-threaded "server" for vigil's demo, with a bug.
 *
 * It does nothing useful: four worker threads pretend to serve requests,
 * bumping global counters and now and then retuning g_config.max_clients.
 * It exists so `vigil maps` / `vigil read` have a live, changing target whose
 * globals have known names, types and addresses.
 *
 * The bug, for `vigil watch`: g_config.port starts at 8080 and nothing is
 * meant to write it again, yet after a config reload it reads 7936 (0x1f00:
 * its low byte zeroed).  The culprit is worker 3's config reload, asked for
 * with SIGHUP as servers do and repeated every ~300 ms from then on (the
 * "file" is watched): an
 * off-by-one in set_server_name() writes the name's terminator one byte
 * past g_config.name, onto the first byte of port.  Nothing in the source
 * mentions `port` there, which is the point: only a watch on the memory
 * finds it.  The label demo_after_stray_store marks the instruction right
 * after that store, the IP a data breakpoint reports for it; scripts/demo.sh
 * uses its file offset to emulate the trap with a uprobe on machines whose
 * breakpoints never fire (VIGIL_WATCH_EMULATE_TRAPS, src/watch/watch.h).
 * The workers exist before "ready" is printed, so a watch started after it
 * covers them even in emulation (which sees only threads present at attach).
 * The bug strikes only after the SIGHUP, not on a timer, so that the demo
 * shows the port intact, then broken, whatever the machine's speed: the
 * server logs "config reloaded" after the first reload, the state the
 * demo waits for before it says that clients fail.
 *
 *   demo_server [--seconds N] [--quiet]
 *
 * On start it prints its PID and, for each global, the runtime address and
 * the link-time ("static") address, i.e. the runtime address minus the load
 * bias of the main executable, which is what `vigil read PID @0x...` takes.
 * Then it prints a line "ready" and runs until killed (or N seconds pass).
 * Each "request" costs some CPU, for `vigil profile`: handle_request()
 * checksums the payload (checksum_block, its hot loop, inlined into it)
 * and sorts a small index with libc's qsort (compare_keys under qsort:
 * a stack only CFI unwinding gets right), then the worker sleeps ~15-25 ms,
 * so the server uses roughly a third of one core.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_WORKERS 4

struct config {
    char name[32];
    int port;
    int max_clients;
    double timeout_s;
};

/* Globals with external linkage: they appear in .symtab as GLOBAL OBJECT
 * symbols with their plain names, which is what `vigil read PID SYMBOL` looks up. */
struct config g_config = {
    .name = "demo-server",
    .port = 8080,
    .max_clients = 64,
    .timeout_s = 2.5,
};
unsigned long g_requests_served;
unsigned long g_bytes_in;
volatile uint32_t g_last_checksum;

static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_reload_asked;   /* SIGHUP: re-read the config */

static void on_signal(int sig)
{
    if (sig == SIGHUP)
        g_reload_asked = 1;
    else
        g_stop = 1;
}

/* Load bias of the main executable: the first object dl_iterate_phdr visits. */
static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1; /* stop after the main program */
}

static uintptr_t load_bias(void)
{
    uintptr_t bias = 0;
    dl_iterate_phdr(first_object, &bias);
    return bias;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && !g_stop) {
    }
}

/* xorshift: cheap per-thread pseudo-random numbers, no shared state. */
static unsigned xorshift(unsigned *s)
{
    unsigned x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* The payload's checksum: the hot loop of a request (inlined into
 * handle_request at -O2: the profile shows it as an inlined frame). */
static inline __attribute__((always_inline)) uint32_t checksum_block(const unsigned char *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

static int compare_keys(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* One request's work: what `vigil profile` finds the CPU going to. */
static __attribute__((noinline)) uint32_t handle_request(unsigned *seed)
{
    static __thread unsigned char payload[48 * 1024];
    uint32_t keys[1024];
    uint32_t sum = 0;

    for (size_t i = 0; i < sizeof payload; i += 64)
        payload[i] = (unsigned char)xorshift(seed);
    for (int round = 0; round < 3; round++)
        sum ^= checksum_block(payload, sizeof payload);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        keys[i] = xorshift(seed);
    qsort(keys, sizeof keys / sizeof keys[0], sizeof keys[0], compare_keys);
    return sum ^ keys[0];
}

/* The display name, copied from the "config file" on reload.  BUG: a name
 * of 32 characters or more is cut to 32, and its terminator then lands on
 * name[32], one past the array: the low byte of g_config.port.  noipa: one
 * copy of this function, so the label below is emitted once. */
static __attribute__((noipa)) void set_server_name(struct config *cfg, const char *name)
{
    size_t n = strlen(name);
    if (n > sizeof cfg->name)
        n = sizeof cfg->name;
    memcpy(cfg->name, name, n);
    cfg->name[n] = '\0';
    /* Nothing but this label between the store above and the return: it is
     * the address of the instruction after the store (the "memory" clobber
     * keeps the store before it). */
    __asm__ volatile(".globl demo_after_stray_store\ndemo_after_stray_store:" ::: "memory");
}

/* The config "file", re-read by worker 3 on SIGHUP and every ~300 ms after. */
static const char *const config_name = "demo-server.eu-west-1.internal.example";

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    unsigned seed = 2463534242u + id * 7919u;
    struct timespec last_reload = { 0, 0 };
    int reloads = 0;
    while (!g_stop) {
        unsigned r = xorshift(&seed);
        /* "Serve" one request: a small payload arrives, the counter moves. */
        __atomic_fetch_add(&g_bytes_in, 64 + r % 4032, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g_requests_served, 1, __ATOMIC_RELAXED);
        g_last_checksum = handle_request(&seed);
        /* Occasionally an "operator" retunes the limit: 48..127. */
        if (r % 100 == 0)
            __atomic_store_n(&g_config.max_clients, 48 + (int)(r / 100 % 80), __ATOMIC_RELAXED);
        if (id == 3 && g_reload_asked) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (reloads == 0 ||
                (now.tv_sec - last_reload.tv_sec) * 1000 + (now.tv_nsec - last_reload.tv_nsec) / 1000000 >= 300) {
                set_server_name(&g_config, config_name);
                last_reload = now;
                /* After the store: whoever reads this log finds the port broken. */
                if (reloads++ == 0) {
                    printf("config reloaded\n");
                    fflush(stdout);
                }
            }
        }
        sleep_ms(15 + r % 10);
    }
    return NULL;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--seconds N] [--quiet]\n", argv0);
}

int main(int argc, char **argv)
{
    long seconds = 0; /* 0: run until killed */
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;
            seconds = strtol(argv[++i], &end, 10);
            if (*end != '\0' || seconds < 0) {
                usage(argv[0]);
                return 2;
            }
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else {
            usage(argv[0]);
            return 2;
        }
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    /* The workers start before "ready": every thread exists when a tool
     * attaches after it. */
    pthread_t th[N_WORKERS];
    for (int i = 0; i < N_WORKERS; i++) {
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0) {
            perror("pthread_create");
            return 1;
        }
    }

    uintptr_t bias = load_bias();
    printf("demo_server pid %ld\n", (long)getpid());
    printf("load bias 0x%lx\n", (unsigned long)bias);
    printf("%-21s %-18s %s\n", "global", "address", "static");
#define SHOW(sym) \
    printf("%-21s 0x%-16lx @0x%lx\n", #sym, (unsigned long)(uintptr_t)&(sym), \
           (unsigned long)((uintptr_t)&(sym) - bias))
    SHOW(g_config);
    SHOW(g_config.port);
    SHOW(g_config.max_clients);
    SHOW(g_requests_served);
    SHOW(g_bytes_in);
#undef SHOW
    printf("ready\n");
    fflush(stdout);


    time_t start = time(NULL);
    while (!g_stop) {
        sleep_ms(200);
        if (seconds > 0 && time(NULL) - start >= seconds)
            g_stop = 1;
    }
    for (int i = 0; i < N_WORKERS; i++)
        pthread_join(th[i], NULL);
    if (!quiet)
        printf("served %lu requests, %lu bytes in\n", g_requests_served, g_bytes_in);
    return 0;
}
