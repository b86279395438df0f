//! Framing of MCP (Model Context Protocol) messages on the stdio transport:
//! newline-delimited JSON, read and written exactly.
//!
//! - [`LineReader`] takes the bytes read from a peer in chunks of any size and
//!   yields one [`Message`] per line: a JSON message (optionally classified as
//!   JSON-RPC 2.0), or the report of a line that is not one. Chunking never
//!   changes the result, memory stays bounded by the line limit, and the cost
//!   is linear in the bytes fed.
//! - [`encode`] turns any JSON text into one safe line: compact, ending in
//!   exactly one `\n`, every token kept byte for byte.
//! - [`envelope`] (and [`LineReader::envelope`] for the message just read)
//!   tells where a JSON-RPC message's `id`, `method`, `params`, `result` and
//!   `error` are, found by the same pass that classifies it;
//!   [`json_string_eq`] compares a string token with a text, unescaping as
//!   it goes.
//!
//! - [`Transport`] is one connection's protocol state, with no I/O: the peer's
//!   bytes in, [`Event`]s out (messages, answers matched with our numbered
//!   requests, timeouts, close), the lines we send framed into a bounded
//!   output queue for a driver to write.
//! - [`Connection`] drives a transport to its end on descriptors (POSIX)
//!   or handles (Windows): a server it spawns from a [`Command`] (on POSIX
//!   its process group and the stdin → SIGTERM → SIGKILL shutdown; on
//!   Windows its Job Object, `PATHEXT` and `.cmd` quoting, stdin → job
//!   terminated; its stderr as lines), the process's own stdin and stdout
//!   (with the stdout guard), or descriptors and handles you give it;
//!   [`next_event`](Connection::next_event) with a deadline, [`Sender`] for
//!   any thread, one descriptor for event loops (`Connection::poll_fd`,
//!   Linux). Apple's mobile systems have only the memory connection.
//!
//! The same is offered to C through the `mcp_*` functions of the `ffi` module
//! and the generated header `include/mcp_stdio.h`: the `capi` feature, on by
//! default. A Rust program that only wants the crate sets
//! `default-features = false` and gets neither `#[no_mangle]` symbols nor
//! the header's build step.
//!
//! The floors, each importing only from those below it:
//! 1. JSON validation: `json`, with its SIMD kernels in `simd`;
//! 2. framing: `reader`, `encode`, `jsonrpc`, `span`, `envelope`,
//!    `message`, `newline`, `error`;
//! 3. the transport's state machine, no I/O: `transport`;
//! 4. the OS layer: `sys` (the platform calls, fenced per platform:
//!    `unix/`, `windows/`), `process` (a spawned server's supervision over
//!    them, `unix/` and `windows/` beside what both share) and
//!    `connection` (a transport driven on descriptors or handles: the Rust
//!    API; `io.rs` shared, `unix/` and `windows/` for the ends and waits);
//! 5. the C face: `ffi`, conversions over the floors below.
//!
//! `unsafe` lives in three places only: `simd` (AVX2 and AVX-512 need
//! `#[target_feature]` code and a CPU check; the portable kernels come from
//! the `wide` crate, which keeps its `unsafe` behind a safe API), `sys`
//! (the platform calls, each behind a safe function) and the C boundary,
//! `ffi`. Every other module forbids it.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// The safe core: the compiler refuses `unsafe` in it.
#[forbid(unsafe_code)]
mod encode;
#[forbid(unsafe_code)]
mod end_reason;
#[forbid(unsafe_code)]
mod envelope;
#[forbid(unsafe_code)]
mod error;
#[forbid(unsafe_code)]
mod json;
#[forbid(unsafe_code)]
mod jsonrpc;
#[forbid(unsafe_code)]
mod message;
#[forbid(unsafe_code)]
mod newline;
#[forbid(unsafe_code)]
mod reader;
#[forbid(unsafe_code)]
mod span;
#[forbid(unsafe_code)]
mod transport;

// The SIMD kernels, chosen at run time: the core's only `unsafe` (the
// target features of `simd/x86.rs`).
mod simd;

// The OS layer: the platform calls (`sys`, with their `unsafe`), a
// spawned server's supervision over them (`process`, safe), and the
// connection that drives a transport on descriptors (`connection`, safe).
#[forbid(unsafe_code)]
mod connection;
#[cfg(any(os_io, test))]
#[forbid(unsafe_code)]
mod process;
#[cfg(any(unix, windows))]
mod sys;

// The C boundary, with the `unsafe` of its pointers (the `capi` feature, on by
// default).
#[cfg(feature = "capi")]
pub mod ffi;

pub use encode::{encode, encode_ascii, encode_bound, encode_into, encode_to_slice, EncodeOptions};
pub use end_reason::{EndReason, ServerExit};
pub use envelope::{envelope, json_string_eq, Envelope};
pub use error::{Error, ServerExitReport, SpawnCause, SpawnError};
pub use message::{Message, RpcKind};
pub use reader::{LineReader, DEFAULT_MAX_LINE_LEN};
pub use simd::{force_simd_level, simd_level, SimdLevel};
pub use transport::{Event, InvalidKind, RequestOptions, Transport};

pub use connection::{Connection, Sender, DROP_GRACE, KEPT_MAX};
#[cfg(os_io)]
pub use process::command::{Command, EnvMode, StderrMode};
#[cfg(os_io)]
pub use process::restart::RestartPolicy;
