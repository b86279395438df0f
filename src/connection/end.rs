//! Why a connection ended: the core's [`EndReason`], in words (with a
//! spawned server's last stderr line), and as the [`Error`] a request it
//! failed gives; and how a spawned server exited, as soon as it is known.

use super::driver::Exit;
use super::{event, Connection, Inner};
use crate::end_reason::EndReason;
use crate::error::{last_line, Error, ServerExitReport};

impl Inner {
    /// How the spawned server ended, as far as known now.
    pub(crate) fn exit(&self) -> Exit {
        #[cfg(os_io)]
        if let Some(process) = self.io.as_ref().and_then(|io| io.process()) {
            return Exit {
                code: process.exit_code(),
                signal: process.term_signal(),
            };
        }
        Exit::UNKNOWN
    }

    /// Why it ended, or is ending (`None` while open).
    pub(crate) fn end_reason(&self) -> Option<EndReason> {
        self.core.end_reason()
    }

    /// Why it ended, as the error of a request it failed: a server's exit
    /// by itself with its stderr tail, [`Error::Closed`] otherwise.
    pub(crate) fn end_error(&self) -> Option<Error> {
        Some(match self.end_reason()? {
            EndReason::ServerExited(exit) => {
                let mut stderr_tail = Vec::new();
                self.stderr_tail_into(&mut stderr_tail);
                Error::ServerExited(Box::new(ServerExitReport { exit, stderr_tail }))
            }
            _ => Error::Closed,
        })
    }

    /// Why it ended, in words: "server exited with code 1 before its first
    /// message: ModuleNotFoundError: ...", "server closed its stdout",
    /// "closed by the host" (`None` while open).
    #[cfg_attr(not(feature = "capi"), allow(dead_code))] // the C face's
    pub(crate) fn end_text(&self) -> Option<String> {
        let text = self.end_text_alone()?;
        #[cfg(os_io)]
        if let Some(e) = self.restart_error() {
            return Some(format!("{text}; the restart failed: {e}"));
        }
        Some(text)
    }

    /// [`end_text`](Self::end_text) without a failed restart's words.
    fn end_text_alone(&self) -> Option<String> {
        let reason = self.end_reason()?;
        let spawned = self.pid().is_some();
        let text = match reason {
            EndReason::ServerExited(_) => return self.end_error().map(|e| e.to_string()),
            EndReason::ClosedByUs => return Some(reason.to_string()),
            EndReason::PeerClosed if spawned => "server closed its stdout".to_owned(),
            EndReason::WriteRefused if spawned => {
                "server reads its stdin no more (a write was refused)".to_owned()
            }
            other => return Some(other.to_string()),
        };
        let mut tail = Vec::new();
        self.stderr_tail_into(&mut tail);
        Some(match last_line(&tail) {
            Some(line) => format!("{text}: {line}"),
            None => text,
        })
    }
}

impl Connection {
    /// Why the connection ended, or is ending: `None` while open. The
    /// [`Event::RequestFailed`](crate::Event::RequestFailed) events carry
    /// it too; a server's exit takes the place of a stdout that ended a
    /// moment before it.
    pub fn end_reason(&self) -> Option<EndReason> {
        self.shared()
            .with(|inner| inner.end_reason())
            .ok()
            .flatten()
    }

    /// Why the connection ended, as an error for a host to show or return:
    /// [`Error::ServerExited`] (the exit, whether the server ever wrote a
    /// line, the last lines of its stderr) when a spawned server exited by
    /// itself, [`Error::Closed`] for any other end; `None` while open.
    pub fn end_error(&self) -> Option<Error> {
        self.shared().with(|inner| inner.end_error()).ok().flatten()
    }

    /// How the spawned server ended, as soon as that is known (with the
    /// failures of its pending requests, at the latest with
    /// [`Event::Closed`](crate::Event::Closed)): `None` while it runs, for
    /// a connection that spawned nothing, and when the status is unknown
    /// (the host's own SIGCHLD handler reaped it).
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.event.exit_status().or_else(|| {
            let exit = self.shared().with(|inner| inner.exit()).ok()?;
            event::exit_status(exit)
        })
    }
}
