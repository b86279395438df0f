//! The errors of the safe API.

use std::fmt;

/// Why an operation of this crate failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidJson => "input is not one JSON text in valid UTF-8",
            Error::OutOfMemory => "out of memory",
            Error::InvalidArgument => "an argument is out of range",
            Error::WouldBlock => "the output queue is full",
            Error::Closed => "the transport is closed",
            Error::BufferTooSmall(_) => "the buffer is too small",
        })
    }
}

impl std::error::Error for Error {}
