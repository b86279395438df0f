//! The client transport under rmcp (`().serve(transport)`, as a host uses
//! it) against stand-in servers that misbehave, and against the rmcp
//! server example on the server transport: a death at once or mid-call
//! fails the waiting request with the reason, the close (or a drop, or a
//! runtime that goes away) ends the whole process tree, junk on stdout is
//! reported and skipped, stderr comes as lines, and a command setting that
//! cannot carry over is refused.
#![cfg(unix)]

mod support;

// The library's own test helpers: processes gone, reaped.
#[path = "../../../tests/connection_common/mod.rs"]
mod common;

use common::{gone, gone_within, reaped};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_stdio_rmcp::{ChildProcess, SpawnError, CONNECTION_CLOSED};
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use rmcp::ServiceExt;

/// A stand-in MCP server in sh: answers `initialize` and `tools/list`, runs
/// `on_call` for a `tools/call`, after running `at_start`.
fn stand_in(at_start: &str, on_call: &str) -> tokio::process::Command {
    let script = format!(
        r#"{at_start}
        while IFS= read -r line; do
          id=$(printf '%s' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":\([0-9][0-9]*\).*/\1/p')
          case "$line" in
          *'"method":"initialize"'*) echo '{{"jsonrpc":"2.0","id":'$id',"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"stand-in","version":"1"}}}}}}' ;;
          *'"method":"tools/list"'*) echo '{{"jsonrpc":"2.0","id":'$id',"result":{{"tools":[]}}}}' ;;
          *'"method":"tools/call"'*) {on_call} ;;
          esac
        done"#
    );
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(script);
    cmd
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Lines collected from a hook.
type Lines = Arc<Mutex<Vec<String>>>;

/// Collects the stderr lines a transport hands over.
fn stderr_sink() -> (Lines, impl FnMut(&[u8]) + Send + 'static) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = lines.clone();
    (lines, move |line: &[u8]| {
        kept.lock()
            .unwrap()
            .push(String::from_utf8_lossy(line).into_owned())
    })
}

#[test]
fn a_server_that_dies_at_once_fails_the_handshake_with_why() {
    runtime().block_on(async {
        let cmd = stand_in(
            "echo \"ModuleNotFoundError: No module named 'foo'\" >&2; exit 3",
            "",
        );
        let started = Instant::now();
        let transport = ChildProcess::new(cmd).unwrap();
        let error = ().serve(transport).await.map(|_| ()).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(
                "server exited with code 3 before its first message: \
                 ModuleNotFoundError: No module named 'foo'"
            ),
            "{text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    });
}

#[test]
fn a_server_that_dies_mid_call_fails_the_call_with_why() {
    runtime().block_on(async {
        let cmd = stand_in("", "echo 'panic: out of cheese' >&2; exit 9");
        let (stderr, hook) = stderr_sink();
        let transport = ChildProcess::builder(cmd).stderr(hook).spawn().unwrap();
        let pid = transport.id().unwrap();
        let client = ().serve(transport).await.unwrap();
        let error = client
            .call_tool(CallToolRequestParams::new("anything"))
            .await
            .unwrap_err();
        match &error {
            ServiceError::McpError(e) => {
                assert_eq!(e.code, CONNECTION_CLOSED);
                assert_eq!(e.message, "server exited with code 9: panic: out of cheese");
                assert_eq!(e.data.as_ref().unwrap()["exitCode"], 9);
            }
            other => panic!("{other:?}"),
        }
        client.cancel().await.unwrap();
        assert_eq!(stderr.lock().unwrap().as_slice(), ["panic: out of cheese"]);
        assert!(reaped(pid));
    });
}

#[test]
fn the_close_ends_the_whole_tree_and_reaps_it() {
    runtime().block_on(async {
        // A launcher's child (npx's node, say) in the server's group, holding
        // none of the pipes; its pid on stderr.
        let cmd = stand_in("sleep 300 </dev/null >/dev/null 2>&1 & echo $! >&2", "");
        let (stderr, hook) = stderr_sink();
        let transport = ChildProcess::builder(cmd).stderr(hook).spawn().unwrap();
        let pid = transport.id().unwrap();
        let client = ().serve(transport).await.unwrap();
        client.list_all_tools().await.unwrap();
        let grandchild: u32 = stderr.lock().unwrap()[0].parse().unwrap();
        assert!(!gone(grandchild));
        let closing = Instant::now();
        client.cancel().await.unwrap();
        println!("closed in {:?}", closing.elapsed());
        assert!(reaped(pid), "the server was reaped by the close");
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "its group was signalled"
        );
    });
}

#[test]
fn a_runtime_that_goes_away_still_ends_the_tree() {
    // The host drops everything without a close, and its runtime with it:
    // the transport's own thread runs the shutdown.
    let rt = runtime();
    let (stderr, hook) = stderr_sink();
    let pid = rt.block_on(async {
        // A server that ignores SIGTERM: SIGKILL at twice the grace.
        let cmd = stand_in(
            "trap '' TERM; sleep 300 </dev/null >/dev/null 2>&1 & echo $! >&2",
            "",
        );
        let transport = ChildProcess::builder(cmd)
            .grace(Duration::from_millis(200))
            .stderr(hook)
            .spawn()
            .unwrap();
        let pid = transport.id().unwrap();
        let client = ().serve(transport).await.unwrap();
        client.list_all_tools().await.unwrap();
        std::mem::forget(client); // not even rmcp's drop guard runs
        pid
    });
    let grandchild: u32 = stderr.lock().unwrap()[0].parse().unwrap();
    rt.shutdown_background();
    assert!(gone_within(pid, Duration::from_secs(5)));
    assert!(gone_within(grandchild, Duration::from_secs(5)));
}

#[test]
fn a_line_of_junk_is_reported_and_skipped() {
    runtime().block_on(async {
        let cmd = stand_in("echo 'Loading config from /etc/thing...'", "");
        let junk = Arc::new(Mutex::new(Vec::new()));
        let seen = junk.clone();
        let transport = ChildProcess::builder(cmd)
            .invalid_line(move |bad| {
                seen.lock()
                    .unwrap()
                    .push((bad.line.map(<[u8]>::to_vec), bad.why.to_owned()))
            })
            .spawn()
            .unwrap();
        let client = ().serve(transport).await.unwrap();
        assert!(client.list_all_tools().await.unwrap().is_empty());
        client.cancel().await.unwrap();
        assert_eq!(
            junk.lock().unwrap().as_slice(),
            [(
                Some(b"Loading config from /etc/thing...".to_vec()),
                "not JSON".to_owned()
            )]
        );
    });
}

#[test]
fn a_setting_that_cannot_carry_over_is_refused() {
    let mut cmd = tokio::process::Command::new("true");
    cmd.stdout(std::process::Stdio::null());
    match ChildProcess::new(cmd) {
        Err(SpawnError::Convert(e)) => assert_eq!(e.setting, "stdout"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("spawned"),
    }
}

#[test]
fn our_client_and_our_server_transport_under_rmcp() {
    runtime().block_on(async {
        let server = support::example("rmcp_server");
        assert!(
            server.exists(),
            "{server:?}: build the examples (cargo test does)"
        );
        let (stderr, hook) = stderr_sink();
        let transport = ChildProcess::builder(tokio::process::Command::new(&server))
            .stderr(hook)
            .spawn()
            .unwrap();
        let client = ().serve(transport).await.unwrap();
        let names: Vec<_> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["echo", "stray_print"]);
        let args = serde_json::json!({"text": "héllo ✓"});
        let echoed = client
            .call_tool(
                CallToolRequestParams::new("echo")
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&echoed.content).unwrap()[0]["text"],
            "héllo ✓"
        );
        // The server's println! went to its stderr, not into the stream.
        let printed = client
            .call_tool(CallToolRequestParams::new("stray_print"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&printed.content).unwrap()[0]["text"],
            "printed"
        );
        client.cancel().await.unwrap();
        assert!(stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l == "a stray print: the stdout guard sends it to stderr"));
    });
}
