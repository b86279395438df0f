//! One connection driven for rmcp, for either role: each line the
//! connection's reader found becomes rmcp's message type with serde_json
//! (no second framing); what rmcp sends is serialised and written by the
//! sending task itself (`Sender::send_now`). On Linux the connection's
//! one descriptor (`poll_fd`, an epoll set) is registered with tokio and
//! `receive` takes its events (`reactor.rs`); elsewhere a thread of its
//! own takes them and hands rmcp's messages over a channel (`thread.rs`).
//!
//! When the connection ends, each request rmcp sent and never saw
//! answered gets a JSON-RPC error response whose message says why (the
//! server's exit status and the last line of its stderr), before the end:
//! rmcp's own "transport closed" carries no text.
//!
//! A transport dropped while open finishes its shutdown (stdin, SIGTERM,
//! SIGKILL; the job on Windows) on a thread of its own: no live runtime is
//! needed.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use mcp_stdio::{Connection, EndReason, Error, Event, InvalidKind, Sender};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};

/// The error code of the responses that stand for the answers a dead peer
/// will never give: JSON-RPC's implementation-defined server error range,
/// as the TypeScript SDK's "connection closed".
pub const CONNECTION_CLOSED: ErrorCode = ErrorCode(-32000);

/// A line from the peer that is no JSON-RPC message rmcp understands:
/// reported, skipped, never the end of the session.
#[derive(Debug, Clone, Copy)]
pub struct InvalidLine<'a> {
    /// The line, trimmed; `None` for a line over the limit (its bytes were
    /// dropped as they came, never held).
    pub line: Option<&'a [u8]>,
    /// Its length in bytes (for a line over the limit: the bytes received).
    pub len: usize,
    /// Why: not JSON, not JSON-RPC, over the line limit, or valid JSON-RPC
    /// that rmcp's types refuse (`serde_json`'s error).
    pub why: &'a str,
}

/// A hook for each stderr line of the server.
pub(crate) type StderrHook = Box<dyn FnMut(&[u8]) + Send>;

/// A hook for each line that is no message.
pub(crate) type InvalidHook = Box<dyn FnMut(InvalidLine<'_>) + Send>;

/// What the host hooks into a connection.
pub(crate) struct Hooks {
    pub(crate) stderr: Option<StderrHook>,
    pub(crate) invalid: InvalidHook,
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            stderr: None,
            invalid: Box::new(|bad: InvalidLine<'_>| {
                let shown = bad
                    .line
                    .map(|l| String::from_utf8_lossy(&l[..l.len().min(200)]).into_owned());
                tracing::warn!(len = bad.len, line = ?shown, "mcp-stdio: skipped a line: {}", bad.why);
            }),
        }
    }
}

/// How the connection ended, kept for the transport's owner.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    /// Why, as the library says it.
    pub reason: Option<EndReason>,
    /// Why, in words: "server exited with code 1 before its first message:
    /// ModuleNotFoundError: No module named 'foo'".
    pub text: Option<String>,
    /// The last lines of the server's stderr (20 lines, 4 KiB at most).
    pub stderr_tail: Vec<u8>,
    /// The server's exit status, when known.
    pub exit_status: Option<std::process::ExitStatus>,
}

/// The requests rmcp sent and has not seen answered; once the connection
/// ended, why (a request sent after that fails with it at once).
#[derive(Default)]
pub(crate) struct PendingState {
    ids: HashSet<RequestId>,
    ended: Option<String>,
}

pub(crate) type Pending = Arc<Mutex<PendingState>>;

/// What one event of the connection is to rmcp: a message for it, or
/// nothing (a hook took it), or the end.
pub(crate) enum Turn<R: ServiceRole> {
    Message(RxJsonRpcMessage<R>),
    Nothing,
    Closed,
}

/// The connection's events, as rmcp's messages: the hooks, and the
/// requests left unanswered.
pub(crate) struct Lines<R: ServiceRole> {
    hooks: Hooks,
    pending: Pending,
    ended: Arc<Mutex<Option<Ended>>>,
    _role: std::marker::PhantomData<fn() -> R>,
}

impl<R: ServiceRole> Lines<R> {
    fn new(hooks: Hooks) -> Self {
        Lines {
            hooks,
            pending: Pending::default(),
            ended: Arc::default(),
            _role: std::marker::PhantomData,
        }
    }

    /// One event: a message for rmcp (a response forgets its request),
    /// a hook's business, or the end.
    pub(crate) fn take(&mut self, event: Event<'_>) -> Turn<R> {
        match event {
            Event::Message { line, .. } => {
                match serde_json::from_slice::<RxJsonRpcMessage<R>>(line) {
                    Ok(message) => {
                        answered::<R>(&self.pending, &message);
                        return Turn::Message(message);
                    }
                    Err(e) => (self.hooks.invalid)(InvalidLine {
                        line: Some(line),
                        len: line.len(),
                        why: &e.to_string(),
                    }),
                }
            }
            Event::Invalid { kind, line, len } => {
                let why = match kind {
                    InvalidKind::ParseError => "not JSON",
                    InvalidKind::TooLong => "longer than the line limit",
                    _ => "not JSON-RPC 2.0",
                };
                (self.hooks.invalid)(InvalidLine { line, len, why })
            }
            Event::Stderr { line } => {
                if let Some(hook) = &mut self.hooks.stderr {
                    hook(line);
                }
            }
            Event::Closed => return Turn::Closed,
            _ => {} // rmcp numbers its own requests: nothing else comes
        }
        Turn::Nothing
    }

    /// The end: keeps how it ended, and gives an error response with why
    /// for each request rmcp sent and never saw answered (from now on a
    /// request sent fails at once with it).
    pub(crate) fn end(&mut self, conn: &Connection) -> Vec<RxJsonRpcMessage<R>> {
        let ended = Ended {
            reason: conn.end_reason(),
            text: conn.end_error().map(|e| match e {
                Error::Closed => conn
                    .end_reason()
                    .map_or_else(|| e.to_string(), |r| r.to_string()),
                other => other.to_string(),
            }),
            stderr_tail: conn.stderr_tail(),
            exit_status: conn.exit_status(),
        };
        let why = ended
            .text
            .clone()
            .unwrap_or_else(|| "connection closed".into());
        let data = serde_json::json!({
            "exitCode": ended.exit_status.and_then(|s| s.code()),
            "stderrTail": String::from_utf8_lossy(&ended.stderr_tail),
        });
        let mut left: Vec<RequestId> = {
            let mut state = lock(&self.pending);
            state.ended = Some(why.clone());
            state.ids.drain().collect()
        };
        left.sort_by_key(|id| id.to_string());
        *lock(&self.ended) = Some(ended);
        left.into_iter()
            .map(|id| {
                let error = ErrorData::new(CONNECTION_CLOSED, why.clone(), Some(data.clone()));
                JsonRpcMessage::error(error, Some(id))
            })
            .collect()
    }

    /// How it ended, once it has.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the reactor's
    pub(crate) fn ended(&self) -> Option<Ended> {
        lock(&self.ended).clone()
    }
}

/// A future that queues `item` (rmcp's `send`: `'static`, so it holds
/// only the sender and the pending set) and writes it at once.
pub(crate) fn send<R: ServiceRole>(
    sender: &Sender,
    pending: &Pending,
    item: TxJsonRpcMessage<R>,
) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send + 'static {
    let sender = sender.clone();
    let pending = pending.clone();
    async move {
        let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
        let id = match &item {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        if let Some(id) = &id {
            let mut state = lock(&pending);
            if let Some(why) = &state.ended {
                // The end came first: it says why, as an answer would.
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    why.clone(),
                ));
            }
            state.ids.insert(id.clone());
        }
        loop {
            match sender.send_now(&line) {
                Ok(()) => return Ok(()),
                // The queue is full (64 MiB): the connection is writing it.
                Err(Error::WouldBlock) => tokio::task::yield_now().await,
                // The connection is ending: a request stays pending, and
                // the end answers it with why.
                Err(Error::Closed) if id.is_some() => return Ok(()),
                Err(e) => {
                    if let Some(id) = &id {
                        lock(&pending).ids.remove(id);
                    }
                    return Err(io_error(e));
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod reactor;
#[cfg(not(target_os = "linux"))]
mod thread;

#[cfg(target_os = "linux")]
pub(crate) use reactor::Driver;
#[cfg(not(target_os = "linux"))]
pub(crate) use thread::Driver;

/// Forgets the request a response or error answers.
fn answered<R: ServiceRole>(pending: &Pending, message: &RxJsonRpcMessage<R>) {
    let id = match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    };
    if let Some(id) = id {
        lock(pending).ids.remove(id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The library's error as rmcp's transport error type.
pub(crate) fn io_error(e: Error) -> std::io::Error {
    match e {
        Error::Os(code) => std::io::Error::from_raw_os_error(code),
        Error::Closed => std::io::Error::new(std::io::ErrorKind::BrokenPipe, e),
        other => std::io::Error::other(other),
    }
}
