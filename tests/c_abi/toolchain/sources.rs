//! Where the sources are: the crate, the public header, the C test programs.

use std::path::PathBuf;

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn include_dir() -> PathBuf {
    manifest_dir().join("include")
}

/// include/mcp_stdio.h, which must exist.
pub fn header() -> PathBuf {
    let h = include_dir().join("mcp_stdio.h");
    assert!(h.is_file(), "header {} is missing", h.display());
    h
}

/// tests/c/<name>.c, which must exist.
pub fn c_source(name: &str) -> PathBuf {
    let p = manifest_dir()
        .join("tests")
        .join("c")
        .join(format!("{name}.c"));
    assert!(p.is_file(), "{} is missing", p.display());
    p
}
