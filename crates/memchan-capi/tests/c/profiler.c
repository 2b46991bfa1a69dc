/* A profiling library as tools write them against OpenSHMEM's profiling interface
 * (section 10): it defines shmem_X, counts the call, and calls pshmem_X, which is
 * libmemchan's. Linked before -lmemchan; shmem_finalize prints this PE's counts.
 * Only the program's own calls are counted: libmemchan's internal ones (the quiet
 * inside shmem_barrier_all) never come back through these definitions. */
#include <pshmem.h>
#include <stdarg.h>
#include <stdio.h>

static int putmem, quiet, barrier_all, fadd, pcontrol_calls, last_level = -1;

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe) {
    putmem++;
    pshmem_putmem(dest, source, nelems, pe);
}

void shmem_quiet(void) {
    quiet++;
    pshmem_quiet();
}

void shmem_barrier_all(void) {
    barrier_all++;
    pshmem_barrier_all();
}

long shmem_long_atomic_fetch_add(long *dest, long value, int pe) {
    fadd++;
    return pshmem_long_atomic_fetch_add(dest, value, pe);
}

void shmem_pcontrol(const int level, ...) {
    pcontrol_calls++;
    last_level = level;
    pshmem_pcontrol(level);
}

void shmem_finalize(void) {
    printf("PE %d profile: putmem %d quiet %d barrier_all %d fadd %d pcontrol %d level %d\n",
           pshmem_my_pe(), putmem, quiet, barrier_all, fadd, pcontrol_calls, last_level);
    fflush(stdout);
    pshmem_finalize();
}
