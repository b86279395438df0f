//! Taking events: the loop that writes the queue, reads the peer's bytes,
//! supervises a spawned server, asks the core for its next event, and
//! waits (without the lock) when nothing is ready.

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

#[cfg(os_io)]
use super::restart::Restart;
use super::{Inner, Shared};
use crate::error::Error;
use crate::transport::Event;

/// Reads (of up to 64 KiB each) that give no event before `next_event`
/// looks at its time and lets other threads in: about 1 MiB of blank lines,
/// or `TURN_TIME` of reading, whichever comes first (a slow build, or a
/// machine under load, reads far less in a turn).
#[cfg(os_io)]
const READS_PER_TURN: usize = 16;
#[cfg(os_io)]
const TURN_TIME: Duration = Duration::from_millis(5);

/// How long `next_event` may wait.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// Only what is ready (timeout 0).
    Ready,
    Until(Instant),
    Forever,
}

impl Wait {
    /// `None`: no limit; zero: only what is ready.
    pub(crate) fn from_timeout(timeout: Option<Duration>) -> Wait {
        match timeout {
            None => Wait::Forever,
            Some(t) if t.is_zero() => Wait::Ready,
            Some(t) => Instant::now()
                .checked_add(t)
                .map_or(Wait::Forever, Wait::Until),
        }
    }
}

/// What `next_event` came to, besides an error.
#[derive(Debug)]
pub(crate) enum Taken<R> {
    /// The sink's result for the next event.
    Event(R),
    /// None came in time.
    NoMessage,
    /// [`Event::Closed`] was given before: nothing more will come.
    Ended,
}

/// How a spawned server ended, as far as known, given with every event
/// (the C face shows it on `Closed` and on the failures): its exit status
/// (-1: unknown, or killed by a signal) and the signal that killed it (0:
/// none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exit {
    pub(crate) code: i32,
    #[cfg_attr(windows, allow(dead_code))] // no signals there
    pub(crate) signal: i32,
}

impl Exit {
    pub(crate) const UNKNOWN: Exit = Exit {
        code: -1,
        signal: 0,
    };
}

impl Shared {
    /// The next event, handed to `sink` while the lock is held (its data
    /// borrows the reader's buffer, which only the receiving thread moves:
    /// raw pointers to it stay valid until the next receiving call), then
    /// what the event queued is written.
    ///
    /// Events come in this order: the peer's lines, in stream order; then
    /// requests whose deadline has passed; when closing has come to its
    /// end, a failure for every pending request, then `Closed`, last. A
    /// spawned server's stderr lines come as they are read, interleaved.
    // Inlined into the C face's `next_event`, the event is built where it
    // goes (returned by value, its 136 bytes were copied twice on the way).
    #[inline]
    pub(crate) fn next_event_with<R>(
        &self,
        wait: Wait,
        sink: impl FnOnce(Event<'_>, Exit) -> R,
    ) -> Result<Taken<R>, Error> {
        let inner = self.lock()?;
        self.next_event_locked(inner, wait, sink)
    }

    /// [`next_event_with`](Self::next_event_with) with the lock taken.
    #[inline]
    pub(crate) fn next_event_locked<'a, R>(
        &'a self,
        mut inner: MutexGuard<'a, Inner>,
        wait: Wait,
        sink: impl FnOnce(Event<'_>, Exit) -> R,
    ) -> Result<Taken<R>, Error> {
        // This thread is awake: a send need not wake it, and a wake-up already
        // signalled (for an event loop's poll) is taken.
        inner.waiting = false;
        #[cfg(os_io)]
        if let Some(io) = &mut inner.io {
            io.clear_wake();
            if let Some(process) = io.process_mut() {
                process.begin_call(); // the last event's stderr line goes
            }
        }
        // Reads in a row that gave no event, since the last wait.
        #[cfg(os_io)]
        let mut reads = 0;
        #[cfg(os_io)]
        let mut turn_began = Instant::now();
        loop {
            if inner.core.is_closed() {
                return Ok(Taken::Ended);
            }
            #[cfg(os_io)]
            {
                let Inner {
                    core,
                    io,
                    restarter,
                    ..
                } = &mut *inner;
                if let Some(io) = io {
                    io.flush(core);
                    // A refused write ends the connection, but after the
                    // lines the peer sent before it went.
                    io.read_left(core)?;
                    io.finish_end(core)?;
                    // A deadline is due: what already arrived (its answer,
                    // maybe) is read first, so that it is not timed out;
                    // once per deadline, and only when no line is waiting
                    // (those come first anyway), so that a peer that keeps
                    // writing can neither hold the timeout back nor grow
                    // the buffer.
                    io.catch_up(core)?;
                    // Reap, signal, drain stderr; end the connection when
                    // the server is gone.
                    if let Some(process) = io.process_mut() {
                        if process.supervise(core)? {
                            // Exited or killed just now: what its stdout
                            // holds is read first.
                            io.read_what_is_left();
                            continue;
                        }
                        // Gone unexpectedly, with a restart policy: the
                        // restart is scheduled (or the policy gives up),
                        // under the same lock as the failures.
                        if let Some(restarter) = restarter {
                            if restarter.plan(core, process, Instant::now()) {
                                continue; // given up: its end runs as usual
                            }
                        }
                        // Once its end is under way (no answer can come),
                        // the stderr lines read come before the end's
                        // events: the failures, `Closed`.
                        if process.ending() {
                            if let Some(line) = process.stderr_line() {
                                return Ok(Taken::Event(sink(
                                    Event::Stderr { line },
                                    Exit::UNKNOWN,
                                )));
                            }
                        }
                    }
                }
            }
            // A restart due, once the old server's end was told: the new
            // server's first event.
            #[cfg(os_io)]
            match inner.restart_if_due(Instant::now()) {
                Restart::NotNow => {}
                Restart::GaveUp => continue, // the old server's end, as usual
                Restart::Done(done) => {
                    let restarted = Event::Restarted {
                        pid: done.pid,
                        attempt: done.attempt,
                        reason: done.reason,
                    };
                    return Ok(Taken::Event(sink(restarted, done.exit)));
                }
            }
            let exit = inner.exit();
            if let Some(event) = inner.core.try_next_event_at(Instant::now)? {
                {
                    let closed = matches!(event, Event::Closed);
                    let taken = sink(event, exit);
                    #[cfg(os_io)]
                    {
                        let Inner { core, io, .. } = &mut *inner;
                        if let Some(io) = io {
                            if closed {
                                io.end_write(core);
                            } else {
                                // What the event queued (a timed-out
                                // request's cancellation) goes out now.
                                io.flush(core);
                            }
                        }
                    }
                    let _ = closed;
                    return Ok(Taken::Event(taken));
                }
            }
            #[cfg(os_io)]
            {
                let Inner { core, io, .. } = &mut *inner;
                if let Some(io) = io {
                    // Bytes that give no event (blank lines, the rest of a
                    // line too long) may never run out: after
                    // `READS_PER_TURN` such reads or `TURN_TIME`, or once the
                    // caller's time is up, the wait below has its say (the
                    // time, the lock for other threads). The first read of a
                    // call always happens: what is there is taken, however
                    // short the time.
                    let turn_over = reads > 0 && {
                        let now = Instant::now();
                        reads >= READS_PER_TURN
                            || now.saturating_duration_since(turn_began) >= TURN_TIME
                            || matches!(wait, Wait::Until(at) if at <= now)
                    };
                    if !turn_over && io.read(core)? {
                        reads += 1;
                        continue;
                    }
                    if turn_over {
                        // Bytes may be left: an event loop woken by an
                        // edge (tokio's `AsyncFd`) must come back for them
                        // although no new byte may come.
                        io.wake();
                    }
                    // The server's stderr lines come when its messages are
                    // taken, those it has sent included (read just above):
                    // a chatty stderr cannot hold answers back.
                    if let Some(line) = io.process_mut().and_then(|p| p.stderr_line()) {
                        return Ok(Taken::Event(sink(Event::Stderr { line }, Exit::UNKNOWN)));
                    }
                }
            }
            // Nothing ready: wait for the peer, the next deadline, or a send.
            let until = match wait {
                Wait::Ready => {
                    // The caller goes back to its own wait (an event loop on
                    // the descriptors): sends wake it.
                    inner.waiting = !inner.is_memory();
                    return Ok(Taken::NoMessage);
                }
                Wait::Until(at) => Some(at),
                Wait::Forever => None,
            };
            let now = Instant::now();
            let scheduled = inner.next_deadline(now);
            if until.is_some_and(|at| at <= now) {
                return Ok(Taken::NoMessage);
            }
            if scheduled.is_some_and(|at| at <= now) {
                continue; // due now: the core gives it
            }
            let wake_at = match (until, scheduled) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            inner.waiting = true;
            #[cfg(os_io)]
            if inner.io.is_some() {
                inner = self.wait_io(inner, wake_at, now)?;
                reads = 0;
                turn_began = Instant::now();
                continue;
            }
            let woken = match wake_at {
                None => self.ready.wait(inner).ok(),
                Some(at) => self
                    .ready
                    .wait_timeout(inner, at.saturating_duration_since(now))
                    .ok()
                    .map(|(inner, _)| inner),
            };
            inner = woken.ok_or(Error::Poisoned)?;
            inner.waiting = false;
        }
    }
}
