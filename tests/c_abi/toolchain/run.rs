//! Running tools and test programs: plain, under valgrind, with the
//! sanitizers' settings. A tool that cannot be started is a failure, not a skip.

use std::path::Path;
use std::process::{Command, Output};

/// The Debian packages these tests need (named when a tool is missing).
const CI_PACKAGES: &str = "gcc g++ libc6-dev libasan8 libubsan1 binutils valgrind";

/// The command line, with the environment it sets, for messages.
fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            s.push_str(&format!("{}={} ", k.to_string_lossy(), v.to_string_lossy()));
        }
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// A command's status and output, for failure messages.
pub fn report(cmd: &str, out: &Output) -> String {
    format!(
        "command: {cmd}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command; a tool that cannot be started is a failure, not a skip.
/// Returns the command line (for messages) and the output.
pub fn run(cmd: &mut Command) -> (String, Output) {
    let desc = describe(cmd);
    match cmd.output() {
        Ok(out) => (desc, out),
        Err(e) => panic!(
            "could not run `{desc}`: {e}\n(is `{}` installed? these tests need the Debian \
             packages: {CI_PACKAGES})",
            cmd.get_program().to_string_lossy()
        ),
    }
}

/// Runs a command that must succeed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let (desc, out) = run(cmd);
    assert!(
        out.status.success(),
        "command failed\n{}",
        report(&desc, &out)
    );
    out
}

/// The stdout of a command that must succeed.
pub fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(run_ok(cmd).stdout).expect("tool output is UTF-8")
}

/// `valgrind <options> <exe>`: any invalid access, and any definite or
/// indirect leak, is an error (exit status 1). "Still reachable" blocks (the
/// panic machinery may keep some) are not errors. Check the result with
/// `program_output::no_valgrind_errors`.
pub fn under_valgrind(exe: &Path) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.args([
        "--error-exitcode=1",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite,indirect",
    ])
    .arg(exe);
    cmd
}

/// ASan and UBSan settings for a sanitized test program: leaks detected,
/// every report fatal, stack traces printed. Check the result with
/// `program_output::no_sanitizer_report`.
pub fn with_sanitizer_options(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "ASAN_OPTIONS",
        "detect_leaks=1:halt_on_error=1:abort_on_error=0",
    )
    .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
}
