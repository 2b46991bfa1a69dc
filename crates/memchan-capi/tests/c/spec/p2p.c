/* OpenSHMEM 1.5 section 9.10, point-to-point synchronization: test / wait_until and
 * their _all, _any, _some and _vector forms through the C11 generics and typed
 * names, with and without a status array; _any must come round to every satisfied
 * index (a caller that polls with no status array meets each in turn). */
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include "../check.h"

#define MAXPE 16
static int flags[MAXPE];
static long words[MAXPE];
static uint64_t u64s[MAXPE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n <= MAXPE, "at most %d PEs", MAXPE);
    int status[MAXPE] = {0};
    size_t idx[MAXPE];

    /* Nothing set yet: the tests say so at once. */
    CHECK(shmem_test_all(flags, n, NULL, SHMEM_CMP_EQ, 1) == 0, "test_all before");
    CHECK(shmem_test_any(flags, n, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any before");
    CHECK(shmem_test_some(flags, n, idx, NULL, SHMEM_CMP_EQ, 1) == 0, "test_some before");
    CHECK(shmem_test(&flags[0], SHMEM_CMP_EQ, 1) == 0, "test before");
    shmem_barrier_all();

    /* Every PE sets its flag on every PE. */
    for (int p = 0; p < n; p++) shmem_atomic_set(&flags[me], 1, p);
    shmem_wait_until_all(flags, n, NULL, SHMEM_CMP_EQ, 1);
    CHECK(shmem_test_all(flags, n, NULL, SHMEM_CMP_EQ, 1) == 1, "test_all after");

    /* _any with a status array: each index once. */
    int seen = 0;
    while (seen < n) {
        size_t i = shmem_wait_until_any(flags, n, status, SHMEM_CMP_EQ, 1);
        CHECK(i < (size_t)n && status[i] == 0, "wait_until_any gave %zu", i);
        status[i] = 1;
        seen++;
    }
    CHECK(shmem_test_any(flags, n, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "every index excluded");
    CHECK(shmem_wait_until_any(flags, n, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "wait_until_any with none left");

    /* _any with no status array: polling meets every index, not the lowest forever. */
    int found[MAXPE] = {0};
    for (int k = 0, got = 0; got < n; k++) {
        CHECK(k < 100 * n, "test_any starves an index (after %d calls)", k);
        size_t i = shmem_test_any(flags, n, NULL, SHMEM_CMP_EQ, 1);
        CHECK(i < (size_t)n, "test_any gave %zu", i);
        if (!found[i]) { found[i] = 1; got++; }
    }

    /* _some and _vector forms. */
    size_t k = shmem_wait_until_some(flags, n, idx, NULL, SHMEM_CMP_EQ, 1);
    CHECK(k == (size_t)n, "wait_until_some gave %zu of %d", k, n);
    int want[MAXPE];
    for (int i = 0; i < n; i++) want[i] = (i == me) ? 1 : 0;
    k = shmem_test_some_vector(flags, n, idx, NULL, SHMEM_CMP_EQ, want);
    CHECK(k == 1 && idx[0] == (size_t)me, "test_some_vector: %zu first %zu", k, idx[0]);
    CHECK(shmem_test_all_vector(flags, n, NULL, SHMEM_CMP_GE, want) == 1, "test_all_vector");
    CHECK(shmem_int_test_any_vector(flags, n, NULL, SHMEM_CMP_GT, want) != SIZE_MAX || n == 1, "test_any_vector");

    /* wait_until on long words a neighbour adds to, and uint64 with a vector. */
    shmem_barrier_all();
    shmem_atomic_add(&words[0], 5L, (me + 1) % n);
    shmem_wait_until(&words[0], SHMEM_CMP_GE, 5L);
    CHECK(words[0] == 5, "wait_until %ld", words[0]);
    uint64_t w64[MAXPE];
    for (int i = 0; i < n; i++) w64[i] = 7;
    for (int p = 0; p < n; p++) shmem_uint64_atomic_set(&u64s[me], 7, p);
    shmem_uint64_wait_until_all_vector(u64s, n, NULL, SHMEM_CMP_EQ, w64);
    shmem_barrier_all();

    /* The status array excludes: nothing to wait for returns at once. */
    for (int i = 0; i < n; i++) status[i] = 1;
    shmem_wait_until_all(flags, n, status, SHMEM_CMP_EQ, 99);
    CHECK(shmem_wait_until_some(flags, n, idx, status, SHMEM_CMP_EQ, 99) == 0, "some with every index excluded");
    CHECK(shmem_test_any(flags, 0, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "any of none");

    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
