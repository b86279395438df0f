//! Waking a thread that waits in poll(2): a descriptor other threads make
//! readable (an eventfd on Linux, a pipe elsewhere).

use std::ffi::c_int;
use std::io;

use super::fd::move_above_stdio;

/// The descriptor(s) of one wake-up channel; closed on drop.
#[derive(Debug)]
pub(crate) struct Wake {
    /// Polled for `POLLIN`; drained after a wake-up.
    read_fd: c_int,
    /// Written to wake (the same as `read_fd` for an eventfd).
    write_fd: c_int,
}

impl Wake {
    /// A new channel, close-on-exec and non-blocking.
    #[cfg(linux_apis)]
    pub(crate) fn new() -> io::Result<Wake> {
        // SAFETY: eventfd creates a descriptor; no pointers.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // Never 0-2 (the host closed them): a server's guard would copy it
        // onto stdout, and a stray write there would wake us for ever.
        let fd = move_above_stdio(fd).map_err(io::Error::from_raw_os_error)?;
        Ok(Wake {
            read_fd: fd,
            write_fd: fd,
        })
    }

    /// A new channel, close-on-exec and non-blocking.
    #[cfg(not(linux_apis))]
    pub(crate) fn new() -> io::Result<Wake> {
        let mut fds = [0 as c_int; 2];
        // SAFETY: pipe writes two descriptors into the array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // Never 0-2 (see above); each is moved or closed.
        let fds = match (move_above_stdio(fds[0]), move_above_stdio(fds[1])) {
            (Ok(r), Ok(w)) => [r, w],
            (r, w) => {
                for fd in [r, w].into_iter().flatten() {
                    // SAFETY: a descriptor of ours, closed once.
                    unsafe { libc::close(fd) };
                }
                let errno = r.and(w).err().unwrap_or(libc::EMFILE);
                return Err(io::Error::from_raw_os_error(errno));
            }
        };
        let wake = Wake {
            read_fd: fds[0],
            write_fd: fds[1],
        };
        for fd in fds {
            // SAFETY: fcntl on descriptors this function owns.
            let ok = unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
                    && libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) == 0
            };
            if !ok {
                return Err(io::Error::last_os_error()); // `wake` closes both
            }
        }
        Ok(wake)
    }

    /// The descriptor to poll for `POLLIN`.
    pub(crate) fn fd(&self) -> c_int {
        self.read_fd
    }

    /// Makes the channel readable (it stays so until drained). Cannot
    /// block: a full channel is already readable.
    pub(crate) fn signal(&self) {
        let one = 1u64.to_ne_bytes();
        // eventfd takes 8 bytes, a pipe any; a failure (EAGAIN: full) leaves
        // it readable anyway.
        let len = if self.read_fd == self.write_fd { 8 } else { 1 };
        // SAFETY: writes `len` <= 8 bytes from a live array.
        let _ = unsafe { libc::write(self.write_fd, one.as_ptr().cast(), len) };
    }

    /// Empties the channel after a wake-up.
    pub(crate) fn drain(&self) {
        let mut sink = [0u8; 64];
        loop {
            // SAFETY: reads at most 64 bytes into a live array.
            let n = unsafe { libc::read(self.read_fd, sink.as_mut_ptr().cast(), sink.len()) };
            // An eventfd is emptied by one read; a pipe may hold more.
            if n <= 0 || self.read_fd == self.write_fd {
                break;
            }
        }
    }
}

impl Drop for Wake {
    fn drop(&mut self) {
        // SAFETY: the channel owns its descriptors and closes each once.
        unsafe {
            libc::close(self.read_fd);
            if self.write_fd != self.read_fd {
                libc::close(self.write_fd);
            }
        }
    }
}
