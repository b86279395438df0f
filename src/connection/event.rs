//! The event a Rust caller of [`Connection::next_event`](super::Connection::next_event)
//! gets: its data copied out of the connection's lock into a buffer the
//! connection keeps (and reuses), so that the caller can answer while it
//! holds the event. The C face lends the reader's own buffer instead.

use crate::envelope::Envelope;
use crate::error::Error;
use crate::message::RpcKind;
use crate::span::{Span, Spans};
use crate::transport::{EndReason, Event, InvalidKind};

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
    Progress(i64),
    Subscription(i64),
    SubscriptionEnded(i64),
    TimedOut(i64),
    Failed(i64, EndReason),
    Invalid(InvalidKind, usize),
    TooLong(usize),
    Stderr,
    Restarted(u32, u32, EndReason),
}

/// Where `part` (a slice of `line`) is in `line`.
fn span(line: &[u8], part: Option<&[u8]>) -> Span {
    match part {
        Some(part) => {
            let from = part.as_ptr().addr() - line.as_ptr().addr();
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
            Event::Progress { id, line, envelope } => (Kind::Progress(id), line, Some(envelope)),
            Event::Subscription { id, line, envelope } => {
                (Kind::Subscription(id), line, Some(envelope))
            }
            Event::SubscriptionEnded { id, line, envelope } => {
                (Kind::SubscriptionEnded(id), line, Some(envelope))
            }
            Event::RequestTimedOut { id } => (Kind::TimedOut(id), &[][..], None),
            Event::RequestFailed { id, reason } => (Kind::Failed(id, reason), &[][..], None),
            Event::Invalid {
                kind: InvalidKind::TooLong,
                len,
                ..
            } => (Kind::TooLong(len), &[][..], None),
            Event::Invalid { kind, line, len } => {
                (Kind::Invalid(kind, len), line.unwrap_or_default(), None)
            }
            Event::Stderr { line } => (Kind::Stderr, line, None),
            Event::Restarted {
                pid,
                attempt,
                reason,
            } => (Kind::Restarted(pid, attempt, reason), &[][..], None),
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

    /// The bytes it holds (what a kept event costs).
    pub(super) fn len(&self) -> usize {
        self.line.len()
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
            Kind::Progress(id) => Event::Progress {
                id,
                line,
                envelope: envelope(),
            },
            Kind::Subscription(id) => Event::Subscription {
                id,
                line,
                envelope: envelope(),
            },
            Kind::SubscriptionEnded(id) => Event::SubscriptionEnded {
                id,
                line,
                envelope: envelope(),
            },
            Kind::TimedOut(id) => Event::RequestTimedOut { id },
            Kind::Failed(id, reason) => Event::RequestFailed { id, reason },
            Kind::Restarted(pid, attempt, reason) => Event::Restarted {
                pid,
                attempt,
                reason,
            },
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
        exit_status(self.exit?)
    }
}

/// `exit` as the standard library's status (`None`: unknown).
pub(super) fn exit_status(exit: Exit) -> Option<std::process::ExitStatus> {
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
    // Windows: the exit code's 32 bits (an NTSTATUS such as 0xC0000005
    // reads as a negative `i32`); -1 is "unknown" (a server that exits
    // with 0xFFFFFFFF reads as that too).
    #[cfg(windows)]
    if exit.code != -1 {
        use std::os::windows::process::ExitStatusExt;
        return Some(std::process::ExitStatus::from_raw(exit.code as u32));
    }
    let _ = exit;
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope;

    #[test]
    fn a_kept_event_is_the_event_on_the_copy() {
        let line = br#"{"jsonrpc":"2.0","id":"a b","method":"tools\/call","params":{"x":[1]}}"#;
        let original = envelope(line).unwrap();
        let mut data = EventData::default();
        data.keep(
            Event::Response {
                id: 7,
                line,
                envelope: original,
            },
            Exit::UNKNOWN,
        )
        .unwrap();
        let Event::Response {
            id,
            line: copy,
            envelope,
        } = data.event()
        else {
            panic!("{:?}", data.event());
        };
        assert_eq!(id, 7);
        assert_eq!(copy, line);
        assert_ne!(copy.as_ptr(), line.as_ptr(), "a copy, not a borrow");
        assert_eq!(envelope, original);
        assert_eq!(envelope.params, Some(&br#"{"x":[1]}"#[..]));
    }

    #[test]
    fn every_kind_survives_the_copy() {
        let mut data = EventData::default();
        let events = [
            Event::Message {
                line: b"[1]",
                envelope: envelope(b"[1]").unwrap(),
            },
            Event::RequestTimedOut { id: 3 },
            Event::RequestFailed {
                id: 4,
                reason: EndReason::ClosedByUs,
            },
            Event::Invalid {
                kind: InvalidKind::ParseError,
                line: Some(b"{"),
                len: 1,
            },
            Event::Invalid {
                kind: InvalidKind::TooLong,
                line: None,
                len: 1 << 30,
            },
            Event::Stderr { line: b"E404" },
        ];
        for event in events {
            data.keep(event, Exit::UNKNOWN).unwrap();
            assert_eq!(data.event(), event);
        }
        assert_eq!(data.exit_status(), None, "no exit before Closed");
    }

    #[cfg(unix)]
    #[test]
    fn closed_keeps_how_the_server_ended() {
        use std::os::unix::process::ExitStatusExt;
        let mut data = EventData::default();
        data.keep(Event::Closed, Exit { code: 3, signal: 0 })
            .unwrap();
        assert_eq!(data.event(), Event::Closed);
        assert_eq!(data.exit_status().and_then(|s| s.code()), Some(3));
        data.keep(
            Event::Closed,
            Exit {
                code: -1,
                signal: 9,
            },
        )
        .unwrap();
        assert_eq!(data.exit_status().and_then(|s| s.signal()), Some(9));
        data.keep(Event::Closed, Exit::UNKNOWN).unwrap();
        assert_eq!(data.exit_status(), None, "unknown");
    }
}
