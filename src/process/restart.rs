//! When a spawned server that ended unexpectedly is started again: the
//! [`RestartPolicy`] a host sets on its [`Command`](crate::Command), and
//! the count of restarts and recent exits that applies it. Pure logic, for
//! every platform; the connection does the restarting.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Whether, and how, a spawned server that ends unexpectedly (it exits,
/// is killed from outside, closes its stdout, or stops reading its stdin,
/// while the host has not closed the connection) is started again with
/// the same command. Off unless set ([`Command::restart`](crate::Command::restart)).
///
/// On such an end, the requests pending fail at once with its reason, the
/// server's last stderr lines are delivered, and after the backoff the
/// same command is spawned again:
/// [`Event::Restarted`](crate::Event::Restarted) says so (the new pid, the
/// attempt, why the one before ended), and the host does its handshake
/// again (and listens again to what it had subscribed to). Restarts stop,
/// and the connection ends as it would without a policy (with the last
/// reason), after [`max_restarts`](RestartPolicy::max_restarts), or when
/// [`crash_loop`](RestartPolicy::crash_loop) exits come within its window.
/// Never after the host's own `close` or drop.
///
/// The defaults: at most 10 restarts in the connection's life; the first
/// 250 ms after the exit, each exit within the crash-loop window doubling
/// it, up to 8 s; 5 exits within 60 s are a crash loop. A crash is rarely a
/// matter of timing, so the first restart is quick; doubling keeps a
/// failing server from starting in a storm; five exits in a minute are a
/// loop no restart will fix (its stderr tail says why); ten in a
/// connection's life are something a user should be told about.
///
/// ```
/// use std::time::Duration;
/// use mcp_stdio::RestartPolicy;
///
/// let policy = RestartPolicy::new()
///     .max_restarts(3)
///     .backoff(Duration::from_millis(100), Duration::from_secs(2))
///     .crash_loop(3, Duration::from_secs(30));
/// assert_eq!(policy.get_max_restarts(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RestartPolicy {
    max_restarts: u32,
    backoff: Duration,
    max_backoff: Duration,
    crash_loop_exits: u32,
    crash_loop_window: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl RestartPolicy {
    /// The defaults: 10 restarts at most, a backoff of 250 ms doubling up
    /// to 8 s, a crash loop at 5 exits within 60 s.
    pub const fn new() -> RestartPolicy {
        RestartPolicy {
            max_restarts: 10,
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
            crash_loop_exits: 5,
            crash_loop_window: Duration::from_secs(60),
        }
    }

    /// At most `n` restarts in the connection's life (`u32::MAX`: no limit
    /// but the crash loop's; 0: none, the policy only names itself).
    pub const fn max_restarts(mut self, n: u32) -> RestartPolicy {
        self.max_restarts = n;
        self
    }

    /// The wait between an exit and the restart: `first`, doubled for every
    /// other exit within the crash-loop window before this one, never more
    /// than `max` (`max` below `first` is taken as `first`).
    pub const fn backoff(mut self, first: Duration, max: Duration) -> RestartPolicy {
        self.backoff = first;
        self.max_backoff = max;
        self
    }

    /// `exits` exits within `window` (this one counted) are a crash loop:
    /// no restart follows the last of them. `exits` 0: no crash-loop
    /// check (only [`max_restarts`](Self::max_restarts) stops restarts).
    pub const fn crash_loop(mut self, exits: u32, window: Duration) -> RestartPolicy {
        self.crash_loop_exits = exits;
        self.crash_loop_window = window;
        self
    }

    /// The most restarts in a connection's life.
    pub const fn get_max_restarts(&self) -> u32 {
        self.max_restarts
    }

    /// The first wait, and the most it grows to.
    pub const fn get_backoff(&self) -> (Duration, Duration) {
        (self.backoff, self.max_backoff)
    }

    /// The exits, and the window, of a crash loop.
    pub const fn get_crash_loop(&self) -> (u32, Duration) {
        (self.crash_loop_exits, self.crash_loop_window)
    }
}

/// Why restarts stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// `max_restarts` were done.
    MaxRestarts,
    /// `crash_loop_exits` exits came within the window.
    CrashLoop,
}

/// A policy applied: the restarts done, and the recent exits.
#[derive(Debug)]
pub(crate) struct Restarts {
    policy: RestartPolicy,
    done: u32,
    /// The instants of the exits within the crash-loop window, oldest
    /// first (at most `crash_loop_exits` kept).
    exits: VecDeque<Instant>,
}

impl Restarts {
    pub(crate) fn new(policy: RestartPolicy) -> Restarts {
        Restarts {
            policy,
            done: 0,
            exits: VecDeque::new(),
        }
    }

    /// The restarts done so far.
    pub(crate) fn done(&self) -> u32 {
        self.done
    }

    /// The server ended unexpectedly at `now`: how long to wait before the
    /// restart, or why none comes.
    pub(crate) fn on_exit(&mut self, now: Instant) -> Result<Duration, GiveUp> {
        let window = self.policy.crash_loop_window;
        while self
            .exits
            .front()
            .is_some_and(|&at| now.saturating_duration_since(at) >= window)
        {
            self.exits.pop_front();
        }
        let loop_at = self.policy.crash_loop_exits;
        if loop_at > 0 {
            if self.exits.len() + 1 >= loop_at as usize {
                return Err(GiveUp::CrashLoop);
            }
            self.exits.push_back(now);
        }
        if self.done >= self.policy.max_restarts {
            return Err(GiveUp::MaxRestarts);
        }
        // The other exits within the window double the wait once each.
        let others = self.exits.len().saturating_sub(1).min(31) as u32;
        let max = self.policy.max_backoff.max(self.policy.backoff);
        let wait = self
            .policy
            .backoff
            .checked_mul(1u32 << others)
            .map_or(max, |wait| wait.min(max));
        Ok(wait)
    }

    /// A restart was done: its attempt number (1 for the first).
    pub(crate) fn started(&mut self) -> u32 {
        self.done = self.done.saturating_add(1);
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_wait_doubles_within_the_window_and_the_loop_stops_it() {
        let policy = RestartPolicy::new()
            .backoff(100 * MS, 350 * MS)
            .crash_loop(4, 1000 * MS);
        let mut r = Restarts::new(policy);
        let t = Instant::now();
        assert_eq!(r.on_exit(t), Ok(100 * MS));
        assert_eq!(r.started(), 1);
        assert_eq!(r.on_exit(t + 200 * MS), Ok(200 * MS));
        r.started();
        assert_eq!(r.on_exit(t + 400 * MS), Ok(350 * MS)); // capped
        r.started();
        assert_eq!(r.on_exit(t + 600 * MS), Err(GiveUp::CrashLoop));
    }

    #[test]
    fn exits_older_than_the_window_no_longer_count() {
        let policy = RestartPolicy::new()
            .backoff(100 * MS, 10_000 * MS)
            .crash_loop(2, 1000 * MS);
        let mut r = Restarts::new(policy);
        let t = Instant::now();
        assert_eq!(r.on_exit(t), Ok(100 * MS));
        r.started();
        // A second exit within the window is the loop...
        let mut again = Restarts::new(policy);
        again.on_exit(t).unwrap();
        assert_eq!(again.on_exit(t + 999 * MS), Err(GiveUp::CrashLoop));
        // ...one after it is a first exit again, with the first wait.
        assert_eq!(r.on_exit(t + 1000 * MS), Ok(100 * MS));
    }

    #[test]
    fn max_restarts_counts_the_connection_s_life() {
        let policy = RestartPolicy::new().max_restarts(2).crash_loop(0, MS);
        let mut r = Restarts::new(policy);
        let t = Instant::now();
        for n in 1..=2 {
            assert!(r.on_exit(t + n * 10_000 * MS).is_ok());
            assert_eq!(r.started(), n);
        }
        assert_eq!(r.on_exit(t + 30_000 * MS), Err(GiveUp::MaxRestarts));
        let none = RestartPolicy::new().max_restarts(0);
        assert_eq!(Restarts::new(none).on_exit(t), Err(GiveUp::MaxRestarts));
    }

    #[test]
    fn without_a_crash_loop_check_the_wait_stays_the_first() {
        let policy = RestartPolicy::new()
            .max_restarts(u32::MAX)
            .backoff(5 * MS, 5000 * MS)
            .crash_loop(0, Duration::ZERO);
        let mut r = Restarts::new(policy);
        let t = Instant::now();
        for _ in 0..100 {
            assert_eq!(r.on_exit(t), Ok(5 * MS));
            r.started();
        }
    }

    #[test]
    fn a_huge_backoff_is_capped_not_overflowed() {
        let policy = RestartPolicy::new()
            .max_restarts(u32::MAX)
            .backoff(Duration::MAX, Duration::MAX)
            .crash_loop(40, Duration::MAX);
        let mut r = Restarts::new(policy);
        let t = Instant::now();
        for _ in 0..39 {
            assert_eq!(r.on_exit(t), Ok(Duration::MAX));
            r.started();
        }
        assert_eq!(r.on_exit(t), Err(GiveUp::CrashLoop));
    }
}
