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

#endif
