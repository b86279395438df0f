//! JSON text as RFC 8259 defines it, on raw bytes: validation, and the few
//! helpers the reader, the JSON-RPC classifier and the encoder share.
//!
//! Nothing here allocates per value or recurses: nesting depth is bounded only
//! by the input's length, and the stack never grows with it.

mod block;
mod cursor;
mod members;
mod nesting;
mod string;
mod string_eq;
mod validate;
mod watch;

pub(crate) use members::object_members;
pub(crate) use string::{next_special_or_non_ascii, unescape_short};
pub(crate) use string_eq::string_token_eq;
pub(crate) use validate::{is_json_text, validate};
pub(crate) use watch::Watch;

// JSON's whitespace, defined a floor down where the kernels need it too.
pub(crate) use crate::simd::is_whitespace;

/// The bounds of `bytes` without leading and trailing JSON whitespace, as `(start, end)`.
#[inline]
pub(crate) fn trimmed_bounds(bytes: &[u8]) -> (usize, usize) {
    let start = bytes
        .iter()
        .position(|&b| !is_whitespace(b))
        .unwrap_or(bytes.len());
    let end = bytes[start..]
        .iter()
        .rposition(|&b| !is_whitespace(b))
        .map_or(start, |i| start + i + 1);
    (start, end)
}
