/* OpenSHMEM shmem_barrier_all with 2 PEs; one sample per barrier (PE 0's view). */
#include <shmem.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "shmem_barrier: needs exactly 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    shmem_barrier_all();
    for (long i = 0; i < a.warmup + a.iters; i++) {
        uint64_t t0 = peer_ticks();
        shmem_barrier_all();
        uint64_t t1 = peer_ticks();
        if (i >= a.warmup) s[i - a.warmup] = (double)(t1 - t0) / a.tsc_ghz;
    }
    if (me == 0) peer_report_time("oshmem", "barrier_ns", s, a.iters);
    free(s);
    shmem_finalize();
    return 0;
}
