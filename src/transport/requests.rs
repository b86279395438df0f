//! The requests we sent that wait for an answer, and their deadlines.
//!
//! A map from id to request (it keeps its capacity: no allocation per
//! request once warm) and a min-heap of (deadline, id). A request answered or
//! cancelled, or whose deadline moved (progress reset it), leaves its heap
//! entry behind (lazy deletion: an entry is live while its request is
//! pending with that very deadline): stale entries at the top are popped at
//! once, so the top is always live; the others are removed in place when
//! they outnumber the live ones.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use crate::error::Error;

/// Heaps this small are not worth compacting.
const COMPACT_FROM: usize = 64;

/// One request waiting for its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pending {
    pub(crate) deadline: Option<Instant>,
    /// The request was an `initialize`: it is never cancelled.
    pub(crate) initialize: bool,
    /// Its progress is followed (its id is its progress token).
    pub(crate) progress: Option<Progress>,
    /// A `subscriptions/listen`: its stream's notifications are tied to it.
    pub(crate) subscription: bool,
}

/// How a request's progress is followed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Progress {
    /// Each increase of `progress` moves the deadline to now + this (never
    /// past `hard_deadline`); `None`: progress resets nothing.
    pub(crate) reset_by: Option<std::time::Duration>,
    /// The deadline progress can never move past.
    pub(crate) hard_deadline: Option<Instant>,
    /// The last `progress` value seen.
    pub(crate) last: Option<f64>,
}

#[derive(Debug, Default)]
pub(crate) struct Requests {
    pending: HashMap<i64, Pending>,
    /// (deadline, id), earliest first; ties by id.
    deadlines: BinaryHeap<Reverse<(Instant, i64)>>,
    /// How many pending requests have a deadline (live heap entries).
    timed: usize,
    /// How many pending requests have their progress followed.
    followed: usize,
    /// How many pending requests are subscriptions.
    subscriptions: usize,
}

impl Requests {
    /// Makes room for one more request, so that `insert` cannot fail.
    pub(crate) fn reserve(&mut self) -> Result<(), Error> {
        self.pending
            .try_reserve(1)
            .map_err(|_| Error::OutOfMemory)?;
        self.deadlines
            .try_reserve(1)
            .map_err(|_| Error::OutOfMemory)
    }

    /// Records request `id` (room made by `reserve`).
    pub(crate) fn insert(&mut self, id: i64, request: Pending) {
        self.pending.insert(id, request);
        if let Some(deadline) = request.deadline {
            self.deadlines.push(Reverse((deadline, id)));
            self.timed += 1;
        }
        self.followed += usize::from(request.progress.is_some());
        self.subscriptions += usize::from(request.subscription);
    }

    /// Some pending request has its progress followed.
    pub(crate) fn any_followed(&self) -> bool {
        self.followed > 0
    }

    /// Some pending request has notifications tied to it (its progress
    /// followed, or a subscription).
    pub(crate) fn any_tied(&self) -> bool {
        self.followed > 0 || self.subscriptions > 0
    }

    /// `id` is a pending subscription.
    pub(crate) fn is_subscription(&self, id: i64) -> bool {
        self.pending.get(&id).is_some_and(|r| r.subscription)
    }

    /// Progress `value` came for request `id`: recorded, and when it
    /// increased and the request resets its deadline on progress, the
    /// deadline moves to `now + reset_by` (never past the hard deadline).
    /// Whether `id` is a pending request whose progress is followed.
    pub(crate) fn progress(&mut self, id: i64, value: Option<f64>, now: Instant) -> bool {
        let Some(request) = self.pending.get_mut(&id) else {
            return false;
        };
        let Some(progress) = &mut request.progress else {
            return false;
        };
        let increased = match (progress.last, value) {
            (None, Some(_)) => true,
            (Some(last), Some(value)) => value > last,
            (_, None) => false,
        };
        if increased {
            progress.last = value;
        }
        let moved = match (increased, progress.reset_by, request.deadline) {
            (true, Some(by), Some(_)) => {
                now.checked_add(by).map(|at| match progress.hard_deadline {
                    Some(hard) => at.min(hard),
                    None => at,
                })
            }
            _ => None,
        };
        if let Some(at) = moved.filter(|&at| Some(at) != request.deadline) {
            if self.deadlines.try_reserve(1).is_ok() {
                request.deadline = Some(at);
                self.deadlines.push(Reverse((at, id)));
                self.drop_stale();
            }
        }
        true
    }

    /// No request is waiting for its answer.
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub(crate) fn get(&self, id: i64) -> Option<Pending> {
        self.pending.get(&id).copied()
    }

    /// Forgets request `id` (answered, cancelled, timed out, failed).
    pub(crate) fn remove(&mut self, id: i64) -> Option<Pending> {
        let request = self.pending.remove(&id)?;
        self.followed -= usize::from(request.progress.is_some());
        self.subscriptions -= usize::from(request.subscription);
        if request.deadline.is_some() {
            self.timed -= 1;
            self.drop_stale();
        }
        Some(request)
    }

    /// The heap entry `(deadline, id)` is live: its request is pending with
    /// that deadline.
    fn live(pending: &HashMap<i64, Pending>, deadline: Instant, id: i64) -> bool {
        pending
            .get(&id)
            .is_some_and(|r| r.deadline == Some(deadline))
    }

    /// The earliest deadline of a pending request.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines
            .peek()
            .map(|Reverse((deadline, _))| *deadline)
    }

    /// The id of the request whose deadline comes first, if it is `<= now`.
    pub(crate) fn expired(&self, now: Instant) -> Option<i64> {
        match self.deadlines.peek() {
            Some(&Reverse((deadline, id))) if deadline <= now => Some(id),
            _ => None,
        }
    }

    /// The ids of every pending request, ascending, appended to `out`.
    /// Falls back to a slower way needing no memory when `out` cannot grow.
    pub(crate) fn ids_ascending(&self, out: &mut Vec<i64>) {
        if out.try_reserve(self.pending.len()).is_ok() {
            out.extend(self.pending.keys().copied());
            out.sort_unstable();
        }
    }

    /// The smallest pending id (the slow way: a scan).
    pub(crate) fn smallest_id(&self) -> Option<i64> {
        self.pending.keys().copied().min()
    }

    /// Pops stale entries off the top; compacts the heap in place when
    /// stale entries outnumber live ones.
    fn drop_stale(&mut self) {
        while let Some(&Reverse((deadline, id))) = self.deadlines.peek() {
            if Self::live(&self.pending, deadline, id) {
                break;
            }
            self.deadlines.pop();
        }
        let stale = self.deadlines.len() - self.timed;
        if self.deadlines.len() >= COMPACT_FROM && stale > self.timed {
            let pending = &self.pending;
            self.deadlines
                .retain(|Reverse((deadline, id))| Self::live(pending, *deadline, *id));
        }
    }

    #[cfg(test)]
    fn heap_len(&self) -> usize {
        self.deadlines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stale_entries_never_outnumber_live_ones_for_long() {
        let t0 = Instant::now();
        let mut r = Requests::default();
        // Fewer under Miri, which interprets every step; still many compactions.
        let n: i64 = if cfg!(miri) { 256 } else { 10_000 };
        // Requests answered out of deadline order: their entries stay below the top.
        for id in 1..=n {
            r.reserve().unwrap();
            r.insert(
                id,
                Pending {
                    deadline: Some(t0 + Duration::from_secs((n - id) as u64)),
                    initialize: false,
                    progress: None,
                    subscription: false,
                },
            );
        }
        for id in 1..n {
            r.remove(id).unwrap();
            assert!(r.heap_len() <= 2 * (n - id) as usize + COMPACT_FROM);
        }
        assert!(r.heap_len() <= COMPACT_FROM);
        assert_eq!(r.expired(t0 + Duration::from_secs(1_000_000)), Some(n));
    }

    #[test]
    fn deadlines_come_in_order_then_by_id() {
        let t0 = Instant::now();
        let mut r = Requests::default();
        for (id, s) in [(1, 5), (2, 3), (3, 5), (4, 3)] {
            r.reserve().unwrap();
            r.insert(
                id,
                Pending {
                    deadline: Some(t0 + Duration::from_secs(s)),
                    initialize: false,
                    progress: None,
                    subscription: false,
                },
            );
        }
        let mut order = Vec::new();
        while let Some(id) = r.expired(t0 + Duration::from_secs(5)) {
            r.remove(id);
            order.push(id);
        }
        assert_eq!(order, [2, 4, 1, 3]);
    }
}
