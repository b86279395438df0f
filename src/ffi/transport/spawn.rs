//! `mcp_transport_spawn`: a server started as a child process, its stdin and
//! stdout the transport's descriptors, its stderr as lines, its life
//! supervised (`child.rs`) until it is reaped.

use std::ffi::{c_int, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::super::command::{McpCommand, McpStderrMode};
use super::super::fd::set_errno;
use super::fds::FdIo;
use super::{lock, Inner, McpStatus, McpTransport};
use crate::process::child::{reap_owed, Child, POLL_EXIT};
use crate::process::stderr::StderrLines;
use crate::sys::unix::fd::move_above_stdio;
use crate::{Error, Transport};

/// `mcp_transport_spawn` flag (Linux): the server is sent SIGKILL when the
/// thread that spawned it ends (the host exits or crashes), through
/// `PR_SET_PDEATHSIG`. Spawn from a thread that lives as long as the
/// server should. Elsewhere `MCP_STATUS_INVALID_ARGUMENT`.
pub const MCP_TRANSPORT_KILL_ON_HOST_EXIT: u32 = 1 << 2;

/// The grace of the close that begins when a server exits by itself.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A spawned server: the process and its stderr.
#[derive(Debug)]
pub(super) struct Process {
    /// `None` unless stderr comes as events.
    stderr: Option<StderrLines>,
    /// Its stdout ended (the transport's end waits for the rest).
    stdout_ended: bool,
    /// `receive_end` was given to the core: the end is under way.
    ended: bool,
    /// What a poll last said of stderr and the exit; `None` at the start of
    /// a call (the caller may have waited elsewhere): asked then with a
    /// poll that does not wait. So a round trip reads an empty stderr and
    /// asks for the exit status at most once, not on every turn.
    ready: Option<Ready>,
    /// Last: dropped after the pipes are closed (kills and reaps if needed).
    child: Child,
}

/// Which of a server's descriptors have something: its stderr (bytes, or
/// its end), its pidfd (the exit).
#[derive(Debug, Clone, Copy)]
struct Ready {
    stderr: bool,
    exit: bool,
}

/// Whether a poll entry says the descriptor has something (bytes, its end,
/// an error: a read or waitpid will tell which).
fn has_something(p: &libc::pollfd) -> bool {
    p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

impl Process {
    pub(super) fn pid(&self) -> libc::pid_t {
        self.child.pid()
    }

    pub(super) fn stderr_dropped(&self) -> u64 {
        self.stderr.as_ref().map_or(0, StderrLines::dropped)
    }

    pub(super) fn stdout_ended(&mut self) {
        self.stdout_ended = true;
    }

    /// The descriptors to wait on: stderr, and the pidfd.
    pub(super) fn poll_fds(&self) -> impl Iterator<Item = c_int> + '_ {
        self.stderr
            .as_ref()
            .and_then(StderrLines::fd)
            .into_iter()
            .chain(self.child.pidfd())
    }

    /// The next time the process needs looking at: a signal due, or the
    /// next look where no pidfd tells the exit.
    pub(super) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let poll = self.child.needs_polling().then(|| now + POLL_EXIT);
        match (self.child.next_deadline(), poll) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A new call begins: the stderr line lent by the last event goes, and
    /// what the last poll said is stale.
    pub(super) fn begin_call(&mut self) {
        if let Some(stderr) = &mut self.stderr {
            stderr.begin_call();
        }
        self.ready = None;
    }

    /// What the wait's poll said of the process's descriptors (`set`: the
    /// entries it polled).
    pub(super) fn note_poll(&mut self, set: &[libc::pollfd]) {
        let said = |fd: Option<c_int>| {
            fd.is_some_and(|fd| set.iter().any(|p| p.fd == fd && has_something(p)))
        };
        self.ready = Some(Ready {
            stderr: said(self.stderr.as_ref().and_then(StderrLines::fd)),
            exit: said(self.child.pidfd()),
        });
    }

    /// Asks, without waiting, which of stderr and the pidfd have something.
    fn probe(&self) -> Ready {
        let stderr = self.stderr.as_ref().and_then(StderrLines::fd);
        let mut set = [stderr, self.child.pidfd()].map(|fd| libc::pollfd {
            fd: fd.unwrap_or(-1), // poll ignores negative descriptors
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: two valid pollfd entries.
        if unsafe { libc::poll(set.as_mut_ptr(), 2, 0) } < 0 {
            return Ready {
                stderr: true,
                exit: true,
            }; // look at both
        }
        Ready {
            stderr: has_something(&set[0]),
            exit: has_something(&set[1]),
        }
    }

    /// `close` was called: SIGTERM at the grace, SIGKILL at twice it.
    pub(super) fn on_close(&mut self, grace: Duration, now: Instant) {
        self.child.schedule(grace, now);
    }

    /// Reaps, signals what is due, drains stderr, and ends the transport
    /// when the server is gone: exited, reaped and its pipes ended, or its
    /// group sent SIGKILL. A server that exits by itself begins the close.
    ///
    /// `Ok(true)`: the group was sent SIGKILL just now; the caller reads
    /// what its stdout still holds (an answer written before, say: it is
    /// delivered, not failed), then calls again, which ends the transport.
    pub(super) fn supervise(&mut self, core: &mut Transport) -> Result<bool, Error> {
        if self.ended {
            return Ok(false);
        }
        let now = Instant::now();
        let ready = self.ready.unwrap_or_else(|| self.probe());
        let mut more_stderr = false;
        if let Some(stderr) = self.stderr.as_mut().filter(|_| ready.stderr) {
            more_stderr = stderr.drain();
        }
        // Without a pidfd nothing tells the exit: a look every time.
        let exited = if ready.exit || self.child.needs_polling() {
            self.child.check_exit(ready.exit)
        } else {
            self.child.exited()
        };
        self.ready = Some(Ready {
            stderr: more_stderr,
            exit: false,
        });
        // Exited by itself, closed its stdout (no answer can come any more:
        // MCP's "the server closes its output stream and exits"), or
        // stopped reading (a refused write): the shutdown sequence runs as
        // after a close, for what is left.
        let went_away = exited || self.stdout_ended || core.closing();
        if went_away && !self.child.scheduled() {
            core.close(EXIT_GRACE, now)?;
            self.child.schedule(EXIT_GRACE, now);
        }
        let kill_sent_before = self.child.kill_sent();
        self.child.signal_due(now);
        if self.child.kill_sent() && !kill_sent_before && !self.stdout_ended {
            return Ok(true);
        }
        let pipes_ended = self.stdout_ended && self.stderr.as_ref().is_none_or(StderrLines::ended);
        if self.child.killed(now) || (self.child.exited() && pipes_ended) {
            core.receive_end()?;
            self.ended = true;
            // No group signal comes after the end: the exited server's
            // zombie, which kept its group's id reserved until now, goes.
            self.child.release();
        }
        Ok(false)
    }

    /// The end is under way: the core was told the server is gone.
    pub(super) fn ending(&self) -> bool {
        self.ended
    }

    /// The next stderr line, lent until the next call.
    pub(super) fn stderr_line(&mut self) -> Option<&[u8]> {
        self.stderr.as_mut()?.next_line()
    }

    pub(super) fn exit_code(&self) -> i32 {
        self.child.exit_code()
    }

    pub(super) fn term_signal(&self) -> i32 {
        self.child.term_signal()
    }
}

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

/// Marks every descriptor from 3 up close-on-exec, in the child between
/// fork and exec (async-signal-safe calls only), so that none of the host's
/// leaks into the server, whatever flags the host gave them.
fn close_on_exec_from_3() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets flags.
        let r =
            unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
        if r == 0 {
            return;
        }
    }
    // SAFETY: sysconf is async-signal-safe.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    let max = if max <= 0 {
        1024
    } else {
        max.min(1 << 16) as c_int
    };
    for fd in 3..max {
        // SAFETY: fcntl on a descriptor number; a closed one fails harmlessly.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Clears close-on-exec on descriptors 0-2, in the child between fork and
/// exec (async-signal-safe calls only): they are exactly what the server
/// is given, and an inherited stderr that the host marked close-on-exec
/// would otherwise be closed by the exec.
fn stdio_kept_on_exec() {
    for fd in 0..3 {
        // SAFETY: fcntl(2) is async-signal-safe; a closed descriptor fails.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            }
        }
    }
}

/// Sets every signal the host ignores back to its default, in the child
/// between fork and exec (async-signal-safe calls only): an exec keeps
/// ignored signals ignored, so a host that ignores SIGTERM or SIGINT (or
/// SIGPIPE, as most servers of sockets do) would start servers deaf to the
/// shutdown's SIGTERM, or unable to die of a broken pipe. Handled signals
/// need nothing: exec resets them. Node's `child_process.spawn` does the same.
fn default_signal_dispositions() {
    // 1..=64 covers Linux's real-time signals too; numbers a platform does
    // not have (or glibc keeps for itself) fail harmlessly.
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
        // SAFETY: sigaction(2) is async-signal-safe; a NULL new action only
        // reads the current one into `old`, which it may write.
        if unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) } != 0 {
            continue;
        }
        // SAFETY: sigaction succeeded and wrote `old`.
        let mut action = unsafe { old.assume_init() };
        if action.sa_sigaction == libc::SIG_IGN {
            action.sa_sigaction = libc::SIG_DFL;
            // SAFETY: as above; SIG_DFL is a valid disposition for any
            // signal but SIGKILL and SIGSTOP, which are skipped.
            unsafe { libc::sigaction(sig, &action, std::ptr::null_mut()) };
        }
    }
}

/// Our ends of a started server's pipes: its stdin, its stdout, and its
/// stderr when it comes as events.
struct Pipes {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: Option<OwnedFd>,
}

/// `fd`, moved above descriptor 2 if it is one of 0-2 (see
/// `move_above_stdio`).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    let raw = move_above_stdio(fd.into_raw_fd()).map_err(io::Error::from_raw_os_error)?;
    // SAFETY: a descriptor just made or moved, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
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

/// Descriptor `fd` is open in this process.
fn is_open(fd: c_int) -> bool {
    // SAFETY: F_GETFD on a descriptor number; a closed one fails.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// Starts the server `cmd` describes; its pid and our ends of its pipes.
fn start(cmd: &McpCommand, kill_on_host_exit: bool) -> io::Result<(libc::pid_t, Pipes)> {
    let env = cmd.environment();
    let child_path = env
        .iter()
        .find(|(n, _)| n == "PATH")
        .map(|(_, v)| v.clone());
    let host_path = std::env::var_os("PATH");
    // The server's working directory, absolute (a host whose own is gone
    // can still start programs by absolute paths).
    let host_dir = std::env::current_dir().unwrap_or_default();
    let base = match &cmd.cwd {
        Some(dir) => host_dir.join(dir),
        None => host_dir,
    };
    let path = child_path.as_deref().or(host_path.as_deref());
    let program = resolve(&cmd.program, path, &base).map_err(io::Error::from_raw_os_error)?;
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = match cmd.stderr {
        McpStderrMode::MCP_STDERR_EVENTS => {
            let (ours, child) = pipe()?;
            (Some(ours), Stdio::from(child))
        }
        // A host without a stderr gives none: /dev/null rather than a
        // closed 2, which the server's first open file would take.
        McpStderrMode::MCP_STDERR_INHERIT if is_open(2) => (None, Stdio::inherit()),
        McpStderrMode::MCP_STDERR_INHERIT | McpStderrMode::MCP_STDERR_DISCARD => {
            (None, Stdio::from(dev_null()?))
        }
    };
    let mut command = Command::new(&program);
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
    // The standard library gives the child the default SIGPIPE disposition,
    // but the signal mask of the thread that spawns (it no longer empties
    // it): a host that blocks SIGTERM (to take it with sigwait or a
    // signalfd) would start servers deaf to the SIGTERM of the shutdown.
    // The closure empties it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and makes
    // only async-signal-safe calls (fcntl, close_range, prctl, getppid, sigaction,
    // _exit, sigemptyset, sigprocmask).
    unsafe {
        command.pre_exec(move || {
            close_on_exec_from_3();
            stdio_kept_on_exec();
            #[cfg(any(target_os = "linux", target_os = "android"))]
            if kill_on_host_exit {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(127); // the host is already gone
                }
            }
            let _ = kill_on_host_exit;
            default_signal_dispositions();
            let mut empty = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(empty.as_mut_ptr());
            if libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    // Neither waits nor kills (`Child` does that); dropping the command
    // closes the child's ends of the pipes here, so that their ends come.
    let pid = child.id() as libc::pid_t;
    drop(command);
    Ok((
        pid,
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

/// Starts an MCP server as a child process and returns a transport on its
/// stdin and stdout. The program is looked up in the `PATH` the server
/// gets (see `mcp_command_new`); it runs in its own process group, with an
/// empty signal mask, every signal at its default (also those the host
/// ignores, SIGPIPE and SIGTERM included), and no descriptor of the host
/// but the three it is given (all others are made close-on-exec in the
/// child). Its stderr goes where `mcp_command_stderr` says. The transport
/// owns the pipes and the process; no thread is started and no signal
/// handler installed.
///
/// Then, besides the rules of every transport:
/// - `mcp_transport_close(t, grace_ms)` begins the MCP shutdown: what is
///   queued is written and the server's stdin closed (at the latest at the
///   grace), SIGTERM goes to its process group at `grace_ms` if it has not
///   exited, SIGKILL at twice `grace_ms`. `next_event` drives it; answers
///   still arriving are delivered.
/// - `MCP_EVENT_CLOSED` comes once the server has exited and its stdout and
///   stderr have ended, or once its group was sent SIGKILL and the server's
///   exit was seen (a grandchild holding the pipes cannot keep it open; a
///   server stuck in the kernel, or held by a tracer, is waited for 1 s);
///   pending requests get `MCP_EVENT_REQUEST_FAILED` just before.
///   `exit_code` and `term_signal` say how it ended (-1 and 0: unknown).
/// - A server that exits by itself, or closes its stdout, closes the
///   transport the same way (with a 2 s grace: its stdin is closed, SIGTERM
///   comes 2 s later if it still runs, SIGKILL 4 s later). To restart it,
///   spawn the same command again.
/// - `mcp_transport_free` on an open transport closes it with a 2 s grace
///   (or on an earlier close's schedule) and waits: at most about twice the
///   grace plus 1 s. The server is reaped, whatever the order of calls; one
///   that cannot be reaped by then (a tracer holds it, it is stuck in the
///   kernel) is not waited for: the next `mcp_transport_spawn` or
///   `mcp_transport_free` of any transport reaps it once it can.
///
/// What the host must know:
/// - The server's pid is also its process group's id. Its exit is noticed
///   without reaping it: until no group signal is to come (the transport
///   ended, or SIGKILL was sent), the exited server stays a zombie, which
///   keeps that id from being given to another process, so that the
///   shutdown signals can only reach the server's own group.
/// - A host whose own SIGCHLD handler reaps children (`waitpid(-1, ...)`),
///   or that ignores SIGCHLD (or sets `SA_NOCLDWAIT`), takes the server's
///   exit status (`CLOSED` then says -1 and 0) and frees its pid, and the
///   group's id, as soon as it exits. The library signals the group through
///   the server's pidfd, which names that group and no other, whatever
///   became of the number (Linux 6.9+); on older kernels by the number only
///   while it sees the server unreaped, and once the server is reaped
///   behind its back, not at all: what the server left running is then not
///   reached.
/// - Descendants that leave the server's process group (`setsid`,
///   `setpgid`: daemons, some wrappers) are not reached by the shutdown
///   signals, and the library does nothing more about them: once the server
///   is gone and its group sent SIGKILL, `CLOSED` comes even while they
///   still hold its stdout or stderr.
/// - A host that forks without exec while a transport is open gives its
///   child copies of the server's pipes (they are close-on-exec, not
///   close-on-fork): the server sees no end of its stdin until that child
///   exits or execs.
/// - The library's descriptors (pipes, the wake-up, the pidfd,
///   `/dev/null`) never take the numbers 0, 1, 2, also in a host that
///   closed them; the server gets its stdin, stdout and stderr as 0, 1, 2
///   whatever the host closed (`/dev/null` as stderr with
///   `MCP_STDERR_INHERIT` in a host without one).
///
/// `flags`: 0 or `MCP_TRANSPORT_KILL_ON_HOST_EXIT`.
///
/// Returns `MCP_STATUS_OK` and the transport in `*out`, or, with nothing
/// started and nothing left behind (no process, no descriptor):
/// `MCP_STATUS_NULL_ARGUMENT` (cmd or out NULL), `MCP_STATUS_INVALID_ARGUMENT`
/// (an unknown flag, or one meaning nothing here), `MCP_STATUS_SPAWN_FAILED`
/// (`errno` says why: ENOENT for a program not found or a missing working
/// directory, EACCES, E2BIG, EMFILE...), `MCP_STATUS_OUT_OF_MEMORY`.
/// Thread-safe (`cmd` is only read). POSIX only.
///
/// # Safety
/// `cmd` is NULL or a live command not changed during the call; `out` is
/// NULL or points to writable memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_spawn(
    cmd: *const McpCommand,
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_spawn, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        // SAFETY: NULL or live and unchanged, by the caller's contract.
        let Some(cmd) = (unsafe { cmd.as_ref() }) else {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        let known = if cfg!(any(target_os = "linux", target_os = "android")) {
            MCP_TRANSPORT_KILL_ON_HOST_EXIT
        } else {
            0
        };
        if flags & !known != 0 {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        reap_owed();
        let (pid, pipes) = match start(cmd, flags & MCP_TRANSPORT_KILL_ON_HOST_EXIT != 0) {
            Ok(started) => started,
            Err(e) => {
                set_errno(e.raw_os_error().unwrap_or(libc::EIO));
                return McpStatus::MCP_STATUS_SPAWN_FAILED;
            }
        };
        let fds = [
            Some(&pipes.stdin),
            Some(&pipes.stdout),
            pipes.stderr.as_ref(),
        ];
        for fd in fds.into_iter().flatten().map(AsRawFd::as_raw_fd) {
            // SAFETY: pipes just made, ours.
            unsafe {
                let old = libc::fcntl(fd, libc::F_GETFL);
                libc::fcntl(fd, libc::F_SETFL, old | libc::O_NONBLOCK);
            }
        }
        let stdin = pipes.stdin.into_raw_fd();
        let stdout = pipes.stdout.into_raw_fd();
        let process = Process {
            stderr: pipes.stderr.map(StderrLines::new),
            stdout_ended: false,
            ended: false,
            ready: None,
            child: Child::new(pid),
        };
        let io = match FdIo::for_process(stdout, stdin, process) {
            Ok(io) => io,
            Err(status) => return status, // dropping it closed, killed and reaped
        };
        let mut core = Transport::new();
        core.set_ended_by_peer_only();
        let raw = McpTransport::into_raw(Inner {
            core,
            waiting: false,
            io: Some(io),
        });
        if raw.is_null() {
            return McpStatus::MCP_STATUS_OUT_OF_MEMORY;
        }
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { out.write(raw) };
        McpStatus::MCP_STATUS_OK
    })
}

/// The spawned server's process id (also its process group's), or -1 for
/// a transport that spawned nothing, and for NULL. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_pid(t: *const McpTransport) -> i32 {
    ffi_boundary!(mcp_transport_pid, -1, {
        // SAFETY: forwarded caller contract.
        match unsafe { lock(t) } {
            Ok((_, inner)) => inner_process(&inner).map_or(-1, Process::pid),
            Err(_) => -1,
        }
    })
}

/// The bytes of the spawned server's stderr lines dropped because more
/// than 1 MiB waited undelivered (newlines included); 0 for NULL and for
/// transports without stderr events. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_stderr_dropped(t: *const McpTransport) -> u64 {
    ffi_boundary!(mcp_transport_stderr_dropped, 0, {
        // SAFETY: forwarded caller contract.
        match unsafe { lock(t) } {
            Ok((_, inner)) => inner_process(&inner).map_or(0, Process::stderr_dropped),
            Err(_) => 0,
        }
    })
}

fn inner_process(inner: &Inner) -> Option<&Process> {
    inner.io.as_ref()?.process()
}
