//! The byte notation of the catalogue's files (tests/hostile/README.md "Byte
//! notation"): parsing it into bytes, and showing bytes in it for messages.

use std::fmt::Write as _;

/// A parsed piece of byte notation: literal bytes, or a group repeated N times.
#[derive(Debug)]
pub enum Node {
    Bytes(Vec<u8>),
    Repeat(usize, Vec<Node>),
}

pub fn nodes_len(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Bytes(b) => b.len(),
            Node::Repeat(k, inner) => k * nodes_len(inner),
        })
        .sum()
}

pub fn render(nodes: &[Node], out: &mut Vec<u8>) {
    for n in nodes {
        match n {
            Node::Bytes(b) => out.extend_from_slice(b),
            Node::Repeat(k, inner) => {
                let mut once = Vec::new();
                render(inner, &mut once);
                out.extend_from_slice(&once.repeat(*k));
            }
        }
    }
}

/// Parses the byte notation: literal characters stand for their UTF-8
/// bytes, `%HH` is one byte, `%{N:...%}` repeats its contents N times.
pub fn parse_notation(text: &str) -> Result<Vec<Node>, String> {
    let mut at = 0;
    parse_group(text.as_bytes(), &mut at, false)
}

pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    render(&parse_notation(text)?, &mut out);
    Ok(out)
}

fn parse_group(s: &[u8], at: &mut usize, nested: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    let mut bytes = Vec::new();
    while *at < s.len() {
        let b = s[*at];
        if b != b'%' {
            bytes.push(b);
            *at += 1;
            continue;
        }
        match s.get(*at + 1) {
            Some(b'}') if nested => {
                *at += 2;
                nodes.push(Node::Bytes(bytes));
                return Ok(nodes);
            }
            Some(b'}') => return Err(format!("`%}}` without `%{{` at offset {at}")),
            Some(b'{') => {
                let digits_at = *at + 2;
                let colon = s[digits_at..]
                    .iter()
                    .position(|&c| c == b':')
                    .ok_or_else(|| format!("`%{{` without `:` at offset {at}"))?;
                let digits = std::str::from_utf8(&s[digits_at..digits_at + colon]).unwrap();
                let n: usize = digits
                    .parse()
                    .map_err(|_| format!("bad repeat count {digits:?} at offset {at}"))?;
                *at = digits_at + colon + 1;
                let inner = parse_group(s, at, true)?;
                nodes.push(Node::Bytes(std::mem::take(&mut bytes)));
                nodes.push(Node::Repeat(n, inner));
            }
            _ => {
                let hex = s
                    .get(*at + 1..*at + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("`%` must be `%HH`, `%{{N:` or `%}}` (offset {at})"))?;
                bytes.push(hex);
                *at += 3;
            }
        }
    }
    if nested {
        return Err("`%{` without its `%}`".into());
    }
    nodes.push(Node::Bytes(bytes));
    Ok(nodes)
}

/// Bytes in the byte notation, for messages: printable ASCII as is, other
/// bytes as `%HH`, long runs of one byte as `%{N:..%}`, cut after `max` characters.
pub fn show(bytes: &[u8], max: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if s.len() > max {
            let _ = write!(s, "... ({} bytes in all)", bytes.len());
            break;
        }
        let b = bytes[i];
        let run = bytes[i..].iter().take_while(|&&c| c == b).count();
        let one = if (0x20..0x7f).contains(&b) && b != b'%' {
            (b as char).to_string()
        } else {
            format!("%{b:02X}")
        };
        if run > 8 {
            let _ = write!(s, "%{{{run}:{one}%}}");
            i += run;
        } else {
            s.push_str(&one);
            i += 1;
        }
    }
    s
}

pub fn check_line(line: &str) -> Result<(), String> {
    if line.ends_with([' ', '\t']) || line.contains('\r') {
        return Err("trailing whitespace or CR: write it %20, %09, %0D".into());
    }
    Ok(())
}

#[test]
fn the_byte_notation() {
    assert_eq!(decode("a b%0A%ff%{3:x%}").unwrap(), b"a b\n\xffxxx");
    assert_eq!(decode("%{2:[%{2:1%}]%}").unwrap(), b"[11][11]");
    assert_eq!(decode("é%{0:x%}").unwrap(), "é".as_bytes());
    for bad in ["%", "%0", "%zz", "%}", "%{2:x", "%{x:y%}", "%{3"] {
        assert!(decode(bad).is_err(), "{bad}");
    }
    assert_eq!(show(b"ab%\n", 100), "ab%25%0A");
    assert_eq!(decode(&show(&[b'q'; 20], 100)).unwrap(), [b'q'; 20]);
}
