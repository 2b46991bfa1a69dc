/* OpenSHMEM remote read: PE 0 reads an 8-byte word of PE 1 with shmem_long_g
 * (the memchan side times get_u64 the same way); the program is peer_common.h's
 * word-operation driver, which also builds shmem_get_xcore.
 */
#include <shmem.h>

#define PEER_WORD_PROG "shmem_get"
#define PEER_WORD_OP(w) shmem_long_g((w), 1)
#define PEER_WORD_FIGURE "get_8b_ns"
#define PEER_WORD_FIGURE_XCORE "get_8b_xcore_ns"
#define PEER_WORD_NOTHING "read nothing"
#include "peer_common.h"
