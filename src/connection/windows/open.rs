//! The constructors of a Windows connection: on handles the caller gives,
//! on the process's own stdin and stdout (with the stdout guard), and on a
//! spawned server.

use std::os::windows::io::{BorrowedHandle, OwnedHandle};

use super::handles::Handles;
use crate::connection::io::Io;
use crate::connection::{Connection, Inner};
use crate::error::Error;
use crate::process::command::Command;
use crate::process::spawn_error::spawn_error;
use crate::process::stderr::StderrLines;
use crate::process::windows::start::start;
use crate::process::Server;
use crate::sys::windows::stdio::{guard_stdout, standard, Std};
use crate::sys::windows::stream::Reader;
use crate::sys::windows::threaded::Source;
use crate::transport::Transport;

impl Connection {
    fn on_sources(read: Source, write: Source) -> Result<Connection, Error> {
        let ends = Handles::threaded(read, write)?;
        Ok(Connection::from_inner(Inner::new(
            Transport::new(),
            Some(Io::new(ends)),
        )))
    }

    /// A connection that reads the peer's messages from `read` and writes
    /// to `write` (Windows: pipes, a console, files; the counterpart of
    /// `open_fds`): both owned, closed at the end (the write side when
    /// closing ends, once what it took is written). Any kind of handle
    /// works: a thread per direction does the blocking reads and writes
    /// (a handle opened for overlapped I/O must not be given). The peer
    /// going away closes the connection.
    ///
    /// Errors: [`Error::Os`] (a thread or an event could not be made).
    pub fn open_handles(read: OwnedHandle, write: OwnedHandle) -> Result<Connection, Error> {
        Connection::on_sources(Source::Owned(read), Source::Owned(write))
    }

    /// [`open_handles`](Connection::open_handles) on handles the caller
    /// keeps owning: never closed. They must stay open for as long as the
    /// connection lives, and for as long as its reading thread may still
    /// be blocked in a read (until the peer writes or ends its stream):
    /// the thread is not joined when the connection goes.
    pub fn open_borrowed_handles(
        read: BorrowedHandle<'static>,
        write: BorrowedHandle<'static>,
    ) -> Result<Connection, Error> {
        Connection::on_sources(Source::Borrowed(read), Source::Borrowed(write))
    }

    /// A connection on the process's own stdin and stdout: for an MCP
    /// server. Windows: the standard handles are borrowed (never closed),
    /// read and written by a thread each; the reading thread lives until
    /// stdin ends.
    ///
    /// With `guard_stdout`, the connection writes to a private duplicate of
    /// the standard output handle (owned: the end of the write side closes
    /// it), and the process's standard output handle is set to its standard
    /// error (`NUL` without one), so that `println!`, anything that asks
    /// `GetStdHandle` from now on and children started afterwards cannot
    /// corrupt the stream. What it cannot reach is the C runtime's own
    /// descriptor 1 (`printf`): the host's code calls the header's
    /// `mcp_stdio_crt_stdout_to_stderr()` for that, which also closes the
    /// old handle, so that the host sees the end of the stream when the
    /// write side ends. Call this once, early, before other threads write
    /// to stdout.
    ///
    /// Errors: [`Error::Os`] with `ERROR_FILE_NOT_FOUND` when the process
    /// has no stdin or stdout (a GUI program), or a thread or an event
    /// could not be made.
    pub fn open_stdio(guard_stdout: bool) -> Result<Connection, Error> {
        let no_handle = |_| Error::Os(2); // ERROR_FILE_NOT_FOUND
        let stdin = standard(Std::Input).map_err(no_handle)?;
        let stdout = match guard_stdout {
            true => Source::Owned(guard_stdout_now()?),
            false => Source::Borrowed(standard(Std::Output).map_err(no_handle)?),
        };
        Connection::on_sources(Source::Borrowed(stdin), stdout)
    }
}

impl Io {
    /// The I/O of a server spawned from `cmd`: the ends of its pipes and
    /// the process, in its job ([`Connection::spawn`]'s promise).
    /// `kill_on_host_exit` is Linux's, refused here (a host's exit kills
    /// the tree anyway, through the job); `console_window` as
    /// [`Command::console_window`].
    pub(crate) fn spawn(
        cmd: &Command,
        kill_on_host_exit: bool,
        console_window: bool,
    ) -> Result<Io, Error> {
        if kill_on_host_exit {
            return Err(Error::InvalidArgument);
        }
        let failed = |e: std::io::Error| match e.raw_os_error() {
            Some(code) => Error::SpawnFailed(Box::new(spawn_error(cmd, code))),
            None if e.kind() == std::io::ErrorKind::InvalidInput => Error::InvalidArgument,
            None => Error::from(e),
        };
        let launched = start(cmd, console_window).map_err(failed)?;
        let stderr = match launched.stderr {
            Some(pipe) => Some(StderrLines::new(
                Reader::new(pipe, crate::process::stderr::READ).map_err(failed)?,
            )),
            None => None,
        };
        // On a failure from here on, the job is closed: the tree dies.
        let process = Server::new(launched.started, launched.job, stderr);
        let ends = Handles::for_process(launched.stdout, launched.stdin).map_err(failed)?;
        Ok(Io::for_process(ends, process))
    }
}

/// The stdout guard's duplicate, or why not.
fn guard_stdout_now() -> Result<OwnedHandle, Error> {
    guard_stdout().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Os(2),
        _ => Error::from(e),
    })
}
