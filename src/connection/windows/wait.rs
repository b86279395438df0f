//! Waiting (Windows): `next_event`'s own wait in `WaitForMultipleObjects`
//! without the lock, on the events of the reads and the write in flight,
//! the wake event, and a spawned server's stderr read and process handle.

use std::os::windows::io::{AsRawHandle, RawHandle};
use std::sync::MutexGuard;
use std::time::Instant;

use crate::connection::io::Io;
use crate::connection::{millis_rounded_up, Inner, Shared};
use crate::error::Error;
use crate::sys::windows::pipe::wait_any_raw;
use crate::transport::Transport;

/// The most handles a connection waits on at once: 5 (the read, the
/// write, the wake event, and for a spawned server its stderr and its
/// process).
pub(crate) const MAX_WAIT_HANDLES: usize = 5;

impl Io {
    /// Fills `set` with the handles to wait on now; returns how many.
    pub(crate) fn wait_set(
        &mut self,
        core: &Transport,
        set: &mut [RawHandle; MAX_WAIT_HANDLES],
    ) -> usize {
        let mut n = 0;
        let mut add = |h: RawHandle| {
            set[n] = h;
            n += 1;
        };
        add(self.ends.wake.handle().as_raw_handle());
        // After CLOSED nothing is read or written any more (see the POSIX
        // poll set).
        if !core.is_closed() {
            for h in self.ends.wait_handles() {
                add(h.as_raw_handle());
            }
            // Nothing more is read from a server gone and waiting for its
            // restart.
            if let Some(process) = self.process.as_ref().filter(|p| !p.gone()) {
                for h in process.wait_handles() {
                    add(h.as_raw_handle());
                }
            }
        }
        n
    }
}

impl Shared {
    /// Waits, without the lock, until a read or a write completes, a send
    /// from another thread, the server's exit, or `wake_at` (`None`: no
    /// limit).
    pub(in crate::connection) fn wait_io<'a>(
        &'a self,
        mut inner: MutexGuard<'a, Inner>,
        wake_at: Option<Instant>,
        now: Instant,
    ) -> Result<MutexGuard<'a, Inner>, Error> {
        let Inner { core, io, .. } = &mut *inner;
        let Some(io) = io else {
            return Ok(inner);
        };
        let mut set = [std::ptr::null_mut(); MAX_WAIT_HANDLES];
        let n = io.wait_set(core, &mut set);
        // The handles stay open while the lock is released: only this
        // thread, the one taking events, ends them.
        drop(inner);
        // Rounded up to the millisecond: a wait never ends before `at`.
        let timeout =
            wake_at.map(|at| std::time::Duration::from_millis(millis_rounded_up(at, now) as u64));
        let waited = wait_any_raw(&set[..n], timeout);
        self.let_contenders_in();
        let mut inner = self.lock()?;
        inner.waiting = false;
        if let Some(io) = &mut inner.io {
            io.drain_wake();
        }
        match waited {
            Ok(_) => Ok(inner),
            Err(e) => Err(Error::from(e)),
        }
    }
}

impl Shared {
    /// For event loops: fills `set` with the handles to wait on now and
    /// returns how many, with the milliseconds to the next deadline (-1:
    /// none; 0: due now, or closed). From now on sends from other threads
    /// wake the loop through the set (the wake event is reset here, so that
    /// nothing left in it makes the loop's wait return at once). A memory
    /// connection gives none. When more than `cap` are needed, nothing
    /// changes (the count says how many).
    #[cfg_attr(not(feature = "capi"), allow(dead_code))] // the C face's poll_handles
    pub(crate) fn wait_set_locked(
        &self,
        mut inner: MutexGuard<'_, Inner>,
        set: &mut [RawHandle; MAX_WAIT_HANDLES],
        cap: usize,
    ) -> (usize, i32) {
        let timeout = inner.millis_to_deadline();
        let Inner { core, io, .. } = &mut *inner;
        let n = match io {
            Some(io) => io.wait_set(core, set),
            None => 0,
        };
        if n <= cap {
            inner.arm_for_event_loop();
        }
        (n, timeout)
    }
}
