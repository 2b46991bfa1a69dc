/* Typed and sized RMA under `memchan run -n N`: put/get/p/g, _nbi, iput/iget,
 * putN/getN, ctx forms and put_signal, each checked with values unique per PE. */
#include <shmem.h>
#include <string.h>
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    int *ints = shmem_malloc(8 * sizeof(int));
    double *dbl = shmem_malloc(4 * sizeof(double));
    long double *ld = shmem_malloc(2 * sizeof(long double));
    uint8_t *u8 = shmem_malloc(16);
    size_t *sz = shmem_malloc(2 * sizeof(size_t));
    short *strided = shmem_malloc(12 * sizeof(short));
    uint32_t *w32 = shmem_malloc(4 * sizeof(uint32_t));
    uint64_t *w64 = shmem_malloc(4 * sizeof(uint64_t));
    char *text = shmem_malloc(32);
    uint64_t *sig = shmem_malloc(sizeof(uint64_t));
    memset(ints, 0, 8 * sizeof(int));
    memset(strided, 0, 12 * sizeof(short));
    *sig = 0;
    shmem_barrier_all();

    int src[8];
    for (int i = 0; i < 8; i++) src[i] = 100 * me + i;
    shmem_int_put(ints, src, 4, right);
    shmem_int_put_nbi(ints + 4, src + 4, 4, right);
    double d[4] = {me + 0.5, -1.25, 3e10, me * 2.0};
    shmem_double_put(dbl, d, 4, right);
    long double l = (long double)me + 0.25L;
    shmem_longdouble_p(ld, l, right);
    shmem_uint8_p(u8, (uint8_t)(200 + me), right);
    shmem_size_p(sz, (size_t)1 << 40 | (size_t)me, right);
    /* iput: source elements 0,2,4 -> dest elements 0,3,6 */
    short s6[6] = {(short)me, -1, (short)(me + 10), -1, (short)(me + 20), -1};
    shmem_short_iput(strided, s6, 3, 2, 3, right);
    uint32_t a32[4] = {1u + me, 2u, 3u, 4u};
    shmem_put32(w32, a32, 4, right);
    uint64_t a64[4] = {10u + me, 20u, 30u, 40u};
    shmem_put64_nbi(w64, a64, 4, right);
    shmem_ctx_putmem(SHMEM_CTX_DEFAULT, text, "ctx put", 8, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();

    /* What the left neighbour put here, read locally. */
    for (int i = 0; i < 8; i++) CHECK(ints[i] == 100 * left + i, "ints[%d]=%d", i, ints[i]);
    CHECK(dbl[0] == left + 0.5 && dbl[1] == -1.25 && dbl[2] == 3e10 && dbl[3] == left * 2.0, "double put");
    CHECK(ld[0] == (long double)left + 0.25L, "long double p");
    CHECK(u8[0] == 200 + left, "uint8 p gave %u", u8[0]);
    CHECK(sz[0] == ((size_t)1 << 40 | (size_t)left), "size p");
    CHECK(strided[0] == left && strided[3] == left + 10 && strided[6] == left + 20, "iput landed %d %d %d", strided[0], strided[3], strided[6]);
    CHECK(strided[1] == 0 && strided[2] == 0 && strided[4] == 0 && strided[5] == 0, "iput wrote between its elements");
    CHECK(w32[0] == 1u + left && w32[3] == 4u, "put32");
    CHECK(w64[0] == 10u + left && w64[3] == 40u, "put64_nbi");
    CHECK(strcmp(text, "ctx put") == 0, "ctx putmem gave %s", text);

    /* The right neighbour's copies, read remotely. */
    int back[8] = {0};
    shmem_int_get(back, ints, 4, right);
    shmem_int_get_nbi(back + 4, ints + 4, 4, right);
    shmem_quiet();
    for (int i = 0; i < 8; i++) CHECK(back[i] == src[i], "int get [%d]=%d", i, back[i]);
    CHECK(shmem_int_g(ints + 7, right) == src[7], "int g");
    CHECK(shmem_double_g(dbl + 3, right) == me * 2.0, "double g");
    CHECK(shmem_longdouble_g(ld, right) == l, "long double g");
    CHECK(shmem_uint8_g(u8, right) == 200 + me, "uint8 g");
    CHECK(shmem_ctx_size_g(SHMEM_CTX_DEFAULT, sz, right) == ((size_t)1 << 40 | (size_t)me), "ctx size g");
    short got[3] = {0};
    shmem_short_iget(got, strided, 1, 3, 3, right); /* elements 0,3,6 of the remote copy */
    CHECK(got[0] == me && got[1] == me + 10 && got[2] == me + 20, "iget %d %d %d", got[0], got[1], got[2]);
    uint32_t g32[4];
    shmem_get32(g32, w32, 4, right);
    CHECK(g32[0] == 1u + me && g32[3] == 4u, "get32");
    uint64_t g64[2];
    shmem_iget64(g64, w64, 1, 2, 2, right); /* elements 0 and 2 */
    CHECK(g64[0] == 10u + me && g64[1] == 30u, "iget64 %lu %lu", (unsigned long)g64[0], (unsigned long)g64[1]);
    char t2[8];
    shmem_getmem_nbi(t2, text, 8, right);
    shmem_quiet();
    CHECK(strcmp(t2, "ctx put") == 0, "getmem_nbi");
    shmem_barrier_all();

    /* put_signal: the data is whole once the signal is seen. */
    long payload[16];
    for (int i = 0; i < 16; i++) payload[i] = 1000 * me + i;
    long *inbox = shmem_malloc(sizeof payload);
    shmem_barrier_all();
    shmem_long_put_signal(inbox, payload, 16, sig, 1, SHMEM_SIGNAL_ADD, right);
    uint64_t s = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    CHECK(s == 1 && shmem_signal_fetch(sig) == 1, "signal %lu", (unsigned long)s);
    for (int i = 0; i < 16; i++) CHECK(inbox[i] == 1000 * left + i, "put_signal data [%d]=%ld", i, inbox[i]);

    shmem_barrier_all();
    printf("PE %d of %d: rma ok\n", me, n);
    shmem_finalize();
    return 0;
}
