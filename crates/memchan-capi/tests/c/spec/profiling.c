/* OpenSHMEM 1.5 section 10, the profiling interface: a program (here the program
 * itself, as a tool linked into it would) defines shmem_X, counts, and reaches the
 * library through pshmem_X. The data must move as without the layer, every call of
 * the program must be counted once, and none of libmemchan's own calls (the
 * barriers inside shmem_malloc and shmem_free, the quiet inside a barrier) may
 * come back through it. shmem_pcontrol's level reaches it; a context form is seen
 * as the call it makes. */
#include <pshmem.h>
#include <string.h>
#include "../check.h"

static int puts_, quiets, barriers, fadds, pcontrols, level = -1;

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe) {
    puts_++;
    pshmem_putmem(dest, source, nelems, pe);
}
void shmem_quiet(void) {
    quiets++;
    pshmem_quiet();
}
void shmem_barrier_all(void) {
    barriers++;
    pshmem_barrier_all();
}
long shmem_long_atomic_fetch_add(long *dest, long value, int pe) {
    fadds++;
    return pshmem_long_atomic_fetch_add(dest, value, pe);
}
void shmem_pcontrol(const int lv, ...) {
    pcontrols++;
    level = lv;
    pshmem_pcontrol(lv);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    char *text = shmem_malloc(64);
    long *counter = shmem_calloc(1, sizeof(long));
    CHECK(text && counter, "malloc");
    memset(text, 0, 64);
    shmem_barrier_all();

    shmem_pcontrol(2, "a tool's own argument");
    char msg[64];
    for (int i = 0; i < 3; i++) {
        snprintf(msg, sizeof msg, "put %d from PE %d", i, me);
        shmem_putmem(text, msg, strlen(msg) + 1, right);
    }
    shmem_ctx_putmem(SHMEM_CTX_DEFAULT, text, msg, strlen(msg) + 1, right);
    shmem_quiet();
    long old = shmem_long_atomic_fetch_add(counter, 1, 0);
    CHECK(old >= 0 && old < n, "fetch-add returned %ld", old);
    shmem_barrier_all();

    snprintf(msg, sizeof msg, "put 2 from PE %d", left);
    CHECK(strcmp(text, msg) == 0, "text is \"%s\", not \"%s\"", text, msg);
    if (me == 0)
        CHECK(*counter == n, "counter %ld, not %d", *counter, n);
    CHECK(puts_ == 4 && quiets == 1 && barriers == 2 && fadds == 1,
          "counted putmem %d quiet %d barrier_all %d fadd %d, not 4 1 2 1", puts_, quiets, barriers, fadds);
    CHECK(pcontrols == 1 && level == 2, "pcontrol %d level %d", pcontrols, level);
    shmem_free(counter);
    shmem_free(text);
    CHECK(barriers == 2, "shmem_free's barrier came back through the layer");
    shmem_finalize();
    printf("PE %d: ok\n", me);
    return 0;
}
