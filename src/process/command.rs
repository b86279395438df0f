//! What a server is started from: its program, arguments, environment,
//! working directory and where its stderr goes, as `std::process::Command`
//! would hold them, with the environment rules of MCP hosts.

use std::ffi::{OsStr, OsString};
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::error::Error;
use crate::process::restart::RestartPolicy;

/// How a server's environment starts, before the variables set with
/// [`Command::env`] and removed with [`Command::env_remove`] are laid over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EnvMode {
    /// Only the host's variables that a server needs to run and no secret:
    /// `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` (the MCP SDKs'
    /// list), and `LANG`, `LC_ALL`, `LC_CTYPE`, `TZ`, `TMPDIR`. Values that
    /// start with `()` (exported shell functions) are left out. On Windows
    /// the list is Windows' own (`SYSTEMROOT`, `COMSPEC`, `PATHEXT`, `TEMP`,
    /// `USERPROFILE`, `APPDATA`, `LOCALAPPDATA` and the like: see
    /// `docs/windows.md`), names compared without case. The default.
    #[default]
    Default,
    /// Every variable of the host.
    Inherit,
    /// None.
    Clear,
}

/// Where a spawned server's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// To the host as [`Event::Stderr`](crate::Event::Stderr) events, one
    /// per line, without its `\n` or `\r\n` (the default). Always drained,
    /// so a chatty server never
    /// blocks on it; lines longer than 64 KiB come in pieces of 64 KiB, and
    /// at most 1 MiB waits undelivered: beyond it the oldest lines are
    /// dropped and counted ([`Connection::stderr_dropped`](crate::Connection::stderr_dropped)).
    #[default]
    Events,
    /// The host's own stderr (`/dev/null`, `NUL` on Windows, when the host
    /// has none).
    Inherit,
    /// Nowhere (`/dev/null`, `NUL` on Windows).
    Discard,
}

/// The variables `EnvMode::Default` passes on: what a server needs to run
/// and no secret (the MCP SDKs' list, and the locale, time zone and
/// temporary directory).
#[cfg(unix)]
pub(crate) const DEFAULT_ENV: [&str; 11] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
    "TMPDIR",
];

/// A server to start with [`Connection::spawn`](crate::Connection::spawn),
/// built like `std::process::Command`. Spawn it as often as you like; with
/// a [`RestartPolicy`] ([`Command::restart`]) the connection starts it again
/// by itself when it ends unexpectedly.
///
/// The server runs in its own process group (the shutdown signals reach
/// what it starts), with an empty signal mask, every signal at its
/// default, and no descriptor of the host but its stdin, stdout and
/// stderr (with the portable POSIX build on musl and the BSDs, descriptors
/// the host opened without close-on-exec may reach it: `posix_spawn` has no
/// way to close them there). The program is looked up in the `PATH` the
/// server gets. On Windows the server is in a Job Object instead of a
/// process group, and gets exactly its three stdio handles (see
/// [`Connection::spawn`](crate::Connection::spawn)).
///
/// ```
/// use mcp_stdio::{Command, EnvMode, StderrMode};
/// let mut cmd = Command::new("npx");
/// cmd.args(["-y", "@modelcontextprotocol/server-everything"])
///     .env_mode(EnvMode::Default)
///     .env("NODE_OPTIONS", "--no-warnings")
///     .stderr(StderrMode::Events);
/// ```
#[derive(Debug, Clone)]
pub struct Command {
    /// A name looked up in the `PATH` the server gets, or a path with a `/`.
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env_mode: EnvMode,
    /// Laid over the mode in order: `None` removes the variable.
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) stderr: StderrMode,
    /// Linux: SIGKILL when the spawning thread ends (`PR_SET_PDEATHSIG`).
    pub(crate) kill_on_host_exit: bool,
    /// Windows: a console program gets a console window.
    pub(crate) console_window: bool,
    /// Started again when it ends unexpectedly.
    pub(crate) restart: Option<RestartPolicy>,
}

impl Command {
    /// `program` (a name looked up in the `PATH` the server gets, or a path
    /// with a `/`), no arguments, the default environment, the host's
    /// working directory, stderr as events.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        let program = program.as_ref();
        Command {
            program: program.to_os_string(),
            args: Vec::new(),
            env_mode: EnvMode::Default,
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::Events,
            kill_on_host_exit: false,
            console_window: false,
            restart: None,
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets a variable for the server, over the [`EnvMode`]'s. A name that
    /// is empty or holds `=` makes the spawn fail with
    /// [`Error::InvalidArgument`].
    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        let value = Some(value.as_ref().to_os_string());
        self.env.push((name.as_ref().to_os_string(), value));
        self
    }

    /// Removes a variable from the server's environment.
    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Command {
        self.env.push((name.as_ref().to_os_string(), None));
        self
    }

    /// How the server's environment starts (default [`EnvMode::Default`]).
    pub fn env_mode(&mut self, mode: EnvMode) -> &mut Command {
        self.env_mode = mode;
        self
    }

    /// The server's working directory (relative: to the host's).
    pub fn current_dir(&mut self, dir: impl AsRef<std::path::Path>) -> &mut Command {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the server's stderr goes (default [`StderrMode::Events`]).
    pub fn stderr(&mut self, mode: StderrMode) -> &mut Command {
        self.stderr = mode;
        self
    }

    /// Linux: the server is sent SIGKILL when the thread that spawned it
    /// ends (the host exits or crashes), through `PR_SET_PDEATHSIG`; spawn
    /// from a thread that lives as long as the server should (not from a
    /// pool's thread, such as tokio's `spawn_blocking`, which ends when idle
    /// and takes the server with it). Elsewhere the
    /// spawn fails with [`Error::InvalidArgument`].
    pub fn kill_on_host_exit(&mut self, yes: bool) -> &mut Command {
        self.kill_on_host_exit = yes;
        self
    }

    /// Windows: whether a console program started from a GUI host gets a
    /// console window of its own (default: no, `CREATE_NO_WINDOW`, so that
    /// no window flashes). Elsewhere it changes nothing.
    pub fn console_window(&mut self, yes: bool) -> &mut Command {
        self.console_window = yes;
        self
    }

    /// Whether the connection starts the server again when it ends
    /// unexpectedly, and how (default `None`: never; see [`RestartPolicy`]).
    pub fn restart(&mut self, policy: Option<RestartPolicy>) -> &mut Command {
        self.restart = policy;
        self
    }

    /// What the system cannot be given, refused before anything starts:
    /// an empty program ([`Error::EmptyProgram`]), a variable name that is
    /// empty or holds `=` ([`Error::InvalidArgument`]), a NUL in the
    /// program, an argument, a variable or the directory
    /// ([`Error::InvalidText`]).
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.program.is_empty() {
            return Err(Error::EmptyProgram);
        }
        let names_valid = self
            .env
            .iter()
            .all(|(name, _)| !name.is_empty() && !name.as_encoded_bytes().contains(&b'='));
        if !names_valid {
            return Err(Error::InvalidArgument);
        }
        let has_nul = |text: &OsStr| text.as_encoded_bytes().contains(&0);
        let texts = std::iter::once(&*self.program)
            .chain(self.args.iter().map(|a| &**a))
            .chain(self.env.iter().map(|(name, _)| &**name))
            .chain(self.env.iter().filter_map(|(_, value)| value.as_deref()))
            .chain(self.cwd.iter().map(|dir| dir.as_os_str()));
        if texts.into_iter().any(has_nul) {
            return Err(Error::InvalidText);
        }
        Ok(())
    }

    /// The environment the server gets: the mode's variables, then the
    /// overlays in order (POSIX; Windows compares names without case: see
    /// `windows/start.rs`).
    #[cfg(unix)]
    pub(crate) fn environment(&self) -> Vec<(OsString, OsString)> {
        let mut vars: Vec<(OsString, OsString)> = match self.env_mode {
            EnvMode::Inherit => std::env::vars_os().collect(),
            EnvMode::Clear => Vec::new(),
            EnvMode::Default => DEFAULT_ENV
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|v| (OsString::from(name), v)))
                .filter(|(_, v)| !v.as_bytes().starts_with(b"()"))
                .collect(),
        };
        for (name, value) in &self.env {
            vars.retain(|(n, _)| n != name);
            if let Some(value) = value {
                vars.push((name.clone(), value.clone()));
            }
        }
        vars
    }
}
