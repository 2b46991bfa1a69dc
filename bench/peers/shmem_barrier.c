/* OpenSHMEM shmem_barrier_all with any number of PEs (2 or more; the bench runs
 * 2, 8 and 64 on one host); one sample per barrier (PE 0's view, one counter
 * read per barrier: the end of one is the start of the next). */
#include <shmem.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        if (me == 0) fprintf(stderr, "shmem_barrier: needs at least 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    shmem_barrier_all();
    uint64_t prev = peer_ticks();
    for (long i = 0; i < a.warmup + a.iters; i++) {
        shmem_barrier_all();
        uint64_t now = peer_ticks();
        if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz;
        prev = now;
    }
    if (me == 0) peer_report_time(&a, "oshmem", "barrier_ns", s, a.iters);
    free(s);
    shmem_finalize();
    return 0;
}
