/* Two threads of each PE put and get at once, each through its own handles
 * (libmemchan keeps a thread's tx mappings and RMA handle in a thread-local cache):
 * thread t puts 1..ROUNDS into word t of the next PE, quiets, and reads the word
 * back; then every PE checks the words the previous one put into it. With argv[1]
 * "after-finalize", a call after shmem_finalize must be refused by name.
 * Prints "PE r of n: ok" (or exits 1 through the refused call). */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#define THREADS 2
#define ROUNDS 1000

static long *words;
static int me, npes;

static void *worker(void *arg) {
    long t = (long)arg;
    int to = (me + 1) % npes;
    for (long i = 1; i <= ROUNDS; i++) shmem_long_p(&words[t], i * THREADS + t, to);
    shmem_quiet();
    /* only this thread of this PE writes word t of PE `to` */
    return (void *)(shmem_long_g(&words[t], to) == ROUNDS * THREADS + t ? arg : (void *)-1L);
}

int main(int argc, char **argv) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    words = shmem_malloc(THREADS * sizeof(long));
    for (int t = 0; t < THREADS; t++) words[t] = 0;
    shmem_barrier_all();
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    int bad = 0;
    for (long t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        if (r != (void *)t) {
            fprintf(stderr, "PE %d thread %ld read back the wrong value\n", me, t);
            bad = 1;
        }
    }
    shmem_barrier_all();
    for (int t = 0; t < THREADS; t++) {
        if (words[t] != ROUNDS * THREADS + t) {
            fprintf(stderr, "PE %d word %d: %ld\n", me, t, words[t]);
            bad = 1;
        }
    }
    shmem_free(words);
    shmem_finalize();
    if (bad) return 3;
    if (argc > 1 && strcmp(argv[1], "after-finalize") == 0) printf("%d\n", shmem_my_pe());
    printf("PE %d of %d: ok\n", me, npes);
    return 0;
}
