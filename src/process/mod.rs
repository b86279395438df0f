//! A spawned server's life as a parent sees it, in safe Rust over the
//! platform calls of `sys`: noticing its exit, the shutdown signals and
//! reaping (`child.rs`), and its stderr as lines, always drained and
//! bounded (`stderr.rs`).

pub(crate) mod child;
pub(crate) mod stderr;
