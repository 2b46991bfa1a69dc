/* MPI 1 MiB bandwidth, osu_bw style: a window of 64 non-blocking sends of the
 * same buffer, the receiver answers with a 4-byte ack after each window.
 * One sample = one window: 64 MiB / (time from first Isend to the ack). */
#include <mpi.h>
#include "peer_common.h"

#define WINDOW 64
#define MSG (1024 * 1024)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "mpi_bw: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, MSG) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(buf, rank + 1, MSG);
    MPI_Request req[WINDOW];
    int ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < a.warmup + a.iters; i++) {
        if (rank == 0) {
            uint64_t t0 = peer_ticks();
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buf, MSG, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t t1 = peer_ticks();
            double ns = (double)(t1 - t0) / a.tsc_ghz;
            if (i >= a.warmup) s[i - a.warmup] = (double)WINDOW * (double)MSG / ns; /* bytes/ns = GB/s */
        } else {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buf, MSG, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) peer_report_bw(&a, "mpi", "bandwidth_1mib_gbps", s, a.iters);
    free(s);
    free(buf);
    MPI_Finalize();
    return 0;
}
