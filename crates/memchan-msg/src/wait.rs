//! Completion and waiting: [`Comm::wait`], [`Comm::test`], [`Comm::wait_all`],
//! [`Comm::wait_any`], the probes, and how a blocked caller spins, then sleeps on the
//! segment's notify pages.

use super::*;

impl<'c> Comm<'c> {
    /// Waits for `r` (spinning, then asleep) and returns its outcome and buffer.
    pub fn wait(&mut self, r: Request) -> Completion {
        let failed = |e| Completion {
            result: Err(e),
            buf: Vec::new(),
        };
        let Some(i) = self.index_of(r) else {
            return failed(MsgError::UnknownRequest);
        };
        // An eager send is often complete already: no progress round first.
        if let Err(e) = self.block_until(|c| c.is_done(i)) {
            return failed(e);
        }
        self.take(i)
    }

    /// One round of progress; the outcome if `r` is complete (its handle is then spent).
    ///
    /// # Errors
    /// `UnknownRequest`; the cluster's.
    pub fn test(&mut self, r: Request) -> Result<Option<Completion>> {
        let i = self.index_of(r).ok_or(MsgError::UnknownRequest)?;
        self.progress()?;
        Ok(self.is_done(i).then(|| self.take(i)))
    }

    /// Waits for every request; completions in the order given.
    ///
    /// # Errors
    /// `UnknownRequest` (nothing is waited for); the cluster's.
    pub fn wait_all(&mut self, rs: &[Request]) -> Result<Vec<Completion>> {
        let idx: Vec<usize> = rs
            .iter()
            .map(|&r| self.index_of(r).ok_or(MsgError::UnknownRequest))
            .collect::<Result<_>>()?;
        self.block_until(|c| idx.iter().all(|&i| c.is_done(i)))?;
        Ok(idx.into_iter().map(|i| self.take(i)).collect())
    }

    /// Waits for one of the requests; its position and outcome.
    ///
    /// # Errors
    /// `UnknownRequest` (or an empty list); the cluster's.
    pub fn wait_any(&mut self, rs: &[Request]) -> Result<(usize, Completion)> {
        let idx: Vec<usize> = rs
            .iter()
            .map(|&r| self.index_of(r).ok_or(MsgError::UnknownRequest))
            .collect::<Result<_>>()?;
        if idx.is_empty() {
            return Err(MsgError::UnknownRequest);
        }
        let mut hit = 0;
        self.block_until(|c| match idx.iter().position(|&i| c.is_done(i)) {
            Some(k) => {
                hit = k;
                true
            }
            None => false,
        })?;
        Ok((hit, self.take(idx[hit])))
    }

    /// The envelope of the next message a receive of (`src`, `tag`) would get, if one
    /// has arrived (its body may still be arriving).
    ///
    /// # Errors
    /// The cluster's.
    pub fn iprobe(&mut self, src: u32, tag: u32) -> Result<Option<Status>> {
        self.progress()?;
        Ok(self.find_unexp(src, tag))
    }

    /// Waits for a message a receive of (`src`, `tag`) would get; its envelope.
    ///
    /// # Errors
    /// `PeerGone` if `src` is gone and nothing from it is queued; the cluster's.
    pub fn probe(&mut self, src: u32, tag: u32) -> Result<Status> {
        let mut gone = None;
        self.block_until(|c| {
            if c.find_unexp(src, tag).is_some() {
                return true;
            }
            if let Some(PeerState::Gone(w)) = c.peers.get(src as usize).map(|p| &p.state) {
                gone = Some(gone_error(src, w));
                return true;
            }
            false
        })?;
        match gone {
            Some(e) => Err(e),
            None => Ok(self.find_unexp(src, tag).expect("found")),
        }
    }

    /// Progress until `done` holds: poll `spin` times, then sleep on the notify pages
    /// (a write on a ring or credit page wakes us), watching membership.
    pub(crate) fn block_until(&mut self, mut done: impl FnMut(&Self) -> bool) -> Result<()> {
        let mut polls = 0u32;
        loop {
            if done(self) {
                return Ok(());
            }
            let before = self.completed;
            let stopped = self.progress()?;
            if done(self) {
                return Ok(());
            }
            if stopped {
                // The round stopped at a completion; the rings may hold more, which
                // posted their notify already: look again before any sleep.
                continue;
            }
            // The spin counts idle polls: a caller whose requests keep completing
            // (a window of large messages) does not fall asleep between them.
            polls = if self.completed != before {
                0
            } else {
                polls.saturating_add(1)
            };
            if polls >= self.cfg.spin {
                self.check_members();
                if !self.sleep(&mut done)? {
                    continue;
                }
            } else if self.hub && polls >= HUB_RING_POLLS {
                // Returns when a write lands on the rings or credit lines (all notify
                // pages); a quiet link for the whole spin sends the caller to sleep.
                self.check_members();
                if !self.rx.wait_spin(Some(HUB_SPIN))? {
                    polls = self.cfg.spin;
                }
            } else {
                if polls.is_multiple_of(256) {
                    self.check_members();
                }
                // A pause between polls, as in `recv_now`.
                std::hint::spin_loop();
            }
        }
    }

    /// Sleeps on the notify pages, once (a write there or 100 ms wakes it), after
    /// telling the peers whose acknowledgement a synchronous send waits for: they
    /// write ack words without a notify (`ack`) and look at this word after, so
    /// each either sees it and notifies, or wrote before it was set. For the
    /// second case, set and fenced it looks a while longer ([`GRACE_POLLS`]
    /// progress rounds, far longer than a store takes to become visible) before it
    /// sleeps; the sleep's timeout bounds what a missed wake-up could cost. False
    /// if `done` came true in that last look (not asleep).
    pub(crate) fn sleep(&mut self, done: &mut impl FnMut(&Self) -> bool) -> Result<bool> {
        let mut told = std::mem::take(&mut self.told);
        told.clear();
        for &p in &self.active {
            let peer = &self.peers[p];
            if peer.state == PeerState::Live && peer.awaiting.0.iter().any(|a| a.2) {
                told.push(p);
            }
        }
        let mut slept = true;
        if !told.is_empty() {
            self.set_asleep(&told, 1)?;
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            for _ in 0..GRACE_POLLS {
                self.progress()?;
                if done(self) {
                    slept = false;
                    break;
                }
            }
        }
        if slept {
            self.rx.wait(Some(Duration::from_millis(100)))?;
        }
        if !told.is_empty() {
            self.set_asleep(&told, 0)?;
        }
        self.told = told;
        Ok(slept)
    }

    /// Writes `v` into this node's asleep word at each of `peers`.
    pub(crate) fn set_asleep(&mut self, peers: &[usize], v: u64) -> Result<()> {
        let off = self.lay.asleep(self.me);
        for &p in peers {
            let r = match self.peers[p].tx.as_ref() {
                Some(tx) if self.peers[p].state == PeerState::Live => {
                    tx.write_no_notify(off, &v.to_le_bytes())
                }
                _ => continue,
            };
            if let Err(e) = r {
                self.on_error(p, e.into())?;
            }
        }
        Ok(())
    }

    // ---- membership -----------------------------------------------------------------
}
