//! POSIX (and Linux where it offers more): every platform call of the OS
//! layer, each behind a safe function whose `SAFETY:` comments say why.
//!
//! - `fd.rs`: reading into a buffer's spare room, descriptors kept above 2;
//! - `sigpipe.rs`: writing to a closed pipe without dying of SIGPIPE;
//! - `wake.rs`: waking a thread that waits in poll(2);
//! - `process.rs`: a child's exit seen without reaping it, reaping, signals
//!   to its process group, the pidfd;
//! - `spawn.rs`: what runs in the child between fork and exec;
//! - `epoll.rs` (Linux): one descriptor that stands for a set;
//! - `write_all.rs`: a whole buffer written, with a deadline, no SIGPIPE.

#[cfg(linux_apis)]
pub(crate) mod epoll;
pub(crate) mod fd;
pub(crate) mod process;
pub(crate) mod sigpipe;
pub(crate) mod spawn;
pub(crate) mod wake;
#[cfg(feature = "capi")] // `mcp_write_all`
pub(crate) mod write_all;
