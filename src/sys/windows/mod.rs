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
//! - `wake.rs`: an event other threads set to wake that wait.

pub(crate) mod job;
pub(crate) mod pipe;
pub(crate) mod spawn;
pub(crate) mod stream;
pub(crate) mod wake;
