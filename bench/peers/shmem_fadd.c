/* OpenSHMEM remote atomic: PE 0 adds 1 to an 8-byte word of PE 1 with
 * shmem_long_atomic_fetch_add.
 * Timed in batches of 100 fetch-adds; sample = batch time / 100 (the memchan side
 * times fetch_add_u64 the same way).
 *
 * Built twice: as shmem_fadd the owner (PE 1) waits on another cache line while
 * PE 0 updates, so the word stays in PE 0's cache; as shmem_fadd_xcore (the name
 * is read from argv[0]) PE 1 rewrites the word in a loop while PE 0 updates it, so
 * the line really moves between the cores at every fetch-add: there each fetch-add is
 * timed alone (one counter read in the sample), 1 us after the previous one.
 */
#include <shmem.h>
#include "peer_common.h"

#define BATCH 100

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "shmem_fadd: needs exactly 2 PEs\n");
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
                sum += shmem_long_atomic_fetch_add(&w[0], 1, 1);
                uint64_t t1 = peer_ticks();
                if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz;
                continue;
            }
            uint64_t t0 = peer_ticks();
            for (int b = 0; b < BATCH; b++) sum += shmem_long_atomic_fetch_add(&w[0], 1, 1);
            uint64_t t1 = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / BATCH;
        }
        if (sum == 0) fprintf(stderr, "shmem_fadd: fetched nothing\n");
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
    if (me == 0) peer_report_time(&a, "oshmem", xcore ? "atomic_fetch_add_xcore_ns" : "atomic_fetch_add_ns", s, a.iters);
    free(s);
    shmem_free(w);
    shmem_finalize();
    return 0;
}
