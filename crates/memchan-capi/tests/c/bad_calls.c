/* Calls libmemchan must refuse with a message naming the call, then exit 1.
 * argv[1] picks one (see the table below). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    long local = 7;
    int ilocal = 0;
    if (strcmp(what, "before-init") == 0) {
        printf("%d\n", shmem_my_pe());
        return 0;
    }
    if (strcmp(what, "put-before-init") == 0) {
        shmem_long_p(&local, 1, 0);
        return 0;
    }
    shmem_init();
    long *heap = shmem_malloc(sizeof(long));
    int *iheap = shmem_malloc(2 * sizeof(int));
    if (strcmp(what, "overrun") == 0)
        shmem_malloc((size_t)1 << 20);
    else if (strcmp(what, "overrun-default") == 0)
        shmem_malloc(((size_t)256 << 20) + 1);
    else if (strcmp(what, "stack-put") == 0)
        shmem_putmem(&local, heap, sizeof local, 0);
    else if (strcmp(what, "bad-pe") == 0)
        shmem_long_p(heap, 1, shmem_n_pes());
    else if (strcmp(what, "negative-pe") == 0)
        shmem_int_get(&ilocal, iheap, 1, -1);
    else if (strcmp(what, "after-finalize") == 0) {
        shmem_finalize();
        shmem_barrier_all();
    } else if (strcmp(what, "stack-atomic") == 0)
        shmem_long_atomic_fetch_add(&local, 1, 0);
    else if (strcmp(what, "null-fetch") == 0)
        shmem_long_atomic_fetch_add_nbi(NULL, heap, 1, 0);
    else if (strcmp(what, "zero-stride-alltoalls") == 0)
        shmem_alltoallsmem(SHMEM_TEAM_WORLD, iheap, iheap, 0, 1, 1);
    else if (strcmp(what, "unaligned-atomic") == 0)
        shmem_int_atomic_inc((int *)((char *)iheap + 2), 0);
    else if (strcmp(what, "bad-cmp") == 0)
        shmem_int_wait_until(iheap, 42, 0);
    else if (strcmp(what, "stack-wait") == 0)
        shmem_int_wait_until(&ilocal, SHMEM_CMP_EQ, 0);
    else if (strcmp(what, "zero-stride") == 0)
        shmem_int_iput(iheap, &ilocal, 0, 1, 2, 0);
    else if (strcmp(what, "libc-heap") == 0)
        shmem_barrier(0, 0, shmem_n_pes(), calloc(SHMEM_BARRIER_SYNC_SIZE, sizeof(long)));

    else if (strcmp(what, "bad-active-set") == 0)
        shmem_barrier(1, 0, shmem_n_pes(), heap);
    else if (strcmp(what, "bad-team") == 0)
        shmem_team_sync((shmem_team_t)77);
    else if (strcmp(what, "unheld-lock") == 0)
        shmem_clear_lock(heap);
    else if (strcmp(what, "bad-free") == 0)
        shmem_free((char *)heap + 8);
    else if (strcmp(what, "overlap-reduce") == 0) {
        long *v = shmem_malloc(4 * sizeof(long));
        shmem_long_sum_to_all(v + 1, v, 2, 0, 0, shmem_n_pes(), v, heap);
    } else if (strcmp(what, "bad-signal-op") == 0)
        shmem_putmem_signal(heap, &local, 8, (uint64_t *)heap, 1, 9, 0);
    else
        return 2;
    return 0; /* not reached: the call above exits 1 */
}
