/* Two threads of each PE put and get at once, each through its own handles
 * (libmemchan keeps the handles of the thread that called shmem_init in a global
 * slot, every other thread's in a thread-local cache), beside the main thread:
 * thread t puts 1..ROUNDS into word t of the next PE, quiets, and reads the word
 * back; then every PE checks the words the previous one put into it. With argv[1]
 * "after-finalize", a call after shmem_finalize must be refused by name. With
 * "init-in-thread", a thread calls shmem_init, makes calls and exits before the
 * main thread makes its own (the slot's owner is gone).
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

/* shmem_init and the first calls; the others' puts have landed when it returns. */
static void *init(void *arg) {
    (void)arg;
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    words = shmem_malloc(THREADS * sizeof(long));
    shmem_long_p(&words[0], -1, (me + 1) % npes);
    shmem_quiet();
    shmem_barrier_all();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "init-in-thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, init, NULL);
        pthread_join(t, NULL);
    } else {
        init(NULL);
    }
    if (words[0] != -1) {
        fprintf(stderr, "PE %d: the first put did not land (%ld)\n", me, words[0]);
        return 3;
    }
    shmem_barrier_all(); /* every PE has checked before anyone writes again */
    for (int t = 0; t < THREADS; t++) words[t] = 0;
    /* the main thread's own calls beside the workers' */
    shmem_long_p(&words[0], 0, (me + 1) % npes);
    shmem_quiet();
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
