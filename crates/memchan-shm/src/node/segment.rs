//! Segments: creating and opening one (name, size, owner, group and mode, checked
//! against the permission object), freeing it, and attaching or detaching this node's
//! receive memory to its rx set (through the order point).

use super::*;

impl Inner {
    /// Finds or creates a segment (create-or-open by name).
    pub(crate) fn segment(
        &self,
        name: &str,
        size: usize,
        mode: u32,
        flags: u32,
        create: bool,
    ) -> Result<SegRef> {
        validate::stored_segment_name(name, flags & seg_state::FLAG_LOCK != 0)?;
        if create {
            validate::segment_size(size as u64)?;
            validate::mode(mode)?;
        }
        let _g = self.plane()?;
        self.local.check_alive()?;
        let c = self.local.ctl();
        for (i, e) in c.segs.iter().enumerate() {
            if e.state.load(Ordering::Acquire) == seg_state::LIVE && load_name(&e.name) == name {
                let existing = e.size.load(Ordering::Acquire) as usize;
                if create && self.local.page.round_up(size) != existing {
                    return Err(Error::SegmentSizeMismatch {
                        segment: name.to_string(),
                        existing,
                        requested: size,
                    });
                }
                let gen = e.generation.load(Ordering::Acquire);
                return self
                    .local
                    .seg_by_index(i as u32, gen)?
                    .ok_or_else(|| Error::UnknownSegment(name.into()));
            }
        }
        if !create {
            return Err(Error::UnknownSegment(name.to_string()));
        }
        let Some(i) = c
            .segs
            .iter()
            .position(|e| e.state.load(Ordering::Acquire) == seg_state::FREE)
        else {
            return Err(Error::TableFull("segment"));
        };
        let e = &c.segs[i];
        let gen = e.generation.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        // The segment's owner and mode are its permission object's, made before the
        // entry goes LIVE so that whoever finds the entry finds the object.
        let perm = Arc::new(SegPerm::create(
            &crate::local::perm_name(&self.local.cluster, i as u32, gen),
            mode,
        )?);
        store_name(&e.name, name);
        let size = self.local.page.round_up(size);
        e.size.store(size as u64, Ordering::Relaxed);
        e.flags.store(flags, Ordering::Relaxed);
        store_set(&e.rx_set, &NodeSet::EMPTY);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        e.state.store(seg_state::LIVE, Ordering::Release);
        Ok(SegRef {
            idx: i as u32,
            generation: gen,
            size,
            name: name.to_string(),
            perm,
        })
    }

    /// Checks the caller's permission (`want`: 4 read, 2 write) on a segment: the
    /// kernel's answer to opening its permission object with that access.
    pub(crate) fn check_perm(&self, seg: &SegRef, want: u32, op: &'static str) -> Result<()> {
        // An isolated node maps nothing (on 4c63486 its map_rx returned Ok).
        self.local.check_alive()?;
        seg.perm.access(want, &seg.name, op, self.local.uid)
    }

    /// Frees a segment: only the owner of its permission object (or root) may.
    pub(crate) fn free_segment(&self, seg: &SegRef) -> Result<()> {
        let _g = self.plane()?;
        let e = &self.local.ctl().segs[seg.idx as usize];
        if !self.local.seg_live(seg.idx, seg.generation) {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let p = &seg.perm;
        if self.local.uid != 0 && self.local.uid != p.uid {
            return Err(Error::PermissionDenied {
                segment: seg.name.clone(),
                op: "free",
                uid: p.uid,
                gid: p.gid,
                mode: p.mode,
                caller_uid: self.local.uid,
            });
        }
        let c = self.local.ctl();
        for n in load_set(&e.rx_set).iter() {
            let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
            ShmMap::unlink(&self.local.rx_name(seg.idx, seg.generation, n, inc));
        }
        store_set(&e.rx_set, &NodeSet::EMPTY);
        e.state.store(seg_state::FREE, Ordering::Release);
        e.generation.fetch_add(1, Ordering::AcqRel);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        // Handles still held keep the object open; its name goes with the segment.
        ShmMap::unlink(p.name());
        Ok(())
    }

    /// Adds this node to the segment's rx set (under the order point, so no ordered
    /// packet is half-delivered across the change). For lock pages the new copy starts
    /// as a copy of an existing one, so a late bidder sees the current holder.
    pub(crate) fn attach_rx(&self, seg: &SegRef, obj: &RxObject) -> Result<()> {
        let _g = self.plane()?;
        let c = self.local.ctl();
        let e = &c.segs[seg.idx as usize];
        if !self.local.seg_live(seg.idx, seg.generation) {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let mut set = load_set(&e.rx_set);
        if set.contains(self.local.me) {
            return Err(Error::Invalid {
                what: "rx mapping",
                why: format!("segment `{}` is already mapped rx by this node", seg.name),
            });
        }
        // The copy's source is mapped before the order point is entered (no mmap under
        // it: every ordered writer of the host would wait); the rx set it is taken from
        // changes only under the plane, which this node holds.
        let src = (e.flags.load(Ordering::Relaxed) & seg_state::FLAG_LOCK != 0)
            .then(|| {
                set.iter()
                    .find_map(|n| self.order().view(seg, n).ok().flatten())
            })
            .flatten();
        self.order().enter()?;
        // Under the point, as for an ordered packet: an isolated node joins no rx set.
        if let Err(e) = self.local.check_alive() {
            self.order().leave();
            return Err(e);
        }
        if let Some(src) = src {
            // Through a private buffer: both sides are receive memory, which other
            // processes reach (the copy runs under the order point, so no ordered
            // write changes it meanwhile).
            let mut page = vec![0u8; seg.size];
            // SAFETY: `src` maps `seg.size` bytes and is reached only through atomics.
            unsafe { memchan_core::packet::load(src.data(), &mut page) };
            // SAFETY: as above, for `obj`.
            unsafe { memchan_core::packet::store(obj.data(), &page) };
        }
        set.insert(self.local.me);
        store_set(&e.rx_set, &set);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        self.order().leave();
        Ok(())
    }

    /// Removes this node from the segment's rx set and deletes its receive memory.
    ///
    /// Without the plane (`Error::Stalled`, logged) the rx set keeps this node, whose
    /// receive memory is gone: senders find no object under its name and skip it.
    pub(crate) fn detach_rx(&self, seg: &SegRef) {
        match self.plane() {
            Ok(_g) => {
                let e = &self.local.ctl().segs[seg.idx as usize];
                if self.local.seg_live(seg.idx, seg.generation) {
                    let mut set = load_set(&e.rx_set);
                    set.remove(self.local.me);
                    store_set(&e.rx_set, &set);
                    e.rx_gen.fetch_add(1, Ordering::AcqRel);
                }
            }
            Err(e) => tracing::warn!(
                cluster = %self.local.cluster,
                segment = %seg.name,
                error = %e,
                "unmapped rx without the control plane"
            ),
        }
        ShmMap::unlink(&self.local.rx_name(
            seg.idx,
            seg.generation,
            self.local.me,
            self.local.incarnation,
        ));
    }

    // ---- groups --------------------------------------------------------------------
}
