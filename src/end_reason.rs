//! Why a transport ended: [`EndReason`], and how a spawned server exited
//! by itself ([`ServerExit`]). Plain data, below the transport and the
//! errors that both carry it.

/// Why a transport ended, and with it every request still waiting for its
/// answer ([`Event::RequestFailed`](crate::Event::RequestFailed)). The first cause stands, but that a
/// server's exit, noticed a moment after its stdout ended or a write to it
/// failed, takes their place. Its [`Display`](std::fmt::Display) is the
/// text a host shows ("server exited with code 1 before its first
/// message").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndReason {
    /// We closed it: `close`, or a drop (the C face's free), came first.
    ClosedByUs,
    /// The peer closed its output (a server its stdout) and, as far as
    /// known, lives on: no answer can come.
    PeerClosed,
    /// A write to the peer was refused: it reads no more.
    WriteRefused,
    /// A spawned server exited by itself (not by the shutdown's signals).
    ServerExited(ServerExit),
}

/// How a spawned server exited by itself ([`EndReason::ServerExited`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServerExit {
    /// Its exit code; `None` when a signal killed it (or the code is
    /// unknown). On Windows, all 32 bits (an `NTSTATUS` such as
    /// `0xC0000005` reads as a negative number).
    pub code: Option<i32>,
    /// The signal that killed it (POSIX); `None` otherwise.
    pub signal: Option<i32>,
    /// It wrote no line on its stdout before it ended: a server that
    /// failed to start (a missing module, a wrong path, a package that
    /// could not be fetched), whose stderr tail says why.
    pub before_first_message: bool,
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndReason::ClosedByUs => f.write_str("closed by the host"),
            EndReason::PeerClosed => f.write_str("the peer closed its output"),
            EndReason::WriteRefused => f.write_str("the peer reads no more (a write was refused)"),
            EndReason::ServerExited(exit) => exit.fmt(f),
        }
    }
}

impl std::fmt::Display for ServerExit {
    /// "server exited with code N" or "server killed by signal N", then
    /// " before its first message" where that holds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (_, Some(signal)) => write!(f, "server killed by signal {signal}")?,
            (Some(code), None) => write!(f, "server exited with code {code}")?,
            (None, None) => f.write_str("server exited")?,
        }
        if self.before_first_message {
            f.write_str(" before its first message")?;
        }
        Ok(())
    }
}
