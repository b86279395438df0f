//! The C ABI: the only place with `extern "C"` (and, with the platform
//! calls of `sys` and the SIMD kernels, with `unsafe`).
//!
//! Each entry point only converts: C pointers to Rust references and slices
//! (every pointer checked), Rust results to [`McpStatus`] codes, and panics to
//! `MCP_STATUS_PANIC` (see `boundary.rs`). The behaviour lives below it.
//! `build.rs` turns the doc comments here into `include/mcp_stdio.h`.

#[macro_use]
mod boundary;
mod slice;

mod buffer;
#[cfg(os_io)]
mod command;
mod encode;
#[cfg(unix)]
mod fd;
mod reader;
// After `reader`: the header declares the envelope after the reader.
mod envelope;
// After `envelope`: events hold one.
mod transport;

mod status;
mod version;

pub use buffer::{mcp_buffer_free, McpBuffer};
#[cfg(os_io)]
pub use command::{
    mcp_command_arg, mcp_command_cwd, mcp_command_env, mcp_command_env_mode, mcp_command_free,
    mcp_command_new, mcp_command_spawn_error, mcp_command_stderr, McpCommand, McpEnvMode,
    McpStderrMode,
};
pub use encode::{mcp_encode, mcp_encode_bound, mcp_encode_to, MCP_ENCODE_ASCII};
pub use envelope::{mcp_envelope_parse, mcp_json_string_eq, mcp_line_reader_envelope, McpEnvelope};
#[cfg(unix)]
pub use fd::{mcp_line_reader_read_fd, mcp_write_all, mcp_write_all_deadline};
pub use reader::{
    mcp_line_reader_buffered_len, mcp_line_reader_feed, mcp_line_reader_finish,
    mcp_line_reader_free, mcp_line_reader_new, mcp_line_reader_next_message,
    mcp_line_reader_set_flags, mcp_line_reader_set_max_line_len, McpLineReader, McpMessage,
    McpMessageKind, McpRpcKind, MCP_READER_DEFAULT_MAX_LINE_LEN, MCP_READER_JSONRPC,
    MCP_READER_SKIP_INVALID,
};
pub use slice::McpSlice;
pub use status::{mcp_status_str, McpStatus};
// Every McpTransport function of this platform (see transport/mod.rs).
pub use transport::*;
pub use version::{
    mcp_stdio_abi_version, mcp_stdio_simd_level, mcp_stdio_version, MCP_STDIO_ABI_VERSION,
};

#[cfg(any(test, feature = "panic-injection"))]
pub use boundary::mcp_test_inject_panic;

#[cfg(test)]
mod tests;
