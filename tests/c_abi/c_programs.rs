//! The C test programs of `tests/c` linked against the shared library and
//! against the static one, run plain, under valgrind (shared) and under
//! ASan+UBSan (static); and the native libraries a static link needs.

use std::env;
use std::fs;
use std::process::Command;

use crate::toolchain::compile::{as_strs, build_shared, compile_c, SANITIZE};
use crate::toolchain::library::{lib, needed, static_link_args, NATIVE_STATIC_LIBS};
use crate::toolchain::program_output::{
    check_program_output, finish, no_sanitizer_report, no_valgrind_errors,
};
use crate::toolchain::run::{run, run_ok, under_valgrind, with_sanitizer_options};
use crate::toolchain::sources::c_source;
use crate::toolchain::work_dir::WorkDir;

/// The C test programs in tests/c (one idea per file). test_panic.c is not
/// one of them: it needs the panic-injection build (see `panics`).
const C_TESTS: &[&str] = &[
    "test_args",
    "test_reader",
    "test_limits",
    "test_flags_jsonrpc",
    "test_encode",
    "test_meta",
    "test_envelope",
    "test_transport",
    "test_spawn",
    "test_stdio_fds",
    "test_reaping",
    "test_bounds",
];

// ---------------------------------------------------------------------------
// shared library

#[test]
fn c_tests_pass_linked_against_shared_lib() {
    let lib = lib();
    let work = WorkDir::new("shared");
    let results = C_TESTS
        .iter()
        .map(|name| {
            let r = build_shared(name, &lib, &work).and_then(|(exe, ld_path)| {
                let (desc, out) = run(Command::new(&exe).env("LD_LIBRARY_PATH", ld_path));
                check_program_output(&desc, &out)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("shared", results);
}

// ---------------------------------------------------------------------------
// static library

#[test]
fn c_tests_pass_linked_against_static_lib() {
    let lib = lib();
    let work = WorkDir::new("static");
    let link = static_link_args(&lib);
    let results = C_TESTS
        .iter()
        .map(|name| {
            let exe = work.path(&format!("{name}-static"));
            let r = compile_c(&c_source(name), &exe, &[], &as_strs(&link)).and_then(|()| {
                let deps = needed(&exe);
                if deps.iter().any(|n| n.starts_with("libmcp_stdio")) {
                    return Err(format!("static build still needs the shared lib: {deps:?}"));
                }
                let (desc, out) = run(Command::new(&exe).env_remove("LD_LIBRARY_PATH"));
                check_program_output(&desc, &out)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("static", results);
}

/// The hard-coded NATIVE_STATIC_LIBS are what this toolchain's rustc says a
/// staticlib needs (std only: the crate's dependencies add no native libs).
#[test]
fn static_link_native_libs_match_rustc() {
    let work = WorkDir::new("native-libs");
    let src = work.path("empty.rs");
    fs::write(&src, "pub fn f() {}\n").unwrap();
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = run_ok(
        Command::new(rustc)
            .args([
                "--crate-type",
                "staticlib",
                "--crate-name",
                "empty",
                "--print",
                "native-static-libs",
            ])
            .arg("--out-dir")
            .arg(work.dir())
            .arg(&src),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| {
            l.split_once("native-static-libs:")
                .map(|(_, r)| r.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no native-static-libs note in rustc output:\n{stderr}"));
    let mut want: Vec<&str> = line.split_whitespace().collect();
    let mut have: Vec<&str> = NATIVE_STATIC_LIBS.to_vec();
    want.sort_unstable();
    want.dedup();
    have.sort_unstable();
    assert_eq!(
        have, want,
        "NATIVE_STATIC_LIBS differs from rustc's native-static-libs: {line}"
    );
}

// ---------------------------------------------------------------------------
// valgrind (shared-lib build)

#[test]
fn c_tests_pass_under_valgrind() {
    let lib = lib();
    let work = WorkDir::new("valgrind");
    let results = C_TESTS
        .iter()
        .map(|name| {
            let r = build_shared(name, &lib, &work).and_then(|(exe, ld_path)| {
                let (desc, out) = run(under_valgrind(&exe).env("LD_LIBRARY_PATH", ld_path));
                let passed = check_program_output(&desc, &out)?;
                no_valgrind_errors(&desc, &out)?;
                Ok(passed)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("valgrind", results);
}

// ---------------------------------------------------------------------------
// AddressSanitizer + UndefinedBehaviorSanitizer (static link)

#[test]
fn c_tests_pass_under_asan_and_ubsan() {
    let lib = lib();
    let work = WorkDir::new("asan");
    let link = static_link_args(&lib);
    let results = C_TESTS
        .iter()
        .map(|name| {
            let exe = work.path(&format!("{name}-asan"));
            let r = compile_c(&c_source(name), &exe, SANITIZE, &as_strs(&link)).and_then(|()| {
                let (desc, out) = run(with_sanitizer_options(
                    Command::new(&exe).env_remove("LD_LIBRARY_PATH"),
                ));
                let passed = check_program_output(&desc, &out)?;
                no_sanitizer_report(&desc, &out)?;
                Ok(passed)
            });
            (name.to_string(), r)
        })
        .collect();
    finish("asan+ubsan", results);
}
