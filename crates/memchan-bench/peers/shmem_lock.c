/* OpenSHMEM lock acquire + release (shmem_set_lock / shmem_clear_lock),
 * uncontended: PE 0 takes and releases the lock while PE 1 waits idle in a
 * barrier. One sample per acquire+release pair (one counter read per pair:
 * the end of one is the start of the next). */
#include <shmem.h>
#include "peer_common.h"

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0) fprintf(stderr, "shmem_lock: needs exactly 2 PEs\n");
        shmem_global_exit(2);
    }
    struct peer_args a = peer_parse_args(argc, argv);
    double *s = peer_samples(a.iters);
    long *lock = (long *)shmem_align(64, 64);
    *lock = 0;
    shmem_barrier_all();
    if (me == 0) {
        uint64_t prev = peer_ticks();
        for (long i = 0; i < a.warmup + a.iters; i++) {
            shmem_set_lock(lock);
            shmem_clear_lock(lock);
            uint64_t now = peer_ticks();
            if (i >= a.warmup) s[i - a.warmup] = (double)(now - prev) / a.tsc_ghz;
            prev = now;
        }
    }
    shmem_barrier_all();
    if (me == 0) peer_report_time(&a, "oshmem", "lock_acquire_release_ns", s, a.iters);
    free(s);
    shmem_free(lock);
    shmem_finalize();
    return 0;
}
