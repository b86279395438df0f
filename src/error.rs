//! The errors of the safe API.

use std::fmt;

use crate::end_reason::ServerExit;

/// Why an operation of this crate failed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The input is not exactly one JSON text in valid UTF-8 (or it is empty).
    InvalidJson,
    /// Memory for the data could not be allocated; nothing was changed.
    OutOfMemory,
    /// An argument is out of range or of the wrong shape (a bound of 0, an id
    /// that is not a string or number token, params that are not an object
    /// or an array, an unknown request to cancel); nothing was done.
    InvalidArgument,
    /// The output queue is full: nothing was queued; take output and try again.
    WouldBlock,
    /// The transport is closing or closed: nothing was done.
    Closed,
    /// The caller's buffer is too short: the output needs this many bytes.
    BufferTooSmall(usize),
    /// A call to the operating system failed: its error code (`errno`);
    /// [`std::io::Error::from_raw_os_error`] describes it.
    Os(i32),
    /// The server could not be started: the operating system's error code
    /// (`ENOENT` for a program not found or a missing working directory,
    /// `EACCES`, `E2BIG`, `EMFILE`...).
    SpawnFailed(i32),
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
            Error::WouldBlock => "the output queue is full",
            Error::Closed => "the transport is closed",
            Error::BufferTooSmall(_) => "the buffer is too small",
            Error::Poisoned => "an earlier call panicked: the connection is unusable",
            Error::Os(code) => return std::io::Error::from_raw_os_error(*code).fmt(f),
            Error::ServerExited(report) => return report.fmt(f),
            Error::SpawnFailed(code) => {
                let why = std::io::Error::from_raw_os_error(*code);
                return write!(f, "the server could not be started: {why}");
            }
        };
        f.write_str(text)
    }
}

impl std::error::Error for Error {}

/// How a spawned server exited by itself, and what it last wrote to its
/// stderr ([`Error::ServerExited`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerExitReport {
    /// Its exit status, and whether it ever wrote a line on its stdout.
    pub exit: ServerExit,
    /// The last lines of its stderr, as
    /// [`Connection::stderr_tail`](crate::Connection::stderr_tail) gives
    /// them (empty where the library does not read its stderr).
    pub stderr_tail: Vec<u8>,
}

/// The longest part of a stderr line a reason's text quotes, in bytes.
const QUOTED_MAX: usize = 200;

impl ServerExitReport {
    /// The last line of the stderr tail that is not blank, trimmed, cut at
    /// 200 bytes (at a character's boundary), lossily decoded: what a
    /// one-line reason quotes.
    pub fn last_stderr_line(&self) -> Option<String> {
        last_line(&self.stderr_tail)
    }
}

/// The last line of `tail` that is not blank (see
/// [`ServerExitReport::last_stderr_line`]).
pub(crate) fn last_line(tail: &[u8]) -> Option<String> {
    let line = tail
        .split(|&b| b == b'\n')
        .map(|line| line.trim_ascii())
        .rfind(|line| !line.is_empty())?;
    let text = String::from_utf8_lossy(line);
    let mut end = text.len().min(QUOTED_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].to_owned())
}

impl fmt::Display for ServerExitReport {
    /// The exit ("server exited with code 1 before its first message"),
    /// then ": " and the last stderr line, when there is one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.exit.fmt(f)?;
        if let Some(line) = self.last_stderr_line() {
            write!(f, ": {line}")?;
        }
        Ok(())
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
