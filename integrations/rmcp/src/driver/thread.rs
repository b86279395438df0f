//! Elsewhere than on Linux (no `poll_fd` there): a thread of its own takes
//! the connection's events (blocking in `next_event`, which also writes
//! what is left queued and runs a spawned server's shutdown) and hands
//! rmcp's messages over a channel.

use std::thread::JoinHandle;
use std::time::Duration;

use mcp_stdio::{Connection, Sender};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use tokio::sync::{mpsc, oneshot};

use super::{Ended, Hooks, Lines, Turn};

/// A connection driven for role `R` from a thread.
pub(crate) struct Driver<R: ServiceRole> {
    sender: Sender,
    pending: super::Pending,
    ended: std::sync::Arc<std::sync::Mutex<Option<Ended>>>,
    incoming: mpsc::UnboundedReceiver<RxJsonRpcMessage<R>>,
    done: Option<oneshot::Receiver<()>>,
    thread: Option<JoinHandle<()>>,
    grace: Duration,
}

impl<R: ServiceRole> Driver<R> {
    /// Drives `conn` from a thread of its own.
    pub(crate) fn start(
        mut conn: Connection,
        hooks: Hooks,
        grace: Duration,
    ) -> std::io::Result<Self> {
        let sender = conn.sender();
        let mut lines = Lines::<R>::new(hooks);
        let pending = lines.pending.clone();
        let ended = lines.ended.clone();
        let (tx, incoming) = mpsc::unbounded_channel();
        let (done_tx, done) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("mcp-stdio-rmcp".into())
            .spawn(move || {
                loop {
                    let turn = match conn.next_event(None) {
                        Ok(Some(event)) => lines.take(event),
                        Ok(None) => continue,
                        Err(e) => {
                            tracing::error!("mcp-stdio: the connection failed: {e}");
                            Turn::Closed
                        }
                    };
                    match turn {
                        Turn::Message(message) => {
                            let _ = tx.send(message);
                        }
                        Turn::Nothing => {}
                        Turn::Closed => break,
                    }
                }
                for failure in lines.end(&conn) {
                    let _ = tx.send(failure);
                }
                drop(tx); // rmcp sees the end after the failures
                let _ = done_tx.send(());
            })?;
        Ok(Driver {
            sender,
            pending,
            ended,
            incoming,
            done: Some(done),
            thread: Some(thread),
            grace,
        })
    }

    /// rmcp's `send`.
    pub(crate) fn send(
        &self,
        item: TxJsonRpcMessage<R>,
    ) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send + 'static {
        super::send::<R>(&self.sender, &self.pending, item)
    }

    /// rmcp's `receive`: the next message, `None` once the connection ended
    /// (after the failures of the requests left unanswered).
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
        super::lock(&self.ended).clone()
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
