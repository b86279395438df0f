//! Waking a thread that waits on a connection's handles, from any thread:
//! a manual-reset event in the wait set. The Windows counterpart of
//! `sys/unix/wake.rs`.

use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, OwnedHandle};

use windows_sys::Win32::System::Threading::{ResetEvent, SetEvent};

/// A manual-reset event: `signal` wakes every wait that includes it until
/// `drain`.
#[derive(Debug)]
pub(crate) struct Wake(OwnedHandle);

impl Wake {
    /// A new event, not signalled, not inheritable.
    pub(crate) fn new() -> io::Result<Wake> {
        super::pipe::event().map(Wake)
    }

    /// Wakes the waiting thread (and every wait after, until `drain`).
    pub(crate) fn signal(&self) {
        // SAFETY: a live event handle.
        unsafe { SetEvent(self.0.as_raw_handle()) };
    }

    /// Takes the signal: waits no longer end at once.
    pub(crate) fn drain(&self) {
        // SAFETY: a live event handle.
        unsafe { ResetEvent(self.0.as_raw_handle()) };
    }

    /// The handle to put in a wait.
    pub(crate) fn handle(&self) -> BorrowedHandle<'_> {
        self.0.as_handle()
    }
}

#[cfg(test)]
mod tests {
    use super::super::pipe::wait_any;
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn another_thread_wakes_a_wait_and_drain_takes_the_signal() {
        let wake = Arc::new(Wake::new().unwrap());
        assert_eq!(
            wait_any(&[wake.handle()], Some(Duration::ZERO)).unwrap(),
            None
        );
        let other = Arc::clone(&wake);
        let begun = Instant::now();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.signal();
        });
        assert_eq!(
            wait_any(&[wake.handle()], Some(Duration::from_secs(5))).unwrap(),
            Some(0)
        );
        assert!(begun.elapsed() >= Duration::from_millis(40));
        thread.join().unwrap();
        assert_eq!(
            wait_any(&[wake.handle()], Some(Duration::ZERO)).unwrap(),
            Some(0),
            "stays set"
        );
        wake.drain();
        assert_eq!(
            wait_any(&[wake.handle()], Some(Duration::ZERO)).unwrap(),
            None
        );
    }
}
