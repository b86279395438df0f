//! Windows' platform calls (through `windows-sys`), each behind a safe
//! function:
//! - `job.rs`: a Job Object that holds a server and every process it
//!   starts, and kills them all when it is closed or terminated;
//! - `spawn.rs`: `CreateProcessW` with exactly the child's stdio handles
//!   inherited and the child in its job from the start;
//! - `pipe.rs`: the pipes to the child (our ends overlapped, its ends
//!   synchronous), overlapped reads and writes that own their memory, and
//!   a wait for the first of several to complete, with a deadline;
//! - `stream.rs`: non-blocking reads and writes over those operations, in
//!   the shape of POSIX's non-blocking descriptors;
//! - `threaded.rs`: the same for handles that cannot be used overlapped
//!   (the process's own stdio, a caller's), a thread per direction;
//! - `stdio.rs`: the process's standard handles, and the stdout guard;
//! - `wake.rs`: an event other threads set to wake that wait.

pub(crate) mod job;
pub(crate) mod pipe;
pub(crate) mod spawn;
pub(crate) mod stdio;
pub(crate) mod stream;
pub(crate) mod threaded;
pub(crate) mod wake;

/// Sets the calling thread's last-error code (`GetLastError()`), as the C
/// face promises with `MCP_STATUS_IO_ERROR` and `MCP_STATUS_SPAWN_FAILED`.
#[cfg(feature = "capi")]
pub(crate) fn set_last_error(code: i32) {
    // SAFETY: sets a value of the calling thread; no pointer.
    unsafe { windows_sys::Win32::Foundation::SetLastError(code as u32) };
}
