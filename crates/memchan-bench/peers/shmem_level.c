/* The OpenSHMEM level of `memchan bench`: one program, built twice from this
 * source, once with Open MPI's oshcc (-DSHMEM_LEVEL_SIDE='"oshmem"') and once
 * with memchan's (-DSHMEM_LEVEL_SIDE='"memchan"'), and run on the same two
 * cores. It uses only calls both libraries have (memchan's first slice of
 * shmem.h), so the two builds run the very same code.
 *
 * Usage: shmem_level OP ITERS WARMUP TSC_GHZ [SAMPLES_FILE], 2 PEs; PE 0 times,
 * PE 1 is the target and checks afterwards that the operations arrived.
 *   put8     shmem_putmem of 8 bytes + shmem_quiet    ns, batches of 100
 *   get8     shmem_getmem of 8 bytes                  ns, batches of 100
 *   fadd     shmem_long_atomic_fetch_add              ns, batches of 100
 *   barrier  shmem_barrier_all                        ns, batches of 100
 *   put1m    64 x shmem_putmem of 1 MiB + shmem_quiet GB/s per window
 * Output: peer_common.h's JSON line, "peer" being SHMEM_LEVEL_SIDE. With
 * PEER_TURNS set, the iterations run in windows the bench alternates with the
 * other build's (peer_common.h, "Turns").
 */
#include <shmem.h>
#include "peer_common.h"

#ifndef SHMEM_LEVEL_SIDE
#error "build with -DSHMEM_LEVEL_SIDE='\"memchan\"' or '\"oshmem\"'"
#endif

#define BATCH 100
#define WINDOW 64
#define MIB (1024 * 1024)

/* Ends the job on a failed check: PE 0's report would otherwise be believed. */
static void fail(const char *op, const char *what, long got, long want) {
    fprintf(stderr, "shmem_level %s: %s: got %ld, expected %ld\n", op, what, got, want);
    exit(5);
}

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (argc < 2 || shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "usage: shmem_level OP ITERS WARMUP TSC_GHZ [SAMPLES_FILE], 2 PEs\n");
        exit(2);
    }
    const char *op = argv[1];
    struct peer_args a = peer_parse_args(argc - 1, argv + 1);
    double *s = peer_samples(a.iters);
    long total = a.warmup + a.iters;
    /* word [0] (put/get), [8] (fetch-add counter), each on its own cache line */
    long *w = (long *)shmem_malloc(128);
    char *big = (char *)shmem_malloc(MIB);
    char *src = (char *)malloc(MIB);
    if (!w || !big || !src) {
        fprintf(stderr, "shmem_level: out of memory\n");
        exit(3);
    }
    memset(src, 0x5a, MIB);
    memset(big, 0, MIB);
    w[0] = me == 1 ? 42 : 0;
    w[8] = 0;
    shmem_barrier_all();

    const char *figure = NULL;
    int bw = 0;
    if (strcmp(op, "barrier") == 0) figure = "shmem_barrier_ns";
    else if (strcmp(op, "put8") == 0) figure = "shmem_put_8b_ns";
    else if (strcmp(op, "get8") == 0) figure = "shmem_get_8b_ns";
    else if (strcmp(op, "fadd") == 0) figure = "shmem_fadd_ns";
    else if (strcmp(op, "put1m") == 0) figure = "shmem_put_1mib_gbps", bw = 1;
    else {
        if (me == 0) fprintf(stderr, "shmem_level: unknown OP %s (put8, get8, fadd, barrier, put1m)\n", op);
        exit(2);
    }
    /* In windows when the bench alternates this program with its twin (see
     * peer_common.h); the PEs start each window together. */
    struct peer_turns turns = peer_turns_open(me);
    int windows = peer_turn_windows(&turns);
    long sum = 0, v = 0;
    for (int win = 0; win < windows; win++) {
        long lo = total * win / windows, hi = total * (win + 1) / windows;
        peer_turn_begin(&turns);
        shmem_barrier_all();
        if (strcmp(op, "barrier") == 0) {
            /* batches, as peers/shmem_barrier.c says why */
            uint64_t prev = peer_ticks();
            for (long i = lo; i < hi; i++) {
                for (int b = 0; b < BATCH; b++) shmem_barrier_all();
                uint64_t now = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz / BATCH;
                prev = now;
            }
        } else if (me == 0 && strcmp(op, "put8") == 0) {
            for (long i = lo; i < hi; i++) {
                uint64_t t0 = peer_ticks();
                for (int b = 0; b < BATCH; b++) {
                    v++;
                    shmem_putmem(&w[0], &v, sizeof v, 1);
                    shmem_quiet();
                }
                uint64_t t1 = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / BATCH;
            }
        } else if (me == 0 && strcmp(op, "get8") == 0) {
            for (long i = lo; i < hi; i++) {
                uint64_t t0 = peer_ticks();
                for (int b = 0; b < BATCH; b++) {
                    long x;
                    shmem_getmem(&x, &w[0], sizeof x, 1);
                    sum += x;
                }
                uint64_t t1 = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / BATCH;
            }
        } else if (me == 0 && strcmp(op, "fadd") == 0) {
            for (long i = lo; i < hi; i++) {
                uint64_t t0 = peer_ticks();
                for (int b = 0; b < BATCH; b++) sum += shmem_long_atomic_fetch_add(&w[8], 1, 1);
                uint64_t t1 = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / BATCH;
            }
        } else if (me == 0) { /* put1m */
            for (long i = lo; i < hi; i++) {
                uint64_t t0 = peer_ticks();
                for (int k = 0; k < WINDOW; k++) shmem_putmem(big, src, MIB, 1);
                shmem_quiet();
                uint64_t t1 = peer_ticks();
                double ns = (double)(t1 - t0) / a.tsc_ghz;
                if (i >= a.warmup) s[i - a.warmup] = (double)WINDOW * MIB / ns; /* bytes/ns = GB/s */
            }
        }
        shmem_barrier_all();
        peer_turn_end(&turns);
    }
    if (me == 0 && strcmp(op, "get8") == 0 && sum != 42L * BATCH * total)
        fail(op, "sum of the words read", sum, 42L * BATCH * total);
    if (me == 0 && strcmp(op, "fadd") == 0) {
        long n = BATCH * total; /* the old values were 0, 1, ..., n - 1 */
        if (sum != n * (n - 1) / 2) fail(op, "sum of the old values", sum, n * (n - 1) / 2);
    }
    shmem_barrier_all();
    /* PE 1 checks what arrived (every PE knows op and total). */
    if (me == 1) {
        if (strcmp(op, "put8") == 0 && w[0] != BATCH * total) fail(op, "last word put", w[0], BATCH * total);
        if (strcmp(op, "fadd") == 0 && w[8] != BATCH * total) fail(op, "counter", w[8], BATCH * total);
        if (strcmp(op, "put1m") == 0 && (big[0] != 0x5a || big[MIB - 1] != 0x5a))
            fail(op, "first/last byte put", big[0] == 0x5a ? big[MIB - 1] : big[0], 0x5a);
    }
    if (me == 0) {
        if (bw)
            peer_report_bw(&a, SHMEM_LEVEL_SIDE, figure, s, a.iters);
        else
            peer_report_time(&a, SHMEM_LEVEL_SIDE, figure, s, a.iters);
    }
    shmem_barrier_all();
    free(src);
    free(s);
    shmem_free(big);
    shmem_free(w);
    shmem_finalize();
    return 0;
}
