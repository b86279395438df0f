//! [`stdio`]: the server transport, on the process's own stdin and stdout
//! with the stdout guard, in place of rmcp's `transport::stdio()`.

use std::time::Duration;

use mcp_stdio::Connection;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;

use crate::driver::{io_error, Driver, Hooks};

/// An rmcp server's transport on this process's stdin and stdout.
///
/// ```no_run
/// # async fn f(server: impl rmcp::ServerHandler) -> Result<(), Box<dyn std::error::Error>> {
/// use rmcp::ServiceExt;
///
/// // Was: server.serve(rmcp::transport::stdio()).await?
/// let running = server.serve(mcp_stdio_rmcp::stdio()?).await?;
/// running.waiting().await?;
/// # Ok(()) }
/// ```
///
/// The stdout guard: the transport writes to a private copy of stdout, and
/// descriptor 1 (the standard output handle on Windows) now points at
/// stderr, so a `println!`, a library that logs to stdout or a child that
/// inherits it cannot corrupt the stream. Call it once, early, before
/// other threads write to stdout. Lines that are not JSON-RPC are logged
/// (`tracing`) and skipped; the session goes on.
pub struct StdioServer {
    driver: Driver<RoleServer>,
}

/// The server transport on stdin and stdout, the stdout guard on.
pub fn stdio() -> std::io::Result<StdioServer> {
    let conn = Connection::open_stdio(true).map_err(io_error)?;
    let driver = Driver::start(conn, Hooks::default(), Duration::from_secs(2))?;
    Ok(StdioServer { driver })
}

impl Transport<RoleServer> for StdioServer {
    type Error = std::io::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        "mcp-stdio stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.driver.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.driver.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.driver.close()
    }
}
