//! The event a Rust caller of [`Connection::next_event`](super::Connection::next_event)
//! gets: its data copied out of the connection's lock into a buffer the
//! connection keeps (and reuses), so that the caller can answer while it
//! holds the event. The C face lends the reader's own buffer instead.

use crate::span::{Span, Spans};
use crate::{Envelope, Error, Event, InvalidKind, RpcKind};

use super::Exit;

/// The last event, with its bytes.
#[derive(Debug, Default)]
pub(super) struct EventData {
    /// The line (or stderr line), copied.
    line: Vec<u8>,
    kind: Kind,
    /// Where the envelope's members are in `line`.
    spans: Spans,
    rpc: Option<RpcKind>,
    /// How the server ended, once `Closed` was taken.
    exit: Option<Exit>,
}

#[derive(Debug, Default, Clone, Copy)]
enum Kind {
    #[default]
    Closed,
    Message,
    Response(i64),
    TimedOut(i64),
    Failed(i64),
    Invalid(InvalidKind, usize),
    TooLong(usize),
    Stderr,
}

/// Where `part` (a slice of `line`) is in `line`.
fn span(line: &[u8], part: Option<&[u8]>) -> Span {
    match part {
        Some(part) => {
            let from = part.as_ptr() as usize - line.as_ptr() as usize;
            Span::new(from, from + part.len())
        }
        None => Span::default(),
    }
}

impl EventData {
    /// Copies `event`'s data (`Err`: no memory for it; the event is lost,
    /// which only a line too big to copy can cause).
    pub(super) fn keep(&mut self, event: Event<'_>, exit: Exit) -> Result<(), Error> {
        let (kind, line, envelope) = match event {
            Event::Message { line, envelope } => (Kind::Message, line, Some(envelope)),
            Event::Response { id, line, envelope } => (Kind::Response(id), line, Some(envelope)),
            Event::RequestTimedOut { id } => (Kind::TimedOut(id), &[][..], None),
            Event::RequestFailed { id } => (Kind::Failed(id), &[][..], None),
            Event::Invalid {
                kind: InvalidKind::TooLong,
                len,
                ..
            } => (Kind::TooLong(len), &[][..], None),
            Event::Invalid { kind, line, len } => {
                (Kind::Invalid(kind, len), line.unwrap_or_default(), None)
            }
            Event::Stderr { line } => (Kind::Stderr, line, None),
            Event::Closed => {
                self.exit = Some(exit);
                (Kind::Closed, &[][..], None)
            }
        };
        self.line.clear();
        self.line
            .try_reserve(line.len())
            .map_err(|_| Error::OutOfMemory)?;
        self.line.extend_from_slice(line);
        self.kind = kind;
        self.rpc = None;
        self.spans = Spans::default();
        if let Some(e) = envelope {
            self.rpc = e.kind;
            self.spans = Spans {
                id: span(line, e.id),
                method: span(line, e.method),
                params: span(line, e.params),
                result: span(line, e.result),
                error: span(line, e.error),
            };
        }
        Ok(())
    }

    /// The event kept, borrowing the copy.
    pub(super) fn event(&self) -> Event<'_> {
        let line = &self.line[..];
        let envelope = || Envelope::at(line, self.rpc, &self.spans);
        match self.kind {
            Kind::Message => Event::Message {
                line,
                envelope: envelope(),
            },
            Kind::Response(id) => Event::Response {
                id,
                line,
                envelope: envelope(),
            },
            Kind::TimedOut(id) => Event::RequestTimedOut { id },
            Kind::Failed(id) => Event::RequestFailed { id },
            Kind::Invalid(kind, len) => Event::Invalid {
                kind,
                line: Some(line),
                len,
            },
            Kind::TooLong(len) => Event::Invalid {
                kind: InvalidKind::TooLong,
                line: None,
                len,
            },
            Kind::Stderr => Event::Stderr { line },
            Kind::Closed => Event::Closed,
        }
    }

    /// How a spawned server ended, once `Closed` was taken.
    pub(super) fn exit_status(&self) -> Option<std::process::ExitStatus> {
        let exit = self.exit?;
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if exit.code >= 0 {
                return Some(std::process::ExitStatus::from_raw((exit.code & 0xff) << 8));
            }
            if exit.signal > 0 {
                return Some(std::process::ExitStatus::from_raw(exit.signal & 0x7f));
            }
        }
        None
    }
}
