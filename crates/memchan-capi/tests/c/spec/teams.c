/* OpenSHMEM 1.5 section 9.4, teams: split_strided (positive, negative and zero
 * strides), split_2d, my_pe / n_pes / translate_pe on split teams, get_config,
 * team_ptr, collectives on split teams, destroy, and SHMEM_TEAM_INVALID, which
 * every call must refuse without ending the program. */
#include <shmem.h>
#include "../check.h"

static void check_sum(shmem_team_t t, const char *what) {
    static long src, dst;
    int tn = shmem_team_n_pes(t), tme = shmem_team_my_pe(t);
    src = tme + 1;
    CHECK(shmem_long_sum_reduce(t, &dst, &src, 1) == 0, "%s: sum_reduce", what);
    CHECK(dst == (long)tn * (tn + 1) / 2, "%s: sum of 1..%d is %ld", what, tn, dst);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t world = SHMEM_TEAM_WORLD;

    /* Even PEs, from 0 at stride 2. */
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_config_t conf = {.num_contexts = 3};
    int rc = shmem_team_split_strided(world, 0, 2, (n + 1) / 2, &conf, SHMEM_TEAM_NUM_CONTEXTS, &even);
    CHECK(rc == 0, "split_strided even: %d", rc);
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID, "an even PE is in the even team");
        CHECK(shmem_team_my_pe(even) == me / 2, "my_pe in even: %d", shmem_team_my_pe(even));
        CHECK(shmem_team_n_pes(even) == (n + 1) / 2, "n_pes in even");
        CHECK(shmem_team_translate_pe(even, shmem_team_my_pe(even), world) == me, "even -> world");
        CHECK(shmem_team_translate_pe(world, me, even) == me / 2, "world -> even");
        shmem_team_config_t got = {0};
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 3,
              "get_config gives num_contexts 3, got %d", got.num_contexts);
        check_sum(even, "even");
    } else {
        CHECK(even == SHMEM_TEAM_INVALID, "an odd PE gets SHMEM_TEAM_INVALID");
        CHECK(shmem_team_translate_pe(world, me, SHMEM_TEAM_INVALID) == -1, "translate to INVALID");
    }

    /* Every PE, last first (a negative stride): team PE i is world n-1-i. */
    shmem_team_t rev;
    CHECK(shmem_team_split_strided(world, n - 1, -1, n, NULL, 0, &rev) == 0, "split reversed");
    CHECK(shmem_team_my_pe(rev) == n - 1 - me, "reversed my_pe %d", shmem_team_my_pe(rev));
    CHECK(shmem_team_translate_pe(rev, 0, world) == n - 1, "reversed PE 0 is world %d", n - 1);
    {
        static int bsrc[4], bdst[4];
        for (int i = 0; i < 4; i++) { bsrc[i] = 100 * me + i; bdst[i] = -1; }
        /* Root 0 of the reversed team is world PE n-1. */
        CHECK(shmem_int_broadcast(rev, bdst, bsrc, 4, 0) == 0, "broadcast on reversed");
        for (int i = 0; i < 4; i++) CHECK(bdst[i] == 100 * (n - 1) + i, "broadcast word %d: %d", i, bdst[i]);
        static long fsrc, fdst[64];
        fsrc = me;
        CHECK(shmem_long_fcollect(rev, fdst, &fsrc, 1) == 0, "fcollect on reversed");
        for (int i = 0; i < n; i++) CHECK(fdst[i] == n - 1 - i, "fcollect block %d: %ld", i, fdst[i]);
        static long csrc[2], cdst[128];
        /* collect: team PE i gives i + 1 words... world PE me is team PE n-1-me. */
        int tme = n - 1 - me, cnt = tme % 2 + 1;
        for (int i = 0; i < cnt; i++) csrc[i] = 1000 * tme + i;
        CHECK(shmem_long_collect(rev, cdst, csrc, cnt) == 0, "collect on reversed");
        int at = 0;
        for (int t = 0; t < n; t++)
            for (int i = 0; i < t % 2 + 1; i++, at++)
                CHECK(cdst[at] == 1000 * t + i, "collect word %d: %ld", at, cdst[at]);
    }
    check_sum(rev, "reversed");

    /* One PE with stride 0. */
    shmem_team_t solo;
    CHECK(shmem_team_split_strided(world, n - 1, 0, 1, NULL, 0, &solo) == 0, "split stride 0");
    CHECK((me == n - 1) == (solo != SHMEM_TEAM_INVALID), "only the last PE is in solo");
    if (solo != SHMEM_TEAM_INVALID) check_sum(solo, "solo");

    /* A split of a split: the odd-numbered members of the reversed team. */
    shmem_team_t sub;
    CHECK(shmem_team_split_strided(rev, 1, 2, n / 2, NULL, 0, &sub) == 0, "split of a split");
    int tme = n - 1 - me;
    CHECK((tme % 2 == 1) == (sub != SHMEM_TEAM_INVALID), "membership of the split of a split");
    if (sub != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_translate_pe(sub, shmem_team_my_pe(sub), world) == me, "sub -> world");
        check_sum(sub, "sub");
    }

    /* Arguments that leave the parent: -1 and SHMEM_TEAM_INVALID on every PE, and
     * every team call on INVALID refuses without ending the program. */
    shmem_team_t bad = world;
    CHECK(shmem_team_split_strided(world, 0, 1, n + 1, NULL, 0, &bad) != 0, "too large a team");
    CHECK(bad == SHMEM_TEAM_INVALID, "a failed split gives INVALID");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad) != 0, "split of INVALID");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "INVALID my_pe/n_pes");
    CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "team_sync on INVALID");
    static long x, y;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_INVALID, &y, &x, 1) != 0, "reduce on INVALID");
    CHECK(shmem_long_broadcast(SHMEM_TEAM_INVALID, &y, &x, 1, 0) != 0, "broadcast on INVALID");
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, &x, 0) == NULL, "team_ptr on INVALID");
    shmem_team_config_t c2;
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &c2) != 0, "get_config on INVALID");
    shmem_ctx_t ctx;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &ctx) != 0 && ctx == SHMEM_CTX_INVALID, "ctx on INVALID");
    shmem_team_destroy(SHMEM_TEAM_INVALID);

    /* split_2d: rows of 2 (x) and columns (y). */
    shmem_team_t xt, yt;
    CHECK(shmem_team_split_2d(world, 2, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d");
    CHECK(shmem_team_my_pe(xt) == me % 2 && shmem_team_my_pe(yt) == me / 2, "2d coordinates");
    CHECK(shmem_team_n_pes(xt) == ((me / 2) * 2 + 1 < n ? 2 : 1), "row size");
    CHECK(shmem_team_n_pes(yt) == (n - me % 2 + 1) / 2, "column size %d", shmem_team_n_pes(yt));
    check_sum(xt, "row");
    check_sum(yt, "column");

    /* team_ptr: on one host every PE's heap is reachable; the pointer is to the
     * named team PE's copy. */
    static long mark;
    mark = me;
    shmem_barrier_all();
    long *peer = shmem_team_ptr(rev, &mark, 0);
    if (peer != NULL) CHECK(*peer == n - 1, "team_ptr to reversed PE 0 reads %ld", *peer);
    CHECK(shmem_team_ptr(rev, &mark, n) == NULL, "team_ptr past the team");

    /* Destroying and splitting again, many times: blocks are reused. */
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    for (int k = 0; k < 100; k++) {
        shmem_team_t t;
        CHECK(shmem_team_split_strided(world, 0, 1, n, NULL, 0, &t) == 0, "split %d", k);
        shmem_team_sync(t);
        shmem_team_destroy(t);
    }
    shmem_team_destroy(sub);
    shmem_team_destroy(solo);
    shmem_team_destroy(rev);
    shmem_team_destroy(even);

    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
