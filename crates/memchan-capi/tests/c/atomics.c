/* Atomics (1.4/1.5 and 1.0 names), locks, wait_until/test, under `memchan run -n N`. */
#include <shmem.h>
#include "check.h"

int main(void) {
    start_pes(0);
    int me = _my_pe(), n = _num_pes();
    long *lcount = shmalloc(sizeof(long));
    int *icount = shmem_malloc(sizeof(int));
    unsigned int *bits = shmem_malloc(sizeof(unsigned int));
    uint64_t *xbits = shmem_malloc(sizeof(uint64_t));
    double *dv = shmem_malloc(sizeof(double));
    float *fv = shmem_malloc(sizeof(float));
    long long *owner = shmem_malloc(sizeof(long long));
    long *lock = shmem_calloc(1, sizeof(long));
    long *guarded = shmem_calloc(1, sizeof(long));
    int *flag = shmem_calloc(1, sizeof(int));
    *lcount = 0; *icount = 0; *bits = 0; *xbits = 0; *dv = 0; *fv = 0; *owner = -1;
    shmem_barrier_all();

    /* Contended counters on PE 0, every op once per PE. */
    for (int i = 0; i < 10; i++) {
        shmem_long_atomic_fetch_add(lcount, 1, 0);
        shmem_long_atomic_add(lcount, 2, 0);
        shmem_long_atomic_inc(lcount, 0);
        shmem_long_finc(lcount, 0);
        shmem_long_fadd(lcount, -1, 0);
        shmem_int_fadd(icount, 3, 0);
        shmem_int_inc(icount, 0);
        shmem_int_add(icount, -2, 0);
        (void)shmem_int_atomic_fetch_inc(icount, 0);
        shmem_ctx_long_atomic_add(SHMEM_CTX_DEFAULT, lcount, 0, 0); /* contexts: the default */
    }
    shmem_uint_atomic_or(bits, 1u << me, 0);
    shmem_uint64_atomic_fetch_xor(xbits, (uint64_t)1 << (40 + me), 0);
    shmem_barrier_all();
    CHECK(shmem_long_atomic_fetch(lcount, 0) == 40L * n, "long counter %ld", shmem_long_fetch(lcount, 0));
    CHECK(shmem_int_atomic_fetch(icount, 0) == 30 * n, "int counter %d", shmem_int_fetch(icount, 0));
    CHECK(shmem_uint_atomic_fetch(bits, 0) == (1u << n) - 1, "or bits %x", shmem_uint_atomic_fetch(bits, 0));
    CHECK(shmem_uint64_atomic_fetch(xbits, 0) == (((uint64_t)1 << n) - 1) << 40, "xor bits");
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_uint_atomic_fetch_and(bits, 1u, 1 % n) == 0, "fetch_and on a zero word");
        shmem_uint_atomic_and(bits, 1u, 0);
        CHECK(*bits == 1u, "and left %x", *bits);
        shmem_uint_atomic_xor(bits, 3u, 0);
        CHECK(*bits == 2u, "xor left %x", *bits);
    }

    /* swap / cswap / set: exactly one PE wins the cswap from -1. */
    long long prev = shmem_longlong_atomic_compare_swap(owner, -1, me, 0);
    shmem_barrier_all();
    long long winner = shmem_longlong_g(owner, 0);
    CHECK(winner >= 0 && winner < n, "cswap winner %lld", winner);
    CHECK((prev == -1) == (winner == me), "cswap returned %lld, winner %lld", prev, winner);
    CHECK(shmem_longlong_cswap(owner, -5, 99, 0) == winner, "failed cswap changed nothing");
    shmem_barrier_all();
    if (me == n - 1) {
        CHECK(shmem_double_atomic_swap(dv, 2.5, 0) == 0.0, "double swap old");
        CHECK(shmem_double_swap(dv, -4.0, 0) == 2.5, "double swap (1.0 name)");
        shmem_float_atomic_set(fv, 1.5f, 0);
        CHECK(shmem_float_atomic_fetch(fv, 0) == 1.5f, "float set/fetch");
        shmem_long_set(lcount, 7, 0);
        CHECK(shmem_swap(lcount, 8, 0) == 7, "shmem_swap");
    }
    shmem_barrier_all();
    if (me == 0) CHECK(*dv == -4.0 && *fv == 1.5f && *lcount == 8, "values on PE 0");
    shmem_barrier_all();

    /* Nonblocking fetching atomics: the fetched value is there after quiet. */
    long *nbc = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    long got[3] = {-1, -1, -1};
    shmem_long_atomic_fetch_inc_nbi(&got[0], nbc, 0);
    shmem_long_atomic_fetch_add_nbi(&got[1], nbc, 10, 0);
    shmem_ctx_long_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &got[2], nbc, 0);
    shmem_quiet();
    CHECK(got[0] >= 0 && got[1] > got[0] && got[2] >= got[1] + 10, "fetch_nbi order: %ld %ld %ld", got[0], got[1], got[2]);
    shmem_barrier_all();
    CHECK(shmem_long_atomic_fetch(nbc, 0) == 11L * n, "nbi counter %ld", shmem_long_atomic_fetch(nbc, 0));
    shmem_barrier_all();
    if (me == n - 1) {
        double dold = 1.0;
        shmem_double_atomic_swap_nbi(&dold, dv, 6.5, 0);
        unsigned int uold = 7u;
        shmem_uint_atomic_fetch_or_nbi(&uold, bits, 4u, 0);
        int iold = 0;
        shmem_int_atomic_compare_swap_nbi(&iold, icount, 30 * n, -3, 0);
        shmem_quiet();
        CHECK(dold == -4.0, "swap_nbi fetched %f", dold);
        CHECK(uold == 2u, "fetch_or_nbi fetched %x", uold);
        CHECK(iold == 30 * n, "compare_swap_nbi fetched %d", iold);
        CHECK(shmem_double_atomic_fetch(dv, 0) == 6.5 && shmem_int_atomic_fetch(icount, 0) == -3, "nbi values");
    }
    shmem_barrier_all();

    /* A lock guards a non-atomic read-modify-write of PE 0's word. */
    for (int i = 0; i < 20; i++) {
        shmem_set_lock(lock);
        long v = shmem_long_g(guarded, 0);
        shmem_long_p(guarded, v + 1, 0);
        shmem_quiet();
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    CHECK(shmem_long_g(guarded, 0) == 20L * n, "guarded counter %ld", shmem_long_g(guarded, 0));
    if (me == 0) {
        CHECK(shmem_test_lock(lock) == 0, "a free lock is taken by test_lock");
        CHECK(shmem_test_lock(lock) == 1, "a held lock is refused");
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();

    /* wait_until / test: PE 0 waits for every other PE's increment. */
    if (me == 0) {
        CHECK(shmem_int_test(flag, SHMEM_CMP_GE, n) == 0 || n == 1, "test before the puts");
        shmem_int_wait_until(flag, SHMEM_CMP_EQ, n - 1);
        CHECK(shmem_int_test(flag, SHMEM_CMP_EQ, n - 1) == 1, "test after");
        shmem_int_p(flag, -1, 0);
        shmem_int_wait(flag, n - 1); /* returns: the value is no longer n - 1 */
    } else {
        shmem_int_atomic_inc(flag, 0);
    }
    shmem_barrier_all();

    /* 1.5 multi-word waits: slot r of PE 0's array is set by PE r (r >= 1). */
    long *slots = shmem_calloc(n, sizeof(long));
    if (me == 0) {
        int status[64] = {0};
        size_t idx[64];
        status[0] = 1; /* PE 0 sets nothing: left out */
        CHECK(shmem_long_test_all(slots, n, status, SHMEM_CMP_GT, 0) == 0 || n == 1, "test_all before");
        CHECK(shmem_long_test_any(slots, n, status, SHMEM_CMP_GT, 0) == (size_t)-1 || n == 1, "test_any before");
        shmem_barrier_all(); /* the others set their slots now */
        size_t any = shmem_long_wait_until_any(slots, n, status, SHMEM_CMP_GT, 0);
        CHECK(any >= 1 && any < (size_t)n, "wait_until_any gave %zu", any);
        shmem_long_wait_until_all(slots, n, status, SHMEM_CMP_GT, 0);
        size_t k = shmem_long_wait_until_some(slots, n, idx, status, SHMEM_CMP_GT, 0);
        CHECK(k == (size_t)n - 1, "wait_until_some found %zu", k);
        for (size_t i = 0; i < k; i++) CHECK(idx[i] == i + 1, "some index %zu = %zu", i, idx[i]);
        long want[64];
        for (int r = 0; r < n; r++) want[r] = 10 + r;
        shmem_long_wait_until_all_vector(slots, n, status, SHMEM_CMP_EQ, want);
        CHECK(shmem_long_test_all_vector(slots, n, status, SHMEM_CMP_EQ, want) == 1, "test_all_vector");
        want[1] = -1;
        CHECK(shmem_long_test_some_vector(slots, n, idx, status, SHMEM_CMP_EQ, want) == (size_t)n - 2, "test_some_vector");
        CHECK(shmem_long_test_any(slots, n, NULL, SHMEM_CMP_EQ, 11) == 1, "test_any without status");
    } else {
        shmem_barrier_all();
        shmem_long_p(slots + me, 10 + me, 0);
    }
    shmem_barrier_all();
    printf("PE %d of %d: atomics ok\n", me, n);
    shmem_finalize();
    return 0;
}
