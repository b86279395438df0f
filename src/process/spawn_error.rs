//! Why a start failed, for the command that failed: the system's code made
//! into a [`SpawnError`] that names the program and says what the code
//! means here (not in the server's `PATH`, and where it was searched; a
//! working directory that is not one). For every platform.

use std::path::PathBuf;

use super::command::Command;
use crate::error::{SpawnCause, SpawnError};

/// The error of `cmd`'s start, which failed with the system's `code`.
pub(crate) fn spawn_error(cmd: &Command, code: i32) -> SpawnError {
    let program = cmd.program.to_string_lossy().into_owned();
    let cause = match &cmd.cwd {
        Some(dir) if !dir.is_dir() => SpawnCause::WorkingDirectory(dir.clone()),
        _ if not_found(code) && !has_directory(&program) => SpawnCause::NotInPath(path_dirs(cmd)),
        _ => SpawnCause::Os,
    };
    SpawnError {
        program,
        code,
        cause,
    }
}

/// The code says "no such file".
fn not_found(code: i32) -> bool {
    #[cfg(unix)]
    return code == libc::ENOENT;
    // ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND.
    #[cfg(windows)]
    return code == 2 || code == 3;
}

/// The program is named with a directory (then no `PATH` is searched).
fn has_directory(program: &str) -> bool {
    #[cfg(unix)]
    return program.contains('/');
    #[cfg(windows)]
    return program.contains(['/', '\\']) || program.as_bytes().get(1) == Some(&b':');
}

/// The directories of the `PATH` the program was looked up in, in order
/// (an empty entry, the working directory, as an empty path).
fn path_dirs(cmd: &Command) -> Vec<PathBuf> {
    #[cfg(unix)]
    match super::unix::spawn::lookup_path(&cmd.environment()) {
        Some(path) if !path.is_empty() => std::env::split_paths(&path).collect(),
        _ => Vec::new(),
    }
    #[cfg(windows)]
    super::windows::start::path_dirs(cmd)
}
