//! Panics never cross the boundary: `tests/c/test_panic.c` against a library
//! built with the `panic-injection` feature (plain, under valgrind, under
//! ASan+UBSan); and the normal build has no panic injection.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::toolchain::compile::{as_strs, compile_c, SANITIZE};
use crate::toolchain::library::{lib, panic_injection_static_lib, static_link_args_for};
use crate::toolchain::program_output::{
    check_program_output, finish, no_sanitizer_report, no_valgrind_errors,
};
use crate::toolchain::run::{report, run, stdout_of, under_valgrind, with_sanitizer_options};
use crate::toolchain::sources::{c_source, header, manifest_dir};
use crate::toolchain::work_dir::WorkDir;

/// The entry points with a fault point, read from src/ffi: every
/// `fault_point("name")`, and every `with_reader(<reader>, "name", ...)` (the
/// reader calls, whose fault point is inside `with_reader`). test_panic.c
/// must make each of them panic.
fn fault_points_in_source() -> Vec<String> {
    let dir = manifest_dir().join("src").join("ffi");
    let mut names = Vec::new();
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter(|p| p.file_name().is_some_and(|n| n != "tests.rs"))
        .collect();
    files.sort();
    for file in files {
        let text = fs::read_to_string(&file).expect("read src/ffi");
        // Whitespace removed, so that rustfmt's line breaks do not matter.
        let code: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let literal_at = |s: &str| {
            s.strip_prefix('"')?
                .split_once('"')
                .map(|(n, _)| n.to_string())
        };
        for (i, _) in code.match_indices("fault_point(\"") {
            names.extend(literal_at(&code[i + "fault_point(".len()..]));
        }
        for (i, _) in code.match_indices("with_reader(") {
            let args = &code[i + "with_reader(".len()..];
            if let Some((_, rest)) = args.split_once(',') {
                names.extend(literal_at(rest)); // None for the definition's parameter list
            }
        }
    }
    names.sort();
    names.dedup();
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

/// Checks one run of test_panic: the usual summary, plus the panic hook's
/// message on stderr for every fault point (so each one did panic, and the
/// process lived on to print the summary).
fn check_panic_program(desc: &str, out: &Output, fault_points: &[String]) -> Result<u64, String> {
    let passed = check_program_output(desc, out)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missing: Vec<&String> = fault_points
        .iter()
        .filter(|name| {
            let want = format!("injected panic in {name}");
            !stderr.lines().any(|l| l.trim() == want)
        })
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "test_panic.c never made these entry points panic (no `injected panic in <name>` \
             on stderr): {missing:?}; every fault point in src/ffi needs a case there\n{}",
            report(desc, out)
        ));
    }
    Ok(passed)
}

#[test]
fn c_panics_are_caught_at_the_boundary() {
    let fault_points = fault_points_in_source();
    assert!(
        fault_points.len() >= 12,
        "expected at least the 12 fault points of src/ffi, found {fault_points:?}"
    );
    eprintln!("fault points in src/ffi: {fault_points:?}");
    let static_lib = panic_injection_static_lib()
        .as_ref()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        defined_symbols(&[], static_lib)
            .iter()
            .any(|s| s == "mcp_test_inject_panic"),
        "{} (built with --features panic-injection) does not define mcp_test_inject_panic",
        static_lib.display()
    );

    let work = WorkDir::new("panic");
    let link = static_link_args_for(static_lib);
    let src = c_source("test_panic");
    // The panic hook prints one message per panic; a backtrace each would
    // only slow valgrind down.
    let program = |cmd: &mut Command| {
        cmd.env_remove("LD_LIBRARY_PATH").env("RUST_BACKTRACE", "0");
    };
    let mut results = Vec::new();

    // (a) plain
    let exe = work.path("test_panic");
    let plain = compile_c(&src, &exe, &[], &as_strs(&link)).and_then(|()| {
        let mut cmd = Command::new(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &fault_points)
    });
    results.push(("plain".to_string(), plain));

    // (b) valgrind: no invalid access, no definite or indirect leak.
    let valgrind = if exe.is_file() {
        let mut cmd = under_valgrind(&exe);
        program(&mut cmd);
        let (desc, out) = run(&mut cmd);
        check_panic_program(&desc, &out, &fault_points).and_then(|passed| {
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
        let passed = check_panic_program(&desc, &out, &fault_points)?;
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
        let has = defined_symbols(args, file)
            .iter()
            .any(|s| s == "mcp_test_inject_panic");
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
        !header.contains("mcp_test_inject_panic"),
        "the public header must not declare the test-only mcp_test_inject_panic"
    );
}
