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
//! - `windows/`: the Windows backend's pure logic (the command line), for
//!   now built for the tests only, on every platform.

pub(crate) mod child;
pub(crate) mod command;
pub(crate) mod server;
pub(crate) mod spawn;
pub(crate) mod stderr;
#[cfg(test)]
pub(crate) mod windows;
