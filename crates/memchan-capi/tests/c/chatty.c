/* Prints lines until its output is closed (then SIGPIPE ends it): the launcher's
 * behaviour when its own output goes to a closed pipe. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    shmem_barrier_all();
    for (unsigned long i = 0;; i++) {
        printf("PE %d line %lu\n", shmem_my_pe(), i);
        fflush(stdout);
    }
}
