//! The OS layer's platform calls, and the only `unsafe` of the crate besides
//! the C face (`ffi`) and the SIMD kernels (`simd`): each platform fenced in
//! a folder of its own behind safe functions, as mio does with its
//! `sys/{unix,windows}`. What lies above (`process`, the transport's
//! descriptor driver) names no platform call.
//!
//! - `unix/`: descriptors, the SIGPIPE guard, the wake-up channel, and a
//!   child's exit, signals and reaping (POSIX, with Linux's pidfd where
//!   there is one);
//! - `windows/`: the Windows backend's calls, as it is built (a Job Object).

#[cfg(unix)]
pub(crate) mod unix;
#[cfg(windows)]
pub(crate) mod windows;
