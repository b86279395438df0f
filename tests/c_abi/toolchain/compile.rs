//! Compiling and linking C against the header and the library.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::library::{library_path_for, shared_link_args, Lib};
use super::run::{report, run};
use super::sources::{c_source, include_dir};
use super::work_dir::WorkDir;

pub const C_WARNINGS: &[&str] = &["-Wall", "-Wextra", "-Wpedantic", "-Werror"];

/// Compiler flags of a sanitized build (ASan + UBSan, every report fatal);
/// run it with `run::with_sanitizer_options`.
pub const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-omit-frame-pointer",
    "-fno-sanitize-recover=all",
];

fn crate_version_define() -> String {
    format!("-DMCP_TEST_CRATE_VERSION=\"{}\"", env!("CARGO_PKG_VERSION"))
}

/// `cc -std=c99 <warnings> -g -I include <extra_cflags> src <link args> -o out`
pub fn compile_c(
    src: &Path,
    out: &Path,
    extra_cflags: &[&str],
    link: &[&str],
) -> Result<(), String> {
    let mut cmd = Command::new("cc");
    cmd.arg("-std=c99")
        .args(C_WARNINGS)
        .arg("-g")
        .arg("-I")
        .arg(include_dir())
        .arg(crate_version_define())
        .args(extra_cflags)
        .arg(src)
        .args(link)
        .arg("-o")
        .arg(out);
    let (desc, o) = run(&mut cmd);
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("compilation failed\n{}", report(&desc, &o)))
    }
}

/// Builds tests/c/<name>.c against the shared library; returns the program
/// and the LD_LIBRARY_PATH to run it with (see `library_path_for`).
pub fn build_shared(name: &str, lib: &Lib, work: &WorkDir) -> Result<(PathBuf, String), String> {
    let exe = work.path(&format!("{name}-shared"));
    compile_c(&c_source(name), &exe, &[], &as_strs(&shared_link_args(lib)))?;
    let ld_path = library_path_for(&exe, lib, work)?;
    Ok((exe, ld_path))
}

pub fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}
