/* The C11 generic interfaces (OpenSHMEM 1.5): shmem_put / get / p / g / _nbi / iput /
   iget / put_signal, the atomics, wait_until / test and the team reductions called
   without a type in the name, on several element types, each checked against what
   the typed function it must select would have done. Built with -std=c11. */
#include <shmem.h>
#include <string.h>
#include "check.h"

static long lsrc[4], ldst[4];
static double dsrc[4], ddst[4];
static short ssrc[8], sdst[8];
static unsigned int uword;
static int iword, flag;
static long long llword;
static uint64_t sig;
static long red_in[2], red_out[2];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < 4; i++) {
        lsrc[i] = 100 * me + i;
        dsrc[i] = me + i / 4.0;
    }
    for (int i = 0; i < 8; i++) ssrc[i] = (short)(10 * me + i);
    shmem_barrier_all();

    /* RMA on long, double and short: each lands as the typed call's would. */
    shmem_put(ldst, lsrc, 4, right);
    shmem_put_nbi(ddst, dsrc, 4, right);
    shmem_iput(sdst, ssrc, 2, 1, 4, right); /* ssrc[0..4) to sdst[0, 2, 4, 6] */
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 4; i++) {
        CHECK(ldst[i] == 100 * left + i, "put: ldst[%d] = %ld", i, ldst[i]);
        CHECK(ddst[i] == left + i / 4.0, "put_nbi: ddst[%d] = %f", i, ddst[i]);
        CHECK(sdst[2 * i] == 10 * left + i, "iput: sdst[%d] = %d", 2 * i, sdst[2 * i]);
    }
    long back[4];
    shmem_get(back, lsrc, 4, right);
    double dback[4];
    shmem_get_nbi(dback, dsrc, 4, right);
    short sback[2];
    shmem_iget(sback, ssrc, 1, 3, 2, right); /* ssrc[0], ssrc[3] of the right PE */
    shmem_quiet();
    for (int i = 0; i < 4; i++) {
        CHECK(back[i] == 100 * right + i, "get: back[%d] = %ld", i, back[i]);
        CHECK(dback[i] == right + i / 4.0, "get_nbi: dback[%d] = %f", i, dback[i]);
    }
    CHECK(sback[0] == 10 * right && sback[1] == 10 * right + 3, "iget: %d %d", sback[0], sback[1]);
    shmem_p(&llword, 7LL * me, right);
    shmem_barrier_all();
    CHECK(llword == 7LL * left, "p: llword = %lld", llword);
    CHECK(shmem_g(&llword, right) == 7LL * me, "g");
    shmem_barrier_all(); /* every PE checked llword before the atomics change it */

    /* Atomics: every PE adds to PE 0's int, fetch-adds its unsigned word, and one
       compare_swap on an int wins. */
    shmem_atomic_add(&iword, me + 1, 0);
    shmem_atomic_fetch_add(&uword, 2u, 0);
    shmem_atomic_inc(&llword, 0);
    shmem_barrier_all();
    if (me == 0) {
        int want = n * (n + 1) / 2;
        CHECK(iword == want, "atomic_add: %d, want %d", iword, want);
        CHECK(uword == 2u * (unsigned)n, "atomic_fetch_add: %u", uword);
    }
    CHECK(shmem_atomic_fetch(&iword, 0) == n * (n + 1) / 2, "atomic_fetch");
    shmem_barrier_all();
    int old = shmem_atomic_compare_swap(&flag, 0, me + 1, 0);
    unsigned int was = shmem_atomic_fetch_or(&uword, 1u << 20, 0);
    (void)was;
    shmem_barrier_all();
    int winner = shmem_atomic_fetch(&flag, 0);
    int nbi = -1;
    shmem_atomic_fetch_nbi(&nbi, &flag, 0);
    shmem_quiet();
    CHECK(nbi == winner, "atomic_fetch_nbi: %d, want %d", nbi, winner);
    CHECK(winner >= 1 && winner <= n, "compare_swap winner %d", winner);
    CHECK(old == 0 || old == winner, "compare_swap saw %d", old);
    CHECK((shmem_atomic_fetch(&uword, 0) & (1u << 20)) != 0, "atomic_fetch_or");

    /* put_signal and wait_until on the signal word; test on an int. */
    shmem_barrier_all();
    shmem_put_signal(ldst, lsrc, 1, &sig, (uint64_t)me + 1, SHMEM_SIGNAL_SET, right);
    shmem_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)left + 1);
    CHECK(ldst[0] == 100 * left, "put_signal's data");
    shmem_barrier_all();
    iword = 0;
    shmem_barrier_all();
    shmem_atomic_set(&iword, 5, right);
    while (!shmem_test(&iword, SHMEM_CMP_EQ, 5)) {
    }

    /* A team reduction selected by the destination's type. */
    red_in[0] = me;
    red_in[1] = 1;
    shmem_barrier_all();
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, red_out, red_in, 2) == 0, "sum_reduce");
    CHECK(red_out[0] == (long)n * (n - 1) / 2 && red_out[1] == n, "sum_reduce: %ld %ld", red_out[0], red_out[1]);
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, red_out, red_in, 1) == 0 && red_out[0] == n - 1, "max_reduce");

    shmem_barrier_all();
    printf("PE %d of %d: generics ok\n", me, n);
    shmem_finalize();
    return 0;
}
