//! Starting a server: its program found as `execvp` would, its pipes made
//! above descriptor 2 (whatever the host closed), its stderr where the
//! command says, its own process group. Linux forks and execs (through
//! `std::process::Command`, with code of ours in the child); the portable
//! POSIX build (macOS) uses posix_spawn(3), with no code of ours in the
//! child, but for `kill_on_host_exit` (Linux only), which needs the fork.

use std::ffi::{c_int, OsStr, OsString};
use std::io;
#[cfg(not(linux_apis))]
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};

use crate::process::command::{Command, StderrMode};
use crate::sys::unix::fd::{above_stdio, is_open};
#[cfg(not(linux_apis))]
use crate::sys::unix::posix_spawn::{self, ChildStderr};
use crate::sys::unix::spawn::prepare_child;

/// `path` is a regular file this process may execute.
fn executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where `program` is: itself when it has a `/`, else the first match in
/// `path` (empty entries mean the current directory). A relative result is
/// taken from `base`, the server's working directory, as the exec after its
/// `chdir` would take it (and as a shell's `cd dir && prog`, Node's `spawn`
/// and Python's `Popen` do), and made absolute so that the check here and
/// the exec there see the same file. `ENOENT` when none.
fn resolve(program: &OsStr, path: Option<&OsStr>, base: &Path) -> Result<PathBuf, c_int> {
    if program.as_bytes().contains(&b'/') {
        return Ok(base.join(program));
    }
    if program.is_empty() {
        return Err(libc::ENOENT);
    }
    let path = path.map_or(&b"/usr/local/bin:/usr/bin:/bin"[..], OsStr::as_bytes);
    let mut found_not_executable = false;
    for dir in path.split(|&b| b == b':') {
        let candidate = base.join(OsStr::from_bytes(dir)).join(program);
        if executable(&candidate) {
            return Ok(candidate);
        }
        found_not_executable |= candidate.is_file();
    }
    Err(if found_not_executable {
        libc::EACCES
    } else {
        libc::ENOENT
    })
}

/// Our ends of a started server's pipes: its stdin, its stdout, and its
/// stderr when it comes as events.
pub(crate) struct Pipes {
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: Option<OwnedFd>,
}

/// A pipe, both ends close-on-exec and above descriptor 2: (read end,
/// write end). Made here rather than by `Stdio::piped()`: in a host that
/// closed 0, 1 or 2, std's pipes take those numbers, and an end that is
/// already the number the child needs keeps its close-on-exec flag through
/// the child's `dup2` (a server without stdin), or is overwritten by
/// another end's `dup2` (a server whose stderr is its stdin).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = io::pipe()?;
    Ok((above_stdio(read.into())?, above_stdio(write.into())?))
}

/// `/dev/null` for reading and writing, close-on-exec, above descriptor 2.
fn dev_null() -> io::Result<OwnedFd> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    above_stdio(file.into())
}

/// The `PATH` a program named without a `/` is looked up in: the one in
/// the server's environment `env`, or the host's when it gets none.
pub(crate) fn lookup_path(env: &[(OsString, OsString)]) -> Option<OsString> {
    env.iter()
        .find(|(n, _)| n == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))
}

/// Starts the server `cmd` describes; its pid and our ends of its pipes.
pub(crate) fn start(cmd: &Command, kill_on_host_exit: bool) -> io::Result<(libc::pid_t, Pipes)> {
    // Refused off Linux by the caller: PR_SET_PDEATHSIG is Linux's only.
    debug_assert!(!kill_on_host_exit || cfg!(any(target_os = "linux", target_os = "android")));
    let env = cmd.environment();
    let path = lookup_path(&env);
    // The server's working directory, absolute (a host whose own is gone
    // can still start programs by absolute paths).
    let host_dir = std::env::current_dir().unwrap_or_default();
    let base = match &cmd.cwd {
        Some(dir) => host_dir.join(dir),
        None => host_dir,
    };
    let program =
        resolve(&cmd.program, path.as_deref(), &base).map_err(io::Error::from_raw_os_error)?;
    // PR_SET_PDEATHSIG has to be asked for in the child: fork and exec.
    #[cfg(not(linux_apis))]
    if !kill_on_host_exit {
        return start_posix_spawn(cmd, &env, &program);
    }
    let (pipes, [stdin_child, stdout_child], stderr_pipe) = make_pipes(cmd)?;
    let stderr_child = match (stderr_pipe, cmd.stderr) {
        (Some(child), _) => Stdio::from(child),
        // A host without a stderr gives none: /dev/null rather than a
        // closed 2, which the server's first open file would take.
        (None, StderrMode::Inherit) if is_open(2) => Stdio::inherit(),
        (None, _) => Stdio::from(dev_null()?),
    };
    let mut command = StdCommand::new(&program);
    command
        .arg0(&cmd.program)
        .args(&cmd.args)
        .env_clear()
        .envs(env.iter().map(|(n, v)| (n, v)))
        .stdin(Stdio::from(stdin_child))
        .stdout(Stdio::from(stdout_child))
        .stderr(stderr_child)
        // Its own group: the shutdown signals reach what it starts too.
        .process_group(0);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    prepare_child(&mut command, kill_on_host_exit);
    let child = command.spawn()?;
    // Neither waits nor kills (`Child` does that); dropping the command
    // closes the child's ends of the pipes here, so that their ends come.
    let pid = child.id() as libc::pid_t;
    drop(command);
    Ok((pid, pipes))
}

/// The server's pipes: ours, the child's ends of its stdin and stdout, and
/// the child's end of its stderr when stderr comes as events.
fn make_pipes(cmd: &Command) -> io::Result<(Pipes, [OwnedFd; 2], Option<OwnedFd>)> {
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = match cmd.stderr {
        StderrMode::Events => {
            let (ours, child) = pipe()?;
            (Some(ours), Some(child))
        }
        StderrMode::Inherit | StderrMode::Discard => (None, None),
    };
    let pipes = Pipes {
        stdin,
        stdout,
        stderr,
    };
    Ok((pipes, [stdin_child, stdout_child], stderr_child))
}

/// [`start`] on the portable POSIX build, with posix_spawn(3): the same
/// server as the fork and exec start (see `sys::unix::posix_spawn::spawn`
/// for the one difference, the host's descriptors without close-on-exec
/// on systems that cannot close them all), `program` the absolute path
/// `resolve` found. No `std::process::Child`: the caller reaps by pid.
#[cfg(not(linux_apis))]
fn start_posix_spawn(
    cmd: &Command,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    program: &Path,
) -> io::Result<(libc::pid_t, Pipes)> {
    let (pipes, [stdin_child, stdout_child], stderr_child) = make_pipes(cmd)?;
    let child_stderr = match (&stderr_child, cmd.stderr) {
        (Some(child), _) => ChildStderr::Fd(child.as_fd()),
        // A host without a stderr gives none: /dev/null rather than a
        // closed 2, which the server's first open file would take.
        (None, StderrMode::Inherit) if is_open(2) => ChildStderr::Inherit,
        (None, _) => ChildStderr::DevNull,
    };
    let pid = posix_spawn::spawn(&posix_spawn::Spawn {
        program,
        arg0: &cmd.program,
        args: &cmd.args,
        env,
        cwd: cmd.cwd.as_deref(),
        stdin: stdin_child.as_fd(),
        stdout: stdout_child.as_fd(),
        stderr: child_stderr,
    })?;
    // The child's ends close here, so that their ends come.
    drop((stdin_child, stdout_child, stderr_child));
    Ok((pid, pipes))
}
