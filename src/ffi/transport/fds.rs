//! `mcp_transport_open_fds`: a transport that does its own I/O on two
//! descriptors (pipes, a socket, a tty), and `mcp_transport_poll_fds` for
//! event loops. The writes, the reads and the wait of `next_event` are here.

use std::ffi::c_int;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use super::super::fd::set_errno;
use super::{lock, Inner, McpStatus, McpTransport};
use crate::process::server::Server;
use crate::reader::READ_CHUNK;
use crate::sys::unix::fd::{last_errno, read_appending};
use crate::sys::unix::sigpipe::SigpipeGuard;
use crate::sys::unix::wake::Wake;
use crate::{Error, Transport};

/// `mcp_transport_open_fds` flag: the caller keeps owning the descriptors.
/// The transport never closes them, and at free it gives them back the
/// flags it changed (O_NONBLOCK).
pub const MCP_TRANSPORT_BORROW_FDS: u32 = 1 << 0;

const KNOWN_FLAGS: u32 = MCP_TRANSPORT_BORROW_FDS;

/// The most descriptors `mcp_transport_poll_fds` gives: 5 (read, write,
/// wake-up, and for a spawned server its stderr and its pidfd).
pub const MCP_TRANSPORT_MAX_POLL_FDS: usize = 5;

/// The descriptors of one transport and where each side stands.
#[derive(Debug)]
pub(super) struct FdIo {
    read_fd: c_int,
    write_fd: c_int,
    /// The transport closes the read descriptor (else it restores its flags).
    read_owned: bool,
    /// The transport closes the write descriptor (else it restores its flags).
    write_owned: bool,
    /// Descriptors whose flags were changed, with their old flags.
    restore: Vec<(c_int, c_int)>,
    /// `write_fd` is a socket: `send(MSG_NOSIGNAL)`, no signal mask games.
    write_is_socket: bool,
    /// The peer's end has not been seen.
    read_open: bool,
    /// The write side has not ended.
    write_open: bool,
    /// Sends from other threads wake a `poll(2)` through this.
    wake: Wake,
    /// `wake` was signalled and not drained since.
    signalled: bool,
    /// A write was refused: what the peer wrote before it went is still to
    /// be read, before the transport ends.
    read_left: bool,
    /// The peer's end came at this instant while output was queued: the
    /// transport ends once that is written (or `END_GRACE` later).
    eof_at: Option<Instant>,
    /// The last time a due deadline made `catch_up` read: deadlines up to
    /// then have had theirs.
    caught_up: Option<Instant>,
    /// A spawned server behind the descriptors. Last: dropped after the
    /// pipes are closed (it kills and reaps what is left).
    process: Option<Server>,
}

/// How long queued output may still be written after the peer's end.
const END_GRACE: Duration = Duration::from_secs(2);

/// Reads (of up to 64 KiB) of what a peer that went away left unread: 1 MiB.
const LEFT_READS: usize = 16;

impl FdIo {
    /// Both sides open, borrowed (nothing closed, flags restored), no process.
    fn new(read_fd: c_int, write_fd: c_int, wake: Wake) -> FdIo {
        FdIo {
            read_fd,
            write_fd,
            read_owned: false,
            write_owned: false,
            restore: Vec::new(),
            write_is_socket: false,
            read_open: true,
            write_open: true,
            wake,
            signalled: false,
            read_left: false,
            eof_at: None,
            caught_up: None,
            process: None,
        }
    }

    /// The I/O of a spawned server: its stdout and stdin (owned,
    /// non-blocking), and the process.
    pub(super) fn for_process(
        stdout: c_int,
        stdin: c_int,
        process: Server,
    ) -> Result<FdIo, McpStatus> {
        let wake = match Wake::new() {
            Ok(wake) => wake,
            Err(e) => {
                // SAFETY: the pipes are ours; closed once (the process is
                // killed and reaped as it drops).
                unsafe {
                    libc::close(stdout);
                    libc::close(stdin);
                }
                set_errno(e.raw_os_error().unwrap_or(libc::EMFILE));
                return Err(McpStatus::MCP_STATUS_SPAWN_FAILED);
            }
        };
        let mut io = FdIo::new(stdout, stdin, wake);
        io.read_owned = true;
        io.write_owned = true;
        io.process = Some(process);
        Ok(io)
    }

    /// The spawned server, if any.
    pub(super) fn process(&self) -> Option<&Server> {
        self.process.as_ref()
    }

    pub(super) fn process_mut(&mut self) -> Option<&mut Server> {
        self.process.as_mut()
    }

    /// Wakes the thread polling this transport's descriptors.
    pub(super) fn wake(&mut self) {
        self.wake.signal();
        self.signalled = true;
    }

    /// Empties the wake-up channel once its signal is taken into account
    /// (else an event loop polling it would spin).
    pub(super) fn clear_wake(&mut self) {
        if self.signalled {
            self.wake.drain();
            self.signalled = false;
        }
    }

    /// Writes what is queued, as far as the descriptor takes it now. A
    /// refused write (EPIPE, or any error but EAGAIN) means the peer reads
    /// no more: the transport closes. Once sends are over and the queue is
    /// written (or the closing grace is over), the write side ends.
    pub(super) fn flush(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        if !core.output().is_empty() {
            let guard = (!self.write_is_socket).then(SigpipeGuard::new);
            loop {
                let out = core.output();
                if out.is_empty() {
                    break;
                }
                // SAFETY: `out` is a live slice; write(2) and send(2) only read it.
                let n = unsafe {
                    if self.write_is_socket {
                        libc::send(
                            self.write_fd,
                            out.as_ptr().cast(),
                            out.len(),
                            libc::MSG_NOSIGNAL,
                        )
                    } else {
                        libc::write(self.write_fd, out.as_ptr().cast(), out.len())
                    }
                };
                if n > 0 {
                    core.consume(n as usize);
                    continue;
                }
                match if n == 0 { libc::EIO } else { last_errno() } {
                    libc::EINTR => {}
                    e if e == libc::EAGAIN || e == libc::EWOULDBLOCK => break,
                    e => {
                        if e == libc::EPIPE {
                            if let Some(guard) = &guard {
                                guard.consume_raised();
                            }
                        }
                        core.write_failed();
                        self.end_write(core);
                        self.read_left = true;
                        break;
                    }
                }
            }
        }
        if core.closing() {
            let grace_over = || core.close_at().is_some_and(|at| at <= Instant::now());
            if core.output().is_empty() || grace_over() {
                self.end_write(core);
            }
        }
    }

    /// Ends the write side, dropping what is still queued: an owned socket
    /// is shut down for writing (whatever other descriptor also holds it:
    /// a server's guarded stdout on the socket that is also its stdin),
    /// then an owned write descriptor is closed unless it also reads;
    /// borrowed ones are left as they are.
    pub(super) fn end_write(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        self.write_open = false;
        core.consume(usize::MAX);
        if self.write_owned {
            // SAFETY: descriptors the transport owns; the write one, when
            // distinct, is closed here once and never used again.
            unsafe {
                if self.write_is_socket {
                    libc::shutdown(self.write_fd, libc::SHUT_WR);
                }
                if self.write_fd != self.read_fd {
                    libc::close(self.write_fd);
                }
            }
        }
    }

    /// When the earliest deadline is due: reads once what already arrived
    /// (its answer, maybe, which then is a response, not a timeout). Once
    /// per deadline, and only when no line is waiting (they come before
    /// the timeout anyway): a peer that keeps writing can then neither hold
    /// the timeout back nor make the buffer grow past one read.
    pub(super) fn catch_up(&mut self, core: &mut Transport) -> Result<(), Error> {
        let Some(at) = core.next_deadline() else {
            return Ok(());
        };
        let now = Instant::now();
        if at > now || self.caught_up.is_some_and(|done| at <= done) || core.line_waiting() {
            return Ok(());
        }
        self.caught_up = Some(now);
        self.read(core).map(|_| ())
    }

    /// Makes the next turn read what the peer left (see `read_left`): a
    /// spawned server was just killed.
    pub(super) fn read_what_is_left(&mut self) {
        self.read_left = true;
    }

    /// After a refused write, reads what the peer wrote before it went (an
    /// answer, say: it is delivered, not failed), up to `LEFT_READS` reads so
    /// that a peer still writing cannot hold the end back. Called before the
    /// transport is asked for its next event, never while an event's data
    /// is lent out (reading may move the reader's buffer).
    pub(super) fn read_left(&mut self, core: &mut Transport) -> Result<(), Error> {
        if !self.read_left {
            return Ok(());
        }
        self.read_left = false;
        for _ in 0..LEFT_READS {
            if !self.read(core)? {
                break;
            }
        }
        Ok(())
    }

    /// Reads once what the peer sent (up to 64 KiB) straight into the
    /// transport. `Ok(true)`: something changed (bytes came, or the peer's
    /// end: events may be due); `Ok(false)`: nothing to read now.
    pub(super) fn read(&mut self, core: &mut Transport) -> Result<bool, Error> {
        if !self.read_open {
            return Ok(false);
        }
        let fd = self.read_fd;
        let read = core.receive_with(READ_CHUNK, |buf| read_appending(fd, buf, READ_CHUNK));
        match read {
            Ok(Ok(n)) if n > 0 => Ok(true),
            Ok(Err(e)) if e == libc::EAGAIN || e == libc::EWOULDBLOCK => Ok(false),
            // The end of the stream; a read error (ECONNRESET...) ends it too.
            // A spawned server's transport ends when the process is gone.
            // Without a process, the lines that came last are given and may
            // be answered, and what is queued is written (the peer may only
            // have closed its half), for at most END_GRACE; then the end.
            Ok(_) => {
                match &mut self.process {
                    Some(process) => process.stdout_ended(),
                    None => {
                        core.finish_input()?;
                        self.eof_at = Some(Instant::now());
                    }
                }
                self.read_open = false;
                Ok(true)
            }
            Err(Error::Closed) => {
                self.read_open = false; // closing came to its end: no more input
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Ends the transport whose peer's end came, once the lines that came
    /// last are taken and what is queued is written (or the write side has
    /// ended, or `END_GRACE` passed).
    pub(super) fn finish_end(&mut self, core: &mut Transport) -> Result<(), Error> {
        if let Some(at) = self.eof_at {
            let settled = !core.input_pending() && (core.output().is_empty() || !self.write_open);
            if settled || at + END_GRACE <= Instant::now() {
                core.receive_end()?;
                self.eof_at = None;
            }
        }
        Ok(())
    }

    /// When the descriptors' side needs a look without any I/O: the end of
    /// `END_GRACE`, a spawned server's signal or exit check.
    pub(super) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let end = self.eof_at.map(|at| at + END_GRACE);
        let process = self.process.as_ref().and_then(|p| p.next_deadline(now));
        match (end, process) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fills `set` with what to wait for now: the peer's bytes, room to
    /// write when something is queued, a wake-up. Returns how many.
    fn poll_set(
        &self,
        core: &Transport,
        set: &mut [libc::pollfd; MCP_TRANSPORT_MAX_POLL_FDS],
    ) -> usize {
        let mut n = 0;
        let mut add = |fd: c_int, events: libc::c_short| {
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
                add(self.read_fd, libc::POLLIN);
            }
            if self.write_open && !core.output().is_empty() {
                add(self.write_fd, libc::POLLOUT);
            }
        }
        add(self.wake.fd(), libc::POLLIN);
        // After CLOSED nothing is read any more: a spawned server's stderr
        // at its end (it was killed before the end was read) would be
        // ready for ever, and an event loop on the set would spin.
        if let Some(process) = self.process.as_ref().filter(|_| !core.is_closed()) {
            for fd in process.poll_fds() {
                add(fd, libc::POLLIN);
            }
        }
        n
    }
}

impl Drop for FdIo {
    fn drop(&mut self) {
        // SAFETY: owned descriptors are closed once each (the write one only
        // if `end_write` did not close it); borrowed ones get their flags back.
        unsafe {
            for &(fd, flags) in &self.restore {
                libc::fcntl(fd, libc::F_SETFL, flags);
            }
            if self.read_owned {
                libc::close(self.read_fd);
            }
            if self.write_owned && self.write_fd != self.read_fd && self.write_open {
                libc::close(self.write_fd);
            }
        }
    }
}

/// Waits in poll(2), without the lock, until the peer's bytes, room to
/// write, a send from another thread or `wake_at` (`None`: no limit).
pub(super) fn wait<'a>(
    handle: &'a McpTransport,
    inner: MutexGuard<'a, Inner>,
    wake_at: Option<Instant>,
    now: Instant,
) -> Result<MutexGuard<'a, Inner>, McpStatus> {
    let mut set = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; MCP_TRANSPORT_MAX_POLL_FDS];
    let Some(io) = &inner.io else {
        return Ok(inner);
    };
    let n = io.poll_set(&inner.core, &mut set);
    drop(inner);
    let timeout = wake_at.map_or(-1, |at| millis_rounded_up(at, now));
    // SAFETY: `set[..n]` are valid pollfd entries.
    let r = unsafe { libc::poll(set.as_mut_ptr(), n as libc::nfds_t, timeout) };
    let failure = (r < 0).then(last_errno).filter(|&e| e != libc::EINTR);
    handle.let_contenders_in();
    let mut inner = handle.lock_inner()?;
    inner.waiting = false;
    if let Some(io) = &mut inner.io {
        // Drained whenever poll says it is readable, not only after our own
        // wake-ups: bytes from anywhere else would make every wait return
        // at once.
        let wake_fd = io.wake.fd();
        if set[..n].iter().any(|p| p.fd == wake_fd && p.revents != 0) {
            io.signalled = true;
        }
        io.clear_wake();
        if let Some(process) = io.process_mut().filter(|_| failure.is_none() && r >= 0) {
            process.note_poll(&set[..n]);
        }
    }
    if let Some(errno) = failure {
        set_errno(errno);
        return Err(McpStatus::MCP_STATUS_IO_ERROR);
    }
    Ok(inner)
}

/// Milliseconds from `now` to `at`, rounded up so that a wait never ends
/// before `at`; at most `c_int::MAX`.
fn millis_rounded_up(at: Instant, now: Instant) -> c_int {
    let left = at.saturating_duration_since(now);
    c_int::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(c_int::MAX)
}

/// Creates a transport that reads the peer's messages from `read_fd` and
/// writes to `write_fd`: two pipes, a socket (pass it twice), a tty. The
/// descriptors are made non-blocking; `mcp_transport_next_event` does the
/// I/O. Writes never raise SIGPIPE (as `mcp_write_all`): a peer that stopped
/// reading closes the transport instead.
///
/// The transport owns the descriptors and closes them (the write side when
/// closing ends, the rest at free; an owned socket is also shut down for
/// writing then, whatever other descriptor holds it), unless `flags` has
/// `MCP_TRANSPORT_BORROW_FDS`: then it never closes them and at free gives
/// them back the flags it changed. Defaults as `mcp_transport_new`. Each
/// transport also holds one descriptor of its own (to be woken by other
/// threads), close-on-exec, numbered above 2 even in a process that closed
/// 0, 1 or 2.
///
/// Returns `MCP_STATUS_OK` and the transport in `*out` (free it with
/// `mcp_transport_free`), or, with nothing created and the descriptors not
/// taken (the caller still owns them, flags unchanged):
/// `MCP_STATUS_NULL_ARGUMENT` (out NULL), `MCP_STATUS_INVALID_ARGUMENT` (a
/// negative descriptor, an unknown flag), `MCP_STATUS_IO_ERROR` (a
/// descriptor is not open, or no descriptor was left for the wake-up:
/// `errno` says why) or `MCP_STATUS_OUT_OF_MEMORY`. Thread-safe. POSIX only.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer. The
/// descriptors are not closed or used for other I/O while the transport
/// lives (read and write them only through it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_open_fds(
    read_fd: c_int,
    write_fd: c_int,
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_open_fds, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if flags & !KNOWN_FLAGS != 0 || read_fd < 0 || write_fd < 0 {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let owned = flags & MCP_TRANSPORT_BORROW_FDS == 0;
        match open(read_fd, write_fd, owned, owned) {
            Ok(t) => {
                // SAFETY: `out` is non-null and writable, by the caller's contract.
                unsafe { out.write(t) };
                McpStatus::MCP_STATUS_OK
            }
            Err(status) => status,
        }
    })
}

/// The body of `mcp_transport_open_fds` after the argument checks.
fn open(
    read_fd: c_int,
    write_fd: c_int,
    read_owned: bool,
    write_owned: bool,
) -> Result<*mut McpTransport, McpStatus> {
    let io_error = || {
        let errno = last_errno();
        move || {
            set_errno(errno);
            McpStatus::MCP_STATUS_IO_ERROR
        }
    };
    let fds: &[c_int] = if read_fd == write_fd {
        &[read_fd]
    } else {
        &[read_fd, write_fd]
    };
    // The flags, read before the wake-up descriptor exists: a number that is
    // not open would otherwise be the wake-up's own (the lowest free one)
    // by the time it is checked, and pass.
    let mut old = [0 as c_int; 2];
    for (&fd, old) in fds.iter().zip(&mut old) {
        // SAFETY: F_GETFL on a descriptor number; a bad one fails.
        *old = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if *old == -1 {
            return Err(io_error()());
        }
    }
    let wake = Wake::new().map_err(|_| io_error()())?;
    // Until it is handed over, `io` is a borrower: dropped on failure, it
    // gives back the flags it changed and closes nothing.
    let mut io = FdIo::new(read_fd, write_fd, wake);
    io.restore
        .try_reserve(2)
        .map_err(|_| McpStatus::MCP_STATUS_OUT_OF_MEMORY)?;
    for (&fd, &old) in fds.iter().zip(&old) {
        if old & libc::O_NONBLOCK == 0 {
            // SAFETY: F_SETFL on a descriptor number; a bad one fails.
            if unsafe { libc::fcntl(fd, libc::F_SETFL, old | libc::O_NONBLOCK) } == -1 {
                return Err(io_error()());
            }
            io.restore.push((fd, old));
        }
    }
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the struct it is given for an open descriptor.
    io.write_is_socket = unsafe { libc::fstat(write_fd, stat.as_mut_ptr()) } == 0
        // SAFETY: fstat succeeded, so it initialised `stat`.
        && unsafe { stat.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFSOCK;
    let raw = McpTransport::into_raw(Inner {
        core: Transport::new(),
        waiting: false,
        io: Some(io),
    });
    if raw.is_null() {
        return Err(McpStatus::MCP_STATUS_OUT_OF_MEMORY); // `io` was dropped: flags restored
    }
    if read_owned || write_owned {
        // SAFETY: `raw` is the live handle just made; nothing else uses it yet.
        let handle = unsafe { &*raw };
        if let Ok(mut inner) = handle.inner.lock() {
            if let Some(io) = &mut inner.io {
                io.read_owned = read_owned;
                io.write_owned = write_owned;
                // An owned descriptor is closed, not given its flags back.
                io.restore.retain(|&(fd, _)| {
                    !(fd == read_fd && read_owned || fd == write_fd && write_owned)
                });
            }
        }
    }
    Ok(raw)
}

/// `mcp_transport_open_stdio` flag: protect the protocol stream from stray
/// output. The transport writes to a private duplicate of descriptor 1
/// (close-on-exec, above 2), and descriptor 1 is pointed at stderr (at
/// `/dev/null` in a process without one, started with `2>&-`), so a
/// `printf`, a library that logs to stdout or a child that inherits it can
/// no longer corrupt the stream. Descriptor 1 stays so after close and
/// free. When stdin and stdout are one socket (inetd style, `socat`), the
/// end of the transport's write side shuts the socket down for writing,
/// so the host sees the end of the stream although descriptor 0 keeps the
/// socket open.
pub const MCP_TRANSPORT_GUARD_STDOUT: u32 = 1 << 1;

/// Creates a transport on the process's own stdin and stdout: for an MCP
/// server. Descriptors 0 and 1 are borrowed (never closed; their flags,
/// made non-blocking meanwhile, are given back at free); with
/// `MCP_TRANSPORT_GUARD_STDOUT` the transport writes to its private
/// duplicate of descriptor 1 instead, which it owns: closing the transport
/// closes it, and the host sees the end of the stream.
///
/// Returns `MCP_STATUS_OK` and the transport in `*out`, or, with nothing
/// changed: `MCP_STATUS_NULL_ARGUMENT` (out NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (a flag other than
/// `MCP_TRANSPORT_GUARD_STDOUT`), `MCP_STATUS_IO_ERROR` (descriptor 0 or 1
/// is not open, or no descriptor is left; `errno` says why),
/// `MCP_STATUS_OUT_OF_MEMORY`. Thread-safe, but descriptor 1 is process
/// state: call it once, early, before other threads write to stdout.
/// POSIX only.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_open_stdio(
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_open_stdio, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if flags & !MCP_TRANSPORT_GUARD_STDOUT != 0 {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let opened = if flags & MCP_TRANSPORT_GUARD_STDOUT == 0 {
            open(0, 1, false, false)
        } else {
            // SAFETY: duplicates descriptor 1 (close-on-exec, at 3 or above).
            let private = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
            if private < 0 {
                set_errno(last_errno());
                return McpStatus::MCP_STATUS_IO_ERROR;
            }
            let opened = open(0, private, false, true);
            match opened {
                // SAFETY: points descriptor 1 at stderr (at /dev/null when
                // there is none); the stream goes on through `private`.
                Ok(_) => unsafe {
                    guard_stdout();
                },
                // SAFETY: the duplicate is ours and nothing else holds it.
                Err(_) => unsafe {
                    libc::close(private);
                },
            }
            opened
        };
        match opened {
            Ok(t) => {
                // SAFETY: `out` is non-null and writable, by the caller's contract.
                unsafe { out.write(t) };
                McpStatus::MCP_STATUS_OK
            }
            Err(status) => status,
        }
    })
}

/// Points descriptor 1 at stderr, or at `/dev/null` when the process has
/// no stderr (started with `2>&-`): never at whatever else may hold the
/// number 2.
///
/// # Safety
/// Changes descriptor 1, process state: the caller has moved the protocol
/// stream off it.
unsafe fn guard_stdout() {
    // SAFETY: F_GETFD on a descriptor number; a closed one fails.
    if unsafe { libc::fcntl(2, libc::F_GETFD) } >= 0 {
        // SAFETY: descriptor 2 is open; dup2 replaces descriptor 1.
        unsafe { libc::dup2(2, 1) };
        return;
    }
    // SAFETY: opens /dev/null (a NUL-terminated literal); on success the new
    // descriptor replaces 1 and is closed once (unless it is 1 itself).
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 && null != 1 {
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

/// For event loops (libuv, GLib, your own poll(2)): fills `fds[0..*n]` with
/// the descriptors to wait on now (`POLLIN` for the peer's bytes and for
/// wake-ups by sends from other threads, `POLLOUT` when output is queued)
/// and `*timeout_ms` with the milliseconds to the transport's next deadline
/// (rounded up; -1: none; 0: due now). Wait for any of them or the time,
/// then call `mcp_transport_next_event(t, 0, &ev)` until it returns
/// `MCP_STATUS_NO_MESSAGE`, and ask again: the set changes. Take every
/// event before you wait: events already received do not make a
/// descriptor ready. Each call empties the wake-up descriptor, so that
/// nothing left in it makes the loop's poll return at once for ever.
///
/// A memory transport gives 0 descriptors and the time to its next deadline
/// (as `mcp_transport_next_deadline`). After `MCP_EVENT_CLOSED` a descriptor
/// transport gives only its wake-up descriptor, and every transport the time
/// 0 (`next_event` says `MCP_STATUS_END_OF_STREAM`). At most
/// `MCP_TRANSPORT_MAX_POLL_FDS` descriptors.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t, n or timeout_ms
/// NULL, or fds NULL with `cap` > 0), `MCP_STATUS_INVALID_ARGUMENT` (`cap`
/// too small: `*n` is set to the number needed) or `MCP_STATUS_POISONED`.
/// `*n` is written on every return when `n` is not NULL (0 on the other
/// failures). A receiving call: one thread at a time. POSIX only.
///
/// # Safety
/// `t` is NULL or a live transport; `fds` is NULL or points to `cap`
/// writable `struct pollfd`; `n` and `timeout_ms` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_poll_fds(
    t: *mut McpTransport,
    fds: *mut libc::pollfd,
    cap: usize,
    n: *mut usize,
    timeout_ms: *mut i32,
) -> McpStatus {
    ffi_boundary!(mcp_transport_poll_fds, McpStatus::MCP_STATUS_PANIC, {
        let mut count = 0;
        let status = (|| {
            // SAFETY: forwarded caller contract.
            let (_, mut inner) = unsafe { lock(t) }?;
            if n.is_null() || timeout_ms.is_null() || (fds.is_null() && cap > 0) {
                return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
            }
            let mut set = [libc::pollfd {
                fd: -1,
                events: 0,
                revents: 0,
            }; MCP_TRANSPORT_MAX_POLL_FDS];
            let needed = match &inner.io {
                Some(io) => io.poll_set(&inner.core, &mut set),
                None => 0,
            };
            count = needed;
            if needed > cap {
                return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT);
            }
            let timeout = inner.millis_to_deadline();
            // SAFETY: `fds` holds `cap` >= `needed` writable entries and
            // `timeout_ms` is writable, by the caller's contract.
            unsafe {
                std::ptr::copy_nonoverlapping(set.as_ptr(), fds, needed);
                timeout_ms.write(timeout);
            }
            // Sends from other threads now wake the loop through the set;
            // what woke it before is drained (also bytes that did not come
            // from us: else the loop's poll would return at once, always).
            if let Some(io) = &mut inner.io {
                io.wake.drain();
                io.signalled = false;
            }
            inner.waiting = inner.io.is_some();
            Ok(())
        })();
        if !n.is_null() {
            // SAFETY: non-null and writable, by the caller's contract.
            unsafe { n.write(count) };
        }
        match status {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(status) => status,
        }
    })
}
