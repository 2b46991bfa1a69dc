/* A plain OpenSHMEM program, run with the profiling library of profiler.c linked
 * in front of libmemchan: the data must move as without it, and the profile it
 * prints at shmem_finalize must count exactly the calls made here. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    char *text = shmem_malloc(64);
    long *counter = shmem_malloc(sizeof(long));
    memset(text, 0, 64);
    *counter = 0;
    shmem_barrier_all();

    shmem_pcontrol(2, "ignored");
    int right = (me + 1) % n;
    char msg[64];
    for (int i = 0; i < 3; i++) {
        snprintf(msg, sizeof msg, "put %d from PE %d", i, me);
        shmem_putmem(text, msg, strlen(msg) + 1, right);
    }
    shmem_quiet();
    long old = shmem_long_atomic_fetch_add(counter, 1, 0);
    CHECK(old >= 0 && old < n, "fetch-add on PE 0 returned %ld", old);
    shmem_barrier_all();

    int left = (me + n - 1) % n;
    snprintf(msg, sizeof msg, "put 2 from PE %d", left);
    CHECK(strcmp(text, msg) == 0, "text is \"%s\", not \"%s\"", text, msg);
    if (me == 0)
        CHECK(*counter == n, "counter %ld, not %d", *counter, n);
    printf("PE %d of %d: profiled ok\n", me, n);
    fflush(stdout);
    shmem_free(counter);
    shmem_free(text);
    shmem_finalize();
    return 0;
}
