//! The constructors of a descriptor connection (POSIX): on descriptors the
//! caller gives, on the process's own stdin and stdout (with the stdout
//! guard), and on a spawned server's pipes.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use super::fds::{Desc, Fds};
use crate::connection::io::Io;
use crate::connection::{Connection, Inner};
use crate::error::Error;
use crate::process::command::Command;
use crate::process::spawn_error::spawn_error;
use crate::process::unix::child::reap_owed;
use crate::process::unix::spawn::start;
use crate::process::Server;
use crate::sys::unix::fd::{duplicate_above_stdio, point_stdout_away, set_nonblocking, standard};
use crate::transport::Transport;

pub(crate) use super::fds::OpenFailed;

impl Connection {
    /// A connection on descriptors, or why not with the descriptors given
    /// back untouched.
    pub(crate) fn open_descs(read: Desc, write: Option<Desc>) -> Result<Connection, OpenFailed> {
        let fds = Fds::open(read, write)?;
        Ok(Connection::from_inner(Inner::new(
            Transport::new(),
            Some(Io::new(fds)),
        )))
    }

    /// A connection that reads the peer's messages from `read` and writes
    /// to `write` (two pipes, a tty): both owned, made non-blocking, closed
    /// at the end (the write side when closing ends, the rest at drop).
    /// Writes never raise SIGPIPE: a peer that stopped reading closes the
    /// connection instead. The connection also makes one descriptor of its
    /// own (to be woken by other threads), close-on-exec, above 2.
    ///
    /// Errors: [`Error::Os`] (no descriptor left for the wake-up, or a
    /// descriptor that refuses its flags).
    pub fn open_fds(read: OwnedFd, write: OwnedFd) -> Result<Connection, Error> {
        let write = Some(Desc::Owned(write));
        Connection::open_descs(Desc::Owned(read), write).map_err(|f| f.error)
    }

    /// [`open_fds`](Connection::open_fds) on one socket that serves both
    /// ways: at the end of the write side it is shut down for writing (the
    /// peer sees the end of the stream), and closed at drop.
    pub fn open_socket(socket: OwnedFd) -> Result<Connection, Error> {
        Connection::open_descs(Desc::Owned(socket), None).map_err(|f| f.error)
    }

    /// [`open_fds`](Connection::open_fds) on descriptors the caller keeps
    /// owning (pass the same one twice for a socket): never closed, and
    /// given back the flags the connection changed (`O_NONBLOCK`) at drop.
    /// Read and write them only through the connection while it lives.
    pub fn open_borrowed_fds(
        read: BorrowedFd<'static>,
        write: BorrowedFd<'static>,
    ) -> Result<Connection, Error> {
        use std::os::fd::AsRawFd;
        let write = (write.as_raw_fd() != read.as_raw_fd()).then_some(Desc::Borrowed(write));
        Connection::open_descs(Desc::Borrowed(read), write).map_err(|f| f.error)
    }

    /// A connection on the process's own stdin and stdout: for an MCP
    /// server. Descriptors 0 and 1 are borrowed (never closed; made
    /// non-blocking meanwhile, their flags given back at drop).
    ///
    /// With `guard_stdout`, the connection writes to a private duplicate of
    /// descriptor 1 (close-on-exec, above 2, owned: the end of the write
    /// side closes it and the host sees the end of the stream), and
    /// descriptor 1 is pointed at stderr (at `/dev/null` in a process
    /// without one), so a `println!`, a library that logs to stdout or a
    /// child that inherits it can no longer corrupt the stream. Descriptor
    /// 1 stays so after the connection ends. Descriptor 1 is process state:
    /// call this once, early, before other threads write to stdout.
    pub fn open_stdio(guard_stdout: bool) -> Result<Connection, Error> {
        let (stdin, stdout) = (standard(0), standard(1));
        let stdin = Desc::Borrowed(stdin);
        if !guard_stdout {
            return Connection::open_descs(stdin, Some(Desc::Borrowed(stdout)))
                .map_err(|f| f.error);
        }
        let private = duplicate_above_stdio(stdout)?;
        // On failure the duplicate is dropped (closed) with the error.
        let conn =
            Connection::open_descs(stdin, Some(Desc::Owned(private))).map_err(|f| f.error)?;
        point_stdout_away();
        Ok(conn)
    }
}

impl Io {
    /// The I/O of a server spawned from `cmd`: the ends of its pipes and
    /// the process ([`Connection::spawn`]'s promise), the PDEATHSIG choice
    /// given apart (the C face's flag); `console_window` means nothing on
    /// POSIX.
    pub(crate) fn spawn(
        cmd: &Command,
        kill_on_host_exit: bool,
        _console_window: bool,
    ) -> Result<Io, Error> {
        if kill_on_host_exit && !cfg!(any(target_os = "linux", target_os = "android")) {
            return Err(Error::InvalidArgument);
        }
        reap_owed();
        let spawn_failed = |e: std::io::Error| {
            let code = e.raw_os_error().unwrap_or(libc::EIO);
            Error::SpawnFailed(Box::new(spawn_error(cmd, code)))
        };
        let (pid, pipes) = start(cmd, kill_on_host_exit).map_err(spawn_failed)?;
        let fds = [
            Some(&pipes.stdin),
            Some(&pipes.stdout),
            pipes.stderr.as_ref(),
        ];
        for fd in fds.into_iter().flatten() {
            set_nonblocking(fd.as_fd());
        }
        let process = Server::new(pid, pipes.stderr);
        // On failure the pipes close, and the process is killed and reaped.
        let fds = Fds::for_process(pipes.stdout, pipes.stdin).map_err(spawn_failed)?;
        Ok(Io::for_process(fds, process))
    }
}
