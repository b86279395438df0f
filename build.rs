//! Chooses the platform calls the OS layer is built on, generates the C
//! header from the FFI layer, and gives the shared library its SONAME.
//!
//! The cfg `linux_apis` is set on Linux and Android: the OS layer then uses
//! the calls only Linux has where portable POSIX has another way (a pidfd
//! to see a server's exit and signal its group, an eventfd to wake a
//! waiting thread, epoll for `Connection::poll_fd`, close_range). Without
//! it (macOS and the BSDs, or Linux built with the environment variable
//! `MCP_STDIO_PORTABLE_POSIX=1`) it keeps to portable POSIX: the build
//! that runs on macOS, which the tests run on Linux too, so that the macOS
//! code path is not only compiled. (`PR_SET_PDEATHSIG`, behind
//! `kill_on_host_exit`, has no other way: it stays wherever Linux is.)
//!
//! The cfg `os_io` is set where the connection does its own I/O and starts
//! servers: the POSIX systems but Apple's mobile ones (iOS, tvOS,
//! watchOS, visionOS: an app cannot spawn a process there), and Windows.
//! Without it the reader, the encoder and the memory connection remain.
//!
//! The header goes to `$OUT_DIR/mcp_stdio.h`; the committed copy in
//! `include/` is checked against it by a test (see `src/ffi/tests.rs`), which
//! also tells how to update it. Works offline: cbindgen parses `src/` directly
//! (no `cargo metadata`).

#[cfg(feature = "capi")]
use std::env;
#[cfg(feature = "capi")]
use std::path::PathBuf;

fn main() {
    platform_cfgs();
    // Without the `capi` feature there is no C ABI: nothing to generate or link.
    #[cfg(feature = "capi")]
    capi();
}

/// Sets `linux_apis` where the Linux-only calls are to be used, and
/// `os_io` where the connection does I/O and spawns.
fn platform_cfgs() {
    println!("cargo:rustc-check-cfg=cfg(linux_apis)");
    println!("cargo:rustc-check-cfg=cfg(os_io)");
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let os_name = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let mobile = ["ios", "tvos", "watchos", "visionos"].contains(&os_name.as_str());
    let families: Vec<&str> = family.split(',').collect();
    if (families.contains(&"unix") && !mobile) || families.contains(&"windows") {
        println!("cargo:rustc-cfg=os_io");
    }
    println!("cargo:rerun-if-env-changed=MCP_STDIO_PORTABLE_POSIX");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let portable =
        std::env::var_os("MCP_STDIO_PORTABLE_POSIX").is_some_and(|v| !v.is_empty() && v != "0");
    if (os == "linux" || os == "android") && !portable {
        println!("cargo:rustc-cfg=linux_apis");
    }
}

#[cfg(feature = "capi")]
fn capi() {
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
         #endif\n\
         /* Defined where the library spawns servers (McpCommand, mcp_transport_spawn): */\n\
         /* everywhere but Apple's mobile systems, where an app cannot start a process. */\n\
         #if defined(__APPLE__)\n\
         #include <TargetConditionals.h>\n\
         #endif\n\
         #if !defined(MCP_STDIO_HAS_PROCESSES) && !(defined(TARGET_OS_IPHONE) && TARGET_OS_IPHONE)\n\
         #define MCP_STDIO_HAS_PROCESSES 1\n\
         #endif\n\
         #if defined(_WIN32)\n\
         #include <io.h>\n\
         #include <stdio.h>\n\
         /* Windows, with mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT): points the C */\n\
         /* runtime's descriptor 1 (printf, puts) at stderr too, and closes the old stdout */\n\
         /* handle, so that the host sees the end of the stream when the transport's write */\n\
         /* side ends. The library cannot do it: each C runtime (UCRT, msvcrt) keeps its own */\n\
         /* descriptor table, so this compiles into your code, against yours. Call it right */\n\
         /* after the transport is open. 0, or -1 when the C runtime has no stderr (nothing */\n\
         /* changed then). */\n\
         static inline int mcp_stdio_crt_stdout_to_stderr(void) {{\n\
         \x20   fflush(stdout);\n\
         \x20   return _dup2(_fileno(stderr), _fileno(stdout));\n\
         }}\n\
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
