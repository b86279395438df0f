//! The errors of the safe API: [`Error`], and the reports two of its
//! variants carry: how a server exited (`exit.rs`) and why one could not
//! be started (`spawn.rs`).

mod exit;
mod spawn;

use std::fmt;

pub(crate) use exit::last_line;
pub use exit::ServerExitReport;
pub use spawn::{SpawnCause, SpawnError};

/// Why an operation of this crate failed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The input is not exactly one JSON text in valid UTF-8 (or it is empty).
    InvalidJson,
    /// Memory for the data could not be allocated; nothing was changed.
    OutOfMemory,
    /// An argument is out of range or of the wrong shape (a bound of 0, an id
    /// that is not a string or number token, an unknown request to cancel,
    /// an environment name that is empty or holds `=`); nothing was done.
    InvalidArgument,
    /// Params that are not a JSON object or array (JSON-RPC's rule);
    /// nothing was done.
    InvalidParams,
    /// A text (a command's program, argument, variable or directory) holds
    /// a NUL, which the system cannot pass (on Windows, or through the C
    /// API, also text that is not valid UTF-8); nothing was done.
    InvalidText,
    /// The output queue is full: nothing was queued; take output and try again.
    WouldBlock,
    /// A request reached its deadline unanswered
    /// ([`Connection::call`](crate::Connection::call)).
    TimedOut,
    /// [`Connection::call`](crate::Connection::call) kept more events for
    /// later than it may (16 MiB of their bytes) while it waited: it gave
    /// up waiting; what it kept is still delivered by `next_event`, and so
    /// is the answer when it comes (as [`Event::Response`](crate::Event::Response)).
    KeptEventsFull,
    /// The transport is closing or closed: nothing was done.
    Closed,
    /// A spawned server that ended unexpectedly is being started again
    /// (its [`RestartPolicy`](crate::RestartPolicy)): nothing was done;
    /// send again after [`Event::Restarted`](crate::Event::Restarted), with
    /// the handshake first.
    Restarting,
    /// The caller's buffer is too short: the output needs this many bytes.
    BufferTooSmall(usize),
    /// A call to the operating system failed: its error code (`errno`);
    /// [`std::io::Error::from_raw_os_error`] describes it.
    Os(i32),
    /// The server could not be started: the program, the operating
    /// system's error code (`ENOENT`, `EACCES`, `E2BIG`, `EMFILE`...) and
    /// what it means here ("not found in PATH (searched: ...)", a working
    /// directory that is missing). Nothing is left behind.
    SpawnFailed(Box<SpawnError>),
    /// The command's program is empty: nothing was started.
    EmptyProgram,
    /// A spawned server exited by itself before the answer came: how, and
    /// the last lines of its stderr. Its text is what a host shows: "server
    /// exited with code 1 before its first message: ModuleNotFoundError:
    /// No module named 'foo'".
    ServerExited(Box<ServerExitReport>),
    /// An earlier call on this connection panicked while it held its lock
    /// (a bug): the connection's state may be half-changed, so every call
    /// but drop is refused.
    Poisoned,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Error::InvalidJson => "input is not one JSON text in valid UTF-8",
            Error::OutOfMemory => "out of memory",
            Error::InvalidArgument => "an argument is out of range",
            Error::InvalidParams => "params must be a JSON object or array",
            Error::InvalidText => "a text holds a NUL (or is not valid UTF-8)",
            Error::EmptyProgram => "the program to start is empty",
            Error::WouldBlock => "the output queue is full",
            Error::TimedOut => "the request timed out",
            Error::KeptEventsFull => "too many events came while the call waited (16 MiB kept)",
            Error::Closed => "the transport is closed",
            Error::Restarting => "the server is being restarted: send after its restart",
            Error::BufferTooSmall(_) => "the buffer is too small",
            Error::Poisoned => "an earlier call panicked: the connection is unusable",
            Error::Os(code) => return std::io::Error::from_raw_os_error(*code).fmt(f),
            Error::ServerExited(report) => return report.fmt(f),
            Error::SpawnFailed(spawn) => return spawn.fmt(f),
        };
        f.write_str(text)
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The operating system's error code behind [`Error::Os`] and
    /// [`Error::SpawnFailed`]; `None` for the others.
    pub fn os_code(&self) -> Option<i32> {
        match self {
            Error::Os(code) => Some(*code),
            Error::SpawnFailed(spawn) => Some(spawn.code),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    /// [`Error::Os`] with the error's code ([`Error::OutOfMemory`] for
    /// `ErrorKind::OutOfMemory`, `EIO` for an error without a code).
    fn from(e: std::io::Error) -> Self {
        match e.raw_os_error() {
            Some(code) => Error::Os(code),
            None if e.kind() == std::io::ErrorKind::OutOfMemory => Error::OutOfMemory,
            None => Error::Os(EIO),
        }
    }
}

/// The POSIX `EIO`, for an I/O error that carries no code.
const EIO: i32 = 5;
