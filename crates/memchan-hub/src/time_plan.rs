//! When each member's next time packet is due. A node's clock estimate
//! (`memchan_core::clock`) needs a window of down samples to synchronise and to fit
//! its drift; once it has them, the packets only keep the window fresh. So a member
//! gets one every `clock_period` until it has had [`WINDOW`], then one every
//! `clock_period_settled`: at 50 ms the packets were most of an idle node's wake-ups
//! through a hub (20 of about 35 a second) and most of the hub's idle work.
//!
//! A member is known by its node id and incarnation: one that leaves and joins again
//! starts over at the fast period, as does every member after a takeover by the
//! standby (a new hub, a new plan).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use memchan_core::clock::WINDOW;
use memchan_core::NodeId;

/// Time packets sent to each member, when the last one went, and the last call of
/// [`TimePlan::due`] that saw the member.
#[derive(Debug, Default)]
pub(crate) struct TimePlan {
    sent: HashMap<(NodeId, u64), (usize, Instant, u64)>,
    calls: u64,
}

impl TimePlan {
    /// The members of `links` (node, incarnation, anything) whose packet is due at
    /// `now`, pushed into `due` (cleared first) and counted as sent; members no longer
    /// in `links` are forgotten.
    pub(crate) fn due<T>(
        &mut self,
        links: &[(NodeId, u64, T)],
        fast: Duration,
        settled: Duration,
        now: Instant,
        due: &mut Vec<(NodeId, u64)>,
    ) {
        due.clear();
        self.calls += 1;
        for &(node, inc, _) in links {
            let (count, last, seen) = self.sent.entry((node, inc)).or_insert((0, now, 0));
            *seen = self.calls;
            let period = if *count < WINDOW { fast } else { settled };
            if *count == 0 || now.duration_since(*last) >= period {
                *count += 1;
                *last = now;
                due.push((node, inc));
            }
        }
        if self.sent.len() > links.len() {
            let calls = self.calls;
            self.sent.retain(|_, &mut (_, _, seen)| seen == calls);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: Duration = Duration::from_millis(50);
    const SETTLED: Duration = Duration::from_millis(500);

    #[test]
    fn a_member_gets_a_window_at_the_fast_period_then_the_settled_one() {
        let links = [(NodeId(3), 1, ())];
        let mut plan = TimePlan::default();
        let mut due = Vec::new();
        let t0 = Instant::now();
        let mut sent = 0;
        // 64 fast periods: one packet each (the first at once).
        for k in 0..WINDOW as u32 {
            plan.due(&links, FAST, SETTLED, t0 + FAST * k, &mut due);
            sent += due.len();
        }
        assert_eq!(sent, WINDOW);
        let last = t0 + FAST * (WINDOW as u32 - 1);
        // Settled: nothing a fast period later, one a settled period later.
        plan.due(&links, FAST, SETTLED, last + FAST, &mut due);
        assert!(due.is_empty());
        plan.due(&links, FAST, SETTLED, last + SETTLED, &mut due);
        assert_eq!(due, [(NodeId(3), 1)]);
    }

    #[test]
    fn a_new_incarnation_starts_over_and_a_gone_member_is_forgotten() {
        let mut plan = TimePlan::default();
        let mut due = Vec::new();
        let t0 = Instant::now();
        let old = [(NodeId(1), 1, ())];
        for k in 0..=WINDOW as u32 {
            plan.due(&old, FAST, SETTLED, t0 + FAST * k, &mut due);
        }
        let again = [(NodeId(1), 2, ())];
        let t1 = t0 + FAST * (WINDOW as u32 + 1);
        plan.due(&again, FAST, SETTLED, t1, &mut due);
        assert_eq!(
            due,
            [(NodeId(1), 2)],
            "the new incarnation's first packet at once"
        );
        plan.due(&again, FAST, SETTLED, t1 + FAST, &mut due);
        assert_eq!(due, [(NodeId(1), 2)], "and the fast period again");
        assert_eq!(plan.sent.len(), 1, "the old incarnation is forgotten");
    }
}
