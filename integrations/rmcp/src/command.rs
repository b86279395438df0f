//! What the client transport starts: this library's [`Command`], or the
//! `tokio::process::Command` / `std::process::Command` a host already
//! has, converted. Program, arguments, environment and working directory
//! carry over; what cannot (a uid, a gid, groups, a process group, custom
//! stdio, on Windows anything) is refused, never dropped.

use std::fmt;

use mcp_stdio::Command;
#[cfg(unix)]
use mcp_stdio::EnvMode;

/// A command this transport can start a server from.
pub trait IntoCommand {
    /// The command as this library runs it, or why it cannot be.
    fn into_command(self) -> Result<Command, ConvertError>;
}

impl IntoCommand for Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        Ok(self)
    }
}

impl IntoCommand for &Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        Ok(self.clone())
    }
}

impl IntoCommand for std::process::Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        convert(&self)
    }
}

impl IntoCommand for &std::process::Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        convert(self)
    }
}

impl IntoCommand for tokio::process::Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        convert(self.as_std())
    }
}

impl IntoCommand for &tokio::process::Command {
    fn into_command(self) -> Result<Command, ConvertError> {
        convert(self.as_std())
    }
}

/// A setting of a `std::process::Command` that this library's spawn
/// cannot carry over: the conversion refuses the command rather than drop
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    /// The setting, as std names it (`uid`, `gid`, `groups`, `pgroup`,
    /// `stdin`, `stdout`, `stderr`; on Windows: `command`).
    pub setting: &'static str,
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.setting {
            "stdin" | "stdout" | "stderr" => write!(
                f,
                "the command sets its {}: the transport owns the server's stdio \
                 (use mcp_stdio::Command's stderr mode for stderr)",
                self.setting
            ),
            "pgroup" => f.write_str(
                "the command sets a process group: the server always gets one of its own",
            ),
            "command" => f.write_str(
                "converting a std or tokio Command is Unix-only for now: \
                 build an mcp_stdio::Command",
            ),
            other => write!(
                f,
                "the command sets `{other}`, which this transport cannot carry over"
            ),
        }
    }
}

impl std::error::Error for ConvertError {}

/// The settings std shows only in its `Debug` text (no getter exists), each
/// a top-level field of `{:#?}` when set. A hook set with `pre_exec` shows
/// nowhere: it cannot be refused, and is not run (see the crate's docs).
#[cfg(unix)]
const NOT_CARRIED: [&str; 7] = [
    "uid", "gid", "groups", "stdin", "stdout", "stderr", "pgroup",
];

#[cfg(unix)]
fn convert(std_cmd: &std::process::Command) -> Result<Command, ConvertError> {
    // std's alternate Debug: one top-level field a line, four spaces in;
    // strings inside are escaped, so a line can only start so for a field.
    let debug = format!("{std_cmd:#?}");
    let field = |name: &str| {
        debug.lines().any(|line| {
            line.strip_prefix("    ")
                .and_then(|l| l.strip_prefix(name))
                .is_some_and(|r| r.starts_with(": "))
        })
    };
    for setting in NOT_CARRIED {
        if !field(setting) {
            continue;
        }
        // A process group of its own (`process_group(0)`) is what the
        // server gets anyway.
        if setting == "pgroup" && debug.contains("pgroup: Some(\n        0,\n    )") {
            continue;
        }
        return Err(ConvertError { setting });
    }
    let mut cmd = Command::new(std_cmd.get_program());
    cmd.args(std_cmd.get_args());
    // std starts from the host's whole environment, or from none after
    // `env_clear`; then its changes, in order.
    let cleared = debug.contains("clear: true");
    cmd.env_mode(if cleared {
        EnvMode::Clear
    } else {
        EnvMode::Inherit
    });
    for (name, value) in std_cmd.get_envs() {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    if let Some(dir) = std_cmd.get_current_dir() {
        cmd.current_dir(dir);
    }
    Ok(cmd)
}

#[cfg(not(unix))]
fn convert(_: &std::process::Command) -> Result<Command, ConvertError> {
    // Windows' Command hides its creation flags and its handles: nothing
    // would say what is dropped.
    Err(ConvertError { setting: "command" })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn program_arguments_environment_and_directory_carry_over() {
        let mut std_cmd = std::process::Command::new("npx");
        std_cmd
            .args(["-y", "server"])
            .env("A", "1")
            .env_remove("B")
            .current_dir("/tmp")
            .process_group(0);
        let cmd = std_cmd.into_command().unwrap();
        let shown = format!("{cmd:?}");
        for part in [
            "\"npx\"",
            "\"-y\"",
            "\"server\"",
            "\"A\"",
            "\"B\"",
            "\"/tmp\"",
            "Inherit",
        ] {
            assert!(shown.contains(part), "{part} in {shown}");
        }
        let mut cleared = std::process::Command::new("x");
        cleared.env_clear().env("ONLY", "1");
        assert!(format!("{:?}", cleared.into_command().unwrap()).contains("Clear"));
    }

    #[test]
    fn what_cannot_be_carried_over_is_refused() {
        let refused = |f: &dyn Fn(&mut std::process::Command)| {
            let mut c = std::process::Command::new("x");
            f(&mut c);
            c.into_command().map(|_| ()).unwrap_err().setting
        };
        assert_eq!(
            refused(&|c| {
                c.uid(1);
            }),
            "uid"
        );
        assert_eq!(
            refused(&|c| {
                c.gid(1);
            }),
            "gid"
        );
        assert_eq!(
            refused(&|c| {
                c.stdin(std::process::Stdio::null());
            }),
            "stdin"
        );
        assert_eq!(
            refused(&|c| {
                c.stdout(std::process::Stdio::null());
            }),
            "stdout"
        );
        assert_eq!(
            refused(&|c| {
                c.stderr(std::process::Stdio::null());
            }),
            "stderr"
        );
        assert_eq!(
            refused(&|c| {
                c.process_group(7);
            }),
            "pgroup"
        );
        // An argument that looks like a field is not one.
        let mut tricky = std::process::Command::new("x");
        tricky.arg("\n    uid: 5");
        assert!(tricky.into_command().is_ok());
        // tokio's Command is std's underneath.
        let mut t = tokio::process::Command::new("x");
        t.uid(3);
        assert_eq!(t.into_command().unwrap_err().setting, "uid");
    }
}
