/* Calls libmemchan must refuse with a message naming the call, then exit 1.
 * argv[1] picks one: overrun, stack-put, bad-pe, before-init. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    long local = 7;
    if (strcmp(what, "before-init") == 0) {
        printf("%d\n", shmem_my_pe());
        return 0;
    }
    shmem_init();
    long *heap = shmem_malloc(sizeof(long));
    if (strcmp(what, "overrun") == 0)
        shmem_malloc((size_t)1 << 20);
    else if (strcmp(what, "stack-put") == 0)
        shmem_putmem(&local, heap, sizeof local, 0);
    else if (strcmp(what, "bad-pe") == 0)
        shmem_long_p(heap, 1, shmem_n_pes());
    else
        return 2;
    return 0; /* not reached: the call above exits 1 */
}
