//! The communicator's set-up and queries: [`Comm::new`] (the segment, the rings, the
//! peers), its rank and members, reading a word of its own memory, [`Comm::finish`].

use super::*;

impl<'c> Comm<'c> {
    /// Creates this node's endpoint of the communicator `name`: collective over every
    /// live member of the cluster (it ends with a cluster barrier, after which all
    /// members can receive). The members are the cluster's members after that barrier;
    /// every node id must be below `cfg.max_nodes`.
    ///
    /// # Errors
    /// `Invalid` for bad sizes or a node id past `max_nodes`; the cluster's errors
    /// (segment name, permissions, `SegmentSizeMismatch` if members disagree on sizes).
    pub fn new(cluster: &'c Cluster, name: &str, cfg: CommConfig) -> Result<Comm<'c>> {
        if !cfg.ring_slots.is_power_of_two() || !(8..=4096).contains(&cfg.ring_slots) {
            return Err(invalid("ring_slots", "a power of two in 8..=4096"));
        }
        if cfg.chunk_size == 0 || !cfg.chunk_size.is_multiple_of(4096) || cfg.chunk_size > 1 << 26 {
            return Err(invalid("chunk_size", "a multiple of 4096 up to 64 MiB"));
        }
        if !(2..=64).contains(&cfg.chunks) {
            return Err(invalid("chunks", "2..=64"));
        }
        if !(1..=memchan::MAX_NODES).contains(&cfg.max_nodes) {
            return Err(invalid("max_nodes", "1..=256"));
        }
        let me = cluster.node_id().index();
        if me >= cfg.max_nodes {
            return Err(invalid(
                "max_nodes",
                format!("node id {me} is not below {}", cfg.max_nodes),
            ));
        }
        let lay = Layout::new(&cfg, cluster.page_size());
        let seg = cluster.segment(&format!("mp.{name}"), lay.size, cfg.mode)?;
        let rx = seg.map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })?;
        // Rings and credit lines wake a sleeping waiter; bulk pages need not (a
        // fragment's slot follows its chunk).
        rx.set_attrs(
            lay.bulk_start,
            lay.size - lay.bulk_start,
            RxAttrs::default(),
        )?;
        cluster.barrier()?;
        let mut c = Comm {
            cluster,
            _seg: seg,
            rx,
            me,
            lay,
            peers: (0..cfg.max_nodes).map(|_| Peer::new()).collect(),
            cfg,
            active: Vec::new(),
            reqs: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            posted: VecDeque::new(),
            unexp: VecDeque::new(),
            unexp_bytes: 0,
            next_uid: 0,
            direct: HashMap::new(),
            epoch: cluster.epoch(),
            spare: Vec::new(),
            completed: 0,
            turn: 0,
            told: Vec::new(),
            hub: cluster.transport() == memchan::TransportKind::Hub,
            fast_polls: if cluster.transport() == memchan::TransportKind::Hub {
                1
            } else {
                FAST_POLLS
            },
            base: 0,
        };
        c.base = c.rx.as_ptr() as usize;
        for n in cluster.members() {
            let i = n.index();
            if i >= c.cfg.max_nodes {
                return Err(invalid(
                    "max_nodes",
                    format!("member {i} is not below {}", c.cfg.max_nodes),
                ));
            }
            c.peers[i].tx = Some(c._seg.map_tx(Dest::Node(n), TxAttrs::default())?);
            c.peers[i].state = PeerState::Live;
            c.active.push(i);
        }
        Ok(c)
    }

    /// This node's rank (its node id).
    pub fn rank(&self) -> u32 {
        self.me as u32
    }

    /// The members' ranks when the communicator was made, ascending.
    pub fn ranks(&self) -> Vec<u32> {
        self.active.iter().map(|&i| i as u32).collect()
    }

    /// The word at `off` of this node's copy of the segment, loaded with Acquire:
    /// `RxMapping::load_u64` without its checks and dispatch, on the polling path.
    /// Every offset here comes from the layout, 8-aligned and inside the segment.
    #[inline(always)]
    pub(crate) fn word(&self, off: usize) -> u64 {
        debug_assert!(off.is_multiple_of(8) && off + 8 <= self.lay.size);
        // SAFETY: `base` is the start of `self.rx`, mapped while `self` lives and
        // `lay.size` bytes long (the segment was made with that size); `off` is
        // 8-aligned and in bounds (the layout's); receive memory is written by other
        // processes concurrently and read here only through an atomic load.
        unsafe {
            (*((self.base + off) as *const std::sync::atomic::AtomicU64))
                .load(std::sync::atomic::Ordering::Acquire)
        }
    }

    // ---- requests -------------------------------------------------------------------

    /// Waits until everything this node queued (messages, fragments, credits' and
    /// control slots) has been written to its destinations, so that peers can finish
    /// without this node's further help. Call it before leaving, as `MPI_Finalize`.
    ///
    /// # Errors
    /// The cluster's.
    pub fn finish(&mut self) -> Result<()> {
        self.block_until(|c| {
            c.active
                .iter()
                .all(|&p| c.peers[p].out.is_empty() && c.peers[p].streams.is_empty())
        })
    }

    // ---- receiving ------------------------------------------------------------------
}
