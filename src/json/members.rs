//! The members of a JSON object, found by name, in one validating pass: what
//! the transport needs of a request's params (its `_meta`) and of a progress
//! notification's (`progressToken`, `progress`). Not for the hot path: it
//! runs on those few messages only.

use super::{string_token_eq, validate, Watch};
use crate::error::Error;

/// Where the values of `N` named members of one object are: the last member
/// of each name wins (as the JSON-RPC classifier reads names).
struct Finder<'a, const N: usize> {
    text: &'a [u8],
    names: [&'a str; N],
    /// The member whose value is being read (an index into `names`).
    current: Option<usize>,
    /// Where each found value starts and ends.
    found: [Option<(usize, usize)>; N],
    value_at: usize,
}

impl<const N: usize> Watch for Finder<'_, N> {
    const STRUCTURE: bool = true;

    fn member_name(&mut self, depth: usize, at: usize) {
        if depth != 1 {
            return;
        }
        let end = string_end(self.text, at);
        let token = &self.text[at..end];
        self.current = self
            .names
            .iter()
            .position(|name| string_token_eq(token, name.as_bytes()));
    }

    fn value_start(&mut self, depth: usize, at: usize) {
        if depth == 1 {
            self.value_at = at;
        }
    }

    fn value_end(&mut self, depth: usize, end: usize) {
        if depth == 1 {
            if let Some(i) = self.current.take() {
                self.found[i] = Some((self.value_at, end));
            }
        }
    }
}

/// The end of the string token that opens at `text[at]` (its closing quote
/// included); the text is valid JSON.
fn string_end(text: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// The values of the members `names` of the object `text` (one JSON text),
/// as slices of it (`None`: no such member); `Ok(None)` when `text` is not
/// an object; [`Error::InvalidJson`] when it is not one JSON text.
pub(crate) fn object_members<'t, const N: usize>(
    text: &'t [u8],
    names: [&str; N],
) -> Result<Option<[Option<&'t [u8]>; N]>, Error> {
    let mut finder = Finder {
        text,
        names,
        current: None,
        found: [None; N],
        value_at: 0,
    };
    if !validate(text, &mut finder)? {
        return Err(Error::InvalidJson);
    }
    let (start, _) = super::trimmed_bounds(text);
    if text.get(start) != Some(&b'{') {
        return Ok(None);
    }
    Ok(Some(
        finder.found.map(|f| f.map(|(from, to)| &text[from..to])),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_at_the_top_only_the_last_of_a_name_winning() {
        let text = br#" {"a":1, "b":{"a":2}, "c":"x\"y", "a":[3] } "#;
        let [a, b, c, d] = object_members(text, ["a", "b", "c", "d"]).unwrap().unwrap();
        assert_eq!(a, Some(&b"[3]"[..]));
        assert_eq!(b, Some(&br#"{"a":2}"#[..]));
        assert_eq!(c, Some(&br#""x\"y""#[..]));
        assert_eq!(d, None);
    }

    #[test]
    fn escaped_names_match_and_non_objects_are_none() {
        let text = br#"{"\u005fmeta":{}}"#;
        assert_eq!(
            object_members(text, ["_meta"]).unwrap().unwrap()[0],
            Some(&b"{}"[..])
        );
        assert_eq!(object_members(b"[1]", ["a"]).unwrap(), None);
        assert_eq!(object_members(b"{", ["a"]), Err(Error::InvalidJson));
    }
}
