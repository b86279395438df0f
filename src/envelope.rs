//! The envelope of one JSON-RPC message: where its `id`, `method`,
//! `params`, `result` and `error` values are, as the bytes on the wire.
//!
//! Found by the pass that validates and classifies the text (the
//! [`Classifier`] notes each member's span as the validator reports it), so
//! a host routes a message on its method and echoes its id without parsing
//! it a second time.

use crate::error::Error;
use crate::json::{string_token_eq, validate};
use crate::jsonrpc::Classifier;
use crate::message::RpcKind;
use crate::span::Spans;

/// The members of one JSON-RPC 2.0 message a host routes on, each the raw
/// JSON value exactly as on the wire (whitespace around it excluded): what
/// [`envelope`] finds in a text, and [`LineReader::envelope`] in the message
/// just read. The C ABI's `McpEnvelope`.
///
/// When the text is one JSON-RPC message (`kind` is a request, notification,
/// response or error), each member it has is `Some`; when a member repeats,
/// the last one counts, as for the classification. Otherwise (`kind` is
/// `None`, or `Some(RpcKind::Batch)`: a batch has no single envelope) every
/// member is `None`.
///
/// [`LineReader::envelope`]: crate::LineReader::envelope
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Envelope<'a> {
    /// The JSON-RPC kind of the text, exactly as [`LineReader`] classifies
    /// it (`None`: not JSON-RPC).
    ///
    /// [`LineReader`]: crate::LineReader
    pub kind: Option<RpcKind>,
    /// The `id` token: `7`, `"abc"`, or `null` (only an error response may
    /// have a null id, or none at all).
    pub id: Option<&'a [u8]>,
    /// The `method` string token, quotes and escapes included: compare it
    /// with [`json_string_eq`].
    pub method: Option<&'a [u8]>,
    /// The `params` value.
    pub params: Option<&'a [u8]>,
    /// The `result` value (`null` included).
    pub result: Option<&'a [u8]>,
    /// The `error` object.
    pub error: Option<&'a [u8]>,
}

/// The envelope of the JSON text `json` (whitespace around it allowed), its
/// members borrowing `json`. Validates and classifies in one pass, as the
/// reader does: valid JSON that is no single JSON-RPC message is `Ok`, with
/// no member (see [`Envelope`]).
///
/// Errors: [`Error::InvalidJson`] when `json` is not exactly one JSON text
/// in valid UTF-8 (or is empty); [`Error::OutOfMemory`] when its nesting is
/// so deep that the stack of open containers (a bit per level past 64)
/// could not grow.
///
/// ```
/// use mcp_stdio::{envelope, json_string_eq, RpcKind};
/// let e = envelope(br#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{}}"#).unwrap();
/// assert_eq!(e.kind, Some(RpcKind::Request));
/// assert_eq!(e.id, Some(&b"7"[..]));
/// assert!(json_string_eq(e.method.unwrap(), "tools/call"));
/// assert_eq!(e.params, Some(&b"{}"[..]));
/// assert_eq!(e.result, None);
/// ```
pub fn envelope(json: &[u8]) -> Result<Envelope<'_>, Error> {
    let mut rpc = Classifier::new(json);
    if !validate(json, &mut rpc)? {
        return Err(Error::InvalidJson);
    }
    let (kind, spans) = rpc.envelope();
    Ok(Envelope::at(json, kind, &spans))
}

/// True when `token` is one JSON string token (quotes included, nothing
/// around it) whose value, escapes resolved, is `text`: `"tools\/call"` and
/// `"\u0074ools/call"` both equal `tools/call`, `"\ud83d\ude00"` equals
/// `"😀"`. False for anything else: another value, an invalid string, a
/// lone surrogate escape (no text holds one). Allocates nothing.
pub fn json_string_eq(token: &[u8], text: &str) -> bool {
    string_token_eq(token, text.as_bytes())
}

impl<'a> Envelope<'a> {
    /// The envelope whose members are at `spans` in `text`.
    pub(crate) fn at(text: &'a [u8], kind: Option<RpcKind>, spans: &Spans) -> Self {
        Envelope {
            kind,
            id: spans.id.of(text),
            method: spans.method.of(text),
            params: spans.params.of(text),
            result: spans.result.of(text),
            error: spans.error.of(text),
        }
    }
}
