/* OpenSHMEM 1.5 section 9.3, memory management: shmem_malloc, shmem_calloc,
 * shmem_align (the address aligned on every PE), shmem_malloc_with_hints,
 * shmem_realloc and shmem_free, each block usable by every PE. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "../check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;

    CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0) is NULL");
    CHECK(shmem_calloc(0, 8) == NULL && shmem_calloc(8, 0) == NULL, "calloc of 0 is NULL");

    long *z = shmem_calloc(64, sizeof(long));
    CHECK(z != NULL, "calloc");
    for (int i = 0; i < 64; i++) CHECK(z[i] == 0, "calloc'd word %d is %ld", i, z[i]);

    /* shmem_align: every power of two up to 8 MiB, aligned here and the same block
     * on every PE (a put to the right neighbour lands in its block). */
    for (size_t a = 8; a <= ((size_t)1 << 23); a <<= 1) {
        long *p = shmem_align(a, 64);
        CHECK(p != NULL, "shmem_align(%zu)", a);
        CHECK(((uintptr_t)p % a) == 0, "shmem_align(%zu) gave %p", a, (void *)p);
        p[0] = -1;
        shmem_barrier_all();
        shmem_long_p(p, me, right);
        shmem_barrier_all();
        CHECK(p[0] == (me + n - 1) % n, "align %zu: got %ld", a, p[0]);
        shmem_free(p);
    }

    /* Hints change nothing but must give a working block (unknown bits ignored). */
    long hints[] = {0, SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE,
                    SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE, ~0L};
    for (unsigned h = 0; h < sizeof hints / sizeof hints[0]; h++) {
        uint64_t *w = shmem_malloc_with_hints(sizeof(uint64_t), hints[h]);
        CHECK(w != NULL, "malloc_with_hints(%#lx)", hints[h]);
        *w = 0;
        shmem_barrier_all();
        shmem_uint64_atomic_add(w, 1, 0);
        shmem_barrier_all();
        if (me == 0) CHECK(*w == (uint64_t)n, "hints %#lx: %d adds gave %lu", hints[h], n, (unsigned long)*w);
        shmem_free(w);
    }

    /* realloc keeps the contents and the block stays symmetric. */
    int *r = shmem_malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++) r[i] = me * 10 + i;
    r = shmem_realloc(r, 1 << 20);
    CHECK(r != NULL, "realloc");
    for (int i = 0; i < 4; i++) CHECK(r[i] == me * 10 + i, "realloc kept word %d: %d", i, r[i]);
    r[(1 << 18) - 1] = 0;
    shmem_barrier_all();
    shmem_int_p(&r[(1 << 18) - 1], 7 + me, right);
    shmem_barrier_all();
    CHECK(r[(1 << 18) - 1] == 7 + (me + n - 1) % n, "realloc'd block is symmetric");
    shmem_free(r);
    shmem_free(z);
    shmem_free(NULL);

    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
