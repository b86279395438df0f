//! [`ChildProcess`]: the client transport, a server spawned by this library
//! in place of rmcp's `TokioChildProcess`.

use std::time::Duration;

use mcp_stdio::{Connection, StderrMode};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;

use crate::command::IntoCommand;
use crate::driver::{io_error, Driver, Ended, Hooks, InvalidLine};

/// The line limit of a [`ChildProcess`] unless set: 16 MiB, as rmcp's
/// own stdio transport (`DEFAULT_MAX_LINE_LENGTH`).
pub const DEFAULT_MAX_LINE_LEN: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(16 << 20)
{
    Some(n) => n,
    None => unreachable!(),
};

/// A server started as a child process, for rmcp's client role: what
/// `TokioChildProcess` is, with this library's process handling.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use rmcp::ServiceExt;
/// use mcp_stdio_rmcp::ChildProcess;
///
/// let mut cmd = tokio::process::Command::new("npx");
/// cmd.args(["-y", "@modelcontextprotocol/server-everything"]);
/// // Was: let transport = rmcp::transport::TokioChildProcess::new(cmd)?;
/// let transport = ChildProcess::new(cmd)?;
/// let client = ().serve(transport).await?;
/// let tools = client.list_tools(Default::default()).await?;
/// client.cancel().await?; // the whole shutdown sequence, awaited
/// # Ok(()) }
/// ```
///
/// What it does that rmcp's does not by itself: the server runs in a
/// process group of its own (a Job Object on Windows, killed when the host
/// dies), and closing or dropping the transport ends the whole tree (its
/// stdin closed, SIGTERM to the group at the grace, SIGKILL at twice it)
/// from a thread of its own, without a live runtime; the server is always
/// reaped. When the server dies, every request rmcp is waiting on gets an
/// error response with the reason ("server exited with code 1 before its
/// first message: ModuleNotFoundError: ..."), before the end. Its stderr is
/// always drained, as lines ([`Builder::stderr`]), and its last lines are
/// kept ([`ChildProcess::ended`]). A line longer than the limit (16 MiB by
/// default, as rmcp's) is reported and skipped, its bytes never held.
///
/// rmcp numbers its requests and keeps its own timeouts: this library's
/// deadlines, progress resets and cancel-on-timeout are not used, and
/// restart stays off.
pub struct ChildProcess {
    driver: Driver<RoleClient>,
    pid: Option<u32>,
}

/// How a [`ChildProcess`] is made: [`ChildProcess::builder`].
pub struct Builder {
    cmd: Result<mcp_stdio::Command, crate::ConvertError>,
    hooks: Hooks,
    grace: Duration,
    max_line_len: Option<std::num::NonZeroUsize>,
}

/// Why a [`ChildProcess`] could not be made.
#[derive(Debug)]
pub enum SpawnError {
    /// The command holds a setting that cannot be carried over.
    Convert(crate::ConvertError),
    /// The server could not be started (the library's error names the
    /// program and, for one not found, the `PATH` searched).
    Spawn(mcp_stdio::Error),
    /// The thread that drives the connection could not be started.
    Thread(std::io::Error),
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::Convert(e) => e.fmt(f),
            SpawnError::Spawn(e) => e.fmt(f),
            SpawnError::Thread(e) => write!(f, "cannot start the transport's thread: {e}"),
        }
    }
}

impl std::error::Error for SpawnError {}

impl From<SpawnError> for std::io::Error {
    fn from(e: SpawnError) -> std::io::Error {
        match e {
            SpawnError::Spawn(e) => io_error(e),
            SpawnError::Thread(e) => e,
            convert @ SpawnError::Convert(_) => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, convert)
            }
        }
    }
}

impl ChildProcess {
    /// Starts the server from `cmd` (this library's `Command`, or a
    /// `tokio::process::Command` or `std::process::Command`, converted:
    /// see [`IntoCommand`]) with the defaults: a 2 s grace, stderr drained
    /// (its lines kept only in the tail), bad lines logged through
    /// `tracing`.
    pub fn new(cmd: impl IntoCommand) -> Result<ChildProcess, SpawnError> {
        ChildProcess::builder(cmd).spawn()
    }

    /// A builder, for the grace, the stderr and bad-line hooks, the line
    /// limit.
    pub fn builder(cmd: impl IntoCommand) -> Builder {
        Builder {
            cmd: cmd.into_command(),
            hooks: Hooks::default(),
            grace: Duration::from_secs(2),
            max_line_len: Some(DEFAULT_MAX_LINE_LEN),
        }
    }

    /// The server's process id (on POSIX also its process group's).
    pub fn id(&self) -> Option<u32> {
        self.pid
    }

    /// How the connection ended, once it has: the reason, in words, the
    /// server's last stderr lines and its exit status.
    pub fn ended(&self) -> Option<Ended> {
        self.driver.ended()
    }
}

impl Builder {
    /// The grace of the shutdown: the server's stdin is closed at once,
    /// SIGTERM goes to its group at the grace, SIGKILL at twice it (on
    /// Windows its job is terminated at the grace). Default 2 s.
    pub fn grace(mut self, grace: Duration) -> Builder {
        self.grace = grace;
        self
    }

    /// Each line the server writes to its stderr, without its newline (the
    /// pipe is always drained, whether or not this is set).
    pub fn stderr(mut self, hook: impl FnMut(&[u8]) + Send + 'static) -> Builder {
        self.hooks.stderr = Some(Box::new(hook));
        self
    }

    /// Each line from the server that is no message rmcp understands
    /// (default: a `tracing` warning). The session goes on.
    pub fn invalid_line(mut self, hook: impl FnMut(InvalidLine<'_>) + Send + 'static) -> Builder {
        self.hooks.invalid = Box::new(hook);
        self
    }

    /// The longest line accepted from the server (default 16 MiB, rmcp's
    /// own default: a host that switches accepts the same messages): a
    /// longer one is reported as an invalid line, its bytes never held.
    pub fn max_line_len(mut self, bytes: std::num::NonZeroUsize) -> Builder {
        self.max_line_len = Some(bytes);
        self
    }

    /// Starts the server.
    pub fn spawn(self) -> Result<ChildProcess, SpawnError> {
        let mut cmd = self.cmd.map_err(SpawnError::Convert)?;
        cmd.stderr(StderrMode::Events);
        let mut conn = Connection::spawn(&cmd).map_err(SpawnError::Spawn)?;
        if let Some(limit) = self.max_line_len {
            conn.set_max_line_len(Some(limit))
                .map_err(SpawnError::Spawn)?;
        }
        let pid = conn.pid();
        let driver = Driver::start(conn, self.hooks, self.grace).map_err(SpawnError::Thread)?;
        Ok(ChildProcess { driver, pid })
    }
}

impl Transport<RoleClient> for ChildProcess {
    type Error = std::io::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        "mcp-stdio ChildProcess".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.driver.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.driver.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.driver.close()
    }
}
