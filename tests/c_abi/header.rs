//! The public header on its own (C99, C11, C++11), and a C++ program using it.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::toolchain::compile::C_WARNINGS;
use crate::toolchain::library::{lib, library_path_for, shared_link_args};
use crate::toolchain::program_output::{check_program_output, finish};
use crate::toolchain::run::{report, run, run_ok};
use crate::toolchain::sources::{header, include_dir, manifest_dir};
use crate::toolchain::work_dir::WorkDir;

#[test]
fn header_compiles_standalone() {
    let _ = header();
    let work = WorkDir::new("header");
    // Only the header (twice: the include guard must work), nothing else.
    let tu = "#include \"mcp_stdio.h\"\n#include \"mcp_stdio.h\"\n";
    let c_src = work.path("header_only.c");
    let cpp_src = work.path("header_only.cpp");
    fs::write(&c_src, tu).unwrap();
    fs::write(&cpp_src, tu).unwrap();

    let mut failures = Vec::new();
    let mut try_compile = |compiler: &str, std: &str, extra: &[&str], src: &Path, tag: &str| {
        let mut cmd = Command::new(compiler);
        cmd.arg(format!("-std={std}"))
            .args(C_WARNINGS)
            .args(extra)
            .arg("-I")
            .arg(include_dir())
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(work.path(&format!("header_only-{tag}.o")));
        let (desc, out) = run(&mut cmd);
        if out.status.success() {
            eprintln!("header: {tag}: ok");
        } else {
            failures.push(report(&desc, &out));
        }
    };
    try_compile("cc", "c99", &["-Wstrict-prototypes"], &c_src, "c99");
    try_compile("cc", "c11", &["-Wstrict-prototypes"], &c_src, "c11");
    try_compile("c++", "c++11", &[], &cpp_src, "cxx11");
    assert!(
        failures.is_empty(),
        "header does not compile cleanly:\n{}",
        failures.join("\n")
    );
}

/// tests/cpp/test_header.cpp, a C++ consumer, against the shared library.
#[test]
fn cpp_test_builds_and_runs() {
    let lib = lib();
    let work = WorkDir::new("cpp");
    let src = manifest_dir()
        .join("tests")
        .join("cpp")
        .join("test_header.cpp");
    assert!(src.is_file(), "{} is missing", src.display());
    let exe = work.path("test_header-cpp");
    run_ok(
        Command::new("c++")
            .arg("-std=c++11")
            .args(C_WARNINGS)
            .arg("-g")
            .arg("-I")
            .arg(include_dir())
            .arg(&src)
            .args(shared_link_args(&lib))
            .arg("-o")
            .arg(&exe),
    );
    let ld_path = library_path_for(&exe, &lib, &work).unwrap_or_else(|e| panic!("{e}"));
    let (desc, out) = run(Command::new(&exe).env("LD_LIBRARY_PATH", ld_path));
    finish(
        "c++",
        vec![("test_header".to_string(), check_program_output(&desc, &out))],
    );
}
