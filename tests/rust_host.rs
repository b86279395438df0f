//! The Rust hosts are real code: `examples/host.rs` (blocking) and
//! `examples/tokio_host.rs` (a tokio task on the connection's descriptor)
//! run the MCP session of `examples/mcp_host.c` against
//! `examples/mcp_server.c` (MCP 2026-07-28) and against a server that only
//! knows the `initialize` handshake (a small Python script), and print what
//! the C host prints; the README's "A host in Rust" code is here too, run.
//! `examples/server.rs`, the Rust server, serves both hosts, and answers a
//! scripted client line by line.
//!
//! The example binaries are the ones `cargo test` builds with the tests
//! (target/<profile>/examples/); a nested `cargo build --example` makes
//! sure they are there and up to date when only this test was asked for
//! (`cargo test --test rust_host`). The server is compiled with the C
//! tests' toolchain driver against the static library of this build.
#![cfg(all(feature = "capi", target_os = "linux"))]

#[allow(dead_code)]
#[path = "c_abi/toolchain/mod.rs"]
mod toolchain;

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::{json, Value};

use toolchain::compile::{as_strs, compile_c};
use toolchain::library::{lib, static_link_args};
use toolchain::run::{report, run};
use toolchain::sources::manifest_dir;
use toolchain::work_dir::WorkDir;

/// The Rust hosts under test. The tokio host waits on
/// `Connection::poll_fd`, which the portable POSIX build
/// (`MCP_STDIO_PORTABLE_POSIX=1`, macOS's code path run on Linux) does not
/// have yet: there it exits with status 2 and is left out.
#[cfg(linux_apis)]
const HOSTS: &[&str] = &["host", "tokio_host"];
#[cfg(not(linux_apis))]
const HOSTS: &[&str] = &["host"];

/// target/<profile>/: this test binary is target/<profile>/deps/rust_host-<hash>.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("the test binary's directory");
    assert_eq!(
        deps.file_name().and_then(|n| n.to_str()),
        Some("deps"),
        "{}",
        exe.display()
    );
    deps.parent().expect("target/<profile>").to_path_buf()
}

/// The example `name`, as cargo built it for this profile. `cargo test`
/// builds the examples with the tests; `cargo test --test rust_host` does
/// not, so a nested cargo (the lock is free while tests run) builds them
/// once per run, which costs a fraction of a second when they are fresh.
fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let profile_dir = profile_dir();
    let built = BUILT.get_or_init(|| {
        let profile = profile_dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("profile");
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.current_dir(manifest_dir())
            .args([
                "build",
                "--quiet",
                "--example",
                "host",
                "--example",
                "tokio_host",
                "--example",
                "server",
            ])
            .arg("--profile")
            .arg(if profile == "debug" { "dev" } else { profile })
            .arg("--target-dir")
            .arg(profile_dir.parent().expect("target"));
        if cfg!(feature = "panic-injection") {
            cmd.args(["--features", "panic-injection"]); // the lib as this test has it
        }
        let (desc, out) = run(&mut cmd);
        match out.status.success() {
            true => Ok(()),
            false => Err(report(&desc, &out)),
        }
    });
    if let Err(report) = built {
        panic!("building the examples failed\n{report}");
    }
    let exe = profile_dir.join("examples").join(name);
    assert!(exe.is_file(), "{} is missing", exe.display());
    exe
}

/// `examples/mcp_server.c`, compiled against the static library in `work`.
fn build_example_server(work: &WorkDir) -> PathBuf {
    let exe = work.path("mcp_server");
    let link = static_link_args(&lib());
    compile_c(
        &manifest_dir().join("examples/mcp_server.c"),
        &exe,
        &["-D_POSIX_C_SOURCE=200809L"],
        &as_strs(&link),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    exe
}

/// A server from before MCP 2026-07-28: it refuses `server/discover` with
/// -32601, answers `initialize`, lists its tools in two pages, pings the
/// host (and waits for the answer) before answering the first echo, and
/// refuses any request that carries `_meta` (a host that fell back must not
/// send it). With `--silent-discover` it does not answer `server/discover`
/// at all. Exits at the end of its stdin.
const LEGACY_SERVER: &str = r#"
import json, sys

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def answer(req, result):
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})

def refuse(req, code, message):
    send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": code, "message": message}})

schema = {"type": "object"}
pages = {None: ([{"name": "echo", "inputSchema": schema}], "page-2"),
         "page-2": ([{"name": "add", "inputSchema": schema}], None)}
pinged = False
print("legacy: ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    req = json.loads(line)
    method, params = req.get("method"), req.get("params") or {}
    if "id" not in req:
        continue  # notifications/initialized, or our ping's answer
    if method == "server/discover":
        if "--silent-discover" not in sys.argv:
            refuse(req, -32601, "Method not found")
    elif "_meta" in params:
        refuse(req, -32602, "_meta from a host that spoke initialize")
    elif method == "initialize":
        answer(req, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                     "serverInfo": {"name": "legacy-py", "version": "1.0"}})
    elif method == "tools/list":
        tools, cursor = pages[params.get("cursor")]
        answer(req, dict({"tools": tools}, **({"nextCursor": cursor} if cursor else {})))
    elif method == "tools/call":
        if params["name"] == "echo" and not pinged:
            pinged = True
            send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
            pong = json.loads(sys.stdin.readline())
            assert pong == {"jsonrpc": "2.0", "id": "s1", "result": {}}, pong
        args = params["arguments"]
        text = args["text"] if params["name"] == "echo" else str(args["a"] + args["b"])
        answer(req, {"content": [{"type": "text", "text": text}]})
    else:
        refuse(req, -32601, "Method not found")
print("legacy: end of input", file=sys.stderr, flush=True)
"#;

/// What a host printed, parsed like tests/e2e/conftest.py's `run_host`.
#[derive(Default, Debug)]
struct Transcript {
    /// Each `-> ` line, parsed.
    sent: Vec<Value>,
    /// Each `<- ` line, parsed.
    received: Vec<Value>,
    tools: Vec<String>,
    texts: Vec<String>,
    summary: String,
}

impl Transcript {
    fn of(out: &Output) -> Transcript {
        let mut t = Transcript::default();
        let json = |s: &str| serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"));
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some(s) = line.strip_prefix("-> ") {
                t.sent.push(json(s));
            } else if let Some(s) = line.strip_prefix("<- ") {
                t.received.push(json(s));
            } else if let Some(s) = line.strip_prefix("tool: ") {
                t.tools.push(s.to_owned());
            } else if let Some(s) = line.strip_prefix("text: ") {
                t.texts.push(s.to_owned());
            } else if line.starts_with("ok: ") || line.starts_with("FAILED: ") {
                t.summary = line.to_owned();
            }
        }
        t
    }

    /// The methods of the requests and notifications we sent, in order.
    fn methods(&self) -> Vec<&str> {
        self.sent
            .iter()
            .filter_map(|m| m["method"].as_str())
            .collect()
    }

    /// The response to our request `request`.
    fn response_to(&self, request: &Value) -> &Value {
        let answers = |m: &&Value| m.get("method").is_none() && m["id"] == request["id"];
        self.received
            .iter()
            .find(answers)
            .unwrap_or_else(|| panic!("no answer to {request}"))
    }
}

/// Runs the example host `name` with `args`; its output, transcript and a
/// report for failure messages. A host that hangs is stopped at 60 s
/// (coreutils' `timeout`, status 124), and fails the test.
fn run_host(name: &str, args: &[&str]) -> (Output, Transcript, String) {
    let mut cmd = std::process::Command::new("timeout");
    cmd.args(["--kill-after=5", "60"])
        .arg(example(name))
        .args(args)
        .stdin(Stdio::null());
    let (desc, out) = run(&mut cmd);
    let transcript = Transcript::of(&out);
    let report = report(&desc, &out);
    (out, transcript, report)
}

/// Without `--call`, the demo session against examples/mcp_server.c, in MCP
/// 2026-07-28: the probe answered, no `initialize`, every request with its
/// `_meta`; both tools listed, echo and add 2+3 called and checked; the
/// server exits by itself at the end of its stdin; the same lines as the C
/// host prints.
#[test]
fn hosts_run_the_demo_session_in_2026_07_28() {
    let work = WorkDir::new("rust_host_demo");
    let server = build_example_server(&work);
    for &host in HOSTS {
        let (out, t, report) = run_host(host, &[server.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            t.summary, "ok: 4/4 expected responses received and checked",
            "{report}"
        );
        assert_eq!(
            t.methods(),
            ["server/discover", "tools/list", "tools/call", "tools/call"]
        );
        let ids: Vec<_> = t.sent.iter().map(|m| m["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4)], "{report}");
        for request in &t.sent {
            let meta = &request["params"]["_meta"];
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
                "{report}"
            );
            assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        }
        assert_eq!(t.tools, ["echo", "add"], "{report}");
        assert_eq!(t.sent[2]["params"]["name"], "echo");
        assert_eq!(
            t.sent[2]["params"]["arguments"],
            json!({"text": "hello from mcp-stdio"})
        );
        assert_eq!(t.sent[3]["params"]["arguments"], json!({"a": 2, "b": 3}));
        let echo = &t.response_to(&t.sent[2])["result"];
        assert_eq!(
            echo["content"],
            json!([{"type": "text", "text": "hello from mcp-stdio"}])
        );
        assert_eq!(t.texts, ["hello from mcp-stdio", "5"], "{report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let connected = format!("{host}: connected to mcp-stdio-demo-server");
        assert!(stderr.contains(&connected), "{report}");
        let forwarded = format!("{host}: [server] mcp_server: end of input, exiting");
        assert!(stderr.contains(&forwarded), "{report}");
    }
}

/// `--call` with text that needs escaping: the request carries the
/// arguments as given (compacted), the text comes back decoded and
/// printed on one line (`\n`, `\t`, `\\` escaped), UTF-8 as is.
#[test]
fn hosts_call_the_tool_asked_for() {
    let work = WorkDir::new("rust_host_call");
    let server = build_example_server(&work);
    let text = "h\u{e9}llo \u{2713}\nline two\twith a \\ backslash";
    let args = json!({ "text": text }).to_string();
    for &host in HOSTS {
        let (out, t, report) = run_host(
            host,
            &["--call", "echo", &args, "--", server.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            t.summary, "ok: 3/3 expected responses received and checked",
            "{report}"
        );
        let call = &t.sent[2];
        assert_eq!(call["params"]["arguments"]["text"], text, "{report}");
        assert_eq!(t.response_to(call)["result"]["content"][0]["text"], text);
        assert_eq!(
            t.texts,
            ["h\u{e9}llo \u{2713}\\nline two\\twith a \\\\ backslash"]
        );
    }
}

/// A call the server refuses (an unknown tool: -32602) is reported, the
/// session still closes cleanly, and the exit status says it failed.
#[test]
fn hosts_report_a_failed_call() {
    let work = WorkDir::new("rust_host_failed");
    let server = build_example_server(&work);
    for &host in HOSTS {
        let (out, t, report) = run_host(
            host,
            &["--call", "no-such-tool", "{}", server.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(1), "{report}");
        assert_eq!(
            t.summary, "FAILED: 2/3 expected responses received and checked",
            "{report}"
        );
        assert_eq!(
            t.response_to(&t.sent[2])["error"]["code"],
            -32602,
            "{report}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("tools/call failed: error -32602"),
            "{report}"
        );
        assert!(
            stderr.contains("mcp_server: end of input, exiting"),
            "{report}"
        );
    }
}

/// A server from before 2026-07-28 refuses the probe with -32601: the
/// hosts fall back to `initialize` (2025-11-25) and
/// `notifications/initialized`, send no `_meta` from then on, follow
/// `nextCursor` through both pages of tools, answer the server's `ping`
/// in the middle of a call, and close; the server exits by itself.
#[test]
fn hosts_fall_back_to_initialize() {
    let work = WorkDir::new("rust_host_legacy");
    let script = work.path("legacy_server.py");
    std::fs::write(&script, LEGACY_SERVER).expect("write the legacy server");
    for &host in HOSTS {
        let (out, t, report) = run_host(host, &["python3", script.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            t.summary, "ok: 4/4 expected responses received and checked",
            "{report}"
        );
        let methods = t.methods();
        assert_eq!(
            methods,
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list",
                "tools/list",
                "tools/call",
                "tools/call"
            ],
            "{report}"
        );
        assert_eq!(t.response_to(&t.sent[0])["error"]["code"], -32601);
        assert_eq!(t.sent[1]["params"]["protocolVersion"], "2025-11-25");
        assert!(
            t.sent[1..]
                .iter()
                .all(|m| m["params"].get("_meta").is_none()),
            "{report}"
        );
        assert!(
            t.sent[3].get("params").is_none(),
            "the first page: no params"
        );
        assert_eq!(t.sent[4]["params"], json!({"cursor": "page-2"}));
        assert_eq!(t.tools, ["echo", "add"], "{report}");
        // The server's ping, and our answer, sent before the call's answer.
        let ping = t
            .received
            .iter()
            .position(|m| m["method"] == "ping")
            .expect("ping");
        assert_eq!(
            t.received[ping],
            json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
        );
        let pong = json!({"jsonrpc": "2.0", "id": "s1", "result": {}});
        assert!(t.sent.contains(&pong), "{report}");
        assert_eq!(t.texts, ["hello from mcp-stdio", "5"], "{report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let fallback = format!("{host}: server/discover: error -32601");
        assert!(stderr.contains(&fallback), "{report}");
        assert!(stderr.contains("connected to legacy-py 1.0, protocol 2025-11-25 (initialize)"));
        assert!(
            stderr.contains(&format!("{host}: [server] legacy: end of input")),
            "{report}"
        );
    }
}

/// A server that does not answer the probe at all (within `--timeout`): the
/// probe times out, the library sends `notifications/cancelled` for it,
/// and the hosts fall back to `initialize`. The tokio host must wake at
/// the request's deadline by itself: nothing arrives meanwhile (unless the
/// server's "ready" on stderr comes late, on a very busy machine).
#[test]
fn hosts_fall_back_when_the_probe_is_not_answered() {
    let work = WorkDir::new("rust_host_silent");
    let script = work.path("legacy_server.py");
    std::fs::write(&script, LEGACY_SERVER).expect("write the legacy server");
    let script = script.to_str().unwrap();
    for &host in HOSTS {
        let started = Instant::now();
        let args = ["--timeout", "1", "python3", script, "--silent-discover"];
        let (out, t, report) = run_host(host, &args);
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            t.summary, "ok: 4/4 expected responses received and checked",
            "{report}"
        );
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": 1, "reason": "request timed out"}});
        assert_eq!(t.sent[1], cancelled, "{report}");
        assert_eq!(t.sent[2]["method"], "initialize", "{report}");
        assert_eq!(t.sent[2]["id"], 2, "{report}");
        assert!(!t.received.iter().any(|m| m["id"] == 1), "{report}");
        assert_eq!(t.texts, ["hello from mcp-stdio", "5"], "{report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("no answer to server/discover in 1s"),
            "{report}"
        );
        assert!(took >= Duration::from_secs(1), "{took:?}: {report}");
        assert!(took < Duration::from_secs(5), "{took:?}: {report}");
    }
}

/// A server that neither exits at the end of its stdin nor on SIGTERM (a
/// shell that ignores it, waiting in `sleep`): the library sends SIGTERM at
/// the grace and SIGKILL at twice it, which the tokio host must wake for
/// (nothing arrives meanwhile). The host says so, and fails unless
/// `--allow-kill`.
#[test]
fn hosts_stop_a_server_that_does_not_exit() {
    let work = WorkDir::new("rust_host_stubborn");
    let script = work.path("legacy_server.py");
    std::fs::write(&script, LEGACY_SERVER).expect("write the legacy server");
    let stubborn = format!("trap '' TERM; python3 {}; exec sleep 30", script.display());
    for &host in HOSTS {
        for allow_kill in [true, false] {
            let mut args = vec!["--shutdown-timeout", "0.3", "sh", "-c", &stubborn];
            if allow_kill {
                args.insert(0, "--allow-kill");
            }
            let started = Instant::now();
            let (out, t, report) = run_host(host, &args);
            let took = started.elapsed();
            let verdict = if allow_kill { "ok" } else { "FAILED" };
            let summary = format!("{verdict}: 4/4 expected responses received and checked");
            assert_eq!(t.summary, summary, "{report}");
            assert_eq!(
                out.status.code(),
                Some(if allow_kill { 0 } else { 1 }),
                "{report}"
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("did not exit within 300ms"), "{report}");
            assert!(
                stderr.contains("the server ignored SIGTERM: SIGKILL"),
                "{report}"
            );
            assert!(stderr.contains("killed by signal 9"), "{report}");
            assert!(took >= Duration::from_millis(600), "{took:?}: {report}");
            assert!(took < Duration::from_secs(5), "{took:?}: {report}");
        }
    }
}

/// A server that cannot be started: the summary says nothing was done.
#[test]
fn hosts_report_a_server_that_cannot_start() {
    for &host in HOSTS {
        let (out, t, report) = run_host(host, &["/nonexistent/mcp-server"]);
        assert_eq!(out.status.code(), Some(1), "{report}");
        assert_eq!(
            t.summary, "FAILED: 0/4 expected responses received and checked",
            "{report}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot start `/nonexistent/mcp-server`: No such file or directory"),
            "{report}"
        );
    }
}

// The README's "A host in Rust" (tests/readme_snippets.rs checks that the
// README shows exactly this).
// snippet-start readme-host
use mcp_stdio::{envelope, Command, Connection, Error, Event, StderrMode};
use std::time::Duration;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{}}"#;
const INIT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{},
    "clientInfo":{"name":"readme","version":"1"}}"#;

/// Sends a request, waits (10 s at most) for its answer: the response line, or `None`.
fn call(conn: &mut Connection, method: &str, params: &str) -> Result<Option<Vec<u8>>, Error> {
    let timeout = Duration::from_secs(10);
    let id = conn.request(method, Some(params.as_bytes()), Some(timeout))?;
    loop {
        match conn.next_event(None)? {
            Some(Event::Response { id: r, line, .. }) if r == id => return Ok(Some(line.to_vec())),
            Some(Event::RequestTimedOut { id: r } | Event::RequestFailed { id: r, .. })
                if r == id =>
            {
                return Ok(None);
            }
            _ => {} // the rest passes by (the server's stderr, its requests...)
        }
    }
}

/// Spawns `server`, calls `tool` with `args` (a JSON object), closes: the response line.
fn call_tool(server: &[&str], tool: &str, args: &str) -> Result<Option<Vec<u8>>, Error> {
    let mut cmd = Command::new(server[0]); // looked up in PATH
    cmd.args(&server[1..]).stderr(StderrMode::Inherit); // the server's log goes to ours
    let mut conn = Connection::spawn(&cmd)?;
    // MCP 2026-07-28 begins with server/discover; an older server answers it with an
    // error (or not at all) and gets the initialize handshake of 2025-11-25 instead.
    let probe = call(&mut conn, "server/discover", &format!("{{{META}}}"))?;
    let modern = probe.is_some_and(|line| envelope(&line).is_ok_and(|e| e.result.is_some()));
    if !modern && call(&mut conn, "initialize", INIT)?.is_some() {
        conn.notify("notifications/initialized", None)?;
    }
    let mut params = format!(r#"{{"name":"{tool}","arguments":{args}"#);
    if modern {
        params += &format!(",{META}"); // 2026-07-28: every request carries its _meta
    }
    let response = call(&mut conn, "tools/call", &(params + "}"))?;
    conn.close(Duration::from_secs(2))?; // close its stdin; SIGTERM at 2 s, SIGKILL at 4 s
    while !matches!(conn.next_event(None)?, Some(Event::Closed)) {} // until its exit is seen
    Ok(response)
}
// snippet-end readme-host

/// The README's host: against examples/mcp_server.c (2026-07-28: the probe
/// is request 1, the call 2) and against the legacy server (the probe 1,
/// initialize 2, the call 3; add, which the server answers without pinging
/// first: this host answers no request of the server's); an error response
/// is returned as such.
#[test]
fn readme_host_calls_a_tool() {
    let work = WorkDir::new("rust_host_readme");
    let server = build_example_server(&work);
    let server = server.to_str().unwrap();
    let script = work.path("legacy_server.py");
    std::fs::write(&script, LEGACY_SERVER).expect("write the legacy server");
    let legacy = ["python3", script.to_str().unwrap()];
    let response = |line: Option<Vec<u8>>| -> Value {
        serde_json::from_slice(&line.expect("a response")).expect("JSON")
    };

    let line = response(call_tool(&[server], "echo", r#"{"text":"h\u00e9llo"}"#).unwrap());
    assert_eq!(line["id"], 2);
    assert_eq!(
        line["result"]["content"],
        json!([{"type": "text", "text": "h\u{e9}llo"}])
    );

    let line = response(call_tool(&legacy, "add", r#"{"a":2,"b":40}"#).unwrap());
    assert_eq!(line["id"], 3);
    assert_eq!(line["result"]["content"][0]["text"], "42");

    let line = response(call_tool(&[server], "no-such-tool", "{}").unwrap());
    assert_eq!(line["error"]["code"], -32602);

    let missing = call_tool(&["/nonexistent/mcp-server"], "echo", "{}");
    assert_eq!(missing.unwrap_err().os_code(), Some(libc::ENOENT));
}

/// Both Rust hosts against the Rust server (`examples/server.rs`): the demo
/// session in 2026-07-28, checked as against the C server; the server's
/// stray `println!` reached the host as a stderr line, not in the stream.
#[test]
fn the_rust_server_serves_the_rust_hosts() {
    let server = example("server");
    for &host in HOSTS {
        let (out, t, report) = run_host(host, &[server.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(
            t.summary, "ok: 4/4 expected responses received and checked",
            "{report}"
        );
        assert_eq!(t.tools, ["echo", "add"], "{report}");
        assert_eq!(t.texts, ["hello from mcp-stdio", "5"], "{report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        for said in [
            format!("{host}: connected to mcp-stdio-rust-server"),
            format!("{host}: [server] server: this println! lands on stderr"),
            format!("{host}: [server] server: end of input, exiting"),
        ] {
            assert!(stderr.contains(&said), "{said:?} missing\n{report}");
        }
    }
}

/// The Rust server, fed a script on its stdin: every answer on stdout is
/// one JSON-RPC line, in order, and nothing else is there (the stray
/// `println!` went to stderr); it exits 0 at the end of its stdin.
#[test]
fn the_rust_server_answers_line_by_line() {
    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let script = [
        // An id token beyond i64 comes back byte for byte.
        r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        // 2025-06-18: bad arguments are -32602, not a tool result.
        r#"{"jsonrpc":"2.0","id":"a\u0041","method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1.5,"b":2}}}"#.to_owned(),
        "this is not JSON".to_owned(),
        r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#.to_owned(),
        r#"{"id":5}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/list"}"#.to_owned(),
        // 2026-07-28 requests: the version named in _meta rules.
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"add","arguments":{{"a":1}},{META}}}}}"#),
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{{{META}}}}}"#),
    ];
    let mut child = std::process::Command::new(example("server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the server");
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, (script.join("\n") + "\n").as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().expect("the server's output");
    let report = format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{report}");
    let text = String::from_utf8(out.stdout.clone()).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let replies: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}\n{report}")))
        .collect();
    assert_eq!(replies.len(), 11, "{report}"); // the notification has none
    assert!(
        lines[0].starts_with(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"#),
        "{report}"
    );
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
    assert!(lines[1].contains(r#""id":"a\u0041""#), "{report}");
    assert_eq!(replies[1]["error"]["code"], -32602);
    assert_eq!(replies[2]["id"], 3);
    assert_eq!(replies[2]["result"]["content"][0]["text"], "3.5");
    assert_eq!(replies[2]["result"]["isError"], false);
    let error = |r: &Value| (r.get("id").cloned(), r["error"]["code"].clone());
    assert_eq!(error(&replies[3]), (None, json!(-32700)), "{report}");
    assert_eq!(error(&replies[4]), (None, json!(-32600)), "{report}");
    assert_eq!(error(&replies[5]), (None, json!(-32600)), "{report}");
    assert_eq!(
        error(&replies[6]),
        (Some(json!(6)), json!(-32601)),
        "{report}"
    );
    // 2026-07-28: a tool's failure is its result, and every result is complete.
    assert_eq!(replies[7]["id"], 7);
    assert_eq!(replies[7]["result"]["isError"], true, "{report}");
    assert_eq!(replies[7]["result"]["resultType"], "complete");
    assert_eq!(
        error(&replies[8]),
        (Some(json!(8)), json!(-32022)),
        "{report}"
    );
    assert_eq!(
        replies[8]["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    assert_eq!(
        error(&replies[9]),
        (Some(json!(9)), json!(-32602)),
        "{report}"
    );
    // A 2026-07-28 list is cacheable: it says for how long and for whom.
    let list = &replies[10]["result"];
    assert_eq!(list["tools"][1]["name"], "add", "{report}");
    assert_eq!(
        (&list["ttlMs"], &list["cacheScope"]),
        (&json!(3_600_000), &json!("public"))
    );
    assert_eq!(
        list["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-stdio-rust-server"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server: this println! lands on stderr"),
        "{report}"
    );
    assert!(!text.contains("println!"), "{report}");
}
