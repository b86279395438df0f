//! The constructor of a Windows connection on a spawned server.

use super::handles::Handles;
use crate::connection::io::Io;
use crate::connection::{Connection, Inner};
use crate::error::Error;
use crate::process::command::Command;
use crate::process::stderr::StderrLines;
use crate::process::windows::start::start;
use crate::process::Server;
use crate::sys::windows::stream::Reader;
use crate::transport::Transport;

impl Connection {
    /// [`spawn`](Connection::spawn), the C face's flags given apart:
    /// `kill_on_host_exit` is Linux's, refused here (a host's exit kills the
    /// tree anyway, through the job); `console_window` as
    /// [`Command::console_window`].
    pub(crate) fn spawn_with(
        cmd: &Command,
        kill_on_host_exit: bool,
        console_window: bool,
    ) -> Result<Connection, Error> {
        if kill_on_host_exit {
            return Err(Error::InvalidArgument);
        }
        let failed = |e: std::io::Error| match e.raw_os_error() {
            Some(code) => Error::SpawnFailed(code),
            None if e.kind() == std::io::ErrorKind::InvalidInput => Error::InvalidArgument,
            None => Error::from(e),
        };
        let launched = start(cmd, console_window).map_err(failed)?;
        let stderr = match launched.stderr {
            Some(pipe) => Some(StderrLines::new(
                Reader::new(pipe, crate::process::stderr::READ).map_err(failed)?,
            )),
            None => None,
        };
        // On a failure from here on, the job is closed: the tree dies.
        let process = Server::new(launched.started, launched.job, stderr);
        let ends = Handles::for_process(launched.stdout, launched.stdin).map_err(failed)?;
        let mut core = Transport::new();
        core.set_ended_by_peer_only();
        Ok(Connection::from_inner(Inner::new(
            core,
            Some(Io::for_process(ends, process)),
        )))
    }
}
