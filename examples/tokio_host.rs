//! The host of `host.rs` on tokio (Linux): the same MCP session
//! (`session/mod.rs`), the same command line and output, but driven from a
//! tokio task on a current-thread runtime, with no thread per connection:
//!
//! ```sh
//! cargo run --example tokio_host -- target/demo/mcp_server
//! ```
//!
//! The connection's descriptor (`AsFd`: an epoll descriptor standing for
//! the server's pipes, its exit and the wake-up of other threads' sends)
//! is registered with tokio through `AsyncFd`, edge-triggered: the task
//! takes every event that is ready (`next_event(Some(Duration::ZERO))`
//! until `Ok(None)`), then awaits the descriptor's readiness or the
//! connection's next deadline (a request's timeout, a step of the
//! shutdown), and again.
//!
//! The runtime is never blocked, also at the end: the session closes the
//! connection (`close(grace)` returns at once) and the task keeps taking
//! events until `Event::Closed`, after which dropping the connection waits
//! for nothing. Had the task to give up on an open connection, its drop
//! (which waits for the server's end: 2 s at most, 5 s for a server that
//! ignores SIGTERM) goes to `spawn_blocking`.

#[cfg(linux_apis)]
mod session;

#[cfg(linux_apis)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    use mcp_stdio::Connection;
    use session::{Options, Session, USAGE};
    use std::process::ExitCode;

    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(opts) => opts,
        Err(why) if why.is_empty() => {
            println!("usage: tokio_host {USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("tokio_host: {why}\nusage: tokio_host {USAGE}");
            return ExitCode::from(2);
        }
    };
    // Spawned from the runtime's only thread, which lives as long as the
    // server should (kill_on_host_exit is tied to the spawning thread).
    let conn = match Connection::spawn(&opts.command()) {
        Ok(conn) => conn,
        Err(e) => return opts.spawn_failed("tokio_host", e),
    };
    let session = Session::new("tokio_host", opts, conn.sender());
    // One task per connection; more connections would be more tasks.
    tokio::spawn(linux::run(conn, session))
        .await
        .unwrap_or(ExitCode::FAILURE)
}

#[cfg(linux_apis)]
mod linux {
    use std::process::ExitCode;
    use std::time::Duration;

    use mcp_stdio::{Connection, Event};
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    use tokio::time::{sleep_until, Instant};

    use crate::session::Session;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// The session on `conn`, to its end; the exit code.
    pub async fn run(conn: Connection, mut session: Session) -> ExitCode {
        // The descriptor is made first, where failing is an error (in
        // `AsRawFd`, which AsyncFd calls, it would be a panic).
        if let Err(e) = conn.poll_fd().map(|_| ()) {
            return give_up(conn, session, e.into()).await;
        }
        // tokio 1.53.3 deprecated its safe constructors: unsound for a type
        // whose descriptor may change or close while registered. The
        // connection's is made once and closed only when it is dropped.
        #[allow(deprecated)]
        let registered = AsyncFd::try_with_interest(conn, Interest::READABLE);
        let mut conn = match registered {
            Ok(conn) => conn,
            Err(e) => {
                let (conn, e) = e.into_parts();
                return give_up(conn, session, e.into()).await;
            }
        };
        session.start();
        match drive(&mut conn, &mut session).await {
            Ok(()) => session.finish(conn.get_ref()),
            Err(e) => give_up(conn.into_inner(), session, e).await,
        }
    }

    // snippet-start tokio-drive
    /// Feeds `session` the connection's events until `Event::Closed`.
    async fn drive(conn: &mut AsyncFd<Connection>, session: &mut Session) -> Result<(), BoxError> {
        loop {
            // Edge-triggered: take every event that is ready before waiting.
            while let Some(event) = conn.get_mut().next_event(Some(Duration::ZERO))? {
                match event {
                    Event::Closed => return Ok(()), // the drop will not wait
                    event => session.on_event(event),
                }
            }
            let deadline = conn.get_ref().next_deadline()?.map(Instant::from_std);
            tokio::select! {
                ready = conn.readable() => ready?.clear_ready(),
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {}
            }
        }
    }
    // snippet-end tokio-drive

    /// The connection failed: the session ends with `e`, and the still open
    /// `conn` is dropped off the runtime (its drop closes it and waits for
    /// the server's end).
    async fn give_up(conn: Connection, mut session: Session, e: BoxError) -> ExitCode {
        session.fail(e);
        let code = session.finish(&conn);
        let _ = tokio::task::spawn_blocking(move || drop(conn)).await;
        code
    }
}

#[cfg(not(linux_apis))]
fn main() {
    eprintln!(
        "tokio_host: needs Connection::poll_fd, which this build lacks (Linux has it); \
         see examples/host.rs"
    );
    std::process::exit(2);
}
