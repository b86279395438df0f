//! What the reader yields: one item per non-empty line.

/// The JSON-RPC 2.0 kind of a message, when the reader classifies them
/// ([`LineReader::set_jsonrpc`](crate::LineReader::set_jsonrpc)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RpcKind {
    /// `method` (a string) and `id` (a string or a number; MCP forbids a null
    /// id): the peer expects a response.
    Request,
    /// `method` without `id`: no response expected.
    Notification,
    /// `id` (a string or a number) and `result` (any value, null included).
    Response,
    /// An `error` object with an integer `code` and a string `message`, and an
    /// `id` that is a string, a number, null or absent (MCP 2025-11-25 and later).
    Error,
    /// A non-empty array whose every element is one of the above.
    Batch,
}

/// One item read from the stream: a message, or the report of a line that is not one.
///
/// Line data borrows the reader's buffer: it lives until the next call on the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message<'a> {
    /// One JSON text: the line as received, without surrounding whitespace.
    /// `rpc` is its JSON-RPC kind when classification is on, `None` when it is off.
    Json {
        /// The line, trimmed.
        line: &'a [u8],
        /// The JSON-RPC kind, or `None` when classification is off.
        rpc: Option<RpcKind>,
    },
    /// A line that is not one JSON text in valid UTF-8 (trimmed, as received).
    ParseError {
        /// The line, trimmed.
        line: &'a [u8],
    },
    /// Valid JSON that is not a JSON-RPC 2.0 message (only with classification on).
    InvalidJsonRpc {
        /// The line, trimmed.
        line: &'a [u8],
    },
    /// A line longer than the limit. Its bytes were dropped; `len` is how many of
    /// them had been received when the reader gave up on it (more than the limit).
    TooLong {
        /// Bytes of the line received before it was dropped.
        len: usize,
    },
}

impl<'a> Message<'a> {
    /// The line's bytes, or `None` for [`Message::TooLong`].
    pub fn data(&self) -> Option<&'a [u8]> {
        match *self {
            Message::Json { line, .. }
            | Message::ParseError { line }
            | Message::InvalidJsonRpc { line } => Some(line),
            Message::TooLong { .. } => None,
        }
    }

    /// The number of bytes of the item (the line's length; for `TooLong`, the bytes received).
    pub fn len(&self) -> usize {
        match *self {
            Message::TooLong { len } => len,
            _ => self.data().map_or(0, <[u8]>::len),
        }
    }

    /// Always false: the reader skips empty lines. (Provided because `len` is.)
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True for [`Message::Json`].
    pub fn is_json(&self) -> bool {
        matches!(self, Message::Json { .. })
    }
}
