//! A small MCP host on the safe Rust API, the twin of `examples/mcp_host.c`:
//!
//! ```sh
//! cargo run --example host -- target/demo/mcp_server
//! cargo run --example host -- --call echo '{"message":"hi"}' --allow-kill \
//!     npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! It spawns the server (`Connection::spawn`: looked up in `PATH`, in its
//! own process group), speaks MCP 2026-07-28 when the server does
//! (`server/discover`) and the `initialize` handshake otherwise, lists the
//! tools, calls each `--call` (without any: the demo session of
//! `examples/mcp_server.c`, echo and add 2+3, each answer checked), answers
//! the server's own requests, and closes (the server's stdin, then SIGTERM
//! at the grace, SIGKILL at twice it). The MCP is in `session/mod.rs`,
//! shared with `tokio_host.rs`; here the connection is driven from this
//! thread: `next_event(None)` blocks until the next event, meanwhile the
//! library writes what is queued, reads, times requests out and supervises
//! the server.
//!
//! Output on stdout, as mcp_host.c's: `-> ` each message sent, `<- ` each
//! one received (as received), `tool: ` each tool, `text: ` each text
//! content (escaped onto one line), `content: ` the type of other content,
//! and last `ok: N/M expected responses received and checked` or
//! `FAILED: ...`. The server's stderr comes out on ours, each line prefixed
//! `host: [server] `. Exit status 0 if every step went well and the server
//! exited by itself with status 0 (or, with `--allow-kill`, was stopped by
//! a signal); 1 otherwise; 2 for bad usage.

#[cfg(os_io)]
mod session;

#[cfg(os_io)]
fn main() -> std::process::ExitCode {
    use mcp_stdio::{Connection, Error, Event};
    use session::{Options, Session, USAGE};
    use std::process::ExitCode;

    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(opts) => opts,
        Err(why) if why.is_empty() => {
            println!("usage: host {USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("host: {why}\nusage: host {USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut conn = match Connection::spawn(&opts.command()) {
        Ok(conn) => conn,
        Err(e) => return opts.spawn_failed("host", e),
    };
    let mut session = Session::new("host", opts, conn.sender());
    session.start();
    loop {
        match conn.next_event(None) {
            Ok(Some(Event::Closed)) => break, // the server is gone, its exit seen
            Ok(Some(event)) => session.on_event(event),
            Ok(None) | Err(Error::OutOfMemory) => {} // nothing taken: again
            Err(e) => {
                session.fail(e);
                break; // dropping the connection closes it
            }
        }
    }
    session.finish(&conn)
}

#[cfg(not(os_io))]
fn main() {
    eprintln!("host: spawning a server needs a Unix system");
    std::process::exit(2);
}
