//! A spawned server's life as a parent sees it, in safe Rust over the
//! platform calls of `sys`:
//! - `command.rs`: what to start (program, arguments, environment rules,
//!   working directory, stderr), for every platform;
//! - `stderr.rs`: its stderr as lines, always drained and bounded, for
//!   every platform;
//! - `spawn_error.rs`: why a start failed, naming the program (not in the
//!   `PATH` it gets, and where it was searched), for every platform;
//! - `restart.rs`: the policy that starts a server again when it ends
//!   unexpectedly, and its count of restarts and recent exits (pure logic,
//!   for every platform);
//! - `answers.rs`: when its pending requests fail, and why (as soon as no
//!   answer can come), for every platform;
//! - `unix/`: POSIX: `spawn.rs` starts it (the program found as `execvp`
//!   would, its pipes above descriptor 2, its own process group),
//!   `server.rs` supervises it (stderr drained, exit noticed, the shutdown
//!   sequence, the transport's core told when it is gone), `child.rs`
//!   notices its exit, sends the shutdown signals and reaps it;
//! - `windows/`: Windows: the program's lookup, the command line and the
//!   environment (pure logic, compiled and tested on every platform), then
//!   `start.rs` (in a Job Object) and `server.rs` (its supervision).

#[cfg(os_io)]
pub(crate) mod answers;
#[cfg(os_io)]
pub(crate) mod command;
#[cfg(os_io)]
pub(crate) mod restart;
#[cfg(os_io)]
pub(crate) mod spawn_error;
#[cfg(os_io)]
pub(crate) mod stderr;
#[cfg(all(os_io, unix))]
pub(crate) mod unix;
#[cfg(any(windows, test))]
pub(crate) mod windows;

/// The spawned server a connection supervises, on this platform.
#[cfg(all(os_io, unix))]
pub(crate) use unix::server::Server;
#[cfg(windows)]
pub(crate) use windows::server::Server;
