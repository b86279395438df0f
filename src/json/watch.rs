//! What the validator tells whoever watches it validate: the whitespace gaps
//! (the encoder minifies with them), raw line separators in strings, and the
//! structure (the JSON-RPC classifier reads it). One pass serves them all.

/// What a caller learns as validation goes, beyond valid or not.
pub(crate) trait Watch {
    /// Whether to report raw U+2028 and U+2029 in strings (each 0xE2 byte
    /// in a string then costs a look).
    const LINE_SEPARATORS: bool = false;

    /// `text[from..to]` is whitespace between two tokens (whitespace
    /// around the value is not reported). Called in text order.
    fn gap(&mut self, _from: usize, _to: usize) {}

    /// A string holds a raw U+2028 or U+2029 (only with `LINE_SEPARATORS`).
    fn line_separator(&mut self) {}

    /// Whether to report the structure: where values start and end, where
    /// member names are.
    const STRUCTURE: bool = false;

    /// A value starts at `text[at]`, `depth` containers deep (0: the whole
    /// text; a member's or element's value: the depth of its container's
    /// contents, 1 for the top level).
    fn value_start(&mut self, _depth: usize, _at: usize) {}

    /// The value that started last at `depth` ends just before `end`.
    fn value_end(&mut self, _depth: usize, _end: usize) {}

    /// A member name, a string, opens at `text[at]`, in an object whose
    /// members are at `depth`: its value comes next, at the same depth.
    fn member_name(&mut self, _depth: usize, _at: usize) {}
}

/// Validation only.
impl Watch for () {}
