/* Every reduction family and type (1.0-era *_to_all and 1.5 team *_reduce, complex
 * sum and prod included) over
 * counts of 1, 5 and one larger than many steps of the library's share, in place
 * and not, plus active sets that leave PEs out, under `memchan run -n N` (N >= 2;
 * 3 makes the members' shares unequal). Each PE checks every element against the
 * combination it computes itself, in member order. */
#include <complex.h>
#include <shmem.h>
#include <string.h>
#include "check.h"

#define BIG 100003 /* odd, and not a multiple of 3: unequal shares */
static const size_t counts[] = {1, 5, BIG};
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static void *sbuf, *dbuf, *wrk;
static int me, n, turn;

/* Source values: small, so sums and products of up to 4 PEs stay exact in float
 * and (but for the 8-bit types, which wrap alike in C and in the library) in
 * range; the bitwise ops get wider, PE-specific bit patterns. */
#define VAL_sum(r, i) ((((i) * 7 + (r) * 3) % 11) + 1)
#define VAL_prod VAL_sum
#define VAL_min(r, i) ((((i) * 5 + (r) * 7) % 13) + 1)
#define VAL_max VAL_min
#define VAL_and(r, i) ((((i) * 37 + (r) * 101) & 0x7f) | 0x10)
#define VAL_or VAL_and
#define VAL_xor VAL_and
#define COMB_sum(a, b) ((a) + (b))
#define COMB_prod(a, b) ((a) * (b))
#define COMB_min(a, b) ((b) < (a) ? (b) : (a))
#define COMB_max(a, b) ((b) > (a) ? (b) : (a))
#define COMB_and(a, b) ((a) & (b))
#define COMB_or(a, b) ((a) | (b))
#define COMB_xor(a, b) ((a) ^ (b))

/* Fills this PE's source, runs CALL (dest `d`, source `s`, count `cnt`), checks
 * every element against members start, start + stride, ... (size of them). */
#define RUN(T, OP, NAME, start, stride, size, CALL)                                      \
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {                      \
        size_t cnt = counts[c];                                                          \
        int in_place = turn++ % 2;                                                       \
        T *s = (T *)sbuf, *d = in_place ? s : (T *)dbuf;                                 \
        for (size_t i = 0; i < cnt; i++) s[i] = (T)VAL_##OP(me, i);                      \
        CALL;                                                                            \
        for (size_t i = 0; i < cnt; i++) {                                               \
            T e = (T)VAL_##OP(start, i);                                                 \
            for (int k = 1; k < (size); k++) e = (T)COMB_##OP(e, (T)VAL_##OP((start) + k * (stride), i)); \
            CHECK(d[i] == e, "%s count %zu%s [%zu]: %g, want %g", NAME, cnt,             \
                  in_place ? " in place" : "", i, (double)d[i], (double)e);              \
        }                                                                                \
    }

#define TEAM(T, TN, OP)                                                                  \
    RUN(T, OP, "shmem_" #TN "_" #OP "_reduce", 0, 1, n,                                  \
        CHECK(shmem_##TN##_##OP##_reduce(SHMEM_TEAM_WORLD, d, s, cnt) == 0, "returned"))
#define TOALL(T, TN, OP)                                                                 \
    RUN(T, OP, "shmem_" #TN "_" #OP "_to_all", 0, 1, n,                                  \
        shmem_##TN##_##OP##_to_all(d, s, (int)cnt, 0, 0, n, (T *)wrk, psync))

#define TEAM_ARITH(T, TN) TEAM(T, TN, sum) TEAM(T, TN, prod) TEAM(T, TN, min) TEAM(T, TN, max)
#define TEAM_BITS(T, TN) TEAM(T, TN, and) TEAM(T, TN, or) TEAM(T, TN, xor)
/* Complex sum and prod, with imaginary parts (small integers: exact in float). */
#define CVAL(r, i) ((int)((((i) * 7 + (r) * 3) % 5) + 1) + ((int)(((i) + (r)) % 3) - 1) * I)
#define CRUN(T, NAME, OP, CALL)                                                          \
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {                      \
        size_t cnt = counts[c];                                                          \
        int in_place = turn++ % 2;                                                       \
        T *s = (T *)sbuf, *d = in_place ? s : (T *)dbuf;                                 \
        for (size_t i = 0; i < cnt; i++) s[i] = (T)CVAL(me, i);                          \
        CALL;                                                                            \
        for (size_t i = 0; i < cnt; i++) {                                               \
            T e = (T)CVAL(0, i);                                                         \
            for (int k = 1; k < n; k++) e = (T)COMB_##OP(e, (T)CVAL(k, i));              \
            CHECK(d[i] == e, "%s count %zu [%zu]: %g%+gi, want %g%+gi", NAME, cnt, i,    \
                  creal(d[i]), cimag(d[i]), creal(e), cimag(e));                         \
        }                                                                                \
    }
#define CTEAM(T, TN, OP)                                                                 \
    CRUN(T, "shmem_" #TN "_" #OP "_reduce", OP,                                          \
         CHECK(shmem_##TN##_##OP##_reduce(SHMEM_TEAM_WORLD, d, s, cnt) == 0, "returned"))
#define CTOALL(T, TN, OP)                                                                \
    CRUN(T, "shmem_" #TN "_" #OP "_to_all", OP,                                          \
         shmem_##TN##_##OP##_to_all(d, s, (int)cnt, 0, 0, n, (T *)wrk, psync))

#define TOALL_ARITH(T, TN) TOALL(T, TN, sum) TOALL(T, TN, prod) TOALL(T, TN, min) TOALL(T, TN, max)
#define TOALL_BITS(T, TN) TOALL(T, TN, and) TOALL(T, TN, or) TOALL(T, TN, xor)

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    sbuf = shmem_malloc(BIG * 16);
    dbuf = shmem_malloc(BIG * 16);
    wrk = shmem_malloc(BIG * 16);
    shmem_barrier_all();

    TOALL_ARITH(float, float) TOALL_ARITH(double, double) TOALL_ARITH(long double, longdouble)
    TOALL_ARITH(short, short)
    TOALL_ARITH(int, int) TOALL_ARITH(long, long) TOALL_ARITH(long long, longlong)
    TOALL_BITS(short, short) TOALL_BITS(int, int) TOALL_BITS(long, long)
    TOALL_BITS(long long, longlong)
    CTOALL(float _Complex, complexf, sum) CTOALL(float _Complex, complexf, prod)
    CTOALL(double _Complex, complexd, sum) CTOALL(double _Complex, complexd, prod)
    CTEAM(float _Complex, complexf, sum) CTEAM(float _Complex, complexf, prod)
    CTEAM(double _Complex, complexd, sum) CTEAM(double _Complex, complexd, prod)

    TEAM_ARITH(float, float) TEAM_ARITH(double, double) TEAM_ARITH(long double, longdouble)
    TEAM_ARITH(char, char)
    TEAM_ARITH(signed char, schar) TEAM_ARITH(short, short) TEAM_ARITH(int, int)
    TEAM_ARITH(long, long) TEAM_ARITH(long long, longlong)
    TEAM_ARITH(unsigned char, uchar) TEAM_ARITH(unsigned short, ushort)
    TEAM_ARITH(unsigned int, uint) TEAM_ARITH(unsigned long, ulong)
    TEAM_ARITH(unsigned long long, ulonglong) TEAM_ARITH(int8_t, int8)
    TEAM_ARITH(int16_t, int16) TEAM_ARITH(int32_t, int32) TEAM_ARITH(int64_t, int64)
    TEAM_ARITH(uint8_t, uint8) TEAM_ARITH(uint16_t, uint16) TEAM_ARITH(uint32_t, uint32)
    TEAM_ARITH(uint64_t, uint64) TEAM_ARITH(size_t, size) TEAM_ARITH(ptrdiff_t, ptrdiff)
    TEAM_BITS(unsigned char, uchar) TEAM_BITS(unsigned short, ushort)
    TEAM_BITS(unsigned int, uint) TEAM_BITS(unsigned long, ulong)
    TEAM_BITS(unsigned long long, ulonglong) TEAM_BITS(int8_t, int8)
    TEAM_BITS(int16_t, int16) TEAM_BITS(int32_t, int32) TEAM_BITS(int64_t, int64)
    TEAM_BITS(uint8_t, uint8) TEAM_BITS(uint16_t, uint16) TEAM_BITS(uint32_t, uint32)
    TEAM_BITS(uint64_t, uint64) TEAM_BITS(size_t, size)

    /* Active sets that leave PEs out: the even PEs (stride 2), and the last two. */
    shmem_barrier_all();
    turn = 0; /* the same in-place choices on every member of the sets below */
    int evens = (n + 1) / 2;
    if (me % 2 == 0 && evens > 1)
        RUN(long, sum, "even PEs' shmem_long_sum_to_all", 0, 2, evens,
            shmem_long_sum_to_all(d, s, (int)cnt, 0, 1, evens, (long *)wrk, psync))
    shmem_barrier_all();
    turn = 0;
    if (me >= n - 2)
        RUN(double, max, "last two PEs' shmem_double_max_to_all", n - 2, 1, 2,
            shmem_double_max_to_all(d, s, (int)cnt, n - 2, 0, 2, (double *)wrk, psync))
    shmem_barrier_all();

    /* SHMEM_TEAM_SHARED: its members (every PE of a one-host job, or this PE alone). */
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    int s0 = shmem_team_translate_pe(SHMEM_TEAM_SHARED, 0, SHMEM_TEAM_WORLD);
    CHECK(sn >= 1 && s0 >= 0, "shared team of %d from %d", sn, s0);
    turn = 0;
    RUN(int, sum, "shmem_int_sum_reduce on SHMEM_TEAM_SHARED", s0, 1, sn,
        CHECK(shmem_int_sum_reduce(SHMEM_TEAM_SHARED, d, s, cnt) == 0, "returned"))

    shmem_free(wrk);
    shmem_free(dbuf);
    shmem_free(sbuf);
    printf("PE %d of %d: reductions ok\n", me, n);
    shmem_finalize();
    return 0;
}
