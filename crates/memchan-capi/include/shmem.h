/* shmem.h: the OpenSHMEM subset libmemchan implements so far (first slice).
 *
 * Link with -lmemchan; start the program with `memchan run -n N ./prog` (or oshrun).
 * The symmetric heap holds SHMEM_SYMMETRIC_SIZE bytes (K/M/G suffixes, default 64M).
 * A failing call prints "memchan shmem: CALL: PROBLEM" and exits the PE with status 1.
 * Only heap addresses (shmem_malloc) are symmetric; static and global data are not yet.
 */
#ifndef MEMCHAN_SHMEM_H
#define MEMCHAN_SHMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Setup and PE queries. */
void shmem_init(void);
void shmem_finalize(void);
int shmem_my_pe(void);
int shmem_n_pes(void);

/* Symmetric heap. */
void *shmem_malloc(size_t size);
void shmem_free(void *ptr);

/* Remote memory access: dest/source on the remote side must be heap addresses. */
void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_long_p(long *dest, long value, int pe);
long shmem_long_g(const long *source, int pe);

/* Ordering and synchronisation. */
void shmem_quiet(void);
void shmem_fence(void);
void shmem_barrier_all(void);

/* Atomics (target 8-byte aligned, in the heap). */
long shmem_long_atomic_fetch_add(long *target, long value, int pe);

/* OpenSHMEM 1.0 spellings. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void *shmalloc(size_t size);
void shfree(void *ptr);
long shmem_long_fadd(long *target, long value, int pe);

#ifdef __cplusplus
}
#endif

#endif /* MEMCHAN_SHMEM_H */
