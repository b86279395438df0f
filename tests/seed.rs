//! The contract's worked examples, as docs/contract.md states them:
//! §Reader: example (three reads, with §Reader: buffered_len and §Reader:
//! finish), §Encoder: example, and a malformed line dropped by the skip flag
//! (§Reader: messages).

use mcp_stdio::{encode, LineReader, Message};

fn json(line: &[u8]) -> Message<'_> {
    Message::Json { line, rpc: None }
}

/// docs/contract.md §Reader: example.
#[test]
fn three_reads() {
    let mut r = LineReader::new();
    r.feed(b"{\"id\":1}\n{\"id\"").unwrap();
    assert_eq!(r.next_message(), Some(json(b"{\"id\":1}")));
    assert_eq!(r.next_message(), None);
    assert_eq!(r.buffered_len(), 5);

    r.feed(b":2}\n{\"id\":3}\nnot json\n").unwrap();
    assert_eq!(r.next_message(), Some(json(b"{\"id\":2}")));
    assert_eq!(r.next_message(), Some(json(b"{\"id\":3}")));
    assert_eq!(
        r.next_message(),
        Some(Message::ParseError { line: b"not json" })
    );
    assert_eq!(r.next_message(), None);

    r.feed(b"{\"id\":4}").unwrap();
    assert_eq!(r.next_message(), None);
    assert_eq!(r.buffered_len(), 8);
    r.finish().unwrap();
    assert_eq!(r.next_message(), Some(json(b"{\"id\":4}")));
    assert_eq!(r.next_message(), None);
    assert_eq!(r.buffered_len(), 0);
}

/// docs/contract.md §Encoder: example.
#[test]
fn encode_example() {
    let line = encode(br#"{"a": "line1\nline2", "id": 1}"#).unwrap();
    assert_eq!(line, b"{\"a\":\"line1\\nline2\",\"id\":1}\n");
}

/// docs/contract.md §Reader: messages (the skip flag).
#[test]
fn skips_malformed_lines_and_recovers() {
    let mut r = LineReader::new();
    r.set_skip_invalid(true);
    r.feed(b"garbage\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n")
        .unwrap();
    assert_eq!(
        r.next_message().and_then(|m| m.data()),
        Some(&b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}"[..])
    );
    assert_eq!(r.next_message(), None);
}
