//! [`Connection::call`]: send a request and wait for its answer, without
//! losing anything meanwhile. The peer's requests go to a handler (by
//! default answered with -32601); every other event is copied and kept, in
//! order, for the following [`next_event`](Connection::next_event) calls,
//! up to [`KEPT_MAX`] bytes.

use super::driver::{Taken, Wait};
use super::event::EventData;
use super::{Connection, Sender};
use crate::envelope::Envelope;
use crate::error::Error;
use crate::message::RpcKind;
use crate::transport::{Event, RequestOptions};

/// The most a call keeps of the events it takes for later (their lines'
/// bytes): 16 MiB.
pub const KEPT_MAX: usize = 16 << 20;

/// JSON-RPC's "method not found", the default answer to the peer's requests.
const METHOD_NOT_FOUND: i64 = -32601;

impl Connection {
    /// Sends the request `method` (`params`, `options` as
    /// [`request_with`](Connection::request_with)) and waits for its end:
    /// `Ok` with the response line (a result or an error response: read it
    /// with [`envelope`](crate::envelope)), or the failure with its reason:
    /// [`Error::TimedOut`] at its deadline (a `notifications/cancelled` was
    /// sent), [`Error::ServerExited`] (with the exit status and the last
    /// stderr lines) or [`Error::Closed`] when the connection ended first
    /// ([`end_error`](Connection::end_error)).
    ///
    /// Meanwhile the peer's requests (sampling, elicitation, `roots/list`
    /// in sessions up to 2025-11-25) are answered with -32601 "Method not
    /// found", so that a server that waits for its answer cannot deadlock
    /// the call ([`call_with`](Connection::call_with) gives them to a
    /// handler), and every other event (notifications, stderr lines, other
    /// requests' answers, progress) is kept, in order, for the next
    /// [`next_event`](Connection::next_event) calls: nothing is dropped. At
    /// most [`KEPT_MAX`] bytes are kept: a flood past it ends the wait with
    /// [`Error::KeptEventsFull`] (the answer, when it comes, is then an
    /// [`Event::Response`]). Without a timeout, and against a peer that
    /// never answers, the call waits until the connection ends.
    pub fn call(
        &mut self,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<Vec<u8>, Error> {
        self.call_with(method, params, options, |sender, request| {
            if let Some(id) = request.id {
                // The peer may be gone meanwhile: its answer is moot then.
                let _ = sender.respond_error(Some(id), METHOD_NOT_FOUND, "Method not found");
            }
        })
    }

    /// [`call`](Connection::call), the peer's requests given to
    /// `on_request` with a [`Sender`] to answer them (through
    /// `respond`/`respond_error` with the request's id token, at once or
    /// later from another thread).
    pub fn call_with(
        &mut self,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
        mut on_request: impl FnMut(&Sender, &Envelope<'_>),
    ) -> Result<Vec<u8>, Error> {
        let id = self.request_with(method, params, options)?;
        let sender = self.sender();
        loop {
            let mut data = EventData::default();
            let taken = self
                .sender
                .shared
                .next_event_with(Wait::Forever, |event, exit| data.keep(event, exit))?;
            match taken {
                Taken::Event(kept) => kept?,
                Taken::NoMessage => continue,
                Taken::Ended => return Err(self.end_error().unwrap_or(Error::Closed)),
            }
            // The call's end returns; a request of the peer's goes to the
            // handler; anything else is kept.
            let keep = match data.event() {
                Event::Response { id: of, line, .. } if of == id => return Ok(line.to_vec()),
                Event::RequestTimedOut { id: of } if of == id => return Err(Error::TimedOut),
                Event::RequestFailed { id: of, .. } if of == id => {
                    return Err(self.end_error().unwrap_or(Error::Closed));
                }
                Event::Message { envelope, .. } if envelope.kind == Some(RpcKind::Request) => {
                    on_request(&sender, &envelope);
                    false
                }
                _ => true,
            };
            if keep {
                self.kept_bytes += data.len();
                self.kept.push_back(data);
                if self.kept_bytes > KEPT_MAX {
                    return Err(Error::KeptEventsFull);
                }
            }
        }
    }
}
