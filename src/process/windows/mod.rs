//! A spawned server on Windows. Pure logic, compiled and tested on every
//! platform:
//! - `cmdline.rs`: the command line, for programs and for batch files
//!   through `cmd.exe`, escaped so that no argument can inject a command;
//! - `lookup.rs`: the program found in the server's `PATH` with `PATHEXT`
//!   (`npx` is `npx.cmd`), and whether it is a batch file;
//! - `env.rs`: the server's environment (the default allow-list, overlays
//!   whatever the case of a name) and the block `CreateProcessW` takes.
//!
//! Windows only, over the calls of `sys::windows`:
//! - `start.rs`: starting it from a `Command` (the pipes, the job);
//! - `server.rs`: its supervision (stderr, exit, the shutdown).

pub(crate) mod cmdline;
pub(crate) mod env;
pub(crate) mod lookup;
#[cfg(windows)]
pub(crate) mod server;
#[cfg(windows)]
pub(crate) mod start;

/// `text` with ASCII letters upper-cased: how Windows compares variable
/// names and file extensions (what matters in practice is ASCII).
pub(crate) fn ascii_upper(text: &[u16]) -> Vec<u16> {
    text.iter()
        .map(|&c| match c {
            0x61..=0x7a => c - 0x20,
            _ => c,
        })
        .collect()
}
