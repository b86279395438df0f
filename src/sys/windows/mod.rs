//! Windows' platform calls (through `windows-sys`), each behind a safe
//! function:
//! - `job.rs`: a Job Object that holds a server and every process it
//!   starts, and kills them all when it is closed or terminated;
//! - `spawn.rs`: `CreateProcessW` with exactly the child's stdio handles
//!   inherited and the child in its job from the start;
//! - `pipe.rs`: the pipes to the child (our ends overlapped, its ends
//!   synchronous), overlapped reads and writes that own their memory, and
//!   a wait for the first of several to complete, with a deadline;
//! - `wake.rs`: an event other threads set to wake that wait.
//!
//! The Windows backend is being built: what is here is tested (under Wine)
//! before the connection uses it.

#[cfg(test)]
pub(crate) mod job;
#[cfg(test)]
pub(crate) mod pipe;
#[cfg(test)]
pub(crate) mod spawn;
#[cfg(test)]
pub(crate) mod wake;
