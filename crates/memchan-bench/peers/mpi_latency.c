/* MPI 8-byte ping-pong, one-way latency = round trip / 2 (blocking Send/Recv). */
#include <mpi.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "mpi_latency: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    uint64_t buf = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    /* one counter read per round trip: the end of one is the start of the next */
    uint64_t prev = peer_ticks();
    for (long i = 0; i < a.warmup + a.iters; i++) {
        if (rank == 0) {
            buf = (uint64_t)i;
            MPI_Send(&buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t now = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz / 2.0;
            prev = now;
        } else {
            MPI_Recv(&buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) peer_report_time(&a, "mpi", "latency_8b_one_way_ns", s, a.iters);
    free(s);
    MPI_Finalize();
    return 0;
}
