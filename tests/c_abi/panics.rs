//! Panics never cross the boundary: `tests/c/test_panic.c` against a library
//! built with the `panic-injection` feature (plain, under valgrind, under
//! ASan+UBSan); and the normal build has no panic injection.
//!
//! The functions to arm come from the header: every `mcp_*` function that
//! `include/mcp_stdio.h` declares, given to test_panic on its command line.
//! test_panic.c arms each one in turn, printing `test_panic: armed <name>` on
//! stderr, calls it and checks that it returns its panic value, then disarms
//! it (`test_panic: disarmed <name>`). The panic hook's `injected panic in
//! <name>` between the two proves that the call did panic.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::toolchain::compile::{as_strs, compile_c, SANITIZE};
use crate::toolchain::library::{lib, panic_injection_static_lib, static_link_args_for};
use crate::toolchain::program_output::{
    check_program_output, finish, no_sanitizer_report, no_valgrind_errors,
};
use crate::toolchain::run::{report, run, stdout_of, under_valgrind, with_sanitizer_options};
use crate::toolchain::sources::{c_source, header, include_dir};
use crate::toolchain::work_dir::WorkDir;

/// The test-only entry point of the panic-injection build; never in the header.
const INJECT: &str = "mcp_test_inject_panic";

/// Every `mcp_*` function that include/mcp_stdio.h declares, in the header's
/// order, as the C compiler sees it on this platform (`cc -E`: comments
/// gone, `#if`s decided), without the test-only `mcp_test_inject_panic`.
/// test_panic.c must make each of them panic.
fn header_functions() -> Vec<String> {
    let code = stdout_of(
        Command::new("cc")
            .args(["-x", "c", "-std=c99", "-E", "-P", "-I"])
            .arg(include_dir())
            .arg(header()),
    );
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut names: Vec<String> = Vec::new();
    let mut rest = code.as_str();
    // A declaration is the only place where a name `mcp_...` is followed by `(`.
    while let Some(at) = rest.find("mcp_") {
        let starts_a_name = at == 0 || !is_ident(rest.as_bytes()[at - 1]);
        let from = &rest[at..];
        let len = from.bytes().take_while(|&b| is_ident(b)).count();
        let name = &from[..len];
        rest = &from[len..];
        if starts_a_name
            && rest.trim_start().starts_with('(')
            && name != INJECT
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
    names
}

/// Defined symbol names in an object, archive or (with `-D`) shared library.
fn defined_symbols(nm_args: &[&str], file: &Path) -> Vec<String> {
    // `nm` on an archive warns "no symbols" on stderr for some members: fine.
    let out = stdout_of(
        Command::new("nm")
            .args(nm_args)
            .arg("--defined-only")
            .arg(file),
    );
    out.lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_string)
        .collect()
}

/// Checks one run of test_panic: every function of the header was armed and
/// panicked while armed (those that were not, or did not, are named), and
/// the usual summary.
fn check_panic_program(desc: &str, out: &Output, functions: &[String]) -> Result<u64, String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut armed_now: Option<&str> = None;
    let mut armed = BTreeSet::new();
    let mut panicked = BTreeSet::new();
    for line in stderr.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("test_panic: armed ") {
            armed_now = Some(name);
            armed.insert(name);
        } else if line.starts_with("test_panic: disarmed ") {
            armed_now = None;
        } else if let Some(name) = line.strip_prefix("injected panic in ") {
            if armed_now == Some(name) {
                panicked.insert(name);
            }
        }
    }
    let never_armed: Vec<&str> = functions
        .iter()
        .map(String::as_str)
        .filter(|f| !armed.contains(f))
        .collect();
    let no_panic: Vec<&str> = functions
        .iter()
        .map(String::as_str)
        .filter(|f| armed.contains(f) && !panicked.contains(f))
        .collect();
    let mut problems = Vec::new();
    if !no_panic.is_empty() {
        problems.push(format!(
            "functions of include/mcp_stdio.h that did not panic when armed (no `injected panic \
             in <name>` on stderr between `test_panic: armed <name>` and `test_panic: disarmed \
             <name>`; each needs a fault point named after it): {no_panic:?}"
        ));
    }
    if !never_armed.is_empty() {
        problems.push(format!(
            "functions of include/mcp_stdio.h that test_panic.c never armed (each needs a case \
             in its PANIC_CASES): {never_armed:?}"
        ));
    }
    if !problems.is_empty() {
        return Err(format!("{}\n{}", problems.join("\n"), report(desc, out)));
    }
    check_program_output(desc, out)
}

#[test]
fn c_panics_are_caught_at_the_boundary() {
    let functions = header_functions();
    assert!(
        functions.len() >= 15,
        "expected at least the 15 functions of include/mcp_stdio.h, found {functions:?}"
    );
    eprintln!("functions in include/mcp_stdio.h: {functions:?}");
    let static_lib = panic_injection_static_lib()
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        defined_symbols(&[], static_lib).iter().any(|s| s == INJECT),
        "{} (built with --features panic-injection) does not define mcp_test_inject_panic",
        static_lib.display()
    );

    let work = WorkDir::new("panic");
    let link = static_link_args_for(static_lib);
    let src = c_source("test_panic");
    // The functions to arm are the arguments. The panic hook prints one
    // message per panic; a backtrace each would only slow valgrind down.
    let program = |cmd: &mut Command| {
        cmd.args(&functions)
            .env_remove("LD_LIBRARY_PATH")
            .env("RUST_BACKTRACE", "0");
    };
    let mut results = Vec::new();

    // (a) plain
    let exe = work.path("test_panic");
    let plain = compile_c(&src, &exe, &[], &as_strs(&link)).and_then(|()| {
        let mut cmd = Command::new(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &functions)
    });
    results.push(("plain".to_string(), plain));

    // (b) valgrind: no invalid access, no definite or indirect leak.
    let valgrind = if exe.is_file() {
        let mut cmd = under_valgrind(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &functions).and_then(|passed| {
            no_valgrind_errors(&desc, &out)?;
            Ok(passed)
        })
    } else {
        Err("not run: the program did not build".to_string())
    };
    results.push(("valgrind".to_string(), valgrind));

    // (c) AddressSanitizer + UndefinedBehaviorSanitizer on the C side.
    let asan_exe = work.path("test_panic-asan");
    let asan = compile_c(&src, &asan_exe, SANITIZE, &as_strs(&link)).and_then(|()| {
        let mut cmd = Command::new(&asan_exe);
        program(&mut cmd);
        let (desc, out) = run(with_sanitizer_options(&mut cmd));
        let passed = check_panic_program(&desc, &out, &functions)?;
        no_sanitizer_report(&desc, &out)?;
        Ok(passed)
    });
    results.push(("asan+ubsan".to_string(), asan));

    finish("panic", results);
}

/// The library the other tests use (a normal build, as shipped) has no
/// panic injection: `mcp_test_inject_panic` is neither exported by the shared
/// library nor defined in the static one. (`cargo test --features
/// panic-injection` builds it in on purpose: then it must be there.)
#[test]
fn normal_build_has_no_panic_injection() {
    let lib = lib();
    let injected = cfg!(feature = "panic-injection");
    for (what, args, file) in [
        ("shared", &["-D"][..], &lib.shared),
        ("static", &[][..], &lib.static_),
    ] {
        let has = defined_symbols(args, file).iter().any(|s| s == INJECT);
        assert_eq!(
            has,
            injected,
            "the {what} library {} {} mcp_test_inject_panic (feature panic-injection is {})",
            file.display(),
            if has { "defines" } else { "does not define" },
            if injected { "on" } else { "off" }
        );
    }
    let header = fs::read_to_string(header()).expect("read the header");
    assert!(
        !header.contains(INJECT),
        "the public header must not declare the test-only mcp_test_inject_panic"
    );
}
