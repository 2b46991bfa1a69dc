/* The last PE calls shmem_global_exit(7) while the others wait in a barrier that
 * never completes: the job must end with exit code 7. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    if (shmem_my_pe() == shmem_n_pes() - 1) {
        printf("PE %d: global_exit(7)\n", shmem_my_pe());
        fflush(stdout);
        shmem_global_exit(7);
    }
    shmem_barrier_all();
    printf("PE %d: passed a barrier it should not have\n", shmem_my_pe());
    return 0;
}
