//! POSIX (and Linux where it offers more): every platform call of the OS
//! layer, each behind a safe function whose `SAFETY:` comments say why.
//!
//! - `fd.rs`: reading into a buffer's spare room, descriptors kept above 2;
//! - `sigpipe.rs`: writing to a closed pipe without dying of SIGPIPE;
//! - `wake.rs`: waking a thread that waits in poll(2);
//! - `process.rs`: a child's exit seen without reaping it, reaping, signals
//!   to its process group, the pidfd;
//! - `spawn.rs`: what runs in the child between fork and exec (Linux);
//! - `posix_spawn.rs`: the portable build's spawn (macOS, the BSDs, Linux
//!   with `MCP_STDIO_PORTABLE_POSIX=1`), through `posix_spawn`;
//! - `epoll.rs` (Linux): one descriptor that stands for a set;
//! - `write_all.rs`: a whole buffer written, with a deadline, no SIGPIPE.

//!
//! Without `os_io` (Apple's mobile systems: no process may be spawned)
//! only what the C face's descriptor helpers use is built.

#[cfg(linux_apis)]
pub(crate) mod epoll;
pub(crate) mod fd;
#[cfg(os_io)]
pub(crate) mod posix_spawn; // the portable POSIX build's spawn (see its doc)
#[cfg(os_io)]
pub(crate) mod process;
pub(crate) mod sigpipe;
#[cfg(os_io)]
pub(crate) mod spawn;
#[cfg(os_io)]
pub(crate) mod wake;
#[cfg(feature = "capi")] // `mcp_write_all`
pub(crate) mod write_all;
