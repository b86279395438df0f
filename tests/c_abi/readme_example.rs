//! The README's C examples are real code: they build against the static
//! library and do what the README says.

use std::fs;
use std::process::Command;

use crate::toolchain::compile::{as_strs, compile_c};
use crate::toolchain::library::{lib, static_link_args};
use crate::toolchain::run::report;
use crate::toolchain::sources::manifest_dir;
use crate::toolchain::work_dir::WorkDir;

/// The first ```c block of the README section `heading`, compiled against
/// the static library in `work`; returns the executable.
fn build_readme_example(work: &WorkDir, heading: &str, name: &str) -> std::path::PathBuf {
    let lib = lib();
    let readme = fs::read_to_string(manifest_dir().join("README.md")).expect("README.md");
    let section = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README.md has {heading}"));
    let start = section
        + readme[section..]
            .find("```c\n")
            .unwrap_or_else(|| panic!("{heading} has a ```c block"))
        + "```c\n".len();
    let len = readme[start..]
        .find("```")
        .expect("the ```c block is closed");
    let src = work.path(&format!("{name}.c"));
    fs::write(&src, &readme[start..start + len]).expect("write the example");
    let exe = work.path(name);
    let link = static_link_args(&lib);
    compile_c(&src, &exe, &["-D_POSIX_C_SOURCE=200809L"], &as_strs(&link))
        .unwrap_or_else(|e| panic!("{e}"));
    exe
}

/// `examples/mcp_server.c`, compiled against the static library in `work`.
fn build_example_server(work: &WorkDir) -> std::path::PathBuf {
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

/// "A host in C": it spawns `examples/mcp_server.c`, which speaks MCP
/// 2026-07-28 (so no `initialize`: the probe is request 1, the call 2), calls
/// a tool, prints the response and closes; the server exits by itself.
#[test]
fn readme_host_example_calls_a_tool() {
    let work = WorkDir::new("readme_host");
    let host = build_readme_example(&work, "## A host in C", "readme_host");
    let server = build_example_server(&work);
    let call = |tool: &str, args: &str| {
        let out = Command::new(&host)
            .args([tool, args])
            .arg(&server)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the README host");
        let report = report("readme_host", &out);
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        let response: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {report}"));
        (out, response, report)
    };

    let (out, response, report) = call("echo", "{\"text\":\"h\u{e9}llo \\u2713\"}");
    assert!(out.status.success(), "{report}");
    assert_eq!(response["id"], 2, "{report}");
    assert_eq!(response["result"]["resultType"], "complete", "{report}");
    assert_eq!(
        response["result"]["content"],
        serde_json::json!([{"type": "text", "text": "h\u{e9}llo \u{2713}"}]),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcp_server: end of input, exiting"),
        "{report}"
    );

    let (out, response, report) = call("add", "{\"a\":2,\"b\":40}");
    assert!(out.status.success(), "{report}");
    assert_eq!(response["result"]["content"][0]["text"], "42", "{report}");

    // An error response is printed too, and the exit status says so.
    let (out, response, report) = call("no-such-tool", "{}");
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(response["error"]["code"], -32602, "{report}");
}

/// "A transport in C": the client runs against a scripted server that
/// answers `initialize`, sends a junk line and a request of its own before
/// answering `tools/list`, and then sees the client's end of stream (its
/// close) before closing its own side.
#[test]
fn readme_transport_example_talks_to_a_server() {
    use std::io::{BufRead, BufReader, Write};

    let work = WorkDir::new("readme_transport");
    let exe = build_readme_example(&work, "## A transport in C", "readme_transport");
    let mut child = Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the README transport example");
    let mut to_client = child.stdin.take().expect("stdin");
    let mut from_client = BufReader::new(child.stdout.take().expect("stdout"));
    let mut next_line = || {
        let mut line = String::new();
        from_client
            .read_line(&mut line)
            .expect("read from the client");
        line
    };
    let json = |line: &str| -> serde_json::Value {
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };

    let init = json(&next_line());
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["id"], 1);
    to_client
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\
              \"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"scripted\",\"version\":\"1\"}}}\n",
        )
        .expect("answer initialize");
    assert_eq!(json(&next_line())["method"], "notifications/initialized");
    let list = json(&next_line());
    assert_eq!(list["method"], "tools/list");
    assert_eq!(list["id"], 2);
    // Before the answer: junk, and a request of the server's own.
    to_client
        .write_all(
            b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n",
        )
        .expect("send junk and a request");
    let refusal = json(&next_line());
    assert_eq!(refusal["id"], "s1");
    assert_eq!(refusal["error"]["code"], -32601);
    to_client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}\n")
        .expect("answer tools/list");
    // The client closes: its stdout ends once its queue is written.
    assert_eq!(next_line(), "", "end of stream after the client's close");
    drop(to_client); // the server's end: the client's CLOSED comes now, not after the grace
    let started = std::time::Instant::now();
    let out = child.wait_with_output().expect("wait for the example");
    let report = report("readme_transport", &out);
    assert!(out.status.success(), "{report}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1500),
        "the client waited for its grace instead of the server's end: {report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("initialize: {\"protocolVersion\""),
        "{report}"
    );
    assert!(
        stderr.contains("junk from the server: 16 bytes"),
        "{report}"
    );
    assert!(
        stderr.contains("tools/list: {\"tools\":[{\"name\":\"echo\"}]}"),
        "{report}"
    );
}
