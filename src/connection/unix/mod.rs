//! The connection on POSIX descriptors:
//! - `fds.rs`: the descriptors, their reads and writes, the end of the
//!   write side;
//! - `open.rs`: the constructors on descriptors, on the process's own
//!   stdio (with the stdout guard), and on a spawned server;
//! - `poll.rs`: the wait in poll(2), the set an event loop waits on, and on
//!   Linux one epoll descriptor for the whole set.

pub(crate) mod fds;
mod open;
pub(crate) mod poll;
