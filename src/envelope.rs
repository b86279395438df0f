//! Comparing the string tokens of a JSON-RPC message (its `method`) with a
//! text, without decoding them into a buffer.

use crate::json::string_token_eq;

/// True when `token` is one JSON string token (quotes included, nothing
/// around it) whose value, escapes resolved, is `text`: `"tools\/call"` and
/// `"\u0074ools/call"` both equal `tools/call`, `"\ud83d\ude00"` equals
/// `"😀"`. False for anything else: another value, an invalid string, a
/// lone surrogate escape (no text holds one). Allocates nothing.
pub fn json_string_eq(token: &[u8], text: &str) -> bool {
    string_token_eq(token, text.as_bytes())
}
