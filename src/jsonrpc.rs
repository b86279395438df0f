//! JSON-RPC 2.0 classification of a message (with MCP's rule that request ids
//! are strings or numbers), done while the validator walks the text: the
//! validator reports where values start and end and where member names are
//! ([`Watch`]), and [`Classifier`] keeps what the rules need, and where the
//! members of the envelope are. No second pass.

use crate::json::{unescape_short, Watch};
use crate::message::RpcKind;
use crate::span::{Span, Spans};

/// Watches one text being validated and classifies it. Its verdict
/// ([`Classifier::kind`]) means something only if the text was valid.
///
/// Member names and string values are compared after unescaping; when a
/// member name repeats, the last one wins (as in Python's `json.loads`).
pub(crate) struct Classifier<'a> {
    s: &'a [u8],
    /// The depth of the members of the message objects: 1 for one message,
    /// 2 for the elements of a batch, 0 when the text is neither.
    base: usize,
    /// The message being read (in a batch: the current element).
    message: Members,
    /// The current element of a batch is an object.
    element_is_object: bool,
    /// The member of the message whose value is being read, and where it starts.
    key: Key,
    value_at: usize,
    /// The `error` member being read is an object: its members.
    error: Option<ErrorMembers>,
    /// Messages classified so far (more than one only in a batch), and
    /// whether each was a JSON-RPC message.
    classified: usize,
    all_valid: bool,
    /// The verdict for one message.
    single: Option<RpcKind>,
    /// Where the envelope's members of the message are (the last of each
    /// name). Meaningful only for one message (`base == 1`); noted in
    /// batches too, where a branch would cost more than the stores.
    spans: Spans,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Type {
    String,
    Integer,
    Real,
    Object,
    Array,
    Boolean,
    Null,
}

/// The member names the rules look at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    Code,
    Message,
    Other,
}

/// What one message object holds, as the rules need it.
#[derive(Default)]
struct Members {
    /// `"jsonrpc"` present: whether its value is the string `"2.0"`.
    version_is_2_0: Option<bool>,
    method: Option<Type>,
    id: Option<Type>,
    params: Option<Type>,
    has_result: bool,
    /// `"error"` present: whether it is an object with an integer `code`
    /// and a string `message`.
    error: Option<bool>,
}

/// The members of an `error` object that matter.
struct ErrorMembers {
    key: Key,
    value_at: usize,
    code: Option<Type>,
    message: Option<Type>,
}

impl<'a> Classifier<'a> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Classifier {
            s,
            base: 0,
            message: Members::default(),
            element_is_object: false,
            key: Key::Other,
            value_at: 0,
            error: None,
            classified: 0,
            all_valid: true,
            single: None,
            spans: Spans::default(),
        }
    }

    /// The JSON-RPC kind of the text watched, or `None` when it is not a
    /// JSON-RPC 2.0 message (or batch of them).
    pub(crate) fn kind(&self) -> Option<RpcKind> {
        match self.base {
            1 => self.single,
            2 => (self.classified > 0 && self.all_valid).then_some(RpcKind::Batch),
            _ => None,
        }
    }

    /// The kind of one JSON-RPC message and where its envelope's members
    /// are; no member for anything else (a batch included).
    pub(crate) fn envelope(&self) -> (Option<RpcKind>, Spans) {
        let kind = self.kind();
        match kind {
            Some(RpcKind::Batch) | None => (kind, Spans::default()),
            Some(_) => (kind, self.spans),
        }
    }

    /// The value of the current member of the message ended at `end`.
    fn member_value(&mut self, end: usize) {
        let at = self.value_at;
        let m = &mut self.message;
        let spans = &mut self.spans;
        match self.key {
            Key::Jsonrpc => {
                let is_2_0 = self.s.get(at) == Some(&b'"')
                    && unescape_short(self.s, at)
                        .0
                        .is_some_and(|v| v.as_bytes() == b"2.0");
                m.version_is_2_0 = Some(is_2_0);
            }
            Key::Method => {
                m.method = Some(type_of(self.s, at, end));
                spans.method = Span::new(at, end);
            }
            Key::Id => {
                m.id = Some(type_of(self.s, at, end));
                spans.id = Span::new(at, end);
            }
            Key::Params => {
                m.params = Some(type_of(self.s, at, end));
                spans.params = Span::new(at, end);
            }
            Key::Result => {
                m.has_result = true;
                spans.result = Span::new(at, end);
            }
            Key::Error => {
                spans.error = Span::new(at, end);
                m.error = Some(self.error.take().is_some_and(|e| {
                    e.code == Some(Type::Integer) && e.message == Some(Type::String)
                }));
            }
            _ => {}
        }
    }

    /// A message object ended: its kind, by the rules.
    fn message_kind(&self) -> Option<RpcKind> {
        let m = &self.message;
        if m.version_is_2_0 != Some(true) {
            return None;
        }
        let id_is_string_or_number =
            matches!(m.id, Some(Type::String | Type::Integer | Type::Real));
        match m.method {
            Some(Type::String) => {
                let params_ok = matches!(m.params, None | Some(Type::Object | Type::Array));
                if m.has_result || m.error.is_some() || !params_ok {
                    None
                } else if m.id.is_none() {
                    Some(RpcKind::Notification)
                } else if id_is_string_or_number {
                    Some(RpcKind::Request)
                } else {
                    None
                }
            }
            Some(_) => None,
            None => match (m.has_result, m.error) {
                (true, None) if id_is_string_or_number => Some(RpcKind::Response),
                // An error response's id may be null or absent (MCP 2025-11-25
                // and later: the request's id could not be read).
                (false, Some(true))
                    if id_is_string_or_number || matches!(m.id, None | Some(Type::Null)) =>
                {
                    Some(RpcKind::Error)
                }
                _ => None,
            },
        }
    }
}

impl Watch for Classifier<'_> {
    const STRUCTURE: bool = true;

    // Most values are deep inside `params` or `result`: only the top levels
    // matter, and the filter stays inline while the handling is not.

    #[inline(always)]
    fn value_start(&mut self, depth: usize, at: usize) {
        if self.matters(depth) {
            self.on_value_start(depth, at);
        }
    }

    #[inline(always)]
    fn value_end(&mut self, depth: usize, end: usize) {
        if self.matters(depth) {
            self.on_value_end(depth, end);
        }
    }

    #[inline(always)]
    fn member_name(&mut self, depth: usize, at: usize) {
        if self.matters(depth) {
            self.on_member_name(depth, at);
        }
    }
}

impl Classifier<'_> {
    /// Events at this depth can change the verdict: the whole text, the
    /// messages, their members, and the members of their `error` objects.
    #[inline(always)]
    fn matters(&self, depth: usize) -> bool {
        depth == 0
            || (self.base != 0 && depth <= self.base)
            || (depth == self.base + 1 && self.error.is_some())
    }

    #[inline(never)]
    fn on_value_start(&mut self, depth: usize, at: usize) {
        let opens = self.s.get(at).copied();
        if depth == 0 {
            self.base = match opens {
                Some(b'{') => 1,
                Some(b'[') => 2,
                _ => 0,
            };
            self.message = Members::default();
        } else if depth + 1 == self.base {
            // An element of a batch.
            self.element_is_object = opens == Some(b'{');
            self.message = Members::default();
        } else if depth == self.base {
            self.value_at = at;
            self.error = (self.key == Key::Error && opens == Some(b'{')).then_some(ErrorMembers {
                key: Key::Other,
                value_at: at,
                code: None,
                message: None,
            });
        } else if let Some(e) = &mut self.error {
            e.value_at = at; // depth == base + 1: a member of the `error` object
        }
    }

    #[inline(never)]
    fn on_value_end(&mut self, depth: usize, end: usize) {
        if self.base == 0 {
            // Not JSON-RPC: nothing to learn.
        } else if depth == self.base {
            self.member_value(end);
        } else if depth + 1 == self.base {
            // A message ended (in a batch, an element).
            let kind = if self.base == 1 || self.element_is_object {
                self.message_kind()
            } else {
                None
            };
            self.single = kind;
            self.classified += 1;
            self.all_valid &= kind.is_some();
        } else if let (Some(e), true) = (&mut self.error, depth == self.base + 1) {
            let ty = Some(type_of(self.s, e.value_at, end));
            match e.key {
                Key::Code => e.code = ty,
                Key::Message => e.message = ty,
                _ => {}
            }
        }
    }

    #[inline(never)]
    fn on_member_name(&mut self, depth: usize, at: usize) {
        if depth == self.base {
            self.key = key(self.s, at);
        } else if depth == self.base + 1 && self.error.is_some() {
            let key = key(self.s, at);
            if let Some(e) = &mut self.error {
                e.key = key;
            }
        }
    }
}

/// The type of the value `s[at..end]`.
fn type_of(s: &[u8], at: usize, end: usize) -> Type {
    match s.get(at) {
        Some(b'"') => Type::String,
        Some(b'{') => Type::Object,
        Some(b'[') => Type::Array,
        Some(b't' | b'f') => Type::Boolean,
        Some(b'n') => Type::Null,
        _ => {
            let number = s.get(at..end).unwrap_or_default();
            if number.iter().any(|&b| matches!(b, b'.' | b'e' | b'E')) {
                Type::Real
            } else {
                Type::Integer
            }
        }
    }
}

/// The member name whose string opens at `s[at]`: compared as written first
/// (names are rarely escaped), then unescaped, since `"\u0069d"` is `id` too.
fn key(s: &[u8], at: usize) -> Key {
    let name = s.get(at + 1..).unwrap_or_default();
    let is = |word: &[u8]| name.get(word.len()) == Some(&b'"') && name.starts_with(word);
    let key = match name.first() {
        Some(b'j') if is(b"jsonrpc") => Key::Jsonrpc,
        Some(b'm') if is(b"method") => Key::Method,
        Some(b'm') if is(b"message") => Key::Message,
        Some(b'i') if is(b"id") => Key::Id,
        Some(b'p') if is(b"params") => Key::Params,
        Some(b'r') if is(b"result") => Key::Result,
        Some(b'e') if is(b"error") => Key::Error,
        Some(b'c') if is(b"code") => Key::Code,
        _ => Key::Other,
    };
    if key != Key::Other {
        return key;
    }
    let (unescaped, _) = unescape_short(s, at);
    match unescaped.as_ref().map_or(&[][..], |n| n.as_bytes()) {
        b"jsonrpc" => Key::Jsonrpc,
        b"method" => Key::Method,
        b"id" => Key::Id,
        b"params" => Key::Params,
        b"result" => Key::Result,
        b"error" => Key::Error,
        b"code" => Key::Code,
        b"message" => Key::Message,
        _ => Key::Other,
    }
}
