/* OpenSHMEM 8-byte ping-pong: shmem_long_p into the peer's flag, then
 * shmem_long_wait_until on our own flag. One-way latency = round trip / 2. */
#include <shmem.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "shmem_latency: needs exactly 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    /* two separate cache lines: ping lands in line 0, pong in line 1 */
    long *flags = (long *)shmem_align(128, 128);
    flags[0] = 0;
    flags[8] = 0;
    shmem_barrier_all();
    for (long i = 1; i <= a.warmup + a.iters; i++) {
        if (me == 0) {
            uint64_t t0 = peer_ticks();
            shmem_long_p(&flags[0], i, 1);
            shmem_long_wait_until(&flags[8], SHMEM_CMP_EQ, i);
            uint64_t t1 = peer_ticks();
            if (i > a.warmup) s[i - 1 - a.warmup] = (double)(t1 - t0) / a.tsc_ghz / 2.0;
        } else {
            shmem_long_wait_until(&flags[0], SHMEM_CMP_EQ, i);
            shmem_long_p(&flags[8], i, 0);
        }
    }
    shmem_barrier_all();
    if (me == 0) peer_report_time("oshmem", "latency_8b_one_way_ns", s, a.iters);
    free(s);
    shmem_free(flags);
    shmem_finalize();
    return 0;
}
