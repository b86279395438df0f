//! Starting a server on Windows from a [`Command`]: the program found in
//! its `PATH` with its `PATHEXT`, a batch file run through `cmd.exe` with
//! its arguments escaped, the environment of its mode and overlays, the
//! pipes (our ends overlapped), a Job Object that holds it from its first
//! instruction, and no console window unless asked for.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, OwnedHandle};
use std::path::{Path, PathBuf};

use super::cmdline::{batch_line, program_line, Refused};
use super::env::{allowed, block, overlay, same_name, BadVar, Var};
use super::lookup::{find_program, is_batch, path_entries};
use crate::process::command::{Command, EnvMode, StderrMode};
use crate::sys::windows::job::Job;
use crate::sys::windows::pipe::{pipe, Direction};
use crate::sys::windows::spawn::{spawn, system_directory, Spawn, Started};

/// `ERROR_FILE_NOT_FOUND`: no program by that name.
const NOT_FOUND: i32 = 2;
/// `ERROR_DIRECTORY`: the working directory is not one.
const NOT_A_DIRECTORY: i32 = 267;

/// A started server: the process, its job, our ends of its pipes.
pub(crate) struct Launched {
    pub(crate) started: Started,
    pub(crate) job: Job,
    pub(crate) stdin: OwnedHandle,
    pub(crate) stdout: OwnedHandle,
    pub(crate) stderr: Option<OwnedHandle>,
}

fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().collect()
}

fn error(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl From<Refused> for io::Error {
    fn from(refused: Refused) -> io::Error {
        let what = match refused {
            Refused::Nul => "a NUL inside the program or an argument",
            Refused::BadProgramPath => "a program path that cannot be quoted",
            Refused::LineBreakForBatch => {
                "a line break in an argument for a batch file (cmd.exe would end the command there)"
            }
        };
        io::Error::new(io::ErrorKind::InvalidInput, what)
    }
}

/// The environment the server gets: its mode's variables, then the
/// overlays in order, names compared as Windows does (without case).
fn environment(cmd: &Command) -> Vec<Var> {
    let host = || -> Vec<Var> {
        std::env::vars_os()
            .map(|(name, value)| (wide(&name), wide(&value)))
            .collect()
    };
    let mut vars = match cmd.env_mode {
        EnvMode::Inherit => host(),
        EnvMode::Clear => Vec::new(),
        EnvMode::Default => allowed(&host()),
    };
    for (name, value) in &cmd.env {
        overlay(
            &mut vars,
            &wide(name),
            value.as_deref().map(wide).as_deref(),
        );
    }
    vars
}

fn var<'a>(vars: &'a [Var], name: &str) -> Option<&'a [u16]> {
    let name: Vec<u16> = name.encode_utf16().collect();
    vars.iter()
        .find(|(n, _)| same_name(n, &name))
        .map(|(_, v)| &v[..])
}

/// The directories of the `PATH` the server gets, in order, as the lookup
/// reads them.
pub(crate) fn path_dirs(cmd: &Command) -> Vec<PathBuf> {
    let vars = environment(cmd);
    let Some(path) = var(&vars, "PATH") else {
        return Vec::new();
    };
    path_entries(path)
        .map(|dir| PathBuf::from(OsString::from_wide(dir)))
        .collect()
}

/// The server's working directory, absolute.
fn working_dir(cmd: &Command) -> io::Result<PathBuf> {
    let host = std::env::current_dir()?;
    let dir = match &cmd.cwd {
        Some(dir) => host.join(dir),
        None => host,
    };
    if !dir.is_dir() {
        return Err(error(NOT_A_DIRECTORY));
    }
    Ok(dir)
}

/// Where the server's stderr goes, when not to us: the host's own stderr
/// (`NUL` when it has none), or `NUL`.
fn stderr_elsewhere(mode: StderrMode) -> io::Result<Option<OwnedHandle>> {
    if mode == StderrMode::Inherit {
        let raw = io::stderr().as_raw_handle();
        if !raw.is_null() && raw != windows_invalid() {
            return Ok(None); // the host's, borrowed for the call
        }
    }
    let nul = std::fs::OpenOptions::new().write(true).open("NUL")?;
    Ok(Some(OwnedHandle::from(nul)))
}

fn windows_invalid() -> std::os::windows::io::RawHandle {
    -1isize as std::os::windows::io::RawHandle
}

/// Starts `cmd`: see the module's rules. Errors carry a Windows error code
/// where there is one (`ERROR_FILE_NOT_FOUND` for a program not found,
/// `ERROR_DIRECTORY` for a working directory that is not one), else
/// `InvalidInput` with what was wrong.
pub(crate) fn start(cmd: &Command, console_window: bool) -> io::Result<Launched> {
    let vars = environment(cmd);
    let cwd = working_dir(cmd)?;
    let cwd_wide = wide(cwd.as_os_str());
    let is_file = |p: &[u16]| Path::new(&OsString::from_wide(p)).is_file();
    let program = find_program(
        &wide(&cmd.program),
        var(&vars, "PATH"),
        var(&vars, "PATHEXT"),
        &cwd_wide,
        is_file,
    )
    .ok_or_else(|| error(NOT_FOUND))?;
    let args: Vec<Vec<u16>> = cmd.args.iter().map(|a| wide(a)).collect();
    let args: Vec<&[u16]> = args.iter().map(Vec::as_slice).collect();
    let (application, line) = if is_batch(&program) {
        let mut cmd_exe = system_directory()?;
        cmd_exe.extend("\\cmd.exe".encode_utf16());
        (cmd_exe, batch_line(&program, &args)?)
    } else {
        let line = program_line(&program, &args)?;
        (program, line)
    };
    let environment = block(&vars).map_err(|bad| {
        let what = match bad {
            BadVar::Name => "an environment variable name that is empty or holds '='",
            BadVar::Nul => "a NUL inside an environment variable",
        };
        io::Error::new(io::ErrorKind::InvalidInput, what)
    })?;

    let stdin = pipe(Direction::ToChild)?;
    let stdout = pipe(Direction::FromChild)?;
    let (stderr_pipe, stderr_other) = match cmd.stderr {
        StderrMode::Events => (Some(pipe(Direction::FromChild)?), None),
        mode => (None, stderr_elsewhere(mode)?),
    };
    let host_stderr = io::stderr();
    let stderr_theirs: BorrowedHandle<'_> = match (&stderr_pipe, &stderr_other) {
        (Some(p), _) => p.theirs.as_handle(),
        (None, Some(h)) => h.as_handle(),
        (None, None) => host_stderr.as_handle(),
    };
    let job = Job::new()?;
    let started = spawn(
        &Spawn {
            application: &application,
            command_line: &line,
            environment: &environment,
            current_dir: Some(&cwd_wide),
            stdio: [
                stdin.theirs.as_handle(),
                stdout.theirs.as_handle(),
                stderr_theirs,
            ],
            no_window: !console_window,
        },
        &job,
    )?;
    // The child's ends close here: only the child holds them now, so its
    // exit (and its children's) ends the streams.
    Ok(Launched {
        started,
        job,
        stdin: stdin.ours,
        stdout: stdout.ours,
        stderr: stderr_pipe.map(|p| p.ours),
    })
}
