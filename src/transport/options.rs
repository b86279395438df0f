//! [`RequestOptions`]: how a request is timed, and whether its progress is
//! followed.

use std::time::Duration;

/// How [`Transport::request_with`](super::Transport::request_with) times a
/// request and follows its progress. The default: no timeout, progress not
/// followed (as [`request`](super::Transport::request) with `None`).
///
/// ```
/// use std::time::Duration;
/// use mcp_stdio::RequestOptions;
///
/// // A tool call that may run long while it reports progress: 30 s of
/// // silence times it out, 10 minutes at most in all.
/// let options = RequestOptions::timeout(Some(Duration::from_secs(30)))
///     .reset_on_progress()
///     .max_timeout(Duration::from_secs(600));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: bool,
    pub(crate) reset_on_progress: bool,
    pub(crate) max_timeout: Option<Duration>,
}

impl RequestOptions {
    /// A zero timeout is none (the C face's 0, the connection's rule).
    pub(crate) fn without_zero_timeout(self) -> RequestOptions {
        RequestOptions {
            timeout: self.timeout.filter(|t| !t.is_zero()),
            ..self
        }
    }

    /// A request that times out `timeout` after it is sent (`None`: never),
    /// its progress not followed.
    pub fn timeout(timeout: Option<Duration>) -> RequestOptions {
        RequestOptions {
            timeout,
            ..RequestOptions::default()
        }
    }

    /// Follows the request's progress: the transport puts a
    /// `progressToken` in its `params._meta` (merged into a `_meta` the
    /// params carry; made when they have none; params that are an array
    /// are refused) and gives each `notifications/progress` for that token
    /// as [`Event::Progress`](crate::Event::Progress) tied to the request's
    /// id, until the request ends. Resets nothing by itself.
    pub fn progress(self) -> RequestOptions {
        RequestOptions {
            progress: true,
            ..self
        }
    }

    /// Follows the request's progress (see [`progress`](Self::progress)),
    /// and each notification whose `progress` value increases moves the
    /// deadline to the timeout from then (a value that does not increase is
    /// delivered and resets nothing), never past the hard maximum
    /// ([`max_timeout`](Self::max_timeout): set one, or a server that keeps
    /// reporting keeps the request alive for ever).
    pub fn reset_on_progress(self) -> RequestOptions {
        RequestOptions {
            progress: true,
            reset_on_progress: true,
            ..self
        }
    }

    /// The hard maximum: the request times out `max` after it was sent at
    /// the latest, whatever its progress (it also bounds the first
    /// deadline; without a timeout it is the deadline).
    pub fn max_timeout(self, max: Duration) -> RequestOptions {
        RequestOptions {
            max_timeout: Some(max),
            ..self
        }
    }
}
