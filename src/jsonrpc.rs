//! JSON-RPC 2.0 classification of a message (with MCP's rule that request ids
//! are strings or numbers). Runs on text the validator has already accepted,
//! so it only walks the top level and skips nested values without recursion.

use crate::json::{next_quote_or_bracket, skip_string, unescape_short, Cursor};
use crate::message::RpcKind;

/// The JSON-RPC kind of `text`, a valid JSON text without surrounding
/// whitespace, or `None` when it is not a JSON-RPC 2.0 message.
///
/// Member names and string values are compared after unescaping; when a
/// member name repeats, the last one wins (as in Python's `json.loads`).
pub(crate) fn classify(text: &[u8]) -> Option<RpcKind> {
    let mut c = Cursor::new(text);
    match c.peek() {
        b'{' => c.object(),
        b'[' => c.batch(),
        _ => None,
    }
}

/// What a skipped value was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Type {
    String,
    Integer,
    /// A number with a fraction or an exponent (not an integer in JSON-RPC's sense).
    Real,
    Object,
    Array,
    Boolean,
    Null,
}

/// The members that decide a message's kind (last occurrence wins).
#[derive(Default)]
struct Members {
    version_is_2_0: Option<bool>,
    method: Option<Type>,
    id: Option<Type>,
    params: Option<Type>,
    has_result: bool,
    /// Present, and whether it is a well-formed error object.
    error: Option<bool>,
}

/// The classifier's steps.
impl Cursor<'_> {
    /// A non-empty array of requests, notifications and responses.
    fn batch(&mut self) -> Option<RpcKind> {
        self.i += 1;
        self.skip_whitespace();
        if self.peek() == b']' {
            return None;
        }
        loop {
            if self.peek() != b'{' {
                return None;
            }
            self.object()?;
            self.skip_whitespace();
            if self.peek() == b',' {
                self.i += 1;
                self.skip_whitespace();
            } else {
                return Some(RpcKind::Batch);
            }
        }
    }

    /// One message object at the cursor.
    fn object(&mut self) -> Option<RpcKind> {
        let mut m = Members::default();
        self.for_each_member(|c, name| match name {
            b"jsonrpc" => m.version_is_2_0 = Some(c.string_equals(b"2.0")),
            b"method" => m.method = Some(c.skip_value()),
            b"id" => m.id = Some(c.skip_value()),
            b"params" => m.params = Some(c.skip_value()),
            b"result" => {
                c.skip_value();
                m.has_result = true;
            }
            b"error" => m.error = Some(c.error_object()),
            _ => {
                c.skip_value();
            }
        });
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
                (false, Some(true)) if id_is_string_or_number || m.id == Some(Type::Null) => {
                    Some(RpcKind::Error)
                }
                _ => None,
            },
        }
    }

    /// An `error` member's value: an object with an integer `code` and a string `message`.
    fn error_object(&mut self) -> bool {
        if self.peek() != b'{' {
            self.skip_value();
            return false;
        }
        let (mut code, mut message) = (None, None);
        self.for_each_member(|c, name| match name {
            b"code" => code = Some(c.skip_value()),
            b"message" => message = Some(c.skip_value()),
            _ => {
                c.skip_value();
            }
        });
        code == Some(Type::Integer) && message == Some(Type::String)
    }

    /// Calls `visit` with each member's decoded name (empty when it is not a
    /// short ASCII name) and the cursor on its value; `visit` must consume the value.
    fn for_each_member(&mut self, mut visit: impl FnMut(&mut Self, &[u8])) {
        self.i += 1; // '{'
        self.skip_whitespace();
        if self.peek() == b'}' {
            self.i += 1;
            return;
        }
        loop {
            let (name, end) = unescape_short(self.s, self.i);
            self.i = end;
            self.skip_whitespace();
            self.i += 1; // ':'
            self.skip_whitespace();
            visit(self, name.as_ref().map_or(&[][..], |n| n.as_bytes()));
            self.skip_whitespace();
            let separator = self.peek();
            self.i += 1; // ',' or '}'
            if separator != b',' {
                return;
            }
            self.skip_whitespace();
        }
    }

    /// Consumes a string value and tells whether it equals `expected` once unescaped.
    fn string_equals(&mut self, expected: &[u8]) -> bool {
        if self.peek() != b'"' {
            self.skip_value();
            return false;
        }
        let (value, end) = unescape_short(self.s, self.i);
        self.i = end;
        value.is_some_and(|v| v.as_bytes() == expected)
    }

    /// Skips one value of any depth; says what it was.
    fn skip_value(&mut self) -> Type {
        match self.peek() {
            b'"' => {
                self.i = skip_string(self.s, self.i);
                Type::String
            }
            open @ (b'{' | b'[') => {
                self.skip_container();
                if open == b'{' {
                    Type::Object
                } else {
                    Type::Array
                }
            }
            b't' => {
                self.i += 4;
                Type::Boolean
            }
            b'f' => {
                self.i += 5;
                Type::Boolean
            }
            b'n' => {
                self.i += 4;
                Type::Null
            }
            _ => {
                let mut kind = Type::Integer;
                while let Some(&b) = self.s.get(self.i) {
                    match b {
                        b'0'..=b'9' | b'-' | b'+' => {}
                        b'.' | b'e' | b'E' => kind = Type::Real,
                        _ => break,
                    }
                    self.i += 1;
                }
                kind
            }
        }
    }

    /// Skips the object or array at the cursor, however deep.
    fn skip_container(&mut self) {
        let mut depth = 0usize;
        loop {
            self.i = next_quote_or_bracket(self.s, self.i);
            let Some(&b) = self.s.get(self.i) else {
                return;
            };
            match b {
                b'"' => {
                    self.i = skip_string(self.s, self.i);
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
    }
}
