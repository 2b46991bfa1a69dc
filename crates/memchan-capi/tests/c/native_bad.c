/* memchan.h given bad input: every call returns a code with a message naming the
   call and the problem, and nothing crashes. One node, the cluster named by argv[1]. */
#include "native_check.h"

int main(int argc, char **argv) {
    TRUE(argc == 2);
    memchan_cluster c, zero_c = {0};

    /* Texts for codes. */
    TRUE(strcmp(memchan_strerror(MEMCHAN_E_INVALID), "invalid argument") == 0);
    TRUE(strcmp(memchan_strerror(424242), "unknown error code") == 0);
    TRUE(strcmp(memchan_last_error(), "") == 0);

    /* Null pointers and handles never issued. */
    FAILS(memchan_join(NULL, &c), MEMCHAN_E_INVALID, "memchan_join: invalid cluster name: null pointer");
    FAILS(memchan_join(argv[1], NULL), MEMCHAN_E_INVALID, "memchan_join: invalid out: null pointer");
    FAILS(memchan_join("bad/name", &c), MEMCHAN_E_INVALID, "memchan_join: invalid");
    FAILS(memchan_ack(zero_c), MEMCHAN_E_INVALID, "memchan_ack: invalid cluster handle: 0 is not a live handle");
    memchan_cluster junk = {0xdeadbeef};
    FAILS(memchan_barrier(junk), MEMCHAN_E_INVALID, "memchan_barrier: invalid cluster handle: 3735928559");

    OK(memchan_join(argv[1], &c));
    uint32_t me;
    FAILS(memchan_node_id(c, NULL), MEMCHAN_E_INVALID, "memchan_node_id: invalid out: null pointer");
    OK(memchan_node_id(c, &me));
    size_t n;
    FAILS(memchan_members(c, NULL, 4, &n), MEMCHAN_E_INVALID, "memchan_members: invalid ids");
    OK(memchan_members(c, NULL, 0, &n));
    TRUE(n == 1);

    uint32_t g;
    FAILS(memchan_group(c, "no-group", &g), MEMCHAN_E_UNKNOWN_GROUP, "memchan_group: unknown group `no-group`");
    FAILS(memchan_barrier_group(c, 70000), MEMCHAN_E_INVALID, "70000 is not a group id");

    /* Segments: bad names, sizes, unknown names, wrong-kind handles. */
    memchan_segment seg, other;
    FAILS(memchan_segment_create(c, "_reserved", 4096, 0600, &seg), MEMCHAN_E_INVALID, "memchan_segment_create: invalid");
    FAILS(memchan_segment_create(c, NULL, 4096, 0600, &seg), MEMCHAN_E_INVALID, "invalid segment name: null pointer");
    FAILS(memchan_segment_open(c, "nowhere", &seg), MEMCHAN_E_UNKNOWN_SEGMENT, "memchan_segment_open: unknown segment `nowhere`");
    OK(memchan_segment_create(c, "bad", 8192, 0600, &seg));
    FAILS(memchan_segment_create(c, "bad", 4096, 0600, &other), MEMCHAN_E_SEGMENT_SIZE_MISMATCH, "exists with 8192 bytes, not 4096");
    memchan_tx as_tx = {seg.id};
    FAILS(memchan_tx_write_u64(as_tx, 0, 1), MEMCHAN_E_INVALID, "memchan_tx_write_u64: invalid tx mapping handle");
    FAILS(memchan_tx_write_u64(as_tx, 0, 1), MEMCHAN_E_INVALID, "is a segment handle");
    memchan_segment as_seg = {c.id};
    FAILS(memchan_map_rx(as_seg, 0, NULL), MEMCHAN_E_INVALID, "invalid out: null pointer");
    FAILS(memchan_map_rx(as_seg, 0, (memchan_rx *)&other), MEMCHAN_E_INVALID, "is a cluster handle");

    /* Mappings: unknown flags and kinds, bounds, alignment, transmit disabled. */
    memchan_rx rx;
    memchan_tx tx;
    FAILS(memchan_map_rx(seg, 0x80, &rx), MEMCHAN_E_INVALID, "memchan_map_rx: invalid rx flags: 0x80 has unknown bits");
    OK(memchan_map_rx(seg, MEMCHAN_RX_NOTIFY, &rx));
    memchan_dest nowhere = {7, 0};
    FAILS(memchan_map_tx(seg, nowhere, 0, &tx), MEMCHAN_E_INVALID, "invalid destination kind: 7");
    memchan_dest far = {MEMCHAN_DEST_NODE, 70000};
    FAILS(memchan_map_tx(seg, far, 0, &tx), MEMCHAN_E_INVALID, "70000 is not a node id");
    memchan_dest self = {MEMCHAN_DEST_NODE, me};
    OK(memchan_map_tx(seg, self, 0, &tx));
    FAILS(memchan_tx_write_u64(tx, 8192, 1), MEMCHAN_E_OUT_OF_BOUNDS, "memchan_tx_write_u64: offset 8192 + length 8 is past the end of segment `bad`");
    FAILS(memchan_tx_write_u64(tx, 3, 1), MEMCHAN_E_UNALIGNED, "unaligned 8-byte atomic access at offset 3");
    FAILS(memchan_tx_write(tx, 0, NULL, 5), MEMCHAN_E_INVALID, "memchan_tx_write: invalid data: null pointer with length 5");
    OK(memchan_tx_write(tx, 0, NULL, 0));
    FAILS(memchan_tx_write(tx, 8190, "abc", 3), MEMCHAN_E_OUT_OF_BOUNDS, "past the end");
    OK(memchan_tx_set_transmit_enable(tx, 0));
    FAILS(memchan_tx_write_u32(tx, 0, 1), MEMCHAN_E_TRANSMIT_DISABLED, "transmit is disabled");
    OK(memchan_tx_set_transmit_enable(tx, 1));
    OK(memchan_tx_write_u32(tx, 0, 1));
    OK(memchan_ack(c));
    uint32_t w32;
    OK(memchan_rx_load_u32(rx, 0, &w32));
    TRUE(w32 == 1);
    FAILS(memchan_rx_load_u64(rx, 0, NULL), MEMCHAN_E_INVALID, "memchan_rx_load_u64: invalid out: null pointer");
    uint64_t w;
    FAILS(memchan_rx_load_u64(rx, 8192, &w), MEMCHAN_E_OUT_OF_BOUNDS, "memchan_rx_load_u64: offset 8192");
    char buf[8];
    FAILS(memchan_rx_read(rx, 8190, buf, 8), MEMCHAN_E_OUT_OF_BOUNDS, "memchan_rx_read:");
    OK(memchan_rx_wait(rx, 0)); /* the write above */
    FAILS(memchan_rx_wait(rx, 10), MEMCHAN_E_TIMEOUT, "memchan_rx_wait: no write landed within 10 ms");
    FAILS(memchan_rx_wait_until_u64(rx, 8, 99, 1, 10, NULL), MEMCHAN_E_INVALID, "invalid comparison: 99");
    FAILS(memchan_rx_wait_until_u64(rx, 8, MEMCHAN_CMP_EQ, 1, 10, &w), MEMCHAN_E_TIMEOUT, "did not satisfy");

    /* Remote access: a page not opened to it, nodes that are not members, bad ops. */
    memchan_rma rma;
    OK(memchan_rma_open(seg, &rma));
    FAILS(memchan_get_u64(rma, me, 0, &w), MEMCHAN_E_REMOTE_READ_OFF, "memchan_get_u64:");
    FAILS(memchan_get_u64(rma, me + 1, 0, &w), MEMCHAN_E_UNKNOWN_NODE, "not a member");
    FAILS(memchan_atomic_u64(rma, me, 0, 42, 0, 0, NULL), MEMCHAN_E_INVALID, "memchan_atomic_u64: invalid atomic op: 42");
    FAILS(memchan_get(rma, me, 0, NULL, 8), MEMCHAN_E_INVALID, "memchan_get: invalid buf: null pointer");

    /* Locks: release without holding, acquire twice through one handle. */
    memchan_lock lk;
    FAILS(memchan_lock_open(c, NULL, &lk), MEMCHAN_E_INVALID, "invalid lock name: null pointer");
    OK(memchan_lock_open(c, "bad-lock", &lk));
    FAILS(memchan_lock_release(lk), MEMCHAN_E_INVALID, "memchan_lock_release: invalid lock handle: this handle does not hold the lock");
    OK(memchan_lock_acquire(lk));
    int got = 5;
    FAILS(memchan_lock_try_acquire(lk, &got), MEMCHAN_E_INVALID, "holds the lock already");
    OK(memchan_lock_release(lk));
    OK(memchan_lock_try_acquire(lk, &got));
    TRUE(got == 1);
    OK(memchan_lock_close(lk)); /* releases it */
    FAILS(memchan_lock_acquire(lk), MEMCHAN_E_INVALID, "is not a live handle");

    /* Messages: unknown requests and peers, null outputs; leave refused while in use. */
    memchan_comm comm;
    OK(memchan_comm_new(c, "bad-comm", &comm));
    memchan_request bogus = {12345};
    FAILS(memchan_wait(comm, bogus, NULL), MEMCHAN_E_UNKNOWN_REQUEST, "memchan_wait: unknown or already completed request");
    FAILS(memchan_test(comm, bogus, NULL, NULL), MEMCHAN_E_INVALID, "invalid done: null pointer");
    size_t at;
    int codes[2] = {-5, -5};
    memchan_request two[2] = {bogus, bogus};
    FAILS(memchan_wait_all(comm, NULL, 2, NULL, NULL), MEMCHAN_E_INVALID, "memchan_wait_all: invalid reqs: null pointer with count 2");
    FAILS(memchan_wait_all(comm, two, 2, NULL, codes), MEMCHAN_E_UNKNOWN_REQUEST, "memchan_wait_all: unknown or already completed request");
    TRUE(codes[0] == -5 && codes[1] == -5); /* nothing was waited for */
    OK(memchan_wait_all(comm, NULL, 0, NULL, NULL));
    FAILS(memchan_wait_any(comm, two, 2, NULL, NULL), MEMCHAN_E_INVALID, "memchan_wait_any: invalid index: null pointer");
    FAILS(memchan_wait_any(comm, two, 0, &at, NULL), MEMCHAN_E_UNKNOWN_REQUEST, "memchan_wait_any: unknown or already completed request");
    FAILS(memchan_issend(comm, me, 0, "x", 1, NULL), MEMCHAN_E_INVALID, "memchan_issend: invalid req: null pointer");
    FAILS(memchan_ssend(comm, me, 0, NULL, 4), MEMCHAN_E_INVALID, "memchan_ssend: invalid data: null pointer with length 4");
    memchan_rx norx = {0};
    memchan_request q;
    FAILS(memchan_irecv_rx(comm, me, 0, norx, 0, 8, &q), MEMCHAN_E_INVALID, "memchan_irecv_rx: invalid rx mapping handle");
    int rc = memchan_send(comm, me + 1, 0, "x", 1);
    TRUE(rc != MEMCHAN_OK && strstr(memchan_last_error(), "memchan_send: ") != NULL);
    FAILS(memchan_leave(c), MEMCHAN_E_INVALID, "memchan_leave: invalid cluster handle: 1 communicator(s)");
    OK(memchan_comm_free(comm));
    FAILS(memchan_comm_free(comm), MEMCHAN_E_INVALID, "invalid communicator handle");

    /* Closed handles stay invalid; a freed segment's handle is gone. */
    OK(memchan_rma_close(rma));
    OK(memchan_tx_close(tx));
    FAILS(memchan_tx_write_u64(tx, 0, 1), MEMCHAN_E_INVALID, "is not a live handle");
    OK(memchan_rx_close(rx));
    FAILS(memchan_rx_close(rx), MEMCHAN_E_INVALID, "memchan_rx_close: invalid rx mapping handle");
    OK(memchan_segment_free(seg));
    FAILS(memchan_segment_size(seg, &n), MEMCHAN_E_INVALID, "memchan_segment_size: invalid segment handle");
    OK(memchan_leave(c));
    FAILS(memchan_ack(c), MEMCHAN_E_INVALID, "is not a live handle");
    printf("native_bad: ok\n");
    return 0;
}
