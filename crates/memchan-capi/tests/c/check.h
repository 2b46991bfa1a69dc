/* Shared by the C test programs: CHECK(cond, fmt, ...) reports PE and line and fails. */
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "PE %d line %d: ", shmem_my_pe(), __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)
