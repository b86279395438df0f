//! Waiting (POSIX): `next_event`'s own wait in poll(2), without the lock;
//! the set an event loop waits on (`poll_set`, for the C face's
//! `mcp_transport_poll_fds`); and on Linux one epoll descriptor that stands
//! for the whole set ([`Connection`](super::Connection)'s `AsFd`).

use std::sync::MutexGuard;
use std::time::Instant;

use std::os::fd::{AsRawFd, RawFd};

use super::fds::MAX_POLL_FDS;
use crate::connection::io::Io;
use crate::connection::{millis_rounded_up, Inner, Shared};
use crate::error::Error;
use crate::sys::unix::fd::poll;
use crate::transport::Transport;

/// An empty poll set.
pub(crate) fn empty_set() -> [libc::pollfd; MAX_POLL_FDS] {
    [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; MAX_POLL_FDS]
}

impl Io {
    /// Fills `set` with what to wait for now: the peer's bytes, room to
    /// write when something is queued, a wake-up; for a spawned server its
    /// stderr and exit. Returns how many.
    pub(crate) fn poll_set(
        &self,
        core: &Transport,
        set: &mut [libc::pollfd; MAX_POLL_FDS],
    ) -> usize {
        let mut n = 0;
        let mut add = |fd: RawFd, events: libc::c_short| {
            if let Some(same) = set[..n].iter_mut().find(|p| p.fd == fd) {
                same.events |= events;
            } else {
                set[n] = libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                };
                n += 1;
            }
        };
        if !core.is_closed() {
            if self.read_open {
                add(self.ends.read_fd().as_raw_fd(), libc::POLLIN);
            }
            if let Some(fd) = self.ends.write_fd().filter(|_| self.write_open) {
                if !core.output().is_empty() {
                    add(fd.as_raw_fd(), libc::POLLOUT);
                }
            }
        }
        add(self.ends.wake.fd(), libc::POLLIN);
        // After CLOSED nothing is read any more: a spawned server's stderr
        // at its end (it was killed before the end was read) would be
        // ready for ever, and an event loop on the set would spin.
        // Nor from a server gone and waiting for its restart (nothing more
        // is read from it).
        if let Some(process) = self.process().filter(|p| !core.is_closed() && !p.gone()) {
            for fd in process.poll_fds() {
                add(fd, libc::POLLIN);
            }
        }
        n
    }
}

impl Shared {
    /// Waits in poll(2), without the lock, until the peer's bytes, room to
    /// write, a send from another thread or `wake_at` (`None`: no limit).
    pub(in crate::connection) fn wait_io<'a>(
        &'a self,
        inner: MutexGuard<'a, Inner>,
        wake_at: Option<Instant>,
        now: Instant,
    ) -> Result<MutexGuard<'a, Inner>, Error> {
        let mut set = empty_set();
        let Some(io) = &inner.io else {
            return Ok(inner);
        };
        let n = io.poll_set(&inner.core, &mut set);
        drop(inner);
        let timeout = wake_at.map_or(-1, |at| millis_rounded_up(at, now));
        let polled = poll(&mut set[..n], timeout);
        let failure = match &polled {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => {
                Some(Error::Os(e.raw_os_error().unwrap_or(libc::EIO)))
            }
            _ => None,
        };
        self.let_contenders_in();
        let mut inner = self.lock()?;
        inner.waiting = false;
        if let Some(io) = &mut inner.io {
            // Drained whenever poll says it is readable, not only after our
            // own wake-ups: bytes from anywhere else would make every wait
            // return at once.
            let wake_fd = io.ends.wake.fd();
            if set[..n].iter().any(|p| p.fd == wake_fd && p.revents != 0) {
                io.signalled = true;
            }
            io.clear_wake();
            if let Some(process) = io.process_mut().filter(|_| polled.is_ok()) {
                process.note_poll(&set[..n]);
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(inner),
        }
    }

    /// For event loops: fills `set` with the descriptors to wait on now and
    /// returns how many, with the milliseconds to the next deadline (-1:
    /// none; 0: due now, or closed). From now on sends from other threads
    /// wake the loop through the set; what woke it before is drained (also
    /// bytes that did not come from us: else the loop's poll would return
    /// at once, always). A memory connection gives no descriptor. When
    /// more than `cap` are needed, nothing changes (the count says how many).
    #[cfg_attr(not(any(feature = "capi", linux_apis)), allow(dead_code))]
    pub(crate) fn poll_set_locked(
        &self,
        mut inner: MutexGuard<'_, Inner>,
        set: &mut [libc::pollfd; MAX_POLL_FDS],
        cap: usize,
    ) -> (usize, i32) {
        let n = match &inner.io {
            Some(io) => io.poll_set(&inner.core, set),
            None => 0,
        };
        let timeout = inner.millis_to_deadline();
        if n <= cap {
            inner.arm_for_event_loop();
        }
        (n, timeout)
    }
}

/// The one descriptor an event loop waits on for a whole connection
/// (Linux): an epoll set kept equal to what the connection waits on.
#[cfg(linux_apis)]
#[derive(Debug)]
pub(in crate::connection) struct PollFd {
    epoll: crate::sys::unix::epoll::Epoll,
    /// What the epoll set holds: descriptor and interest; and the
    /// connection's generation it was made for (a restart changes the
    /// descriptors, whose numbers may come back for other files).
    watched: std::sync::Mutex<(Vec<(std::os::fd::RawFd, libc::c_short)>, u32)>,
}

#[cfg(linux_apis)]
impl PollFd {
    pub(in crate::connection) fn new() -> Result<PollFd, Error> {
        Ok(PollFd {
            epoll: crate::sys::unix::epoll::Epoll::new()?,
            watched: std::sync::Mutex::new((Vec::new(), 0)),
        })
    }

    pub(in crate::connection) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.epoll.fd()
    }

    /// Makes the epoll set what the connection waits on now, and arms the
    /// wake-up for sends from other threads (as the C face's poll set
    /// does). Called whenever `next_event` found nothing ready.
    pub(in crate::connection) fn sync(&self, shared: &Shared) -> Result<(), Error> {
        let mut set = empty_set();
        let inner = shared.lock()?;
        let generation = inner.generation;
        let (n, _) = shared.poll_set_locked(inner, &mut set, MAX_POLL_FDS);
        let set = &set[..n];
        let mut guard = self.watched.lock().map_err(|_| Error::Poisoned)?;
        let (watched, made_for) = &mut *guard;
        if *made_for != generation {
            // The server was restarted: what the set held is gone (closed
            // descriptors leave an epoll set by themselves) or stale.
            for &(fd, _) in watched.iter() {
                self.epoll.unwatch(fd);
            }
            watched.clear();
            *made_for = generation;
        }
        watched.retain(|&(fd, _)| {
            let kept = set.iter().any(|p| p.fd == fd);
            if !kept {
                self.epoll.unwatch(fd);
            }
            kept
        });
        for p in set {
            match watched.iter_mut().find(|(fd, _)| *fd == p.fd) {
                Some((_, interest)) if *interest == p.events => {}
                Some((fd, interest)) => {
                    self.epoll.watch(*fd, p.events, true)?;
                    *interest = p.events;
                }
                None => {
                    watched.try_reserve(1).map_err(|_| Error::OutOfMemory)?;
                    self.epoll.watch(p.fd, p.events, false)?;
                    watched.push((p.fd, p.events));
                }
            }
        }
        Ok(())
    }
}
