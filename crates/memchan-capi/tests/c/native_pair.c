/* memchan.h between the processes of `memchan run -n 2` (each its own node of the
   cluster MEMCHAN_CLUSTER): membership and its events, a multicast group, a write through a tx mapping into the peer's
   rx mapping, ack, barrier, remote get and atomics, the cluster lock, messages. */
#include "native_check.h"

int main(void) {
    const char *name = getenv("MEMCHAN_CLUSTER");
    const char *rank_s = getenv("MEMCHAN_RANK");
    TRUE(name != NULL && rank_s != NULL);
    int rank = atoi(rank_s);

    memchan_cluster c;
    OK(memchan_join(name, &c));
    OK(memchan_wait_for_members(c, 2, 120000));
    uint32_t me, ids[8];
    size_t n;
    OK(memchan_node_id(c, &me));
    OK(memchan_members(c, ids, 8, &n));
    TRUE(n == 2);
    uint32_t peer = ids[0] == me ? ids[1] : ids[0];
    TRUE(peer != me && (ids[0] == me || ids[1] == me));

    /* Membership events: rank 1 joins a second node and leaves it; rank 0 sees it
       join, then leave (whether rank 0 saw its peer join depends on who came first).
       The barrier first: rank 0's join has returned, so its events have started. */
    OK(memchan_barrier(c));
    if (rank == 1) {
        memchan_cluster c2;
        uint32_t x;
        OK(memchan_join(name, &c2));
        OK(memchan_node_id(c2, &x));
        TRUE(x != me && x != peer);
        OK(memchan_leave(c2));
    } else {
        int joined = 0;
        memchan_event ev;
        for (;;) {
            OK(memchan_next_event(c, 60000, &ev));
            if (ev.node == me || ev.node == peer) continue;
            if (ev.kind == MEMCHAN_EVENT_JOINED) joined = 1;
            if (ev.kind == MEMCHAN_EVENT_LEFT) break;
        }
        TRUE(joined);
    }

    memchan_segment seg;
    memchan_rx rx;
    memchan_tx tx;
    OK(memchan_segment_create(c, "pair", 8192, 0600, &seg));
    OK(memchan_map_rx(seg, MEMCHAN_RX_REMOTE_READ | MEMCHAN_RX_NOTIFY, &rx));
    memchan_dest to = {MEMCHAN_DEST_NODE, peer};
    OK(memchan_map_tx(seg, to, 0, &tx));
    OK(memchan_barrier(c)); /* both mapped rx */

    /* Writes land in the peer's memory; ack says they did. */
    OK(memchan_tx_write_u64(tx, 0, 1000 + me));
    OK(memchan_tx_write(tx, 4096 - 3, "across a page", 14));
    OK(memchan_ack(c));
    OK(memchan_barrier(c));
    uint64_t w;
    char text[14];
    OK(memchan_rx_load_u64(rx, 0, &w));
    TRUE(w == 1000 + peer);
    OK(memchan_rx_read(rx, 4096 - 3, text, sizeof text));
    TRUE(strcmp(text, "across a page") == 0);
    const void *base;
    size_t len;
    OK(memchan_rx_memory(rx, &base, &len));
    TRUE(len == 8192 && memcmp((const char *)base + 4093, "across", 6) == 0);

    /* Remote get and atomics run on the peer's copy; the peer takes no part. */
    memchan_rma rma;
    OK(memchan_rma_open(seg, &rma));
    OK(memchan_get_u64(rma, peer, 0, &w));
    TRUE(w == 1000 + me);
    uint64_t old;
    OK(memchan_atomic_u64(rma, peer, 16, MEMCHAN_ATOMIC_FETCH_ADD, 5, 0, &old));
    TRUE(old == 0);
    OK(memchan_atomic_u64(rma, peer, 16, MEMCHAN_ATOMIC_COMPARE_SWAP, 5, 7, &old));
    TRUE(old == 5);
    char got[14];
    OK(memchan_get(rma, peer, 4096 - 3, got, sizeof got));
    TRUE(strcmp(got, "across a page") == 0);
    OK(memchan_barrier(c));
    OK(memchan_rx_load_u64(rx, 16, &w));
    TRUE(w == 7);

    /* The cluster lock guards a read-modify-write of a word on the first node. */
    memchan_lock lk;
    OK(memchan_lock_open(c, "pair-lock", &lk));
    uint32_t first = me < peer ? me : peer;
    for (int i = 0; i < 100; i++) {
        OK(memchan_lock_acquire(lk));
        OK(memchan_get_u64(rma, first, 24, &w));
        OK(memchan_atomic_u64(rma, first, 24, MEMCHAN_ATOMIC_SET, w + 1, 0, NULL));
        OK(memchan_lock_release(lk));
    }
    OK(memchan_barrier(c));
    OK(memchan_get_u64(rma, first, 24, &w));
    TRUE(w == 200);

    /* A multicast group of both nodes, with local copy: both copies get both words. */
    uint32_t g;
    size_t mine = me < peer ? 40 : 32, theirs = me < peer ? 32 : 40;
    if (me < peer) {
        uint32_t both[2] = {me, peer};
        OK(memchan_create_group(c, "pair-group", both, 2, &g));
    }
    OK(memchan_barrier(c));
    if (me > peer) OK(memchan_group(c, "pair-group", &g));
    memchan_tx gtx;
    memchan_dest gd = {MEMCHAN_DEST_GROUP, g};
    OK(memchan_map_tx(seg, gd, MEMCHAN_TX_LOCAL_COPY, &gtx));
    OK(memchan_tx_write_u64(gtx, mine, 50 + me));
    OK(memchan_ack(c));
    OK(memchan_barrier_group(c, g));
    OK(memchan_rx_load_u64(rx, mine, &w));
    TRUE(w == 50 + me);
    OK(memchan_rx_load_u64(rx, theirs, &w));
    TRUE(w == 50 + peer);
    OK(memchan_tx_close(gtx));

    /* Messages: blocking, non-blocking, probe, and a receive buffer too small. */
    memchan_comm comm;
    OK(memchan_comm_new(c, "pair-comm", &comm));
    uint32_t r;
    OK(memchan_comm_rank(comm, &r));
    TRUE(r == me);
    memchan_status st;
    if (rank == 0) {
        OK(memchan_send(comm, peer, 7, "ping", 5));
        char big[100];
        memset(big, 'x', sizeof big);
        memchan_request q;
        OK(memchan_isend(comm, peer, 8, big, sizeof big, &q));
        OK(memchan_wait(comm, q, NULL));
        char back[16];
        OK(memchan_recv(comm, MEMCHAN_ANY_SOURCE, MEMCHAN_ANY_TAG, back, sizeof back, &st));
        TRUE(st.source == peer && st.tag == 9 && st.len == 5 && strcmp(back, "pong") == 0);
    } else {
        char buf[16];
        memchan_request q;
        OK(memchan_irecv(comm, MEMCHAN_ANY_SOURCE, 7, buf, sizeof buf, &q));
        OK(memchan_wait(comm, q, &st));
        TRUE(st.source == peer && st.tag == 7 && st.len == 5 && strcmp(buf, "ping") == 0);
        OK(memchan_probe(comm, peer, 8, &st));
        TRUE(st.len == 100);
        FAILS(memchan_recv(comm, peer, 8, buf, sizeof buf, &st), MEMCHAN_E_TRUNCATED,
              "memchan_recv: message of 100 bytes");
        char big[100];
        OK(memchan_recv(comm, peer, 8, big, sizeof big, &st)); /* it stayed queued */
        TRUE(st.len == 100 && big[0] == 'x' && big[99] == 'x');
        OK(memchan_send(comm, peer, 9, "pong", 5));
    }

    /* Zero-copy mode and completion of many: a synchronous send returns once matched;
       rank 0's long issend lands straight in rank 1's rx mapping (irecv_rx), beside a
       buffered isend, completed by wait_all; rank 1 answers two messages that rank 0
       completes with wait_any, in whichever order they come. */
    memchan_segment zseg;
    memchan_rx zrx;
    OK(memchan_segment_create(c, "pair-zc", 8192, 0600, &zseg));
    OK(memchan_map_rx(zseg, 0, &zrx));
    OK(memchan_barrier(c));
    if (rank == 0) {
        OK(memchan_ssend(comm, peer, 10, "sync", 5));
        static char body[4096];
        for (size_t i = 0; i < sizeof body; i++) body[i] = (char)(i * 7);
        memchan_request q[2];
        memchan_status sts[2];
        int codes[2] = {-5, -5};
        OK(memchan_issend(comm, peer, 11, body, sizeof body, &q[0]));
        OK(memchan_isend(comm, peer, 12, "plain", 6, &q[1]));
        OK(memchan_wait_all(comm, q, 2, sts, codes));
        TRUE(codes[0] == MEMCHAN_OK && codes[1] == MEMCHAN_OK);
        TRUE(sts[0].tag == 11 && sts[0].len == 4096 && sts[1].tag == 12 && sts[1].len == 6);
        char a[8], b[8];
        OK(memchan_irecv(comm, peer, 13, a, sizeof a, &q[0]));
        OK(memchan_irecv(comm, peer, 14, b, sizeof b, &q[1]));
        size_t at = 9;
        OK(memchan_wait_any(comm, q, 2, &at, &st));
        TRUE(at < 2 && st.tag == 13 + at && st.len == 3);
        OK(memchan_wait(comm, q[1 - at], &st));
        TRUE(st.tag == 14 - at && st.len == 3);
        TRUE(strcmp(a, "a1") == 0 && strcmp(b, "b2") == 0);
        /* Both are spent now. */
        FAILS(memchan_wait_any(comm, &q[at], 1, &at, NULL), MEMCHAN_E_UNKNOWN_REQUEST,
              "memchan_wait_any: unknown or already completed request");
    } else {
        char s[8];
        OK(memchan_recv(comm, peer, 10, s, sizeof s, &st));
        TRUE(st.len == 5 && strcmp(s, "sync") == 0);
        memchan_request q;
        OK(memchan_irecv_rx(comm, peer, 11, zrx, 4096, 4096, &q));
        OK(memchan_wait(comm, q, &st));
        TRUE(st.len == 4096);
        static char got4k[4096];
        OK(memchan_rx_read(zrx, 4096, got4k, sizeof got4k));
        for (size_t i = 0; i < sizeof got4k; i++) TRUE(got4k[i] == (char)(i * 7));
        OK(memchan_recv(comm, peer, 12, s, sizeof s, &st));
        TRUE(st.len == 6 && strcmp(s, "plain") == 0);
        FAILS(memchan_irecv_rx(comm, peer, 11, zrx, 8000, 4096, &q), MEMCHAN_E_MSG_INVALID,
              "memchan_irecv_rx: invalid receive range");
        OK(memchan_send(comm, peer, 14, "b2", 3));
        OK(memchan_send(comm, peer, 13, "a1", 3));
    }
    OK(memchan_comm_free(comm));
    OK(memchan_barrier(c)); /* rank 0's deposit into rank 1's zrx is over */
    OK(memchan_rx_close(zrx));
    OK(memchan_segment_close(zseg));

    OK(memchan_lock_close(lk));
    OK(memchan_rma_close(rma));
    OK(memchan_tx_close(tx));
    OK(memchan_barrier(c)); /* the peer is done reading this node's memory */
    OK(memchan_rx_close(rx));
    OK(memchan_segment_close(seg));
    OK(memchan_leave(c));
    printf("native rank %d: ok\n", rank);
    return 0;
}
