/* OpenSHMEM remote atomic: PE 0 adds 1 to an 8-byte word of PE 1 with
 * shmem_long_atomic_fetch_add (the memchan side times fetch_add_u64 the same way);
 * the program is peer_common.h's word-operation driver, which also builds
 * shmem_fadd_xcore.
 */
#include <shmem.h>

#define PEER_WORD_PROG "shmem_fadd"
#define PEER_WORD_OP(w) shmem_long_atomic_fetch_add((w), 1, 1)
#define PEER_WORD_FIGURE "atomic_fetch_add_ns"
#define PEER_WORD_FIGURE_XCORE "atomic_fetch_add_xcore_ns"
#define PEER_WORD_NOTHING "fetched nothing"
#include "peer_common.h"
