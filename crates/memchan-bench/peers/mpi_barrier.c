/* MPI_Barrier of every rank: rank 0 times each barrier (exit to exit). */
#include <mpi.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    MPI_Barrier(MPI_COMM_WORLD);
    /* one counter read per barrier: the end of one is the start of the next */
    uint64_t prev = peer_ticks();
    for (long i = 0; i < a.warmup + a.iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t now = peer_ticks();
        if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz;
        prev = now;
    }
    if (rank == 0) peer_report_time(&a, "mpi", "barrier_ns", s, a.iters);
    free(s);
    MPI_Finalize();
    return 0;
}
