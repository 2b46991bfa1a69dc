/* OpenSHMEM shmem_barrier_all with any number of PEs (2 or more; the bench runs
 * 2, 8 and 64 on one host). With 2 PEs one sample is the mean of a batch of 100
 * barriers, as on memchan's side: one sample per barrier alternates between a
 * short and a long one whenever one PE is half a barrier ahead, and the median
 * of such samples is whichever kind is more frequent. With more PEs one sample
 * per barrier (PE 0's view, one counter read per barrier: the end of one is the
 * start of the next). With 2 PEs and PEER_TURNS, in the bench's turns. */
#include <shmem.h>
#include "peer_common.h"

#define BATCH 100

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    int npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0) fprintf(stderr, "shmem_barrier: needs at least 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    int batch = npes == 2 ? BATCH : 1;
    /* Two PEs: in windows when the bench alternates this program with memchan's
     * barrier (see peer_common.h); the PEs start each window together. */
    struct peer_turns turns = {-1, -1};
    if (npes == 2) turns = peer_turns_open(me);
    int windows = peer_turn_windows(&turns);
    long total = a.warmup + a.iters;
    for (int win = 0; win < windows; win++) {
        long lo = total * win / windows, hi = total * (win + 1) / windows;
        peer_turn_begin(&turns);
        shmem_barrier_all();
        uint64_t prev = peer_ticks();
        for (long i = lo; i < hi; i++) {
            for (int b = 0; b < batch; b++) shmem_barrier_all();
            uint64_t now = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz / batch;
            prev = now;
        }
        shmem_barrier_all();
        peer_turn_end(&turns);
    }
    if (me == 0) peer_report_time(&a, "oshmem", "barrier_ns", s, a.iters);
    free(s);
    shmem_finalize();
    return 0;
}
