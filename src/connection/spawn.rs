//! [`Connection::spawn`], the same promise on every platform that spawns;
//! each platform's `open.rs` keeps it (`Io::spawn`).

use super::io::Io;
use super::restart::Restarter;
use super::{Connection, Inner};
use crate::error::Error;
use crate::process::command::Command;
use crate::transport::Transport;

impl Connection {
    /// Starts an MCP server as a child process from `cmd` and returns a
    /// connection on its stdin and stdout, which owns the pipes and the
    /// process; no thread is started and no signal handler installed.
    ///
    /// Then, besides the rules of every connection:
    /// - [`close`](Connection::close) begins the MCP shutdown: the queue is
    ///   written and the server's stdin closed (at the latest at the
    ///   grace). On POSIX, SIGTERM goes to its process group at the grace
    ///   if it has not exited, SIGKILL at twice the grace. On Windows
    ///   (there is no SIGTERM) its Job Object, which holds the server and
    ///   everything it started, is terminated at the grace. `next_event`
    ///   drives it.
    /// - [`Event::Closed`](crate::Event::Closed) comes once the server has
    ///   exited and its stdout and stderr have ended, or once its group was
    ///   sent SIGKILL (its job terminated) and its exit was seen (a
    ///   grandchild holding the pipes cannot keep it open; a server stuck in
    ///   the kernel, or held by a tracer, is waited for 1 s).
    ///   [`exit_status`](Connection::exit_status) then says how it ended.
    ///   Whatever is left in its process group then (a child that outlived
    ///   it, holding none of its pipes) is sent SIGKILL; on Windows its job
    ///   is terminated.
    /// - A server that exits by itself, or closes its stdout, closes the
    ///   connection the same way (with a 2 s grace), unless its command has
    ///   a [`RestartPolicy`](crate::RestartPolicy): then it is started again
    ///   on this connection ([`Event::Restarted`](crate::Event::Restarted)),
    ///   and the connection closes so only when the policy gives up.
    /// - POSIX: its exit is noticed without reaping it until no group signal
    ///   is to come, so the signals can only reach its own group (through
    ///   its pidfd on Linux 6.9+). A host whose own SIGCHLD handler reaps
    ///   every child, or that ignores SIGCHLD, takes that away (the exit
    ///   status is then unknown). Descendants that leave the server's
    ///   process group (`setsid`) are not reached by the shutdown signals.
    /// - Windows: the server is in a Job Object with
    ///   `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` from its first instruction,
    ///   held by the connection: dropping the connection, or the host's
    ///   exit however it happens, ends the whole tree. Nothing is killed by
    ///   process id. The program is found in the server's `PATH` with its
    ///   `PATHEXT` (`npx` is `npx.cmd`); a batch file runs through
    ///   `cmd.exe` with its arguments escaped so that none can inject a
    ///   command (an argument that cannot be escaped, a line break, is
    ///   refused); no console window unless [`Command::console_window`].
    ///
    /// Errors, with nothing started and nothing left behind:
    /// [`Error::SpawnFailed`] (the system's error code says why: on POSIX
    /// `ENOENT` for a program not found or a missing working directory,
    /// `EACCES`, `E2BIG`, `EMFILE`...; on Windows `ERROR_FILE_NOT_FOUND`
    /// (2), `ERROR_DIRECTORY` (267) for a working directory that is not
    /// one, `ERROR_ACCESS_DENIED`...), [`Error::InvalidArgument`] (an
    /// environment name empty or holding `=`; [`Command::kill_on_host_exit`]
    /// off Linux; on Windows also a NUL inside the program, an argument or
    /// a variable, and an argument a batch file cannot be given safely).
    pub fn spawn(cmd: &Command) -> Result<Connection, Error> {
        cmd.check()?;
        Connection::spawn_with(cmd, cmd.kill_on_host_exit, cmd.console_window)
    }

    /// [`spawn`](Connection::spawn), the C face's flags given apart (Linux's
    /// PDEATHSIG, Windows' console window), `cmd` checked.
    pub(crate) fn spawn_with(
        cmd: &Command,
        kill_on_host_exit: bool,
        console_window: bool,
    ) -> Result<Connection, Error> {
        let mut io = Io::spawn(cmd, kill_on_host_exit, console_window)?;
        let mut core = Transport::new();
        core.set_ended_by_peer_only();
        let restarter = cmd.restart.map(|policy| {
            if let Some(process) = io.process_mut() {
                process.set_restart(true);
            }
            let start = (kill_on_host_exit, console_window);
            Box::new(Restarter::new(cmd.clone(), start, policy))
        });
        let mut inner = Inner::new(core, Some(io));
        inner.restarter = restarter;
        Ok(Connection::from_inner(inner))
    }
}
