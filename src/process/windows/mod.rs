//! What starting a process on Windows needs that is pure logic, so it is
//! compiled and tested on every platform:
//! - `cmdline.rs`: the command line, for programs and for batch files
//!   through `cmd.exe`, escaped so that no argument can inject a command;
//! - `lookup.rs`: the program found in the server's `PATH` with `PATHEXT`
//!   (`npx` is `npx.cmd`), and whether it is a batch file.

pub(crate) mod cmdline;
pub(crate) mod lookup;
