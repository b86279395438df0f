//! How a spawned server exited by itself, with the end of its stderr:
//! [`ServerExitReport`], carried by [`Error::ServerExited`](super::Error::ServerExited).

use std::fmt;

use crate::end_reason::ServerExit;

/// How a spawned server exited by itself, and what it last wrote to its
/// stderr ([`Error::ServerExited`](super::Error::ServerExited)).
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
