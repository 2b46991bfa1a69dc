/* Shared helpers for the memchan bench peers (MPI and OpenSHMEM programs).
 *
 * Timing matches the Rust side of `memchan bench`: lfence + rdtsc around each
 * sample, ticks converted to ns with the TSC frequency the bench calibrated
 * (passed on the command line, so every program uses the same clock).
 *
 * Usage of every program: PROG ITERS WARMUP TSC_GHZ [SAMPLES_FILE]
 *
 * Every program prints exactly one JSON line on stdout:
 *   {"peer":"...","figure":"...","unit":"...","median":X,"p99":Y,"samples":N}
 * For latencies p99 is the 99th percentile (slow tail); for bandwidths it is
 * the bandwidth of the 99th-percentile-slowest window (1st percentile GB/s).
 * With SAMPLES_FILE, the raw samples (one per line, in the unit above) are
 * also written there, so the bench can pool them over rounds.
 */
#ifndef MEMCHAN_PEER_COMMON_H
#define MEMCHAN_PEER_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <x86intrin.h>

static inline uint64_t peer_ticks(void) {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

struct peer_args {
    long iters;
    long warmup;
    double tsc_ghz; /* ticks per ns */
    const char *samples_file; /* NULL: none */
};

static struct peer_args peer_parse_args(int argc, char **argv) {
    struct peer_args a;
    if (argc < 4) {
        fprintf(stderr, "usage: %s ITERS WARMUP TSC_GHZ [SAMPLES_FILE]\n", argv[0]);
        exit(2);
    }
    a.iters = strtol(argv[1], NULL, 10);
    a.warmup = strtol(argv[2], NULL, 10);
    a.tsc_ghz = strtod(argv[3], NULL);
    a.samples_file = argc > 4 ? argv[4] : NULL;
    if (a.iters < 1 || a.warmup < 0 || !(a.tsc_ghz > 0.0)) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        exit(2);
    }
    return a;
}

static double *peer_samples(long n) {
    double *s = (double *)calloc((size_t)n, sizeof(double));
    if (!s) {
        fprintf(stderr, "out of memory\n");
        exit(3);
    }
    return s;
}

static int peer_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nearest-rank percentile of a sorted array, q in [0,1] */
static double peer_pct(const double *sorted, long n, double q) {
    long idx = (long)(q * (double)(n - 1) + 0.5);
    if (idx < 0) idx = 0;
    if (idx > n - 1) idx = n - 1;
    return sorted[idx];
}

static void peer_write_samples(const struct peer_args *a, const double *s, long n) {
    if (!a->samples_file) return;
    FILE *f = fopen(a->samples_file, "w");
    if (!f) {
        perror(a->samples_file);
        exit(4);
    }
    for (long i = 0; i < n; i++) fprintf(f, "%.4f\n", s[i]);
    if (fclose(f) != 0) {
        perror(a->samples_file);
        exit(4);
    }
}

/* Latency-like samples (smaller is better): median and 99th percentile. */
static void peer_report_time(const struct peer_args *a, const char *peer, const char *figure, double *s, long n) {
    peer_write_samples(a, s, n);
    qsort(s, (size_t)n, sizeof(double), peer_cmp_double);
    printf("{\"peer\":\"%s\",\"figure\":\"%s\",\"unit\":\"ns\",\"median\":%.3f,\"p99\":%.3f,\"samples\":%ld}\n",
           peer, figure, peer_pct(s, n, 0.5), peer_pct(s, n, 0.99), n);
    fflush(stdout);
}

/* Bandwidth samples (larger is better): median and the slow-tail value. */
static void peer_report_bw(const struct peer_args *a, const char *peer, const char *figure, double *s, long n) {
    peer_write_samples(a, s, n);
    qsort(s, (size_t)n, sizeof(double), peer_cmp_double);
    printf("{\"peer\":\"%s\",\"figure\":\"%s\",\"unit\":\"GB/s\",\"median\":%.4f,\"p99\":%.4f,\"samples\":%ld}\n",
           peer, figure, peer_pct(s, n, 0.5), peer_pct(s, n, 0.01), n);
    fflush(stdout);
}

/* Turns. With PEER_TURNS=DIR in the environment the program runs its timed
 * iterations in PEER_TURN_WINDOWS windows and the bench alternates them with the
 * windows of the program it is compared with, started beside it: both then meet
 * the same states of the machine (on a VM the core-to-core latency moves between
 * levels from one second to the next), and whichever side waits sleeps in read().
 * Each PE (rank R) writes a byte to DIR/done.R when it is ready and after each
 * window, and reads one from DIR/go.R before each window. The bench holds both
 * FIFOs open before it starts the program (so these opens do not block) and
 * closes them if anything fails: a PE waiting for its turn then reads end of file
 * and exits. Without PEER_TURNS: one window, no I/O. */
#define PEER_TURN_WINDOWS 10

struct peer_turns {
    int go, done; /* -1: no turns */
};

static void peer_turn_fail(const char *what, const char *path) {
    fprintf(stderr, "peer turns: %s %s\n", what, path);
    exit(6);
}

/* Opens rank `me`'s FIFOs and says ready; {-1, -1} without PEER_TURNS. */
static struct peer_turns peer_turns_open(int me) {
    struct peer_turns t = {-1, -1};
    const char *dir = getenv("PEER_TURNS");
    if (!dir || !*dir) return t;
    char path[4096];
    snprintf(path, sizeof path, "%s/go.%d", dir, me);
    t.go = open(path, O_RDONLY);
    if (t.go < 0) peer_turn_fail("cannot open", path);
    snprintf(path, sizeof path, "%s/done.%d", dir, me);
    t.done = open(path, O_WRONLY);
    if (t.done < 0) peer_turn_fail("cannot open", path);
    if (write(t.done, "r", 1) != 1) peer_turn_fail("cannot write", path);
    return t;
}

static int peer_turn_windows(const struct peer_turns *t) { return t->go < 0 ? 1 : PEER_TURN_WINDOWS; }

/* Waits for the bench's go (nothing without turns). */
static void peer_turn_begin(const struct peer_turns *t) {
    char c;
    if (t->go >= 0 && read(t->go, &c, 1) != 1) peer_turn_fail("cannot read", "go");
}

/* Tells the bench this PE's window is over (nothing without turns). */
static void peer_turn_end(const struct peer_turns *t) {
    if (t->done >= 0 && write(t->done, "d", 1) != 1) peer_turn_fail("cannot write", "done");
}

/* One OpenSHMEM operation on an 8-byte word of PE 1, timed on PE 0: the whole
 * program of shmem_get.c and shmem_fadd.c, which define before including this
 * header (after <shmem.h>):
 *   PEER_WORD_PROG         the program's name, for messages
 *   PEER_WORD_OP(w)        the operation on the word at `w` of PE 1 (returns a long)
 *   PEER_WORD_FIGURE       the figure's name, and PEER_WORD_FIGURE_XCORE for _xcore
 *   PEER_WORD_NOTHING      what to say if every operation returned 0
 * Timed in batches of PEER_WORD_BATCH; sample = batch time / PEER_WORD_BATCH.
 *
 * Built twice: as PROG the owner (PE 1) waits on another cache line while PE 0
 * works, so the word stays in PE 0's cache; as PROG_xcore (the name is read from
 * argv[0]) PE 1 rewrites the word in a loop while PE 0 works, so the line really
 * moves between the cores at every operation: there each one is timed alone (one
 * counter read in the sample), 1 us after the previous one.
 */
#ifdef PEER_WORD_OP
#define PEER_WORD_BATCH 100

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, PEER_WORD_PROG ": needs exactly 2 PEs\n");
        shmem_global_exit(2);
    }
    int xcore = strstr(argv[0], "_xcore") != NULL;
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    /* word at [0]; the phase flag (PE 0 -> PE 1) and the answer (PE 1 -> PE 0)
     * on cache lines of their own */
    long *w = (long *)shmem_align(64, 192);
    w[0] = 1;
    w[8] = 0;
    w[16] = 0;
    shmem_barrier_all();
    if (me == 0) {
        if (xcore) {
            shmem_long_p(&w[8], 1, 1);
            shmem_quiet();
            shmem_long_wait_until(&w[16], SHMEM_CMP_EQ, 1);
        }
        long sum = 0;
        /* xcore: one operation per sample, 1 us apart, so that the owner has
         * taken the line back before each one (the sample holds one counter read) */
        uint64_t gap = (uint64_t)(a.tsc_ghz * 1000.0);
        for (long i = 0; i < a.warmup + a.iters; i++) {
            if (xcore) {
                uint64_t until = peer_ticks() + gap;
                while (peer_ticks() < until) {}
                uint64_t t0 = peer_ticks();
                sum += PEER_WORD_OP(&w[0]);
                uint64_t t1 = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz;
                continue;
            }
            uint64_t t0 = peer_ticks();
            for (int b = 0; b < PEER_WORD_BATCH; b++) sum += PEER_WORD_OP(&w[0]);
            uint64_t t1 = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / PEER_WORD_BATCH;
        }
        if (sum == 0) fprintf(stderr, PEER_WORD_PROG ": " PEER_WORD_NOTHING "\n");
        shmem_long_p(&w[8], 2, 1);
        shmem_quiet();
    } else {
        volatile long *word = &w[0], *phase = &w[8];
        if (xcore) {
            shmem_long_wait_until(&w[8], SHMEM_CMP_EQ, 1);
            shmem_long_p(&w[16], 1, 0);
            shmem_quiet();
            long v = 1;
            while (*phase != 2) *word = ++v;
        } else {
            shmem_long_wait_until(&w[8], SHMEM_CMP_EQ, 2);
        }
    }
    shmem_barrier_all();
    if (me == 0) peer_report_time(&a, "oshmem", xcore ? PEER_WORD_FIGURE_XCORE : PEER_WORD_FIGURE, s, a.iters);
    free(s);
    shmem_free(w);
    shmem_finalize();
    return 0;
}
#endif /* PEER_WORD_OP */

#endif
