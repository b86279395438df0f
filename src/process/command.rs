//! What a server is started from: its program, arguments, environment,
//! working directory and where its stderr goes, as `std::process::Command`
//! would hold them, with the environment rules of MCP hosts.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// How a server's environment starts, before the overlays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvMode {
    /// Only the host's variables in [`DEFAULT_ENV`] (values that start
    /// with `()`, exported shell functions, left out).
    Default,
    /// Every variable of the host.
    Inherit,
    /// None.
    Clear,
}

/// Where a server's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StderrMode {
    /// To the host as lines, always drained.
    Events,
    /// The host's own stderr (`/dev/null` when the host has none).
    Inherit,
    /// `/dev/null`.
    Discard,
}

/// The variables `EnvMode::Default` passes on: what a server needs to run
/// and no secret (the MCP SDKs' list, and the locale, time zone and
/// temporary directory).
pub(crate) const DEFAULT_ENV: [&str; 11] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
    "TMPDIR",
];

/// A server to start.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    /// A name looked up in the `PATH` the server gets, or a path with a `/`.
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env_mode: EnvMode,
    /// Laid over the mode in order: `None` removes the variable.
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) stderr: StderrMode,
}

impl Command {
    /// `program`, no arguments, the default environment, the host's
    /// working directory, stderr as lines.
    pub(crate) fn new(program: &OsStr) -> Command {
        Command {
            program: program.to_os_string(),
            args: Vec::new(),
            env_mode: EnvMode::Default,
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::Events,
        }
    }

    /// The environment the server gets: the mode's variables, then the
    /// overlays in order.
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
