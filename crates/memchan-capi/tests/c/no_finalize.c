/* An OpenSHMEM 1.0-era program, as the OSU benchmarks are: start_pes and no
 * shmem_finalize. Its PEs must still leave the cluster at exit. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    start_pes(0);
    shmem_barrier_all();
    printf("PE %d of %d: ok\n", _my_pe(), _num_pes());
    return 0;
}
