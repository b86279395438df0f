//! The envelope of a JSON-RPC message (`envelope`, `LineReader::envelope`):
//! each member the exact bytes on the wire, found by the classifying pass;
//! and `json_string_eq`, the allocation-free comparison of string tokens.

use mcp_stdio::RpcKind::{self, *};
use mcp_stdio::{envelope, json_string_eq, Envelope, Error, LineReader, Message};
use proptest::prelude::*;

/// The envelope of `text`, checked to borrow `text` itself (not a copy).
fn env(text: &str) -> Envelope<'_> {
    let e = envelope(text.as_bytes()).unwrap_or_else(|err| panic!("{text}: {err}"));
    for member in members(&e).into_iter().flatten() {
        assert!(within(member, text.as_bytes()), "{text}");
    }
    e
}

fn members<'a>(e: &Envelope<'a>) -> [Option<&'a [u8]>; 5] {
    [e.id, e.method, e.params, e.result, e.error]
}

/// `part` lies inside `whole`.
fn within(part: &[u8], whole: &[u8]) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}

fn b(s: &str) -> Option<&[u8]> {
    Some(s.as_bytes())
}

#[test]
fn every_kind() {
    let e = env(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#);
    assert_eq!(
        e,
        Envelope {
            kind: Some(Request),
            id: b("1"),
            method: b(r#""tools/call""#),
            params: b(r#"{"name":"x"}"#),
            result: None,
            error: None,
        }
    );
    let e = env(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(
        e,
        Envelope {
            kind: Some(Notification),
            method: b(r#""notifications/initialized""#),
            ..Envelope::default()
        }
    );
    let e = env(r#"{"jsonrpc":"2.0","id":"r1","result":{"tools":[]}}"#);
    assert_eq!(
        e,
        Envelope {
            kind: Some(Response),
            id: b(r#""r1""#),
            result: b(r#"{"tools":[]}"#),
            ..Envelope::default()
        }
    );
    let e = env(r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}"#);
    assert_eq!(
        e,
        Envelope {
            kind: Some(RpcKind::Error),
            id: b("9"),
            error: b(r#"{"code":-32601,"message":"no"}"#),
            ..Envelope::default()
        }
    );
}

#[test]
fn ids_of_every_type() {
    for id in [
        "0",
        "7",
        "-12",
        "123456789012345678901234567890",
        "-1.5e3",
        "0.25",
        "1E+2",
        r#""abc""#,
        r#""""#,
        r#""a\"b\\c\u00e9\ud83d\ude00""#,
        "\"é😀\"",
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
        let e = env(&text);
        assert_eq!((e.kind, e.id), (Some(Request), b(id)), "{text}");
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#);
        assert_eq!(env(&text).id, b(id), "{text}");
    }
    // An error response's id may be null (the 4 bytes `null`) or absent.
    let e = env(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    assert_eq!((e.kind, e.id), (Some(RpcKind::Error), b("null")));
    let e = env(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#);
    assert_eq!((e.kind, e.id), (Some(RpcKind::Error), None));
    assert_eq!(e.error, b(r#"{"code":-32700,"message":"Parse error"}"#));
}

#[test]
fn methods_keep_their_escapes() {
    let e = env(r#"{"jsonrpc":"2.0","id":1,"method":"tools\/c\u0061ll"}"#);
    assert_eq!(e.method, b(r#""tools\/c\u0061ll""#));
    assert!(json_string_eq(e.method.unwrap(), "tools/call"));
    assert!(!json_string_eq(e.method.unwrap(), "tools\\/call"));
    // Escaped member names count too.
    let e = env(r#"{"json\u0072pc":"2.0","\u0069d":2,"m\u0065thod":"x"}"#);
    assert_eq!(
        (e.kind, e.id, e.method),
        (Some(Request), b("2"), b(r#""x""#))
    );
}

#[test]
fn params_and_results_of_every_shape() {
    for params in ["{}", "[]", r#"{"a":[1,{"b":null}]}"#, r#"[1,"two",[3]]"#] {
        let text = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
        let e = env(&text);
        assert_eq!(
            (e.kind, e.params),
            (Some(Notification), b(params)),
            "{text}"
        );
    }
    for result in [
        "null",
        "true",
        "false",
        "0",
        "-2.5e-3",
        r#""s""#,
        "[]",
        "{}",
        r#"{"content":[{"type":"text","text":"}]"}]}"#,
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
        let e = env(&text);
        assert_eq!((e.kind, e.result), (Some(Response), b(result)), "{text}");
    }
}

/// Each member is there whatever the kind: a response may carry `params`.
#[test]
fn other_members_are_reported_as_they_are() {
    let e = env(r#"{"jsonrpc":"2.0","id":1,"result":2,"params":[3],"x":4}"#);
    assert_eq!(e.kind, Some(Response));
    assert_eq!((e.result, e.params), (b("2"), b("[3]")));
}

#[test]
fn the_last_of_duplicate_members_wins() {
    let e = env(
        r#"{"jsonrpc":"2.0","id":1,"method":"a","id":"two","method":"b","params":[],"params":{}}"#,
    );
    assert_eq!(e.kind, Some(Request));
    assert_eq!(
        (e.id, e.method, e.params),
        (b(r#""two""#), b(r#""b""#), b("{}"))
    );
    // As for the kind: a null id before a valid one is forgotten.
    let e = env(r#"{"jsonrpc":"2.0","id":null,"id":3,"result":[]}"#);
    assert_eq!((e.kind, e.id), (Some(Response), b("3")));
    let e = env(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"error":{"code":2,"message":"n"}}"#,
    );
    assert_eq!(e.error, b(r#"{"code":2,"message":"n"}"#));
}

#[test]
fn whitespace_inside_and_around() {
    let text = " \t\r\n{ \"jsonrpc\" : \"2.0\" ,\n \"id\" :\t7 , \"method\" : \"m\" ,\r\n \"params\" : [ 1 , { \"a\" : 2 } ] }\n\r\t ";
    let e = env(text);
    assert_eq!(e.kind, Some(Request));
    assert_eq!(e.id, b("7"));
    assert_eq!(e.method, b("\"m\""));
    assert_eq!(e.params, b("[ 1 , { \"a\" : 2 } ]"));
}

#[test]
fn deeply_nested_params() {
    let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{deep}}}}}"#);
    let e = env(&text);
    assert_eq!(e.kind, Some(Request));
    assert_eq!(e.params, Some(format!(r#"{{"a":{deep}}}"#).as_bytes()));
    let deeper = format!("{}{}", "[".repeat(500), "]".repeat(500));
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{deeper}}}"#);
    assert_eq!(env(&text).result, Some(deeper.as_bytes()));
}

#[test]
fn batches_have_no_envelope() {
    let e = env(r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#);
    assert_eq!(
        e,
        Envelope {
            kind: Some(Batch),
            ..Envelope::default()
        }
    );
}

#[test]
fn json_that_is_not_json_rpc_has_no_envelope() {
    for text in [
        "42",
        "null",
        r#""str""#,
        "{}",
        "[]",
        "[1]",
        r#"{"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
        r#"[{"jsonrpc":"2.0","method":"a"},1]"#,
    ] {
        assert_eq!(env(text), Envelope::default(), "{text}");
    }
}

#[test]
fn invalid_json_is_an_error() {
    for text in [
        &b""[..],
        b"   ",
        b"{",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"} x",
        b"{} {}",
        b"\"\xff\"",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\\x\"}",
        b"NaN",
    ] {
        assert_eq!(envelope(text), Err(Error::InvalidJson), "{text:?}");
    }
}

#[test]
fn json_string_eq_cases() {
    let yes: &[(&str, &str)] = &[
        (r#""tools/call""#, "tools/call"),
        (r#""tools\/call""#, "tools/call"),
        (r#""\u0074ools/call""#, "tools/call"),
        (r#""\u004A\u004a""#, "JJ"),
        (r#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{c}\n\r\t"),
        (r#""\ud83d\ude00""#, "\u{1F600}"),
        (r#""\uD83D\uDE00""#, "\u{1F600}"),
        (r#""a\u00e9\u20ACb""#, "aé€b"),
        ("\"é€😀\"", "é€😀"),
        (r#""""#, ""),
        (r#""\u0000""#, "\0"),
        (r#""\uffff""#, "\u{ffff}"),
    ];
    for &(token, text) in yes {
        assert!(
            json_string_eq(token.as_bytes(), text),
            "{token} == {text:?}"
        );
    }
    let no: &[(&[u8], &str)] = &[
        (br#""tools/call""#, "tools/cal"),
        (br#""tools/call""#, "tools/call "),
        (br#""tools/call""#, "Tools/call"),
        (br#""\ud83d""#, "\u{FFFD}"),
        (br#""\ude00""#, ""),
        (br#""\ud83d\ud83d""#, ""),
        (br#""\ude00\ud83d""#, ""),
        (br#""x" "#, "x"),
        (br#""x"x"#, "x"),
        (br#""x""x""#, "xx"),
        (b"x", "x"),
        (b"\"x", "x"),
        (b"", ""),
        (b"null", "null"),
        (b"7", "7"),
        (b"[\"x\"]", "x"),
        (b"\"\\u00g0\"", ""),
        (b"\"\\q\"", "q"),
        (b"\"\xc3\"", ""),
        (b"\"a\nb\"", "a\nb"),
    ];
    for &(token, text) in no {
        assert!(!json_string_eq(token, text), "{token:?} != {text:?}");
    }
}

// ---- the reader's envelope ----------------------------------------------

fn jsonrpc_reader() -> LineReader {
    let mut r = LineReader::new();
    r.set_jsonrpc(true);
    r
}

/// The data of the next item (panics if none), and the envelope the reader
/// gives right after, checked to point into that data.
fn next_with_envelope(r: &mut LineReader) -> (Vec<u8>, Option<RpcKind>, OwnedEnvelope) {
    let m = r.next_message().expect("an item");
    let rpc = match m {
        Message::Json { rpc, .. } => rpc,
        _ => None,
    };
    let data = m.data().unwrap_or_default();
    let (at, len) = (data.as_ptr() as usize, data.len());
    let data = data.to_vec();
    let e = r.envelope();
    for member in members(&e).into_iter().flatten() {
        let p = member.as_ptr() as usize;
        assert!(
            p >= at && p + member.len() <= at + len,
            "inside the message"
        );
    }
    (data, rpc, OwnedEnvelope::from(e))
}

#[derive(Debug, PartialEq, Eq)]
struct OwnedEnvelope(Option<RpcKind>, [Option<Vec<u8>>; 5]);

impl From<Envelope<'_>> for OwnedEnvelope {
    fn from(e: Envelope<'_>) -> Self {
        OwnedEnvelope(e.kind, members(&e).map(|m| m.map(<[u8]>::to_vec)))
    }
}

#[test]
fn the_reader_gives_the_envelope_of_the_message_just_returned() {
    let mut r = jsonrpc_reader();
    let stream = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
        "  {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}  \n",
        "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]\n",
        "{\"id\":1}\n",
        "not json\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"last\",\"params\":[1]}",
    );
    r.feed(stream.as_bytes()).unwrap();
    assert_eq!(r.envelope(), Envelope::default(), "nothing returned yet");
    for _ in 0..4 {
        let (data, rpc, e) = next_with_envelope(&mut r);
        assert_eq!(e, OwnedEnvelope::from(envelope(&data).unwrap()));
        assert_eq!(e.0, rpc);
    }
    let (_, _, e) = next_with_envelope(&mut r); // a parse error
    assert_eq!(e, OwnedEnvelope::from(Envelope::default()));
    assert!(r.next_message().is_none());
    assert_eq!(r.envelope(), Envelope::default(), "no item, no envelope");
    r.finish().unwrap();
    let (data, rpc, e) = next_with_envelope(&mut r);
    assert_eq!(rpc, Some(Notification));
    assert_eq!(e.1[1].as_deref(), Some(&b"\"last\""[..]));
    assert_eq!(e, OwnedEnvelope::from(envelope(&data).unwrap()));
}

#[test]
fn any_other_call_forgets_the_envelope() {
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    type Call = fn(&mut LineReader);
    let calls: [Call; 6] = [
        |r| r.feed(b"[").unwrap(),
        |r| r.feed(&[b' '; 100]).unwrap(),
        |r| r.finish().unwrap(),
        |r| assert!(r.next_message().is_none()),
        |r| r.set_max_line_len(None),
        |r| r.set_jsonrpc(true),
    ];
    for call in calls {
        let mut r = jsonrpc_reader();
        r.feed(line).unwrap();
        r.next_message().unwrap();
        assert_eq!(r.envelope().kind, Some(Request));
        assert_eq!(
            r.envelope().kind,
            Some(Request),
            "reading it changes nothing"
        );
        call(&mut r);
        assert_eq!(r.envelope(), Envelope::default());
    }
}

#[test]
fn without_classification_there_is_no_envelope() {
    let mut r = LineReader::new();
    r.feed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    assert!(r.next_message().is_some());
    assert_eq!(r.envelope(), Envelope::default());
}

#[test]
fn skipped_lines_leave_the_envelope_of_the_message_returned() {
    let mut r = jsonrpc_reader();
    r.set_skip_invalid(true);
    r.feed(b"{\"a\":1}\nbad\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":0}\n{}\n")
        .unwrap();
    let (_, rpc, e) = next_with_envelope(&mut r);
    assert_eq!(rpc, Some(Response));
    assert_eq!(e.1[0].as_deref(), Some(&b"5"[..]));
    assert!(r.next_message().is_none());
}

/// Byte by byte, with the buffer compacted and grown between messages: the
/// envelope is always that of the message just returned.
#[test]
fn chunking_does_not_change_the_envelope() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"k":"v"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":[1,2,3]}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m"}}"#,
    ];
    let stream: String = lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .repeat(20);
    let mut r = jsonrpc_reader();
    let mut seen = 0;
    for byte in stream.as_bytes() {
        r.feed(std::slice::from_ref(byte)).unwrap();
        while let Some(m) = r.next_message() {
            let line = m.data().unwrap().to_vec();
            assert_eq!(line, lines[seen % 3].as_bytes());
            assert_eq!(r.envelope(), envelope(&line).unwrap());
            seen += 1;
        }
    }
    assert_eq!(seen, 60);
}

// ---- properties ---------------------------------------------------------

/// JSON whitespace, without `\n` (the lines go through a reader too).
fn ws() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![Just(""), Just(" "), Just("\t"), Just("\r")],
        0..3,
    )
    .prop_map(|v| v.concat())
}

/// A JSON string token for `s`, each character written raw or escaped in
/// one of the ways JSON allows (chosen by `style`).
fn string_token(s: &str, style: &[u8]) -> String {
    let mut out = String::from("\"");
    for (k, c) in s.chars().enumerate() {
        let pick = style.get(k % style.len().max(1)).copied().unwrap_or(0) % 4;
        let must = matches!(c, '"' | '\\') || (c as u32) < 0x20;
        match (pick, c) {
            (0, _) if !must => out.push(c),
            (1, '/') => out.push_str("\\/"),
            (1, '\n') => out.push_str("\\n"),
            (1, '"') => out.push_str("\\\""),
            (1, '\\') => out.push_str("\\\\"),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if pick == 3 {
                        out.push_str(&format!("\\u{unit:04X}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/_]{0,12}",
        "\\PC{0,8}",
        Just("tools/call".to_string()),
        Just("é€😀\"\\/\n".to_string()),
    ]
}

fn string() -> impl Strategy<Value = (String, String)> {
    (text(), prop::collection::vec(any::<u8>(), 1..6))
        .prop_map(|(s, style)| (string_token(&s, &style), s))
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,4})?([eE][+-]?[0-9]{1,3})?",
    ]
}

/// Any JSON value, compact, its strings escaped in random ways.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        number(),
        string().prop_map(|(token, _)| token),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((string(), inner), 0..4).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|((k, _), v)| format!("{k}:{v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

fn container() -> impl Strategy<Value = String> {
    value().prop_map(|v| {
        if v.starts_with('{') || v.starts_with('[') {
            v
        } else {
            format!("[{v}]")
        }
    })
}

/// A member name, written plainly or with an escape.
fn name(n: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 1..4).prop_map(move |style| string_token(n, &style))
}

/// One JSON-RPC message built from random parts.
#[derive(Debug, Clone)]
struct Built {
    text: String,
    kind: RpcKind,
    /// The tokens of `id`, `method`, `params`, `result`, `error`.
    parts: [Option<String>; 5],
    /// The method's value, unescaped.
    method: Option<String>,
}

fn message() -> impl Strategy<Value = Built> {
    let id = prop_oneof![number(), string().prop_map(|(t, _)| t)];
    let error_id = prop_oneof![
        3 => id.clone().prop_map(Some),
        1 => Just(Some("null".to_string())),
        1 => Just(None),
    ];
    let error = (any::<i32>(), string(), prop::option::of(value())).prop_map(
        |(code, (message, _), data)| match data {
            Some(d) => format!(r#"{{"data":{d},"message":{message},"code":{code}}}"#),
            None => format!(r#"{{"code":{code},"message":{message}}}"#),
        },
    );
    let shape = prop_oneof![
        (id.clone(), string(), prop::option::of(container())).prop_map(|(id, m, p)| (
            Request,
            [Some(id), Some(m.0), p, None, None],
            Some(m.1)
        )),
        (string(), prop::option::of(container())).prop_map(|(m, p)| (
            Notification,
            [None, Some(m.0), p, None, None],
            Some(m.1)
        )),
        (id, value()).prop_map(|(id, r)| (Response, [Some(id), None, None, Some(r), None], None)),
        (error_id, error).prop_map(|(id, e)| (
            RpcKind::Error,
            [id, None, None, None, Some(e)],
            None
        )),
    ];
    let names = (
        name("jsonrpc"),
        (
            name("id"),
            name("method"),
            name("params"),
            name("result"),
            name("error"),
        ),
    );
    let extras = prop::collection::vec(("_[a-z]{0,5}", value()), 0..3);
    let gaps = prop::collection::vec(ws(), 64);
    (shape, names, extras, gaps).prop_flat_map(|((kind, parts, method), names, extras, gaps)| {
        let (jsonrpc, (id, m, params, result, error)) = names;
        let member_names = [id, m, params, result, error];
        let mut members = vec![(jsonrpc, "\"2.0\"".to_string())];
        for (name, part) in member_names.into_iter().zip(&parts) {
            if let Some(token) = part {
                members.push((name, token.clone()));
            }
        }
        for (k, v) in extras {
            members.push((format!("\"{k}\""), v));
        }
        Just(members).prop_shuffle().prop_map(move |members| {
            let mut gap = gaps.iter().cycle();
            let mut text = format!("{}{{", gap.next().unwrap());
            for (k, (name, value)) in members.iter().enumerate() {
                if k > 0 {
                    text.push(',');
                }
                for piece in [name.as_str(), ":", value.as_str(), ""] {
                    text.push_str(gap.next().unwrap());
                    text.push_str(piece);
                }
            }
            text.push('}');
            text.push_str(gap.next().unwrap());
            Built {
                text,
                kind,
                parts: parts.clone(),
                method: method.clone(),
            }
        })
    })
}

/// What the reader says about `line` (trimmed by it), and the envelope it
/// gives then.
fn read_line(line: &str) -> (Option<RpcKind>, OwnedEnvelope) {
    let mut r = jsonrpc_reader();
    r.feed(line.as_bytes()).unwrap();
    r.feed(b"\n").unwrap();
    let (data, rpc, e) = next_with_envelope(&mut r);
    assert_eq!(data, line.trim_matches([' ', '\t', '\r']).as_bytes());
    assert!(r.next_message().is_none());
    (rpc, e)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn each_member_is_its_part_on_the_wire(built in message()) {
        let Built { text, kind, parts, method } = built;
        let e = envelope(text.as_bytes()).unwrap();
        prop_assert_eq!(e.kind, Some(kind));
        for (member, part) in members(&e).iter().zip(&parts) {
            prop_assert_eq!(*member, part.as_deref().map(str::as_bytes));
            if let Some(m) = member {
                prop_assert!(within(m, text.as_bytes()));
            }
        }
        if let (Some(token), Some(method)) = (e.method, &method) {
            prop_assert!(json_string_eq(token, method));
            prop_assert_eq!(&serde_json::from_slice::<String>(token).unwrap(), method);
        }
        let (rpc, from_reader) = read_line(&text);
        prop_assert_eq!(rpc, Some(kind));
        prop_assert_eq!(from_reader, OwnedEnvelope::from(e));
    }

    #[test]
    fn string_tokens_equal_their_text((token, text) in string()) {
        prop_assert!(json_string_eq(token.as_bytes(), &text));
        prop_assert_eq!(&serde_json::from_str::<String>(&token).unwrap(), &text);
        let longer = format!("{text}x");
        prop_assert!(!json_string_eq(token.as_bytes(), &longer));
        if let Some((cut, _)) = text.char_indices().last() {
            prop_assert!(!json_string_eq(token.as_bytes(), &text[..cut]));
        }
    }
}

/// Members that make a text almost a JSON-RPC message, or not quite.
fn near_member() -> impl Strategy<Value = (&'static str, String)> {
    let key = prop::sample::select(
        &[
            "jsonrpc", "jsonrpc", "id", "id", "method", "method", "params", "result", "error",
            "code", "message", "x",
        ][..],
    );
    let val = prop_oneof![
        4 => Just("\"2.0\"".to_string()),
        1 => Just("\"1.0\"".to_string()),
        1 => Just("1".to_string()),
        1 => Just("-2.5".to_string()),
        1 => Just("null".to_string()),
        1 => Just("true".to_string()),
        1 => Just("\"m\"".to_string()),
        1 => Just("{}".to_string()),
        1 => Just("[]".to_string()),
        2 => Just(r#"{"code":1,"message":"m"}"#.to_string()),
        1 => Just(r#"{"code":1.5,"message":"m"}"#.to_string()),
    ];
    (key, val)
}

fn near_object() -> impl Strategy<Value = (String, Vec<(&'static str, String)>)> {
    prop::collection::vec(near_member(), 0..7).prop_map(|members| {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        (format!("{{{}}}", body.join(",")), members)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Whatever the text, the envelope's kind is the reader's classification
    /// of the same line, and its members are the last of each name exactly
    /// when the text is one message.
    #[test]
    fn the_kind_is_always_the_readers(
        (object, members_in) in near_object(),
        batch in prop::collection::vec(near_object(), 0..3),
        is_batch in any::<bool>(),
    ) {
        let text = if is_batch {
            let elements: Vec<String> = batch.into_iter().map(|(o, _)| o).collect();
            format!("[{}]", elements.join(","))
        } else {
            object
        };
        let e = envelope(text.as_bytes()).unwrap();
        let (rpc, from_reader) = read_line(&text);
        prop_assert_eq!(e.kind, rpc);
        prop_assert_eq!(&from_reader, &OwnedEnvelope::from(e));
        let single = matches!(e.kind, Some(Request | Notification | Response | RpcKind::Error));
        let last = |name: &str| {
            members_in.iter().rev().find(|(k, _)| *k == name).map(|(_, v)| v.as_bytes())
        };
        let want = ["id", "method", "params", "result", "error"]
            .map(|n| if single { last(n) } else { None });
        prop_assert_eq!(members(&e), want);
    }
}
