/* OpenSHMEM 1.5 section 9.9, team collectives through the C11 generics and typed
 * names: broadcast, collect, fcollect, alltoall, alltoalls, and the reductions over
 * every standard type family (signed char among them), on SHMEM_TEAM_WORLD and a
 * split team; zero-length calls take NULL and do nothing. */
#include <shmem.h>
#include <stdint.h>
#include "../check.h"

#define MAXPE 16
static int src[MAXPE * 2], dst[MAXPE * 2];
static signed char sc_src[3], sc_dst[3];
static unsigned short us_src, us_dst;
static double d_src, d_dst;
static long l_src, l_dst;
static int32_t b_src, b_dst;
static long double ld_src, ld_dst;

static void on_team(shmem_team_t team, const char *what) {
    int tn = shmem_team_n_pes(team), tme = shmem_team_my_pe(team);
    for (int i = 0; i < 2 * MAXPE; i++) { src[i] = 100 * tme + i; dst[i] = -1; }
    CHECK(shmem_broadcast(team, dst, src, 3, tn - 1) == 0, "%s: broadcast", what);
    for (int i = 0; i < 3; i++) CHECK(dst[i] == 100 * (tn - 1) + i, "%s: broadcast %d", what, i);
    CHECK(shmem_fcollect(team, dst, src, 2) == 0, "%s: fcollect", what);
    for (int t = 0; t < tn; t++)
        for (int i = 0; i < 2; i++) CHECK(dst[2 * t + i] == 100 * t + i, "%s: fcollect %d.%d", what, t, i);
    CHECK(shmem_collect(team, dst, src, tme % 2 + 1) == 0, "%s: collect", what);
    for (int t = 0, at = 0; t < tn; t++)
        for (int i = 0; i < t % 2 + 1; i++, at++) CHECK(dst[at] == 100 * t + i, "%s: collect %d", what, at);
    /* alltoall: block j of my src goes to block tme of team PE j. */
    CHECK(shmem_alltoall(team, dst, src, 1) == 0, "%s: alltoall", what);
    for (int t = 0; t < tn; t++) CHECK(dst[t] == 100 * t + tme, "%s: alltoall %d: %d", what, t, dst[t]);
    CHECK(shmem_alltoalls(team, dst, src, 2, 1, 1) == 0, "%s: alltoalls", what);
    for (int t = 0; t < tn; t++) CHECK(dst[2 * t] == 100 * t + tme, "%s: alltoalls %d", what, t);

    long want = (long)tn * (tn - 1) / 2;
    sc_src[0] = (signed char)-tme; sc_src[1] = (signed char)tme; sc_src[2] = 1;
    CHECK(shmem_sum_reduce(team, sc_dst, sc_src, 3) == 0, "%s: schar sum", what);
    CHECK(sc_dst[0] == -want && sc_dst[1] == want && sc_dst[2] == tn, "%s: schar sum %d %d %d", what, sc_dst[0], sc_dst[1], sc_dst[2]);
    CHECK(shmem_min_reduce(team, sc_dst, sc_src, 1) == 0 && sc_dst[0] == -(tn - 1), "%s: schar min", what);
    CHECK(shmem_schar_max_reduce(team, sc_dst, sc_src, 2) == 0 && sc_dst[1] == tn - 1, "%s: typed schar max", what);
    us_src = (unsigned short)(1u << tme);
    CHECK(shmem_or_reduce(team, &us_dst, &us_src, 1) == 0 && us_dst == (1u << tn) - 1, "%s: ushort or", what);
    b_src = ~(int32_t)(1 << tme);
    CHECK(shmem_and_reduce(team, &b_dst, &b_src, 1) == 0 && b_dst == ~(int32_t)((1 << tn) - 1), "%s: int32 and", what);
    CHECK(shmem_xor_reduce(team, &b_dst, &b_src, 1) == 0, "%s: int32 xor", what);
    int32_t ones = (int32_t)((1 << tn) - 1);
    CHECK(b_dst == (tn % 2 ? ~ones : ones), "%s: int32 xor gave %x", what, (unsigned)b_dst);
    d_src = tme + 0.5;
    CHECK(shmem_max_reduce(team, &d_dst, &d_src, 1) == 0 && d_dst == tn - 0.5, "%s: double max", what);
    CHECK(shmem_prod_reduce(team, &d_dst, &d_src, 1) == 0, "%s: double prod", what);
    l_src = tme + 1;
    CHECK(shmem_prod_reduce(team, &l_dst, &l_src, 1) == 0, "%s: long prod", what);
    long fact = 1;
    for (int i = 2; i <= tn; i++) fact *= i;
    CHECK(l_dst == fact, "%s: prod %ld", what, l_dst);
    ld_src = tme;
    CHECK(shmem_sum_reduce(team, &ld_dst, &ld_src, 1) == 0 && ld_dst == want, "%s: long double sum", what);

    /* Zero elements: NULL pointers, nothing written, success. */
    dst[0] = 77;
    CHECK(shmem_broadcast(team, (int *)NULL, (int *)NULL, 0, 0) == 0, "%s: empty broadcast", what);
    CHECK(shmem_int_collect(team, NULL, NULL, 0) == 0, "%s: empty collect", what);
    CHECK(shmem_int_fcollect(team, NULL, NULL, 0) == 0, "%s: empty fcollect", what);
    CHECK(shmem_int_alltoall(team, NULL, NULL, 0) == 0, "%s: empty alltoall", what);
    CHECK(shmem_int_alltoalls(team, NULL, NULL, 1, 1, 0) == 0, "%s: empty alltoalls", what);
    CHECK(shmem_int_sum_reduce(team, NULL, NULL, 0) == 0, "%s: empty reduce", what);
    CHECK(shmem_broadcastmem(team, NULL, NULL, 0, 0) == 0, "%s: empty broadcastmem", what);
    CHECK(dst[0] == 77, "%s: an empty collective wrote", what);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n <= MAXPE, "at most %d PEs", MAXPE);
    on_team(SHMEM_TEAM_WORLD, "world");
    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev) == 0, "split");
    on_team(rev, "reversed");
    shmem_team_t odd;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd) == 0, "split odd");
    if (odd != SHMEM_TEAM_INVALID) on_team(odd, "odd");
    /* Zero-length RMA accepts NULL too. */
    shmem_putmem(NULL, NULL, 0, (me + 1) % n);
    shmem_getmem(NULL, NULL, 0, (me + 1) % n);
    shmem_int_put(NULL, NULL, 0, 0);
    shmem_int_iput(NULL, NULL, 1, 1, 0, 0);
    shmem_barrier_all();
    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
