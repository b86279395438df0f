//! Judging what a test program printed: its summary line, valgrind's and the
//! sanitizers' reports, and the verdict over several programs.

use std::process::Output;

use super::run::report;

/// Checks the result of one test program: exit status 0 and a last stdout
/// line `N passed, 0 failed` with N > 0. Returns N.
pub fn check_program_output(desc: &str, out: &Output) -> Result<u64, String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let counts = parse_summary(last);
    match (out.status.success(), counts) {
        (true, Some((passed, 0))) if passed > 0 => Ok(passed),
        _ => Err(format!(
            "test program failed (want exit status 0 and a last line `N passed, 0 failed`, \
             got last line {last:?})\n{}",
            report(desc, out)
        )),
    }
}

/// `N passed, M failed` (tests/c/test_util.h's check_summary) as (N, M).
fn parse_summary(line: &str) -> Option<(u64, u64)> {
    let (p, rest) = line.trim().split_once(" passed, ")?;
    let f = rest.strip_suffix(" failed")?;
    Some((p.parse().ok()?, f.parse().ok()?))
}

/// Fails when valgrind's summary (on stderr) counts any error.
pub fn no_valgrind_errors(desc: &str, out: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.contains("ERROR SUMMARY: 0 errors") {
        return Err(format!("valgrind reported errors\n{}", report(desc, out)));
    }
    Ok(())
}

/// Fails when a sanitized program's stderr holds a sanitizer report.
pub fn no_sanitizer_report(desc: &str, out: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    for marker in [
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
    ] {
        if stderr.contains(marker) {
            return Err(format!(
                "sanitizer report ({marker})\n{}",
                report(desc, out)
            ));
        }
    }
    Ok(())
}

/// The verdict over several programs (`name`, result): prints the passes,
/// fails with every failure.
pub fn finish(what: &str, results: Vec<(String, Result<u64, String>)>) {
    let mut failures = Vec::new();
    for (name, r) in &results {
        match r {
            Ok(n) => eprintln!("{what}: {name}: {n} checks passed"),
            Err(e) => failures.push(format!("===== {what}: {name} =====\n{e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}
