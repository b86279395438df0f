//! A small MCP server on the safe Rust API, serving on its own stdin and
//! stdout: the short twin of `examples/mcp_server.c`.
//!
//! ```sh
//! cargo build --example server --example host
//! target/debug/examples/host target/debug/examples/server
//! ```
//!
//! `Connection::open_stdio(true)` takes descriptors 0 and 1 and guards
//! stdout: the connection writes to a private copy of descriptor 1, and
//! descriptor 1 itself now goes to stderr, so a stray `println!` (there is
//! one below, on purpose) or a library that logs to stdout cannot corrupt
//! the protocol stream. Everything else this program says goes to stderr.
//!
//! MCP 2026-07-28 (`server/discover`, and every request's version and client
//! capabilities in `params._meta`), and the `initialize` handshake of
//! 2025-11-25, 2025-06-18 and 2024-11-05 for older clients. Tools: `echo`
//! `{text}` and `add` `{a, b}`; bad arguments are a tool result with
//! `isError` (a -32602 error before 2025-11-25). A line that is not JSON
//! gets -32700, JSON that is not JSON-RPC or a batch -32600, an unknown
//! method -32601. At the end of stdin it answers what it read and exits 0.
//! Left out, unlike the C server: the limit on error replies to a run of bad
//! lines, and numbers beyond what `f64` holds exactly.

#[cfg(os_io)]
fn main() -> std::process::ExitCode {
    use mcp::{error, reply_line, serve, LEGACY};
    use mcp_stdio::{Connection, Event, InvalidKind, RpcKind};
    use std::process::ExitCode;

    let mut conn = match Connection::open_stdio(true) {
        Ok(conn) => conn,
        Err(e) => {
            eprintln!("server: cannot serve on stdin and stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("server: this println! lands on stderr: the guard keeps stdout for the protocol");
    let tx = conn.sender();
    let mut legacy = LEGACY[0]; // what `initialize` agreed; before it, the newest
    loop {
        let reply = match conn.next_event(None) {
            Ok(Some(Event::Closed)) => break,
            Ok(Some(Event::Message { envelope, .. })) => match envelope.kind {
                Some(RpcKind::Request) => {
                    let id = envelope.id.unwrap_or(b"null");
                    let params = envelope.params.and_then(|p| serde_json::from_slice(p).ok());
                    let method = envelope.method.and_then(|m| serde_json::from_slice(m).ok());
                    let answer = serve(method.unwrap_or_default(), params, &mut legacy);
                    Some(reply_line(Some(id), answer))
                }
                Some(RpcKind::Batch) => {
                    Some(reply_line(None, Err(error(-32600, "Invalid Request"))))
                }
                _ => None, // notifications and responses need no reply
            },
            Ok(Some(Event::Invalid { kind, .. })) => {
                let (code, message) = match kind {
                    InvalidKind::InvalidJsonRpc => (-32600, "Invalid Request"),
                    _ => (-32700, "Parse error"), // not JSON, or too long
                };
                Some(reply_line(None, Err(error(code, message))))
            }
            Ok(_) => None,
            Err(e) => {
                eprintln!("server: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(line) = reply {
            if let Err(e) = tx.send(&line) {
                eprintln!("server: cannot send: {e}");
            }
        }
    }
    eprintln!("server: end of input, exiting");
    ExitCode::SUCCESS
}

/// The MCP of it: one request's answer, and the reply lines.
#[cfg(os_io)]
mod mcp {
    use serde_json::{json, Value};

    /// The protocol version without a handshake, and the handshake's versions.
    const MODERN: &str = "2026-07-28";
    pub const LEGACY: [&str; 3] = ["2025-11-25", "2025-06-18", "2024-11-05"];

    /// A JSON-RPC error object.
    pub fn error(code: i64, message: &str) -> Value {
        json!({"code": code, "message": message})
    }

    /// The response to request `id` (none when it could not be read): the
    /// id token as the request had it, byte for byte.
    pub fn reply_line(id: Option<&[u8]>, answer: Result<Value, Value>) -> Vec<u8> {
        let mut line = br#"{"jsonrpc":"2.0","#.to_vec();
        if let Some(id) = id {
            line.extend_from_slice(b"\"id\":");
            line.extend_from_slice(id);
            line.push(b',');
        }
        let (member, value) = match answer {
            Ok(result) => ("result", result),
            Err(error) => ("error", error),
        };
        line.extend_from_slice(format!("\"{member}\":{value}}}").as_bytes());
        line
    }

    /// The answer to one request: its result, or its error object.
    pub fn serve(
        method: String,
        params: Option<Value>,
        legacy: &mut &'static str,
    ) -> Result<Value, Value> {
        let params = params.unwrap_or(Value::Null);
        let meta = &params["_meta"];
        let modern = match &meta["io.modelcontextprotocol/protocolVersion"] {
            Value::Null => false,
            v if v == MODERN && meta["io.modelcontextprotocol/clientCapabilities"].is_object() => {
                true
            }
            v if v == MODERN => return Err(error(-32602, "_meta must declare clientCapabilities")),
            _ => {
                let mut e = error(-32022, "Unsupported protocol version");
                e["data"] = json!({"supported": [MODERN], "requested": meta["io.modelcontextprotocol/protocolVersion"]});
                return Err(e);
            }
        };
        let info = json!({"name": "mcp-stdio-rust-server", "version": env!("CARGO_PKG_VERSION")});
        let mut result = match method.as_str() {
            "server/discover" => json!({
                "supportedVersions": [MODERN, LEGACY[0], LEGACY[1], LEGACY[2]],
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": info,
            }),
            "initialize" if !modern => {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                *legacy = LEGACY
                    .into_iter()
                    .find(|v| *v == asked)
                    .unwrap_or(LEGACY[0]);
                json!({
                    "protocolVersion": *legacy,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": info,
                })
            }
            "ping" if !modern => json!({}),
            "tools/list" => json!({"tools": [
                {"name": "echo", "description": "Returns the given text unchanged.",
                 "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                 "required": ["text"]}},
                {"name": "add", "description": "Adds two numbers.",
                 "inputSchema": {"type": "object",
                                 "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                                 "required": ["a", "b"]}},
            ]}),
            "tools/call" => {
                let args = &params["arguments"];
                let text = match params["name"].as_str() {
                    Some("echo") => args["text"]
                        .as_str()
                        .map(str::to_owned)
                        .ok_or("echo: \"text\" (a string) is required"),
                    Some("add") => match (args["a"].as_f64(), args["b"].as_f64()) {
                        (Some(a), Some(b)) if (a + b).is_finite() => Ok((a + b).to_string()),
                        (Some(_), Some(_)) => Err("add: the sum is not a finite number"),
                        _ => Err("add: \"a\" and \"b\" (numbers) are required"),
                    },
                    _ => return Err(error(-32602, "Unknown tool")),
                };
                // Since 2025-11-25 a tool's failure is its result (the model can
                // read it); before, bad arguments were -32602.
                if text.is_err() && !modern && *legacy != LEGACY[0] {
                    return Err(error(-32602, "Invalid params"));
                }
                let (text, is_error) = text.map_or_else(|e| (e.to_owned(), true), |t| (t, false));
                json!({"content": [{"type": "text", "text": text}], "isError": is_error})
            }
            _ => return Err(error(-32601, "Method not found")),
        };
        if modern {
            // 2026-07-28: every result says it is complete and names the server.
            result["resultType"] = json!("complete");
            result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": info});
            if matches!(method.as_str(), "server/discover" | "tools/list") {
                // Cacheable results say for how long, and for whom.
                result["ttlMs"] = json!(3_600_000);
                result["cacheScope"] = json!("public");
            }
        }
        Ok(result)
    }
}

#[cfg(not(os_io))]
fn main() {
    eprintln!("server: serving on stdin and stdout needs a Unix system for now");
    std::process::exit(2);
}
