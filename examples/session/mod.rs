//! The MCP session of the Rust hosts, `host.rs` (blocking) and
//! `tokio_host.rs` (a tokio task): what `examples/mcp_host.c` does, written
//! as a state machine fed with the connection's events, so that both drive
//! it the same way: [`Session::start`], then [`Session::on_event`] for every
//! event but `Event::Closed`, then [`Session::finish`].
//!
//! The session, in MCP 2026-07-28 when the server speaks it:
//! `server/discover` (the probe), `tools/list` (every page), `tools/call`
//! for each call, every request with its `_meta`. A server from before
//! 2026-07-28 answers the probe with an error (or not in time): then the
//! `initialize` handshake of 2025-11-25 and `notifications/initialized`
//! come first, and the requests carry no `_meta`. The server's own requests
//! are answered whenever they come (`ping` -> `{}`, `roots/list` -> no
//! roots, anything else -> -32601). Then the close: the server's stdin
//! closed, SIGTERM at the grace, SIGKILL at twice it (the library does it).

use std::io::Write;
#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_stdio::{encode, json_string_eq, Command, Connection, Event, InvalidKind, RpcKind, Sender};
use serde_json::Value;

/// Logs one line on stderr, `<prog>: <message>` (stdout is the transcript).
macro_rules! log {
    ($session:expr, $($message:tt)*) => {
        eprintln!("{}: {}", $session.prog, format_args!($($message)*))
    };
}

const MODERN: &str = "2026-07-28";
/// The versions of the `initialize` handshake this host speaks, newest first.
const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const CLIENT_INFO: &str = concat!(
    r#"{"name":"mcp-stdio-rust-host","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#""}"#
);
/// What every 2026-07-28 request carries in `params._meta`.
const META: &str = concat!(
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{},"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"mcp-stdio-rust-host","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#""}}"#
);
const MAX_LIST_PAGES: usize = 100;
const DEMO_TEXT: &str = "hello from mcp-stdio";

pub const USAGE: &str = "[--call TOOL JSON_ARGS]... [--timeout SEC] [--allow-kill] \
                         [--shutdown-timeout SEC] [--] COMMAND [ARGS...]
  --call TOOL JSON_ARGS    call a tool (repeatable); JSON_ARGS is a JSON object
  --timeout SEC            wait this long for each response (default 10)
  --allow-kill             a server stopped with a signal is not a failure
  --shutdown-timeout SEC   time to exit after stdin closes, then SIGTERM
                           (default 5; SIGKILL at twice it)
Without --call: the demo session of examples/mcp_server.c (echo, add 2+3).";

struct Call {
    tool: String,
    /// A JSON object, compact (as the transport writes it).
    args: String,
    /// The text the first content item must be, if any.
    exact: Option<&'static str>,
}

/// The command line.
pub struct Options {
    calls: Vec<Call>,
    /// Tools that `tools/list` must offer.
    expect_tools: Vec<&'static str>,
    /// How long each request may wait for its answer.
    timeout: Duration,
    allow_kill: bool,
    grace: Duration,
    command: Vec<String>,
}

impl Options {
    /// Parses the arguments after the program name; `Err("")` for `--help`.
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut opts = Options {
            calls: Vec::new(),
            expect_tools: Vec::new(),
            timeout: Duration::from_secs(10),
            allow_kill: false,
            grace: Duration::from_secs(5),
            command: Vec::new(),
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--" => break,
                "-h" | "--help" => return Err(String::new()),
                "--call" => {
                    let (Some(tool), Some(args)) = (args.next(), args.next()) else {
                        return Err("--call needs TOOL and JSON_ARGS".into());
                    };
                    let args = match encode(args.as_bytes()) {
                        Ok(line) if line.starts_with(b"{") => String::from_utf8(line).unwrap(),
                        _ => return Err(format!("--call {tool}: not a JSON object: {args}")),
                    };
                    let args = args.trim_end().to_owned(); // the line's newline
                    opts.calls.push(Call {
                        tool,
                        args,
                        exact: None,
                    });
                }
                "--allow-kill" => opts.allow_kill = true,
                "--timeout" | "--shutdown-timeout" => {
                    let sec = args.next().and_then(|s| s.parse::<f64>().ok());
                    let Some(sec) = sec.filter(|s| *s > 0.0 && *s <= 86400.0) else {
                        return Err(format!("{arg} needs a number of seconds"));
                    };
                    match arg.as_str() {
                        "--timeout" => opts.timeout = Duration::from_secs_f64(sec),
                        _ => opts.grace = Duration::from_secs_f64(sec),
                    }
                }
                s if s.starts_with('-') => return Err(format!("unknown option: {s}")),
                _ => {
                    opts.command.push(arg);
                    break;
                }
            }
        }
        opts.command.extend(args);
        if opts.command.is_empty() {
            return Err("no server command given".into());
        }
        if opts.calls.is_empty() {
            // The demo session against examples/mcp_server.c.
            let echo = format!(r#"{{"text":"{DEMO_TEXT}"}}"#);
            let add = r#"{"a":2,"b":3}"#.to_owned();
            opts.calls.push(Call {
                tool: "echo".into(),
                args: echo,
                exact: Some(DEMO_TEXT),
            });
            opts.calls.push(Call {
                tool: "add".into(),
                args: add,
                exact: Some("5"),
            });
            opts.expect_tools = vec!["echo", "add"];
        }
        Ok(opts)
    }

    /// Reports a server that could not be started; the exit code.
    pub fn spawn_failed(&self, prog: &str, e: mcp_stdio::Error) -> ExitCode {
        // The error names the program: "cannot start `npx`: not found in
        // PATH (searched: ...)".
        eprintln!("{prog}: {e}");
        println!(
            "FAILED: 0/{} expected responses received and checked",
            self.planned()
        );
        ExitCode::FAILURE
    }

    /// The steps: the start, tools/list, each call.
    fn planned(&self) -> usize {
        2 + self.calls.len()
    }

    /// The server to spawn: looked up in `PATH`, its stderr as events.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            // No server outlives a crashed host.
            .kill_on_host_exit(cfg!(target_os = "linux"));
        cmd
    }
}

/// What became of a request.
enum Answer {
    Result(Value),
    Error(Value),
    /// A response serde_json cannot read (a lone surrogate escape, say).
    Unreadable(serde_json::Error),
    TimedOut,
    /// No answer: the request was refused, or the connection ended first.
    Gone,
}

/// Where the session is: the request we wait for.
#[derive(Clone, Copy)]
enum Step {
    Discover,
    Initialize,
    ToolsList,
    Call(usize),
    /// Closing: no request pending.
    Closing,
}

pub struct Session {
    prog: &'static str,
    opts: Options,
    /// Sends while the connection is borrowed by the event being handled.
    tx: Sender,
    step: Step,
    /// Our request in flight, and its method.
    pending: Option<(i64, &'static str)>,
    /// Speaking 2026-07-28: requests carry `_meta`.
    modern: bool,
    tools: Vec<String>,
    /// Pages of `tools/list` taken.
    pages: usize,
    /// Steps that succeeded, for the summary.
    steps_ok: usize,
    failed: bool,
    /// A response did not come: the session cannot go on.
    stalled: bool,
    closing_since: Option<Instant>,
}

impl Session {
    pub fn new(prog: &'static str, opts: Options, tx: Sender) -> Session {
        let step = Step::Discover;
        Session {
            prog,
            opts,
            tx,
            step,
            pending: None,
            modern: false,
            tools: Vec::new(),
            pages: 0,
            steps_ok: 0,
            failed: false,
            stalled: false,
            closing_since: None,
        }
    }

    /// The connection failed (its events cannot be taken): logged, and the
    /// run fails.
    pub fn fail(&mut self, why: impl std::fmt::Display) {
        log!(self, "{why}");
        self.failed = true;
    }

    /// Sends the probe.
    pub fn start(&mut self) {
        self.request(
            Step::Discover,
            "server/discover",
            Some(format!(r#"{{"_meta":{META}}}"#)),
        );
    }

    /// Sends a request (its line printed) and waits for it in `step`.
    fn request(&mut self, step: Step, method: &'static str, params: Option<String>) {
        self.step = step;
        let params_bytes = params.as_deref().map(str::as_bytes);
        match self
            .tx
            .request(method, params_bytes, Some(self.opts.timeout))
        {
            Ok(id) => {
                self.pending = Some((id, method));
                let params = params
                    .map(|p| format!(r#","params":{p}"#))
                    .unwrap_or_default();
                let method = Value::from(method);
                print_sent(&format!(r#""id":{id},"method":{method}{params}"#));
            }
            Err(e) => {
                log!(self, "cannot write {method} to the server: {e}");
                self.pending = Some((0, method)); // ended at once
                self.answered(Answer::Gone);
            }
        }
    }

    /// `params` of a request: `{members}`, and in 2026-07-28 `_meta`; `None`
    /// for no members in the initialize era.
    fn params(&self, members: &str) -> Option<String> {
        match (self.modern, members.is_empty()) {
            (true, true) => Some(format!(r#"{{"_meta":{META}}}"#)),
            (true, false) => Some(format!(r#"{{{members},"_meta":{META}}}"#)),
            (false, true) => None,
            (false, false) => Some(format!("{{{members}}}")),
        }
    }

    /// Handles one event (all but `Event::Closed`, which ends the session).
    pub fn on_event(&mut self, event: Event<'_>) {
        let pending = self.pending.map(|(id, _)| id);
        match event {
            Event::Response { id, line, envelope } if Some(id) == pending => {
                print_received(line);
                let (member, error) = match envelope.kind {
                    Some(RpcKind::Error) => (envelope.error, true),
                    _ => (envelope.result, false),
                };
                let answer = match serde_json::from_slice(member.unwrap_or(b"null")) {
                    Ok(value) if error => Answer::Error(value),
                    Ok(value) => Answer::Result(value),
                    Err(e) => Answer::Unreadable(e),
                };
                self.answered(answer);
            }
            Event::RequestTimedOut { id } if Some(id) == pending => {
                if self
                    .pending
                    .is_some_and(|(_, method)| method != "initialize")
                {
                    // The transport sent this (never for initialize).
                    let params = format!(r#"{{"requestId":{id},"reason":"request timed out"}}"#);
                    print_sent(&format!(
                        r#""method":"notifications/cancelled","params":{params}"#
                    ));
                }
                self.answered(Answer::TimedOut);
            }
            Event::RequestFailed { id, .. } if Some(id) == pending => self.answered(Answer::Gone),
            Event::Message { line, envelope } => {
                print_received(line);
                self.serve(envelope);
            }
            Event::Response { line, .. } => print_received(line), // one request at a time
            Event::Invalid {
                kind: InvalidKind::TooLong,
                len,
                ..
            } => log!(
                self,
                "bad line from server: too long ({len} bytes received), skipped"
            ),
            Event::Invalid { kind, line, .. } => {
                let what = match kind {
                    InvalidKind::ParseError => "not JSON",
                    _ => "not JSON-RPC 2.0",
                };
                let line = line.unwrap_or_default();
                let shown = line[..line.len().min(120)].escape_ascii();
                log!(self, "bad line from server ({what}), skipped: {shown}");
            }
            Event::Stderr { line } => {
                log!(self, "[server] {}", String::from_utf8_lossy(line))
            }
            _ => {}
        }
    }

    /// A message from the server that answers nothing of ours.
    fn serve(&mut self, envelope: mcp_stdio::Envelope<'_>) {
        let (Some(RpcKind::Request), Some(id), Some(method)) =
            (envelope.kind, envelope.id, envelope.method)
        else {
            match envelope.kind {
                Some(RpcKind::Batch) => log!(self, "server sent a batch, which MCP does not allow"),
                Some(RpcKind::Response | RpcKind::Error) => {
                    log!(self, "response with an id we are not waiting for, ignored")
                }
                _ => {} // a notification (logging, progress): nothing to do
            }
            return;
        };
        let (sent, reply) = if json_string_eq(method, "ping") {
            (self.tx.respond(id, b"{}"), r#""result":{}"#)
        } else if json_string_eq(method, "roots/list") {
            let roots = r#"{"roots":[]}"#;
            (
                self.tx.respond(id, roots.as_bytes()),
                r#""result":{"roots":[]}"#,
            )
        } else {
            let method = String::from_utf8_lossy(method);
            log!(self, "answering the server's request {method} with -32601");
            let refused = self.tx.respond_error(Some(id), -32601, "Method not found");
            (
                refused,
                r#""error":{"code":-32601,"message":"Method not found"}"#,
            )
        };
        match sent {
            Ok(()) => print_sent(&format!(r#""id":{},{reply}"#, String::from_utf8_lossy(id))),
            Err(e) => log!(self, "cannot answer the server's request: {e}"),
        }
    }

    /// Our request's end: judges it and sends the next one, or closes.
    fn answered(&mut self, answer: Answer) {
        let Some((_, method)) = self.pending.take() else {
            return;
        };
        match self.step {
            Step::Discover => self.probed(answer),
            Step::Initialize => match self.judged(method, answer) {
                Some(result) => self.initialized(result),
                None => self.close(),
            },
            Step::ToolsList => match self.judged(method, answer) {
                Some(result) => self.listed(result),
                None => self.call(0),
            },
            Step::Call(i) => {
                if let Some(result) = self.judged(method, answer) {
                    self.called(i, result);
                }
                self.call(i + 1);
            }
            Step::Closing => {}
        }
    }

    /// A request's end, judged: its result, or `None` (logged, and the run
    /// marked failed) for an error, a result this host cannot use or no
    /// answer (then the session cannot go on).
    fn judged(&mut self, method: &str, answer: Answer) -> Option<Value> {
        self.failed = true; // unless the result is good
        match answer {
            Answer::Result(result) => {
                let kind = &result["resultType"];
                // 2026-07-28: a result may ask for more input, which this host
                // does not provide. Absent means complete.
                if !kind.is_null() && kind != "complete" {
                    log!(self, "{method}: a result of type {kind}, not handled here");
                    return None;
                }
                self.failed = false;
                return Some(result);
            }
            Answer::Error(error) => {
                let (code, message) = (&error["code"], &error["message"]);
                log!(self, "{method} failed: error {code} {message}");
            }
            Answer::Unreadable(e) => log!(self, "{method}: unreadable response: {e}"),
            Answer::TimedOut => {
                let timeout = self.opts.timeout;
                log!(
                    self,
                    "timed out after {timeout:?} waiting for the answer to {method}"
                );
                self.stalled = true;
            }
            Answer::Gone => {
                log!(
                    self,
                    "the server closed the connection before answering {method}"
                );
                self.stalled = true;
            }
        }
        None
    }

    /// A step that ended: counted when it went well.
    fn step_end(&mut self, ok: bool) {
        if ok {
            self.steps_ok += 1;
        } else {
            self.failed = true;
        }
    }

    /// The probe's answer, as the spec's backward compatibility section
    /// says: a result (or the error -32022, Unsupported protocol version)
    /// comes from a server of 2026-07-28 or later; any other error, or no
    /// answer in time, from an older one, which gets `initialize`.
    fn probed(&mut self, answer: Answer) {
        let offered = match answer {
            Answer::Result(result) if lists(&result["supportedVersions"], MODERN) => {
                self.modern = true;
                // 2026-07-28 names the server in the result's _meta; its
                // drafts had a serverInfo member.
                let info = match &result["_meta"]["io.modelcontextprotocol/serverInfo"] {
                    Value::Null => &result["serverInfo"],
                    info => info,
                };
                self.connected(info, MODERN);
                self.step_end(true);
                return self.list_tools(&result["capabilities"], None);
            }
            Answer::Result(result) => result["supportedVersions"].clone(),
            Answer::Error(error) if error["code"] == -32022 => error["data"]["supported"].clone(),
            Answer::Error(error) => {
                log!(
                    self,
                    "server/discover: error {}: a server from before MCP {MODERN}, so initialize",
                    error["code"]
                );
                Value::Null
            }
            Answer::TimedOut => {
                let timeout = self.opts.timeout;
                let why = format!("a server from before MCP {MODERN}, so initialize");
                log!(self, "no answer to server/discover in {timeout:?}: {why}");
                Value::Null
            }
            answer @ (Answer::Unreadable(_) | Answer::Gone) => {
                self.judged("server/discover", answer); // logged
                self.step_end(false);
                return self.close();
            }
        };
        let mut version = LEGACY[0];
        if !offered.is_null() {
            // A modern server that does not speak our modern version: its
            // initialize handshake, if it keeps one we speak.
            let Some(v) = LEGACY
                .into_iter()
                .find(|v| offered == *v || lists(&offered, v))
            else {
                log!(
                    self,
                    "the server speaks only {offered}; this host speaks {MODERN} and initialize"
                );
                self.step_end(false);
                return self.close();
            };
            version = v;
        }
        let params = format!(
            concat!(
                r#"{{"protocolVersion":"{}","capabilities":{{"roots":{{"listChanged":false}}}},"#,
                r#""clientInfo":{}}}"#
            ),
            version, CLIENT_INFO
        );
        self.request(Step::Initialize, "initialize", Some(params));
    }

    fn initialized(&mut self, result: Value) {
        let agreed = &result["protocolVersion"];
        let Some(version) = LEGACY.into_iter().find(|v| agreed == v) else {
            log!(
                self,
                "the server wants protocol version {agreed}, which this host does not speak"
            );
            self.step_end(false);
            return self.close();
        };
        self.connected(&result["serverInfo"], version);
        if let Err(e) = self.tx.notify("notifications/initialized", None) {
            // initialize was answered and checked; the server went away (or
            // cannot be written to) before the handshake's last message.
            log!(
                self,
                "cannot write notifications/initialized to the server: {e}"
            );
            self.step_end(true);
            self.failed = true;
            self.stalled = true;
            return self.close();
        }
        print_sent(r#""method":"notifications/initialized""#);
        self.step_end(true);
        self.list_tools(&result["capabilities"], None);
    }

    /// Logs who answered.
    fn connected(&self, info: &Value, version: &str) {
        let name = info["name"].as_str().unwrap_or("(unnamed)");
        let server_version = info["version"].as_str().unwrap_or("");
        let how = if self.modern { "" } else { " (initialize)" };
        log!(
            self,
            "connected to {name} {server_version}, protocol {version}{how}"
        );
    }

    /// `tools/list`, the page after `cursor` (the first: if the server
    /// has tools at all, as `capabilities` says).
    fn list_tools(&mut self, capabilities: &Value, cursor: Option<&Value>) {
        if cursor.is_none() && !capabilities["tools"].is_object() {
            log!(
                self,
                "the server does not offer tools (no tools capability)"
            );
            self.failed = true;
            return self.call(0);
        }
        let members = cursor
            .map(|c| format!(r#""cursor":{c}"#))
            .unwrap_or_default();
        let params = self.params(&members);
        self.request(Step::ToolsList, "tools/list", params);
    }

    /// A page of `tools/list`: its tools printed; the next page, or the calls.
    fn listed(&mut self, result: Value) {
        let Some(tools) = result["tools"].as_array() else {
            log!(self, "tools/list: the result has no tools array");
            self.step_end(false);
            return self.call(0);
        };
        for tool in tools {
            match tool["name"].as_str() {
                Some(name) if tool["inputSchema"].is_object() => {
                    print_line("tool", name);
                    self.tools.push(name.to_owned());
                }
                _ => {
                    log!(
                        self,
                        "tools/list: a tool without a name or an inputSchema: {tool}"
                    );
                    self.failed = true;
                }
            }
        }
        self.pages += 1;
        match &result["nextCursor"] {
            next @ Value::String(_) if self.pages < MAX_LIST_PAGES => {
                self.list_tools(&Value::Null, Some(next))
            }
            _ => {
                let missing: Vec<_> = self
                    .opts
                    .expect_tools
                    .iter()
                    .filter(|t| !self.tools.iter().any(|n| n == *t))
                    .collect();
                for tool in &missing {
                    log!(self, "tools/list does not offer the tool {tool}");
                }
                self.step_end(missing.is_empty());
                self.call(0);
            }
        }
    }

    /// `tools/call` of the `i`th call, or the close after the last one.
    fn call(&mut self, i: usize) {
        let Some(call) = self.opts.calls.get(i).filter(|_| !self.stalled) else {
            return self.close();
        };
        let members = format!(
            r#""name":{},"arguments":{}"#,
            Value::from(call.tool.as_str()),
            call.args
        );
        let params = self.params(&members);
        self.request(Step::Call(i), "tools/call", params);
    }

    /// A `tools/call` result: its content printed and checked.
    fn called(&mut self, i: usize, result: Value) {
        let call = &self.opts.calls[i];
        let Some(content) = result["content"].as_array() else {
            log!(
                self,
                "tools/call {}: the result has no content array",
                call.tool
            );
            return self.step_end(false);
        };
        let mut ok = !(content.is_empty() && call.exact.is_some());
        for (n, item) in content.iter().enumerate() {
            let exact = call.exact.filter(|_| n == 0);
            match (&item["type"], item["text"].as_str()) {
                (kind, Some(text)) if kind == "text" => {
                    print_line("text", text);
                    if exact.is_some_and(|e| e != text) {
                        log!(self, "expected the text {}", exact.unwrap_or_default());
                        ok = false;
                    }
                }
                (kind, _) => {
                    print_line("content", &kind.to_string());
                    ok &= exact.is_none();
                }
            }
        }
        if result["isError"] == true {
            log!(
                self,
                "tools/call {}: the tool reported an error (isError true)",
                call.tool
            );
            ok = false;
        }
        self.step_end(ok);
    }

    /// Begins the MCP shutdown; the driver takes the events to `Closed`.
    fn close(&mut self) {
        self.step = Step::Closing;
        self.closing_since = Some(Instant::now());
        if let Err(e) = self.tx.close(self.opts.grace) {
            log!(self, "close: {e}");
        }
    }

    /// After `Event::Closed`: how the server ended, and the summary. The
    /// exit code: 0 if every step went well and the server exited by
    /// itself with status 0 (or, with `--allow-kill`, was stopped).
    pub fn finish(mut self, conn: &Connection) -> ExitCode {
        if let Some((_, method)) = self.pending.take() {
            self.judged(method, Answer::Gone);
        }
        let grace = self.opts.grace;
        let since = self.closing_since.map(|t| t.elapsed());
        // The library sends SIGTERM at the grace, SIGKILL at twice it.
        let signalled = since.is_some_and(|t| t >= grace);
        if signalled {
            log!(
                self,
                "the server did not exit within {grace:?} of its stdin closing: SIGTERM"
            );
            if since.is_some_and(|t| t >= 2 * grace) {
                log!(self, "the server ignored SIGTERM: SIGKILL");
            }
            if !self.opts.allow_kill {
                self.failed = true;
            }
        }
        let dropped = conn.stderr_dropped();
        if dropped > 0 {
            log!(self, "{dropped} bytes of the server's stderr were dropped");
        }
        match conn.exit_status() {
            Some(status) if status.code().is_some_and(|c| c != 0) => {
                log!(
                    self,
                    "the server exited with status {}",
                    status.code().unwrap_or(0)
                );
                self.failed = true;
            }
            #[cfg(unix)]
            Some(status) if status.signal().is_some() => {
                log!(
                    self,
                    "the server was killed by signal {}",
                    status.signal().unwrap_or(0)
                );
                self.failed |= !signalled; // not by us
            }
            _ => {}
        }
        let planned = self.opts.planned();
        let ok = !self.failed && self.steps_ok == planned;
        let verdict = if ok { "ok" } else { "FAILED" };
        println!(
            "{verdict}: {}/{planned} expected responses received and checked",
            self.steps_ok
        );
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

/// Is `text` one of the strings of the JSON array `list`?
fn lists(list: &Value, text: &str) -> bool {
    list.as_array().is_some_and(|l| l.iter().any(|v| v == text))
}

/// Prints `-> ` and the message `{"jsonrpc":"2.0",<members>}` as the
/// transport queued it: compact, one line.
fn print_sent(members: &str) {
    if let Ok(line) = encode(format!(r#"{{"jsonrpc":"2.0",{members}}}"#).as_bytes()) {
        let _ = std::io::stdout()
            .lock()
            .write_all(&[b"-> ", &line[..]].concat());
    }
}

/// Prints `<- <line>`, the line exactly as received.
fn print_received(line: &[u8]) {
    let _ = std::io::stdout()
        .lock()
        .write_all(&[b"<- ", line, b"\n"].concat());
}

/// Prints `<label>: <text>` on one line: `\` as `\\`, newline `\n`, CR
/// `\r`, tab `\t`, any other control character `\xNN`, the rest as is.
fn print_line(label: &str, text: &str) {
    let mut out = format!("{label}: ");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\n');
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
}
