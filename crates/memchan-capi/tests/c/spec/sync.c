/* OpenSHMEM 1.5 section 9.9.2 and 9.11: shmem_sync(team) (and its deprecated
 * active-set form, which the generic still reaches with four arguments),
 * shmem_team_sync, shmem_sync_all, shmem_barrier_all; each orders a neighbour's
 * store-then-sync against this PE's load-after-sync. */
#include <shmem.h>
#include "../check.h"

static long v, pSync[SHMEM_BARRIER_SYNC_SIZE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), left = (me + n - 1) % n, right = (me + 1) % n;
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev) == 0, "split");
    for (int round = 1; round <= 40; round++) {
        shmem_long_p(&v, round * 100 + me, right);
        shmem_quiet();
        switch (round % 5) {
        case 0: CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "sync(WORLD)"); break;
        case 1: CHECK(shmem_team_sync(rev) == 0, "team_sync(rev)"); break;
        case 2: shmem_sync(0, 0, n, pSync); break;
        case 3: shmem_sync_all(); break;
        default: shmem_barrier_all(); break;
        }
        CHECK(v == round * 100 + left, "round %d: %ld", round, v);
        /* Nobody writes v again before everyone read it. */
        shmem_barrier_all();
    }
    shmem_team_destroy(rev);
    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
