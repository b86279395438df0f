//! Why a server could not be started, naming the program:
//! [`SpawnError`], carried by [`Error::SpawnFailed`](super::Error::SpawnFailed).

use std::fmt;
use std::path::PathBuf;

/// A server that could not be started: which program, the system's error
/// code, and what it means here. Its text names the program: "cannot start
/// `npx`: not found in PATH (searched: /usr/local/bin, /usr/bin, /bin)".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SpawnError {
    /// The program as the command names it (lossily decoded).
    pub program: String,
    /// The operating system's error code: `errno` on POSIX (`ENOENT`,
    /// `EACCES`...), `GetLastError()`'s on Windows
    /// (`ERROR_FILE_NOT_FOUND`...).
    pub code: i32,
    /// What the code means for this command.
    pub cause: SpawnCause,
}

/// What a [`SpawnError`]'s code means for the command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpawnCause {
    /// The program, named without a directory, is in none of the
    /// directories of the `PATH` the server gets: those, in order (empty:
    /// no `PATH`, or an empty one).
    NotInPath(Vec<PathBuf>),
    /// The working directory given is missing, or not a directory.
    WorkingDirectory(PathBuf),
    /// The system's refusal, as its code says (a program path that does not
    /// exist, a file that is not executable, too many open files...).
    Os,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot start `{}`: ", self.program)?;
        let os = std::io::Error::from_raw_os_error(self.code);
        match &self.cause {
            SpawnCause::NotInPath(dirs) if dirs.is_empty() => {
                f.write_str("not found: the server's PATH is empty or not set")
            }
            SpawnCause::NotInPath(dirs) => {
                f.write_str("not found in PATH (searched: ")?;
                for (i, dir) in dirs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match dir.as_os_str().is_empty() {
                        true => f.write_str(". (an empty entry)")?,
                        false => write!(f, "{}", dir.display())?,
                    }
                }
                f.write_str(")")
            }
            SpawnCause::WorkingDirectory(dir) => {
                write!(f, "working directory `{}`: {os}", dir.display())
            }
            SpawnCause::Os => write!(f, "{os}"),
        }
    }
}
