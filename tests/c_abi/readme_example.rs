//! The README's C example is real code: it builds against the static library
//! and does what the README says.

use std::fs;
use std::process::Command;

use crate::toolchain::compile::{as_strs, compile_c};
use crate::toolchain::library::{lib, static_link_args};
use crate::toolchain::run::report;
use crate::toolchain::sources::manifest_dir;
use crate::toolchain::work_dir::WorkDir;

#[test]
fn readme_c_example_builds_and_runs() {
    let lib = lib();
    let work = WorkDir::new("readme");
    let readme = fs::read_to_string(manifest_dir().join("README.md")).expect("README.md");
    let start = readme.find("```c\n").expect("README.md has a ```c block") + "```c\n".len();
    let len = readme[start..]
        .find("```")
        .expect("the ```c block is closed");
    let src = work.path("readme_example.c");
    fs::write(&src, &readme[start..start + len]).expect("write the example");
    let exe = work.path("readme_example");
    let link = static_link_args(&lib);
    compile_c(&src, &exe, &["-D_POSIX_C_SOURCE=200809L"], &as_strs(&link))
        .unwrap_or_else(|e| panic!("{e}"));

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
