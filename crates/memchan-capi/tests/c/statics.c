/* Symmetric static and global data (.data and .bss) under `memchan run -n N`:
 * puts, gets, atomics, waits, a collective with a static pSync and stores through
 * shmem_ptr, no heap. */
#include <shmem.h>
#include <string.h>
#include "check.h"

long counter;                       /* .bss */
int table[64] = {1, 2, 3};          /* .data */
static double scale = 1.5;          /* .data, file-local */
static char note[32];               /* .bss, file-local */
static long psync[SHMEM_BARRIER_SYNC_SIZE];
static long ready;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(table[2] == 3 && scale == 1.5, "initialised data kept: %d %g", table[2], scale);
    CHECK(shmem_addr_accessible(&counter, right) && shmem_addr_accessible(note, right), "statics accessible");
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    int mine[4] = {10 * me, 10 * me + 1, 10 * me + 2, 10 * me + 3};
    shmem_int_put(table + 8, mine, 4, right);
    shmem_double_p(&scale, me + 0.25, right);
    char msg[32];
    snprintf(msg, sizeof msg, "from %d", me);
    shmem_putmem(note, msg, strlen(msg) + 1, right);
    shmem_long_atomic_add(&counter, me + 1, 0);
    shmem_barrier(0, 0, n, psync); /* a static pSync */

    for (int i = 0; i < 4; i++) CHECK(table[8 + i] == 10 * left + i, "table[%d]=%d", 8 + i, table[8 + i]);
    CHECK(scale == left + 0.25, "scale %g", scale);
    snprintf(msg, sizeof msg, "from %d", left);
    CHECK(strcmp(note, msg) == 0, "note '%s'", note);
    CHECK(shmem_long_g(&counter, 0) == (long)n * (n + 1) / 2, "counter on PE 0: %ld", shmem_long_g(&counter, 0));
    CHECK(shmem_int_g(table + 1, right) == 2, "int g of .data");

    /* A flag in .bss: PE 0 releases the others. */
    if (me == 0)
        for (int pe = 1; pe < n; pe++) shmem_long_p(&ready, 1, pe);
    else
        shmem_long_wait_until(&ready, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();

    /* shmem_ptr into another PE's globals: where SHMEM_TEAM_SHARED holds every PE
     * (one host, or a hub's PEs in one host domain) a plain store lands in its
     * .data; with the PE alone in it (MEMCHAN_DOMAIN=off), NULL. */
    int *there = shmem_ptr(table, right);
    if (shmem_team_n_pes(SHMEM_TEAM_SHARED) == n) {
        CHECK(there != NULL, "shmem_ptr to PE %d's table", right);
        CHECK(there[1] == 2, "a load from PE %d's .data: %d", right, there[1]);
        there[20 + me] = 500 + me;
    } else {
        CHECK(there == NULL || right == me, "shmem_ptr outside SHMEM_TEAM_SHARED");
    }
    shmem_barrier_all();
    if (shmem_team_n_pes(SHMEM_TEAM_SHARED) == n)
        CHECK(table[20 + left] == 500 + left, "PE %d's store through shmem_ptr: %d", left, table[20 + left]);
    shmem_barrier_all();
    printf("PE %d of %d: statics ok\n", me, n);
    shmem_finalize();
    return 0;
}
