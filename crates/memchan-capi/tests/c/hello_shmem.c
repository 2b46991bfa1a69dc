/* The C API's first end-to-end check, run under `memchan run -n N`: every PE puts to
 * its right neighbour, gets from its left one, and adds to a counter on PE 0.
 * Exit status 0 only if every value read back is the one expected. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#define FAIL(...) do { fprintf(stderr, "PE %d: ", me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

int main(void) {
    start_pes(0);
    int me = _my_pe(), n = shmem_n_pes();
    if (me != shmem_my_pe() || n != _num_pes() || n < 2)
        FAIL("my_pe/n_pes disagree: %d/%d", me, n);

    long *slot = shmem_malloc(sizeof(long));      /* written by the left neighbour */
    char *text = shmalloc(64);                    /* likewise, with putmem */
    long *counter = shmem_malloc(sizeof(long));   /* on PE 0: fetch-added by all */
    *slot = -1;
    *counter = 0;
    memset(text, 0, 64);
    shmem_barrier_all();

    int right = (me + 1) % n, left = (me + n - 1) % n;
    char msg[64];
    snprintf(msg, sizeof msg, "hello from PE %d", me);
    shmem_long_p(slot, 1000 + me, right);
    shmem_putmem(text, msg, strlen(msg) + 1, right);
    shmem_quiet();
    long old = shmem_long_atomic_fetch_add(counter, me + 1, 0);
    if (old < 0 || old > (long)n * (n + 1) / 2)
        FAIL("fetch_add returned %ld", old);
    shmem_barrier_all();

    /* What the left neighbour put here, read locally. */
    if (*slot != 1000 + left) FAIL("slot holds %ld, want %d", *slot, 1000 + left);
    char want[64];
    snprintf(want, sizeof want, "hello from PE %d", left);
    if (strcmp(text, want) != 0) FAIL("text holds \"%s\", want \"%s\"", text, want);

    /* The right neighbour's copies, read remotely: what this PE put there. */
    if (shmem_long_g(slot, right) != 1000 + me) FAIL("long_g from PE %d", right);
    char back[64];
    shmem_getmem(back, text, sizeof back, right);
    if (strcmp(back, msg) != 0) FAIL("getmem from PE %d gave \"%s\"", right, back);

    /* This PE's own copy through the same calls. */
    long *own = shmem_malloc(2 * sizeof(long));
    long pair[2] = {42 + me, -7};
    shmem_putmem(own, pair, sizeof pair, me);
    shmem_quiet();
    long again[2] = {0, 0};
    shmem_getmem(again, own, sizeof again, me);
    if (again[0] != 42 + me || again[1] != -7 || own[0] != 42 + me || shmem_long_g(own + 1, me) != -7)
        FAIL("own copy holds %ld %ld", again[0], again[1]);
    shmem_free(own);

    long total = shmem_long_g(counter, 0);
    if (total != (long)n * (n + 1) / 2) FAIL("counter on PE 0 is %ld, want %ld", total, (long)n * (n + 1) / 2);
    if (shmem_long_fadd(counter, 0, 0) != total) FAIL("fadd 0 changed the counter");

    shmem_barrier_all();
    shmem_free(slot);
    shfree(text);
    shmem_free(counter);
    printf("PE %d of %d: ok\n", me, n);
    shmem_finalize();
    return 0;
}
