/* OpenSHMEM write + acknowledge: shmem_long_p (8 bytes) to the peer followed by
 * shmem_quiet, which returns once the put is complete at the target.
 * Timed in batches of 100 put+quiet pairs; sample = batch time / 100
 * (the memchan side measures write_u64 + ack() exactly the same way). */
#include <shmem.h>
#include "peer_common.h"

#define BATCH 100

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "shmem_ack: needs exactly 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    long *dst = (long *)shmem_align(64, 64);
    dst[0] = 0;
    shmem_barrier_all();
    if (me == 0) {
        long v = 0;
        for (long i = 0; i < a.warmup + a.iters; i++) {
            uint64_t t0 = peer_ticks();
            for (int b = 0; b < BATCH; b++) {
                shmem_long_p(&dst[0], ++v, 1);
                shmem_quiet();
            }
            uint64_t t1 = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / BATCH;
        }
    }
    shmem_barrier_all();
    if (me == 0) peer_report_time(&a, "oshmem", "ack_ns", s, a.iters);
    free(s);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
