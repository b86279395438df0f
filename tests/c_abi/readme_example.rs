//! The README's C example is real code: it builds against the static library
//! and does what the README says.

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

#[test]
fn readme_c_example_builds_and_runs() {
    let work = WorkDir::new("readme");
    let exe = build_readme_example(&work, "## A C host in ten lines", "readme_example");

    use std::io::Write;
    let mut child = Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the README example");
    // A stream ending without a newline: the last message must still come out.
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"{\"id\":1}\r\nnot json\n{\"id\":2}")
        .expect("write to the example");
    let out = child.wait_with_output().expect("wait for the example");
    let report = report("readme_example", &out);
    assert!(out.status.success(), "{report}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "message: {\"id\":1}\nmessage: {\"id\":2}\n",
        "{report}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a message (kind 1, 8 bytes)"),
        "{report}"
    );
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
