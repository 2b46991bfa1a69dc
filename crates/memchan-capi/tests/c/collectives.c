/* Barriers, broadcast/collect/fcollect, reductions (active set and team), teams,
 * heap extras and queries, under `memchan run -n N` (N >= 2). */
#include <shmem.h>
#include <string.h>
#include "check.h"

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long arrived; /* on PE 0: adds made right before the collective heap calls */

/* Adds 1 to PE 0's `arrived`, then runs the heap call STMT (the CALLS-th): after an
 * allocation's barrier on exit or a free's on entry, every PE's add has landed. */
#define ARRIVE_THEN(STMT)                                                              \
    do {                                                                               \
        shmem_long_atomic_inc(&arrived, 0);                                            \
        calls++;                                                                       \
        STMT;                                                                          \
        long seen = shmem_long_atomic_fetch(&arrived, 0);                              \
        CHECK(seen >= (long)n * calls, "%s returned before every PE called it (%ld of %d)", #STMT, seen, n * calls); \
    } while (0)

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();

    /* Queries. */
    int major = 0, minor = 0;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name %s", name);
    CHECK(shmem_pe_accessible(n - 1) && !shmem_pe_accessible(n), "pe_accessible");
    (void)psync;

    /* Heap extras: align, calloc, realloc keep contents. */
    long *ps = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) ps[i] = SHMEM_SYNC_VALUE;
    char *aligned = shmem_align(4096, 100);
    CHECK(((uintptr_t)aligned & 4095) == 0, "align gave %p", (void *)aligned);
    int *zeros = shmem_calloc(64, sizeof(int));
    for (int i = 0; i < 64; i++) CHECK(zeros[i] == 0, "calloc [%d]=%d", i, zeros[i]);
    zeros[0] = 41 + me;
    zeros = shmem_realloc(zeros, 4096 * sizeof(int));
    CHECK(zeros[0] == 41 + me, "realloc lost the contents");
    CHECK(shmem_addr_accessible(zeros, 1) && !shmem_addr_accessible(&major, 1), "addr_accessible");
    /* The heap calls are collective, with their barriers (OpenSHMEM 1.5, 9.3). */
    int calls = 0;
    char *h1, *h2;
    long *h3;
    ARRIVE_THEN(h1 = shmem_malloc(64));
    ARRIVE_THEN(h2 = shmem_align(256, 64));
    ARRIVE_THEN(h3 = shmem_calloc(4, sizeof(long)));
    /* Usable on every PE once this one returns: the owner's zeroing came first. */
    shmem_long_p(&h3[1], 100 + me, (me + 1) % n);
    ARRIVE_THEN(h1 = shmem_realloc(h1, 1 << 16));
    ARRIVE_THEN(shmem_free(h2));
    CHECK(shmem_malloc(0) == NULL && shmem_align(64, 0) == NULL && shmem_calloc(0, 8) == NULL, "size 0 gives NULL");
    shmem_barrier_all();
    CHECK(h3[0] == 0 && h3[1] == 100 + (me + n - 1) % n, "calloc'd block: %ld %ld", h3[0], h3[1]);
    ARRIVE_THEN(shmem_free(h3));
    ARRIVE_THEN(shmem_free(h1));
    /* SHMEM_TEAM_SHARED is a block of consecutive ranks holding this PE: on one
     * host every PE; through a hub the PEs of this PE's host (one machine's, unless
     * MEMCHAN_DOMAIN=off leaves each PE alone), and shmem_ptr reaches exactly
     * them (loads and stores in another PE's heap). */
    int hub = getenv("MEMCHAN_HUB") != NULL;
    const char *domain = getenv("MEMCHAN_DOMAIN");
    int alone = hub && domain && strcmp(domain, "off") == 0;
    int ns = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    int first = shmem_team_translate_pe(SHMEM_TEAM_SHARED, 0, SHMEM_TEAM_WORLD);
    CHECK(ns >= 1 && first >= 0 && first <= me && me < first + ns && first + ns <= n,
          "SHMEM_TEAM_SHARED: %d PEs from PE %d", ns, first);
    CHECK(!alone || ns == 1, "SHMEM_TEAM_SHARED has %d PEs with MEMCHAN_DOMAIN=off", ns);
    CHECK(hub || ns == n, "SHMEM_TEAM_SHARED has %d of %d PEs on one host", ns, n);
    CHECK(shmem_ptr(zeros, me) == zeros, "shmem_ptr to itself");
    long *slots = shmem_calloc(n, sizeof(long));
    for (int r = 0; r < n; r++) {
        long *there = shmem_ptr(slots, r);
        if (r == me) continue;
        int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, r, SHMEM_TEAM_SHARED) >= 0;
        CHECK((there != NULL) == shared, "shmem_ptr to PE %d: %p", r, (void *)there);
        if (there) there[me] = 1000 * me + r; /* a plain store into PE r's heap */
    }
    shmem_barrier_all();
    for (int r = 0; r < n; r++) {
        if (r == me || r < first || r >= first + ns) continue;
        CHECK(slots[r] == 1000 * r + me, "PE %d stored %ld here through shmem_ptr", r, slots[r]);
        long *there = shmem_ptr(slots, r);
        CHECK(there[me] == 1000 * me + r, "a load from PE %d's heap: %ld", r, there[me]);
    }
    shmem_barrier_all();

    /* Active-set barrier over the even PEs (stride 2), then everyone. */
    int evens = (n + 1) / 2;
    if (me % 2 == 0) shmem_barrier(0, 1, evens, ps);
    shmem_barrier_all();

    /* An active-set barrier over every PE (the cluster's barrier) completes the puts
     * before it and leaves pSync at SHMEM_SYNC_VALUE; twice, so a put of the second
     * round cannot be one of the first. */
    long *ring = shmem_calloc(1, sizeof(long));
    for (long round = 1; round <= 2; round++) {
        shmem_long_p(ring, 100 * round + me, (me + 1) % n);
        shmem_barrier(0, 0, n, ps);
        long want = 100 * round + (me + n - 1) % n;
        CHECK(*ring == want, "after full-set barrier %ld: %ld, want %ld", round, *ring, want);
        for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
            CHECK(ps[i] == SHMEM_SYNC_VALUE, "pSync[%d] = %ld after the barrier", i, ps[i]);
        shmem_barrier(0, 0, n, ps);
    }
    shmem_free(ring);

    /* broadcast64 from set member 1 (PE 1) to all: the root's dest stays. */
    long *bsrc = shmem_malloc(4 * sizeof(long)), *bdst = shmem_malloc(4 * sizeof(long));
    for (int i = 0; i < 4; i++) { bsrc[i] = 10 * me + i; bdst[i] = -1; }
    shmem_barrier_all();
    shmem_broadcast64(bdst, bsrc, 4, 1, 0, 0, n, ps);
    for (int i = 0; i < 4; i++) CHECK(bdst[i] == (me == 1 ? -1 : 10 + i), "broadcast64 [%d]=%ld", i, bdst[i]);
    int *b32 = shmem_malloc(2 * sizeof(int)), *s32 = shmem_malloc(2 * sizeof(int));
    s32[0] = me; s32[1] = -me;
    shmem_barrier_all();
    shmem_broadcast32(b32, s32, 2, 0, 0, 0, n, ps);
    if (me != 0) CHECK(b32[0] == 0 && b32[1] == 0, "broadcast32");

    /* fcollect: 2 ints each; collect: me+1 longs each. */
    int *fdst = shmem_malloc(2 * n * sizeof(int));
    shmem_fcollect32(fdst, s32, 2, 0, 0, n, ps);
    for (int r = 0; r < n; r++) CHECK(fdst[2 * r] == r && fdst[2 * r + 1] == -r, "fcollect32 at %d", r);
    long *csrc = shmem_malloc(n * sizeof(long)), *cdst = shmem_malloc(n * (n + 1) / 2 * sizeof(long));
    for (int i = 0; i <= me; i++) csrc[i] = 100 * me + i;
    shmem_barrier_all();
    shmem_collect64(cdst, csrc, me + 1, 0, 0, n, ps);
    for (int r = 0, k = 0; r < n; r++)
        for (int i = 0; i <= r; i++, k++) CHECK(cdst[k] == 100 * r + i, "collect64 at %d: %ld", k, cdst[k]);

    /* alltoall: block r of PE me holds 1000 * me + r; PE r gets it in block me. */
    long *asrc = shmem_malloc(2 * n * sizeof(long)), *adst = shmem_malloc(2 * n * sizeof(long));
    for (int r = 0; r < n; r++) { asrc[2 * r] = 1000 * me + r; asrc[2 * r + 1] = -r; }
    shmem_barrier_all();
    shmem_alltoall64(adst, asrc, 2, 0, 0, n, ps);
    for (int r = 0; r < n; r++) CHECK(adst[2 * r] == 1000 * r + me && adst[2 * r + 1] == -me, "alltoall64 from %d: %ld", r, adst[2 * r]);
    /* alltoalls: one int per PE, read at stride 2, written at stride 3. */
    int *ssrc = shmem_malloc(2 * n * sizeof(int)), *sdst = shmem_malloc(3 * n * sizeof(int));
    for (int r = 0; r < n; r++) { ssrc[2 * r] = 10 * me + r; ssrc[2 * r + 1] = -7; }
    for (int i = 0; i < 3 * n; i++) sdst[i] = -1;
    shmem_barrier_all();
    shmem_alltoalls32(sdst, ssrc, 3, 2, 1, 0, 0, n, ps);
    for (int r = 0; r < n; r++) CHECK(sdst[3 * r] == 10 * r + me && sdst[3 * r + 1] == -1, "alltoalls32 from %d: %d", r, sdst[3 * r]);
    CHECK(shmem_int_alltoall(SHMEM_TEAM_WORLD, sdst, ssrc, 2) == 0, "team alltoall");
    for (int r = 0; r < n; r++) CHECK(sdst[2 * r] == 10 * r + me && sdst[2 * r + 1] == -7, "int alltoall from %d", r);
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, adst, asrc, 16) == 0, "alltoallmem");
    for (int r = 0; r < n; r++) CHECK(adst[2 * r] == 1000 * r + me, "alltoallmem from %d", r);

    /* *_to_all over everyone: sums, max, bitwise; in place too. */
    int *isrc = shmem_malloc(3 * sizeof(int)), *idst = shmem_malloc(3 * sizeof(int));
    int *iwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(int));
    isrc[0] = me; isrc[1] = 1; isrc[2] = -me;
    shmem_barrier_all();
    shmem_int_sum_to_all(idst, isrc, 3, 0, 0, n, iwrk, ps);
    CHECK(idst[0] == n * (n - 1) / 2 && idst[1] == n && idst[2] == -n * (n - 1) / 2, "int sum");
    shmem_int_max_to_all(idst, isrc, 3, 0, 0, n, iwrk, ps);
    CHECK(idst[0] == n - 1 && idst[1] == 1 && idst[2] == 0, "int max");
    long *lv = shmem_malloc(sizeof(long));
    *lv = 1L << me;
    shmem_barrier_all();
    shmem_long_or_to_all(lv, lv, 1, 0, 0, n, (long *)iwrk, ps); /* in place */
    CHECK(*lv == (1L << n) - 1, "long or in place: %lx", *lv);
    double *dv = shmem_malloc(sizeof(double)), *dd = shmem_malloc(sizeof(double));
    *dv = me + 1.0;
    shmem_barrier_all();
    shmem_double_prod_to_all(dd, dv, 1, 0, 0, n, (double *)iwrk, ps);
    double fact = 1; for (int i = 1; i <= n; i++) fact *= i;
    CHECK(*dd == fact, "double prod %g", *dd);
    if (me % 2 == 0) { /* an active set of the even PEs, stride 2 */
        shmem_int_min_to_all(idst, isrc, 1, 0, 1, evens, iwrk, ps);
        CHECK(idst[0] == 0, "int min over evens");
    }
    shmem_barrier_all();

    /* A reduction longer than the library's inbox goes in rounds. */
    size_t big = (size_t)300000;
    long *rsrc = shmem_malloc(big * sizeof(long)), *rdst = shmem_malloc(big * sizeof(long));
    for (size_t i = 0; i < big; i++) rsrc[i] = (long)i * (me + 1);
    shmem_barrier_all();
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rdst, rsrc, big) == 0, "reduce");
    for (size_t i = 0; i < big; i++) CHECK(rdst[i] == (long)i * n * (n + 1) / 2, "long sum_reduce [%zu]=%ld", i, rdst[i]);

    /* Teams. */
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world");
    /* SHMEM_TEAM_SHARED (the block found above), numbered from its first PE. */
    CHECK(shmem_team_my_pe(SHMEM_TEAM_SHARED) == me - first, "shared");
    for (int r = 0; r < n; r++) {
        int in = r >= first && r < first + ns;
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, r, SHMEM_TEAM_SHARED) == (in ? r - first : -1), "translate %d", r);
    }
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, ns, SHMEM_TEAM_WORLD) == -1, "translate out of range");
    shmem_team_t all = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &all) == 0 && all != SHMEM_TEAM_INVALID, "split");
    CHECK(shmem_team_n_pes(all) == n && shmem_team_my_pe(all) == me, "the split of every PE");
    shmem_team_destroy(all);
    CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team sync");
    float *fsrc = shmem_malloc(2 * sizeof(float)), *fdst2 = shmem_malloc(2 * n * sizeof(float));
    fsrc[0] = (float)me; fsrc[1] = 0.5f;
    shmem_barrier_all();
    CHECK(shmem_float_broadcast(SHMEM_TEAM_WORLD, fdst2, fsrc, 2, n - 1) == 0, "broadcast");
    CHECK(fdst2[0] == (float)(n - 1) && fdst2[1] == 0.5f, "float broadcast (root too)");
    CHECK(shmem_float_fcollect(SHMEM_TEAM_WORLD, fdst2, fsrc, 2) == 0, "fcollect");
    for (int r = 0; r < n; r++) CHECK(fdst2[2 * r] == (float)r, "float fcollect at %d", r);
    char *cs = shmem_malloc(n + 1), *cd = shmem_malloc((size_t)n * (n + 1) / 2 + 1);
    memset(cs, 'a' + me, n);
    shmem_barrier_all();
    CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, cd, cs, me + 1) == 0, "collectmem");
    for (int r = 0, k = 0; r < n; r++) for (int i = 0; i <= r; i++, k++) CHECK(cd[k] == 'a' + r, "collectmem at %d", k);
    uint64_t *ux = shmem_malloc(sizeof(uint64_t)), *uy = shmem_malloc(sizeof(uint64_t));
    *ux = (uint64_t)1 << me | 1u << 20;
    shmem_barrier_all();
    shmem_uint64_xor_reduce(SHMEM_TEAM_WORLD, uy, ux, 1);
    CHECK(*uy == ((((uint64_t)1 << n) - 1) | (n % 2 ? 1u << 20 : 0)), "uint64 xor_reduce %lx", (unsigned long)*uy);
    shmem_int_max_reduce(SHMEM_TEAM_SHARED, idst, isrc, 1);
    CHECK(idst[0] == first + ns - 1, "a SHARED reduce: %d", idst[0]);
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(0, &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create");
    shmem_ctx_destroy(ctx);

    shmem_sync_all();
    shmem_free(zeros);
    printf("PE %d of %d: collectives ok\n", me, n);
    shmem_finalize();
    return 0;
}
