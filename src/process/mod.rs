//! A spawned server's life as a parent sees it, in safe Rust over the
//! platform calls of `sys`:
//! - `command.rs`: what to start (program, arguments, environment rules,
//!   working directory, stderr);
//! - `spawn.rs`: starting it (the program found as `execvp` would, its
//!   pipes above descriptor 2, its own process group);
//! - `server.rs`: its supervision (stderr drained, exit noticed, the
//!   shutdown sequence, the transport's core told when it is gone);
//! - `child.rs`: noticing its exit, the shutdown signals and reaping;
//! - `stderr.rs`: its stderr as lines, always drained and bounded;
//! - `windows/`: the same on Windows (the program's lookup, the command
//!   line, the environment, starting it in a Job Object, its supervision);
//!   its pure logic is compiled and tested on every platform.
//!
//! `child.rs`, `server.rs` and `spawn.rs` are the POSIX ones; `command.rs`
//! and `stderr.rs` serve both.

#[cfg(all(os_io, unix))]
pub(crate) mod child;
#[cfg(os_io)]
pub(crate) mod command;
#[cfg(all(os_io, unix))]
pub(crate) mod server;
#[cfg(all(os_io, unix))]
pub(crate) mod spawn;
#[cfg(os_io)]
pub(crate) mod stderr;
#[cfg(any(windows, test))]
pub(crate) mod windows;

/// The spawned server a connection supervises, on this platform.
#[cfg(all(os_io, unix))]
pub(crate) use server::Server;
#[cfg(windows)]
pub(crate) use windows::server::Server;
