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
    /* one counter read per round trip: the end of one is the start of the next */
    uint64_t prev = peer_ticks();
    for (long i = 1; i <= a.warmup + a.iters; i++) {
        if (me == 0) {
            shmem_long_p(&flags[0], i, 1);
            shmem_long_wait_until(&flags[8], SHMEM_CMP_EQ, i);
            uint64_t now = peer_ticks();
            if (i > a.warmup) s[i - 1 - a.warmup] = (double)(now - prev) / a.tsc_ghz / 2.0;
            prev = now;
        } else {
            shmem_long_wait_until(&flags[0], SHMEM_CMP_EQ, i);
            shmem_long_p(&flags[8], i, 0);
        }
    }
    shmem_barrier_all();
    if (me == 0) peer_report_time(&a, "oshmem", "latency_8b_one_way_ns", s, a.iters);
    free(s);
    shmem_free(flags);
    shmem_finalize();
    return 0;
}
