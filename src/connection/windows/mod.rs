//! The connection on Windows handles:
//! - `handles.rs`: our ends of the pipes (overlapped), their reads and
//!   writes, the end of the write side;
//! - `open.rs`: the constructor on a spawned server;
//! - `wait.rs`: the wait on the handles, and the set an event loop waits on.

pub(crate) mod handles;
mod open;
pub(crate) mod wait;
