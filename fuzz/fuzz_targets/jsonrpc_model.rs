//! JSON-RPC classification (`set_jsonrpc(true)`) against an independent model
//! written from docs/contract.md (§JSON-RPC: messages, §JSON-RPC: kinds,
//! §JSON-RPC: error response id) on top of `serde_json::Value`: every message
//! must be an object with `"jsonrpc": "2.0"` (names and values compared after
//! unescaping; serde_json's map keeps the last of duplicate names, as the
//! contract says), then
//! - request: `method` string, `id` string or number, `params` absent, object
//!   or array, no `result`/`error`;
//! - notification: `method` string, no `id`, `params` absent/object/array,
//!   no `result`/`error`;
//! - response: `id` string or number, `result` (any value), no `error`, no `method`;
//! - error: `id` string, number, null or absent (absent: MCP 2025-11-25 and
//!   later), `error` an object with an integer `code` (a number written
//!   without fraction or exponent, as Python's `json.loads` makes an `int`)
//!   and a string `message`, no `result`, no `method`;
//! - batch: a non-empty array whose every element is one of the above.
//!
//! `arbitrary_precision` keeps numbers as their text (so `1e999` is a number
//! and `1.0` is not an integer). Lines serde_json cannot make a `Value` of
//! (a lone surrogate escape in a string) are not compared; nesting deeper
//! than serde_json's default limit is parsed again with the limit lifted, on
//! a thread with a big stack.
//!
//! The whole input is a stream; each line's item is compared. So is each
//! line's envelope (docs/contract.md §JSON-RPC: envelope): the same kind, and
//! for one message each of `id`, `method`, `params`, `result` and `error`
//! present exactly when the model's object has it, its bytes being a JSON
//! text whose value is the model's (the last of duplicates); no member for
//! anything else. `json_string_eq` of the method token against the model's
//! unescaped string must hold.

#![no_main]

mod common;

use common::{read_whole, Item, Settings};
use libfuzzer_sys::fuzz_target;
use mcp_stdio::{envelope, json_string_eq, RpcKind};
use serde::Deserialize;
use serde_json::{Map, Value};

fn parse(line: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => Some(v),
        Err(e) if e.to_string().contains("recursion limit") => {
            let line = line.to_vec();
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || {
                    let mut de = serde_json::Deserializer::from_slice(&line);
                    de.disable_recursion_limit();
                    let v = Value::deserialize(&mut de)
                        .ok()
                        .filter(|_| de.end().is_ok());
                    // Only the top level matters: drop the deep value here, on the big stack.
                    v.map(|v| match v {
                        Value::Object(m) => Value::Object(shallow(m)),
                        Value::Array(a) => Value::Array(
                            a.into_iter()
                                .map(|e| match e {
                                    Value::Object(m) => Value::Object(shallow(m)),
                                    other => flat(other),
                                })
                                .collect(),
                        ),
                        other => other,
                    })
                })
                .unwrap()
                .join()
                .unwrap()
        }
        Err(_) => None,
    }
}

/// `m` with every member's value replaced by a value of the same type,
/// keeping what classification reads (strings, numbers, `error`'s members).
fn shallow(m: Map<String, Value>) -> Map<String, Value> {
    m.into_iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("error", Value::Object(e)) => {
                    Value::Object(e.into_iter().map(|(k, v)| (k, flat(v))).collect())
                }
                (_, v) => flat(v),
            };
            (k, v)
        })
        .collect()
}

fn flat(v: Value) -> Value {
    match v {
        Value::Object(_) => Value::Object(Map::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        other => other,
    }
}

fn is_integer(v: &Value) -> bool {
    matches!(v, Value::Number(n) if !n.to_string().contains(['.', 'e', 'E']))
}

fn model_message(v: &Value) -> Option<RpcKind> {
    let m = v.as_object()?;
    if m.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return None;
    }
    let id = m.get("id");
    let id_string_or_number = matches!(id, Some(Value::String(_) | Value::Number(_)));
    let params_ok = matches!(
        m.get("params"),
        None | Some(Value::Object(_) | Value::Array(_))
    );
    let has_result = m.contains_key("result");
    let has_error = m.contains_key("error");
    match m.get("method") {
        Some(Value::String(_)) => {
            if has_result || has_error || !params_ok {
                None
            } else if id.is_none() {
                Some(RpcKind::Notification)
            } else if id_string_or_number {
                Some(RpcKind::Request)
            } else {
                None
            }
        }
        Some(_) => None,
        None if has_result && !has_error && id_string_or_number => Some(RpcKind::Response),
        // An error response's id may also be null or absent (§JSON-RPC: error response id).
        None if has_error
            && !has_result
            && matches!(
                id,
                None | Some(Value::Null | Value::String(_) | Value::Number(_))
            ) =>
        {
            let e = m.get("error")?.as_object()?;
            let ok = e.get("code").is_some_and(is_integer)
                && matches!(e.get("message"), Some(Value::String(_)));
            ok.then_some(RpcKind::Error)
        }
        None => None,
    }
}

fn model_classify(v: &Value) -> Option<RpcKind> {
    match v {
        Value::Array(a) if !a.is_empty() => a
            .iter()
            .all(|e| model_message(e).is_some())
            .then_some(RpcKind::Batch),
        _ => model_message(v),
    }
}

fuzz_target!(|stream: &[u8]| {
    let s = Settings {
        max_line_len: None,
        skip_invalid: false,
        jsonrpc: true,
    };
    for item in read_whole(s, stream) {
        let (line, got) = match &item {
            Item::Json(line, rpc) => (line, *rpc),
            Item::InvalidJsonRpc(line) => (line, None),
            _ => continue,
        };
        let Some(v) = parse(line) else { continue };
        let want = model_classify(&v);
        assert_eq!(
            got,
            want,
            "line {:?}: reader {item:?}, model {want:?}",
            String::from_utf8_lossy(line)
        );
        if matches!(item, Item::Json(..)) {
            assert!(got.is_some(), "a message without an rpc kind");
        }
        check_envelope(line, &v, want);
    }
});

/// The envelope of `line` against the model's value `v` of kind `want`.
fn check_envelope(line: &[u8], v: &Value, want: Option<RpcKind>) {
    let e = envelope(line).expect("a line the model parsed is JSON");
    assert_eq!(
        e.kind,
        want,
        "envelope kind of {:?}",
        String::from_utf8_lossy(line)
    );
    let members = [
        ("id", e.id),
        ("method", e.method),
        ("params", e.params),
        ("result", e.result),
        ("error", e.error),
    ];
    let object = match (want, v) {
        (Some(kind), Value::Object(m)) if kind != RpcKind::Batch => m,
        _ => {
            for (name, got) in members {
                assert!(got.is_none(), "{name} of a non-message");
            }
            return;
        }
    };
    for (name, got) in members {
        match (object.get(name), got) {
            (None, None) => {}
            (Some(model), Some(bytes)) => {
                let mut value = parse(bytes).expect("a member is one JSON text");
                if serde_json::from_slice::<Value>(line).is_err() {
                    // Deeper than serde_json's limit: `parse` kept only the
                    // shape of each member (`shallow`); compare that.
                    value = shallow(Map::from_iter([(name.to_string(), value)]))
                        .remove(name)
                        .unwrap();
                }
                assert_eq!(&value, model, "member {name}");
                if let (Value::String(text), "method") = (model, name) {
                    assert!(json_string_eq(bytes, text), "method {text:?}");
                }
            }
            (model, got) => panic!("member {name}: model {model:?}, envelope {got:?}"),
        }
    }
}
