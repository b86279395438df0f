//! Generates the C header from the FFI layer, and gives the shared library its SONAME.
//!
//! The header goes to `$OUT_DIR/mcp_stdio.h`; the committed copy in
//! `include/` is checked against it by a test (see `src/ffi/tests.rs`), which
//! also tells how to update it. Works offline: cbindgen parses `src/` directly
//! (no `cargo metadata`).

#[cfg(feature = "capi")]
use std::env;
#[cfg(feature = "capi")]
use std::path::PathBuf;

/// Without the `capi` feature there is no C ABI: nothing to generate or link.
#[cfg(not(feature = "capi"))]
fn main() {}

#[cfg(feature = "capi")]
fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");

    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));

    // libmcp_stdio.so.MCP_STDIO_ABI_VERSION: the ABI version is the crate's
    // major version (0 while 0.x); a test checks the SONAME, the macro and
    // mcp_stdio_abi_version() agree.
    let major = env::var("CARGO_PKG_VERSION_MAJOR").expect("CARGO_PKG_VERSION_MAJOR");
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcp_stdio.so.{major}");
    }

    let mut config = cbindgen::Config::from_file(root.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable and valid");
    let version = |part: &str| env::var(format!("CARGO_PKG_VERSION_{part}")).expect("version");
    config.after_includes = Some(format!(
        "\n/* The version of this header; mcp_stdio_version() gives the library's. */\n\
         #define MCP_STDIO_VERSION \"{}\"\n\
         #define MCP_STDIO_VERSION_MAJOR {}\n\
         #define MCP_STDIO_VERSION_MINOR {}\n\
         #define MCP_STDIO_VERSION_PATCH {}\n\n\
         /* Defined where the POSIX I/O helpers (mcp_line_reader_read_fd, mcp_write_all) exist. */\n\
         #if !defined(_WIN32) && !defined(MCP_STDIO_HAS_POSIX_IO)\n\
         #define MCP_STDIO_HAS_POSIX_IO 1\n\
         #endif\n\
         #if defined(MCP_STDIO_HAS_POSIX_IO)\n\
         #include <poll.h> /* struct pollfd, for mcp_transport_poll_fds */\n\
         #endif",
        env::var("CARGO_PKG_VERSION").expect("version"),
        version("MAJOR"),
        version("MINOR"),
        version("PATCH"),
    ));
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .generate()
        .expect("the C header can be generated from src/ffi")
        .write_to_file(out.join("mcp_stdio.h"));
}
