//! A spawned server on POSIX:
//! - `spawn.rs`: starting it (fork + exec on Linux, `posix_spawn` on the
//!   portable build);
//! - `server.rs`: its supervision;
//! - `child.rs`: its exit noticed without reaping, the group's signals,
//!   reaping.

pub(crate) mod child;
pub(crate) mod server;
pub(crate) mod spawn;
