//! mcp-stdio's stdio transport for rmcp, the official Rust MCP SDK.
//!
//! A host on rmcp changes the line that makes its transport:
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! # use rmcp::ServiceExt;
//! # let cmd = tokio::process::Command::new("npx");
//! // let transport = rmcp::transport::TokioChildProcess::new(cmd)?;
//! let transport = mcp_stdio_rmcp::ChildProcess::new(cmd)?;
//! # let client = ().serve(transport).await?;
//! # Ok(()) }
//! ```
//!
//! and keeps everything else it wrote on rmcp; a server on rmcp uses
//! [`stdio()`] in place of `rmcp::transport::stdio()`.
//!
//! - `command.rs`: what a client starts: this library's `Command`, or a
//!   tokio or std `Command` converted (what cannot carry over is refused);
//! - `driver.rs`: one connection driven for rmcp from a thread of its own:
//!   lines to rmcp's messages with serde_json, the answers a dead server
//!   will never give turned into errors that say why;
//! - `client.rs`: [`ChildProcess`], the client transport;
//! - `server.rs`: [`stdio()`], the server transport.
//!
//! Tested against rmcp 3.11 (the versions `>=3.11, <4` are accepted). rmcp
//! numbers its own requests and keeps its own timeouts, so the library's
//! deadlines, progress resets, cancel-on-timeout and restart do not apply.
//! A `pre_exec` hook of a converted command cannot be seen through std's
//! API: it is neither refused nor run (build an `mcp_stdio::Command`).

mod client;
mod command;
mod driver;
mod server;

pub use client::{Builder, ChildProcess, SpawnError, DEFAULT_MAX_LINE_LEN};
pub use command::{ConvertError, IntoCommand};
pub use driver::{Ended, InvalidLine, CONNECTION_CLOSED};
pub use server::{stdio, StdioServer};
