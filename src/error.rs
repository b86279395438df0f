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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidJson => "input is not one JSON text in valid UTF-8",
            Error::OutOfMemory => "out of memory",
        })
    }
}

impl std::error::Error for Error {}
