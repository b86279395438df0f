//! One connection driven for rmcp, for either role: a thread of its own
//! takes the connection's events (blocking in `next_event`, which also
//! writes what is queued and runs a spawned server's shutdown), turns each
//! line into rmcp's message type with serde_json (our reader found the
//! line: no second framing), and hands it to rmcp through a channel. What
//! rmcp sends is serialised and queued through the connection's `Sender`
//! (the queued line wakes the thread, which writes it).
//!
//! When the connection ends, each request rmcp sent and never saw
//! answered gets a JSON-RPC error response whose message says why (the
//! server's exit status and the last line of its stderr), before the end:
//! rmcp's own "transport closed" carries no text.
//!
//! A thread, not the async runtime: it works the same on every platform
//! the library spawns on, and the shutdown it runs (stdin, SIGTERM,
//! SIGKILL; the job on Windows) finishes without a live runtime.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mcp_stdio::{Connection, EndReason, Error, Event, InvalidKind, Sender};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use tokio::sync::{mpsc, oneshot};

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
struct PendingState {
    ids: HashSet<RequestId>,
    ended: Option<String>,
}

type Pending = Arc<Mutex<PendingState>>;

/// A connection driven for role `R`.
pub(crate) struct Driver<R: ServiceRole> {
    sender: Sender,
    pending: Pending,
    incoming: mpsc::UnboundedReceiver<RxJsonRpcMessage<R>>,
    ended: Arc<Mutex<Option<Ended>>>,
    done: Option<oneshot::Receiver<()>>,
    thread: Option<JoinHandle<()>>,
    grace: Duration,
}

impl<R: ServiceRole> Driver<R> {
    /// Drives `conn` from a thread of its own.
    pub(crate) fn start(conn: Connection, hooks: Hooks, grace: Duration) -> std::io::Result<Self> {
        let sender = conn.sender();
        let pending: Pending = Arc::default();
        let ended = Arc::new(Mutex::new(None));
        let (tx, incoming) = mpsc::unbounded_channel();
        let (done_tx, done) = oneshot::channel();
        let run = Run::<R> {
            conn,
            hooks,
            pending: pending.clone(),
            ended: ended.clone(),
            tx,
        };
        let thread = std::thread::Builder::new()
            .name("mcp-stdio-rmcp".into())
            .spawn(move || {
                run.run();
                let _ = done_tx.send(());
            })?;
        Ok(Driver {
            sender,
            pending,
            incoming,
            ended,
            done: Some(done),
            thread: Some(thread),
            grace,
        })
    }

    /// A future that queues `item` (rmcp's `send`: `'static`, so it holds
    /// only the sender and the pending set).
    pub(crate) fn send(
        &self,
        item: TxJsonRpcMessage<R>,
    ) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let sender = self.sender.clone();
        let pending = self.pending.clone();
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
                match sender.send(&line) {
                    Ok(()) => return Ok(()),
                    // The queue is full (64 MiB): the thread is writing it.
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

    /// rmcp's `receive`: the next message, `None` once the connection
    /// ended (after the failures of the requests left unanswered).
    pub(crate) async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        self.incoming.recv().await
    }

    /// rmcp's `close`: the shutdown sequence begins (what is queued is
    /// written, stdin closed, signals at the grace) and is awaited.
    pub(crate) async fn close(&mut self) -> Result<(), std::io::Error> {
        let _ = self.sender.close(self.grace);
        if let Some(done) = self.done.take() {
            let _ = done.await;
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        Ok(())
    }

    /// How it ended, once it has.
    pub(crate) fn ended(&self) -> Option<Ended> {
        lock(&self.ended).clone()
    }
}

impl<R: ServiceRole> Drop for Driver<R> {
    /// Begins the shutdown and leaves the thread to finish it (no runtime
    /// needed): the server's process tree ends within about twice the
    /// grace, and is reaped. `close` waits for it instead.
    fn drop(&mut self) {
        let _ = self.sender.close(self.grace);
    }
}

/// The thread's side.
struct Run<R: ServiceRole> {
    conn: Connection,
    hooks: Hooks,
    pending: Pending,
    ended: Arc<Mutex<Option<Ended>>>,
    tx: mpsc::UnboundedSender<RxJsonRpcMessage<R>>,
}

impl<R: ServiceRole> Run<R> {
    fn run(mut self) {
        loop {
            let event = match self.conn.next_event(None) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(e) => {
                    tracing::error!("mcp-stdio: the connection failed: {e}");
                    break;
                }
            };
            match event {
                Event::Message { line, .. } => {
                    match serde_json::from_slice::<RxJsonRpcMessage<R>>(line) {
                        Ok(message) => {
                            answered::<R>(&self.pending, &message);
                            let _ = self.tx.send(message);
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
                Event::Closed => break,
                _ => {} // rmcp numbers its own requests: nothing else comes
            }
        }
        self.end();
    }

    /// Answers each request left unanswered with why, then keeps how it
    /// ended; dropping the channel then tells rmcp the end.
    fn end(self) {
        let ended = Ended {
            reason: self.conn.end_reason(),
            text: self.conn.end_error().map(|e| match e {
                Error::Closed => self
                    .conn
                    .end_reason()
                    .map_or_else(|| e.to_string(), |r| r.to_string()),
                other => other.to_string(),
            }),
            stderr_tail: self.conn.stderr_tail(),
            exit_status: self.conn.exit_status(),
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
        for id in left {
            let error = ErrorData::new(CONNECTION_CLOSED, why.clone(), Some(data.clone()));
            let _ = self.tx.send(JsonRpcMessage::error(error, Some(id)));
        }
        *lock(&self.ended) = Some(ended);
    }
}

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
