//! JSON-RPC 2.0 classification (with MCP's rule that request ids are strings or numbers).

mod common;

use common::{read_whole, Item, Settings};
use mcp_stdio::RpcKind::{self, *};

/// The classification of one line: `Some(kind)`, or `None` for an invalid JSON-RPC item.
fn classify(line: &str) -> Option<RpcKind> {
    let s = Settings {
        jsonrpc: true,
        ..Settings::default()
    };
    match read_whole(s, format!("{line}\n").as_bytes()).as_slice() {
        [Item::Json(data, Some(kind))] => {
            assert_eq!(data.as_slice(), line.as_bytes());
            Some(*kind)
        }
        [Item::InvalidJsonRpc(data)] => {
            assert_eq!(data.as_slice(), line.as_bytes());
            None
        }
        other => panic!("{:.200}: {:.200}", line, format!("{other:?}")),
    }
}

#[test]
fn requests() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"abc","method":"ping","params":{}}"#,
        r#"{"method":"x","params":[1,2],"id":-1.5e3,"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}"#,
        r#"{"json\u0072pc":"2\u002e0","\u0069d":1,"method":"m","extra":{"k":[1]}}"#,
        r#" { "jsonrpc" : "2.0" , "id" : 0 , "method" : "" } "#.trim(),
    ] {
        assert_eq!(classify(line), Some(Request), "{line}");
    }
}

#[test]
fn notifications() {
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
    ] {
        assert_eq!(classify(line), Some(Notification), "{line}");
    }
}

#[test]
fn responses() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"x","result":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":[1,"two",{"three":3}]}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":false,"meta":1}"#,
    ] {
        assert_eq!(classify(line), Some(Response), "{line}");
    }
}

#[test]
fn error_responses() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"x":1}}}"#,
        r#"{"jsonrpc":"2.0","id":"s","error":{"message":"m","code":0}}"#,
    ] {
        assert_eq!(classify(line), Some(Error), "{line}");
    }
}

/// MCP 2025-11-25 and later type an error response's id `id?: RequestId`:
/// when the request's id could not be read it is left out (the Rust SDK
/// does so). A success response still needs its id.
#[test]
fn an_error_response_may_omit_its_id() {
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#),
        Some(Error)
    );
    assert_eq!(
        classify(r#"[{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}]"#),
        Some(Batch)
    );
    assert_eq!(classify(r#"{"jsonrpc":"2.0","result":1}"#), None);
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","error":{"code":1}}"#),
        None,
        "still a whole error object"
    );
}

#[test]
fn batches() {
    assert_eq!(
        classify(r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#),
        Some(Batch)
    );
    assert_eq!(
        classify(
            r#"[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":""}}]"#
        ),
        Some(Batch)
    );
    assert_eq!(classify("[]"), None, "empty batch");
    assert_eq!(
        classify(r#"[{"jsonrpc":"2.0","method":"a"},1]"#),
        None,
        "one bad element spoils the batch"
    );
    assert_eq!(
        classify(r#"[[{"jsonrpc":"2.0","method":"a"}]]"#),
        None,
        "nested batch"
    );
}

#[test]
fn not_json_rpc() {
    for line in [
        "42",
        "\"str\"",
        "null",
        "{}",
        r#"{"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
        r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0 ","id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","result":1}"#,
        r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1e3,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#,
    ] {
        assert_eq!(classify(line), None, "{line}");
    }
}

#[test]
fn the_last_of_duplicate_members_wins() {
    assert_eq!(
        classify(r#"{"jsonrpc":"1.0","jsonrpc":"2.0","method":"m"}"#),
        Some(Notification)
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","jsonrpc":"1.0","method":"m"}"#),
        None
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","id":null,"id":1,"method":"m"}"#),
        Some(Request)
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m","code":7}}"#),
        Some(Error)
    );
}

#[test]
fn classification_works_at_any_depth() {
    let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{deep}}}}}"#);
    assert_eq!(classify(&line), Some(Request));
    let deeper = format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000));
    let line = format!(r#"{{"jsonrpc":"2.0","id":"z","result":{deeper}}}"#);
    assert_eq!(classify(&line), Some(Response));
    // Brackets and quotes inside strings do not confuse the skipping.
    let line = r#"{"jsonrpc":"2.0","params":{"s":"}]\"{["},"method":"m"}"#;
    assert_eq!(classify(line), Some(Notification));
}

#[test]
fn invalid_json_rpc_lines_are_dropped_with_the_skip_flag() {
    let s = Settings {
        jsonrpc: true,
        skip_invalid: true,
        ..Settings::default()
    };
    let stream = b"{}\nnot json\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n";
    assert_eq!(
        read_whole(s, stream),
        [Item::Json(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}".to_vec(),
            Some(Notification)
        )]
    );
}
