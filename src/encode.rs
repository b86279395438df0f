//! `encode`: any JSON text in, one safe line out.

use memchr::{memchr, memchr3};

use crate::error::Error;
use crate::json::{is_whitespace, next_special_or_non_ascii, trimmed_bounds, validate, Watch};

/// How [`encode_into`] writes strings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Escape every non-ASCII character (and DEL) as `\uXXXX`, lowercase hex,
    /// characters above U+FFFF as a surrogate pair: Python's `ensure_ascii`.
    pub ascii: bool,
}

/// Encodes one JSON text as one line: compact (no whitespace outside
/// strings), then exactly one `\n`. Every token is kept byte for byte, except
/// that raw U+2028 and U+2029 in strings are written `\u2028` and `\u2029`.
/// Whitespace around the value is allowed and dropped.
///
/// ```
/// let line = mcp_stdio::encode(br#"{"a": "line1\nline2", "id": 1}"#).unwrap();
/// assert_eq!(line, b"{\"a\":\"line1\\nline2\",\"id\":1}\n");
/// ```
pub fn encode(json: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    encode_into(json, EncodeOptions::default(), &mut out)?;
    Ok(out)
}

/// [`encode`], with every non-ASCII character escaped as `\uXXXX`.
pub fn encode_ascii(json: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    encode_into(json, EncodeOptions { ascii: true }, &mut out)?;
    Ok(out)
}

/// Encodes `json` and appends the line to `out` (which keeps its capacity
/// across calls). On error `out` is left as it was.
pub fn encode_into(json: &[u8], options: EncodeOptions, out: &mut Vec<u8>) -> Result<(), Error> {
    encode_to(json, options, out)
}

/// Encodes `json` into `out`, a buffer the caller reuses (nothing is
/// allocated), and returns the line's length: `out[..n]` is the line.
/// [`encode_bound`] of the input's length is always enough. When `out` is
/// too short the error is [`Error::BufferTooSmall`] with the length needed,
/// and `out`'s bytes are unspecified.
pub fn encode_to_slice(
    json: &[u8],
    options: EncodeOptions,
    out: &mut [u8],
) -> Result<usize, Error> {
    let mut sink = SliceSink { buf: out, len: 0 };
    encode_to(json, options, &mut sink)?;
    if sink.len > sink.buf.len() {
        return Err(Error::BufferTooSmall(sink.len));
    }
    Ok(sink.len)
}

/// The longest line [`encode_to_slice`] can make of `len` bytes of JSON
/// (saturating): each byte at most twice as long (U+2028 and U+2029 become
/// `\u2028` and `\u2029`), six times with `ascii` (DEL becomes `\u007f`),
/// plus the `\n`.
pub fn encode_bound(len: usize, options: EncodeOptions) -> usize {
    let grow = if options.ascii { 6 } else { 2 };
    len.saturating_mul(grow).saturating_add(1)
}

/// Where the encoder writes: a growing `Vec`, or the caller's slice.
trait Sink {
    /// Makes sure `n` more bytes can be written (a `Vec` reserves them).
    fn reserve(&mut self, n: usize) -> Result<(), Error>;
    fn extend(&mut self, bytes: &[u8]);
    fn len(&self) -> usize;
    fn truncate(&mut self, len: usize);
    fn push(&mut self, b: u8) {
        self.extend(&[b]);
    }
}

impl Sink for Vec<u8> {
    fn reserve(&mut self, n: usize) -> Result<(), Error> {
        self.try_reserve(n).map_err(|_| Error::OutOfMemory)
    }
    #[inline]
    fn extend(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    #[inline]
    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }
}

/// The caller's buffer: what fits is written; `len` counts on past its end,
/// so that a line too long for it tells its length.
struct SliceSink<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl Sink for SliceSink<'_> {
    fn reserve(&mut self, _n: usize) -> Result<(), Error> {
        Ok(())
    }
    #[inline]
    fn extend(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
        }
        self.len = end;
    }
    fn len(&self) -> usize {
        self.len
    }
    fn truncate(&mut self, len: usize) {
        self.len = len;
    }
}

/// [`encode_into`] into any sink.
fn encode_to<S: Sink>(json: &[u8], options: EncodeOptions, out: &mut S) -> Result<(), Error> {
    let start = out.len();
    out.reserve(json.len() + 1)?;
    if !options.ascii {
        // One pass: validate, copying the tokens between the gaps.
        let (from, to) = trimmed_bounds(json);
        let mut copy = GapCopier {
            s: json,
            out,
            copied_to: from,
            line_separators: false,
        };
        match validate(json, &mut copy) {
            Ok(true) => {}
            failed => {
                out.truncate(start);
                return Err(failed.err().unwrap_or(Error::InvalidJson));
            }
        }
        if !copy.line_separators {
            copy.out.extend(&json[copy.copied_to..to]);
            copy.out.push(b'\n');
            return Ok(());
        }
        // Rare: strings need U+2028 or U+2029 escaped. Start again.
        out.truncate(start);
    } else if !validate(json, &mut ())? {
        return Err(Error::InvalidJson);
    }
    let strings = if options.ascii {
        Strings::Ascii
    } else {
        Strings::LineSeparators
    };
    let written = Minifier {
        s: json,
        out,
        strings,
    }
    .run();
    if written.is_err() {
        out.truncate(start);
    }
    written
}

/// Minifies while the validator runs: copies what lies between the gaps.
/// The room for the whole text is reserved first, so copies cannot fail.
struct GapCopier<'a, 'o, S> {
    s: &'a [u8],
    out: &'o mut S,
    /// `s[..copied_to]` is written or dropped.
    copied_to: usize,
    line_separators: bool,
}

impl<S: Sink> Watch for GapCopier<'_, '_, S> {
    const LINE_SEPARATORS: bool = true;

    #[inline]
    fn gap(&mut self, from: usize, to: usize) {
        self.out.extend(&self.s[self.copied_to..from]);
        self.copied_to = to;
    }

    fn line_separator(&mut self) {
        self.line_separators = true;
    }
}

/// What string contents need.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strings {
    /// Raw U+2028 and U+2029 are escaped.
    LineSeparators,
    /// Every non-ASCII character and DEL is escaped.
    Ascii,
}

/// Copies a valid JSON text without the whitespace between tokens, escaping
/// in strings what `strings` asks for.
struct Minifier<'a, 'o, S> {
    s: &'a [u8],
    out: &'o mut S,
    strings: Strings,
}

impl<S: Sink> Minifier<'_, '_, S> {
    fn run(mut self) -> Result<(), Error> {
        let s = self.s;
        let mut i = 0;
        while i < s.len() {
            let b = s[i];
            if b == b'"' {
                i = self.string(i)?;
            } else if is_whitespace(b) {
                i += 1;
            } else {
                // A run of punctuation, digits or letters of a literal.
                let end = s[i..]
                    .iter()
                    .position(|&c| c == b'"' || is_whitespace(c))
                    .map_or(s.len(), |k| i + k);
                self.out.extend(&s[i..end]);
                i = end;
            }
        }
        self.out.push(b'\n');
        Ok(())
    }

    /// Copies the string opening at `i`; returns the index past its closing quote.
    fn string(&mut self, i: usize) -> Result<usize, Error> {
        let s = self.s;
        let mut from = i; // start of the run not yet copied
        let mut j = i + 1;
        loop {
            j = match self.strings {
                Strings::LineSeparators => {
                    memchr3(b'"', b'\\', 0xE2, &s[j..]).map_or(s.len(), |k| j + k)
                }
                Strings::Ascii => {
                    // Non-ASCII bytes and DEL (0x7F, ASCII but not printable).
                    let special = next_special_or_non_ascii(s, j);
                    memchr(0x7F, &s[j..special]).map_or(special, |k| j + k)
                }
            };
            match s.get(j) {
                None => {
                    self.out.extend(&s[from..]);
                    return Ok(s.len());
                }
                Some(b'"') => {
                    self.out.extend(&s[from..=j]);
                    return Ok(j + 1);
                }
                Some(b'\\') => j += 2, // escapes are kept as written
                Some(0x7F) => {
                    self.out.extend(&s[from..j]);
                    j += 1;
                    self.escape(0x7F, s.len() - j)?;
                    from = j;
                }
                Some(&b) if b < 0x80 => j += 1, // not reached in valid JSON
                Some(&lead) => {
                    let end = (j + utf8_len(lead)).min(s.len());
                    let c = decode_utf8(&s[j..end]);
                    let escape = self.strings == Strings::Ascii || c == 0x2028 || c == 0x2029;
                    if escape {
                        self.out.extend(&s[from..j]);
                        self.escape(c, s.len() - end)?;
                        from = end;
                    }
                    j = end;
                }
            }
        }
    }

    /// Writes `\uXXXX` (or a surrogate pair) for `c`, keeping room for the
    /// `rest` of the input so later copies cannot fail.
    fn escape(&mut self, c: u32, rest: usize) -> Result<(), Error> {
        self.out.reserve(12 + rest + 1)?;
        if c >= 0x10000 {
            let v = c - 0x10000;
            self.unit(0xD800 + (v >> 10));
            self.unit(0xDC00 + (v & 0x3FF));
        } else {
            self.unit(c);
        }
        Ok(())
    }

    fn unit(&mut self, u: u32) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.extend(&[
            b'\\',
            b'u',
            HEX[(u >> 12) as usize & 0xF],
            HEX[(u >> 8) as usize & 0xF],
            HEX[(u >> 4) as usize & 0xF],
            HEX[u as usize & 0xF],
        ]);
    }
}

/// The length of the UTF-8 sequence that `lead` starts (the text is valid UTF-8).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        _ => 2,
    }
}

/// The code point of one well-formed UTF-8 sequence.
fn decode_utf8(seq: &[u8]) -> u32 {
    let lead = u32::from(seq[0]);
    let (mut c, rest) = match seq.len() {
        2 => (lead & 0x1F, &seq[1..]),
        3 => (lead & 0x0F, &seq[1..]),
        4 => (lead & 0x07, &seq[1..]),
        _ => return lead,
    };
    for &b in rest {
        c = (c << 6) | u32::from(b & 0x3F);
    }
    c
}
