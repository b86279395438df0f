//! The `.expected` files: a case's settings and the items it must yield.

use mcp_stdio::{RpcKind, DEFAULT_MAX_LINE_LEN};

use crate::catalogue::{Case, Source};
use crate::items::{Kind, Want};
use crate::notation::{check_line, decode};

fn rpc_kind(name: &str) -> Result<RpcKind, String> {
    Ok(match name {
        "request" => RpcKind::Request,
        "notification" => RpcKind::Notification,
        "response" => RpcKind::Response,
        "error" => RpcKind::Error,
        "batch" => RpcKind::Batch,
        _ => return Err(format!("unknown rpc kind {name:?}")),
    })
}

fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Parses a `.expected` file (without its input).
pub fn parse_expected(name: &str, text: &str) -> Result<(Case, Option<String>), String> {
    let mut case = Case {
        name: name.to_string(),
        source: Source::Recipe(Vec::new()),
        input_len: 0,
        input: Vec::new(),
        max_line_len: DEFAULT_MAX_LINE_LEN,
        skip_invalid: false,
        jsonrpc: false,
        finish: true,
        want: Vec::new(),
    };
    let mut input_from = None;
    for (n, line) in text.lines().enumerate() {
        let err = |e: String| format!("{name}.expected line {}: {e}", n + 1);
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        check_line(line).map_err(err)?;
        if let Some(setting) = line.strip_prefix("# ") {
            if !case.want.is_empty() {
                return Err(err("settings come before the items".into()));
            }
            let (key, value) = match setting.split_once(": ") {
                Some((k, v)) => (k, Some(v)),
                None => (setting, None),
            };
            match (key, value) {
                ("jsonrpc", None) => case.jsonrpc = true,
                ("skip_invalid", None) => case.skip_invalid = true,
                ("finish", Some("no")) => case.finish = false,
                ("finish", Some("yes")) => case.finish = true,
                ("max_line_len", Some("none")) => case.max_line_len = usize::MAX,
                ("max_line_len", Some(v)) => {
                    case.max_line_len = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| err(format!("bad limit {v:?}")))?
                }
                ("input", Some(v)) => input_from = Some(v.to_string()),
                _ => return Err(err(format!("unknown setting {setting:?}"))),
            }
            continue;
        }
        let (head, data) = line.split_once(' ').unwrap_or((line, ""));
        let (kind, rpc) = match head.split_once(':') {
            Some((k, r)) => (k, Some(rpc_kind(r).map_err(err)?)),
            None => (head, None),
        };
        if kind == "too_long" {
            let full: usize = data
                .parse()
                .map_err(|_| err("too_long takes the line's full raw length".into()))?;
            if full <= case.max_line_len {
                return Err(err(format!("a line of {full} bytes is not over the limit")));
            }
            case.want.push(Want::TooLong { full });
            continue;
        }
        let bytes = decode(data).map_err(err)?;
        if bytes.is_empty()
            || is_json_ws(bytes[0])
            || is_json_ws(*bytes.last().unwrap())
            || bytes.contains(&b'\n')
        {
            return Err(err("item data is a trimmed, non-empty line".into()));
        }
        let kind = match kind {
            "json" if case.jsonrpc == rpc.is_some() => Kind::Json(rpc),
            "json" => return Err(err("json items have an rpc kind iff `# jsonrpc`".into())),
            "parse_error" if !case.skip_invalid && rpc.is_none() => Kind::ParseError,
            "invalid_jsonrpc" if case.jsonrpc && !case.skip_invalid && rpc.is_none() => {
                Kind::InvalidJsonRpc
            }
            _ => return Err(err(format!("item {head:?} impossible with these settings"))),
        };
        if bytes.len() > case.max_line_len {
            return Err(err("an item longer than the limit".into()));
        }
        case.want.push(Want::Item(kind, bytes));
    }
    Ok((case, input_from))
}
