/* Checks shared by the memchan.h test programs: a failed check prints the line, the
   code, its text and memchan_last_error(), and ends the process with status 1. */
#ifndef NATIVE_CHECK_H
#define NATIVE_CHECK_H

#include <memchan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The call must succeed. */
#define OK(call)                                                                   \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MEMCHAN_OK) {                                                   \
            fprintf(stderr, "line %d: %s -> %d (%s): %s\n", __LINE__, #call, rc_,  \
                    memchan_strerror(rc_), memchan_last_error());                  \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* The call must fail with `code`, and memchan_last_error() must contain `needle`. */
#define FAILS(call, code, needle)                                                  \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != (code) || strstr(memchan_last_error(), (needle)) == NULL) {     \
            fprintf(stderr, "line %d: %s -> %d, want %d with \"%s\": %s\n",        \
                    __LINE__, #call, rc_, (code), (needle), memchan_last_error()); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* A condition that must hold. */
#define TRUE(cond)                                                                 \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "line %d: %s does not hold\n", __LINE__, #cond);       \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#endif
