//! The request slab: a [`Request`] is a slot number, allocated at a start and freed
//! when its completion is taken.

use super::*;

impl<'c> Comm<'c> {
    pub(crate) fn alloc(&mut self, r: Req) -> Request {
        let i = match self.free.pop() {
            Some(i) => {
                self.reqs[i] = Some(r);
                i
            }
            None => {
                self.reqs.push(Some(r));
                self.gens.push(0);
                self.reqs.len() - 1
            }
        };
        Request((u64::from(self.gens[i]) << 32) | i as u64)
    }

    pub(crate) fn index_of(&self, r: Request) -> Option<usize> {
        let i = (r.0 & 0xffff_ffff) as usize;
        (i < self.reqs.len() && self.gens[i] == (r.0 >> 32) as u32 && self.reqs[i].is_some())
            .then_some(i)
    }

    pub(crate) fn take(&mut self, i: usize) -> Completion {
        let r = self.reqs[i].take().expect("live request");
        self.gens[i] = self.gens[i].wrapping_add(1);
        self.free.push(i);
        Completion {
            result: r.done.unwrap_or(Err(MsgError::UnknownRequest)),
            buf: match r.buf {
                Buf::Owned(v) => v,
                Buf::Raw(..) | Buf::Rx { .. } => Vec::new(),
            },
        }
    }

    pub(crate) fn complete(&mut self, i: usize, res: Result<Status>) {
        if let Some(r) = self.reqs[i].as_mut() {
            if r.done.is_none() {
                r.done = Some(res);
                self.completed += 1;
            }
        }
    }

    pub(crate) fn is_done(&self, i: usize) -> bool {
        self.reqs[i].as_ref().is_some_and(|r| r.done.is_some())
    }

    // ---- sending --------------------------------------------------------------------
}
