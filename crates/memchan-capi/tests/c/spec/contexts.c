/* OpenSHMEM 1.5 sections 9.5 and 9.6-9.8 through contexts: shmem_ctx_create,
 * shmem_team_create_ctx, shmem_ctx_get_team, and the C11 generic RMA, signal and
 * atomic interfaces in both their forms (context first and not), on several types. */
#include <shmem.h>
#include <stdint.h>
#include "../check.h"

static long lbuf[8];
static int ibuf[8];
static double dbuf[8];
static unsigned int ubuf[1];
static int32_t i32buf[1];
static uint64_t sig;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    shmem_ctx_t ctx, tctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
    shmem_team_t t = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(ctx, &t) == 0 && t == SHMEM_TEAM_WORLD, "a created ctx is on WORLD");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 && t == SHMEM_TEAM_WORLD, "the default ctx is on WORLD");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID, "INVALID has no team");
    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev) == 0, "split");
    CHECK(shmem_team_create_ctx(rev, 0, &tctx) == 0, "team_create_ctx");
    CHECK(shmem_ctx_get_team(tctx, &t) == 0 && t == rev, "the team ctx names its team");

    /* RMA through the generics, with and without a context. */
    long lsrc[8];
    double dsrc[8];
    for (int i = 0; i < 8; i++) { lsrc[i] = 10 * me + i; dsrc[i] = me + i / 10.0; }
    shmem_barrier_all();
    shmem_put(lbuf, lsrc, 4, right);
    shmem_put(ctx, lbuf + 4, lsrc + 4, 4, right);
    shmem_put(tctx, dbuf, dsrc, 8, right);
    shmem_p(ibuf, 5 * me, right);
    shmem_p(ctx, ibuf + 1, 6 * me, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_quiet(tctx);
    shmem_barrier_all();
    for (int i = 0; i < 8; i++) CHECK(lbuf[i] == 10 * left + i, "put word %d: %ld", i, lbuf[i]);
    for (int i = 0; i < 8; i++) CHECK(dbuf[i] == left + i / 10.0, "ctx put double %d", i);
    CHECK(ibuf[0] == 5 * left && ibuf[1] == 6 * left, "p: %d %d", ibuf[0], ibuf[1]);
    long got[8];
    shmem_get(ctx, got, lbuf, 8, right);
    for (int i = 0; i < 8; i++) CHECK(got[i] == 10 * me + i, "ctx get %d", i);
    CHECK(shmem_g(ctx, ibuf, right) == 5 * me, "ctx g");
    CHECK(shmem_g(ibuf + 1, right) == 6 * me, "g");
    long strided[4];
    shmem_iget(ctx, strided, lbuf, 1, 2, 4, right);
    for (int i = 0; i < 4; i++) CHECK(strided[i] == 10 * me + 2 * i, "ctx iget %d", i);
    shmem_get_nbi(ctx, got, lbuf, 8, left);
    shmem_ctx_quiet(ctx);
    CHECK(got[7] == 10 * ((left + n - 1) % n) + 7, "ctx get_nbi");
    shmem_barrier_all();

    /* Put with signal, context first. */
    sig = 0;
    shmem_barrier_all();
    shmem_put_signal(ctx, lbuf, lsrc, 8, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
    CHECK(lbuf[3] == 10 * left + 3, "data before the signal");
    shmem_barrier_all();

    /* Atomics: generic, context first, on long, double, unsigned int and int32_t (an
     * int: the bitwise AMOs take it as int32). */
    lbuf[0] = 0;
    dbuf[0] = 0;
    ubuf[0] = 0;
    i32buf[0] = 0;
    shmem_barrier_all();
    shmem_atomic_add(ctx, &lbuf[0], 1L, 0);
    long old = shmem_atomic_fetch_add(&lbuf[0], 2L, 0);
    CHECK(old >= 0 && old < 3L * n, "fetch_add old value %ld", old);
    shmem_atomic_set(tctx, &dbuf[0], 1.5, 0);
    shmem_atomic_fetch_or(ctx, &ubuf[0], 1u << me, 0);
    shmem_atomic_or(&i32buf[0], (int32_t)(1 << me), 0);
    shmem_ctx_quiet(ctx);
    shmem_ctx_quiet(tctx);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(lbuf[0] == 3L * n, "adds gave %ld", lbuf[0]);
        CHECK(dbuf[0] == 1.5, "set double");
        CHECK(ubuf[0] == (1u << n) - 1 && i32buf[0] == (1 << n) - 1, "or bits %x %x", ubuf[0], (unsigned)i32buf[0]);
    }
    CHECK(shmem_atomic_fetch(ctx, &lbuf[0], 0) == 3L * n, "ctx fetch");
    long cmp = shmem_atomic_compare_swap(ctx, &lbuf[0], 3L * n, 3L * n, 0);
    CHECK(cmp == 3L * n, "ctx compare_swap");
    long fetched = -1;
    shmem_atomic_fetch_nbi(ctx, &fetched, &lbuf[0], 0);
    shmem_ctx_quiet(ctx);
    CHECK(fetched == 3L * n, "ctx fetch_nbi %ld", fetched);
    shmem_barrier_all();

    shmem_ctx_destroy(tctx);
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(rev);
    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
