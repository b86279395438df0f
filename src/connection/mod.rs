//! [`Connection`]: one MCP stdio connection driven to its end. It owns a
//! [`Transport`] (the protocol state), the descriptors it reads and writes,
//! a spawned server's supervision, the lock that lets any thread send
//! ([`Sender`]), and the blocking [`next_event`](Connection::next_event)
//! with a deadline. Safe code over `sys` and `process`.
//!
//! - `mod.rs`: the connection, its sender, the state behind the lock;
//! - `call.rs`: [`Connection::call`], a request and its answer awaited,
//!   the peer's requests answered and every other event kept meanwhile;
//! - `driver.rs`: the loop of `next_event` (write, read, supervise, ask the
//!   core, wait);
//! - `end.rs`: why it ended (reason, text, error), and a server's exit;
//! - `event.rs`: the copy of an event's data a Rust caller gets;
//! - `io.rs`: a descriptor connection's I/O, the same on every platform
//!   (what is written, read, and when the end comes);
//! - `spawn.rs`: [`Connection::spawn`];
//! - `restart.rs`: a spawned server started again when it ends
//!   unexpectedly (its command's restart policy);
//! - `unix/`, `windows/`: each platform's ends (descriptors, handles), its
//!   constructors, and its waits.

mod call;
mod driver;
mod end;
mod event;
#[cfg(os_io)]
mod io;
#[cfg(os_io)]
mod restart;
#[cfg(os_io)]
mod spawn;
#[cfg(all(os_io, unix))]
mod unix;
#[cfg(windows)]
mod windows;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::transport::{Event, RequestOptions, Transport};

pub use call::KEPT_MAX;
pub(crate) use driver::{Exit, Taken, Wait};
// What the C face's descriptor calls use besides the public API.
#[cfg(all(os_io, unix, feature = "capi"))]
pub(crate) use unix::fds::{Desc, OpenFailed, MAX_POLL_FDS};
#[cfg(all(os_io, unix, feature = "capi"))]
pub(crate) use unix::poll::empty_set;
#[cfg(all(windows, feature = "capi"))]
pub(crate) use windows::wait::MAX_WAIT_HANDLES;

/// The grace a connection dropped while open gets: 2 s.
pub const DROP_GRACE: Duration = Duration::from_secs(2);

/// One MCP stdio connection: the peer's messages as [`Event`]s, our
/// requests numbered, matched with their answers and timed out, what we
/// send queued (bounded) and written, and for a spawned server its whole
/// life: stderr, exit, the shutdown sequence, reaping.
///
/// Made by [`spawn`](Connection::spawn) (a host starting a server),
/// [`open_stdio`](Connection::open_stdio) (a server on its own stdin and
/// stdout), `open_fds` and its kin (descriptors you give it, POSIX) or
/// `open_handles` and its kin (handles, Windows), or
/// [`memory`](Connection::memory) (you move the bytes).
///
/// One thread takes the events ([`next_event`](Connection::next_event),
/// `&mut self`); any thread sends, through the connection itself or a
/// [`Sender`] (cloned, sent to other threads and tasks), also while
/// `next_event` waits: a send wakes it.
///
/// Dropping an open connection closes it as [`close`](Connection::close)
/// with [`DROP_GRACE`] does (or on the schedule of an earlier close) and
/// waits until it is closed: at most about 2 s, 5 s for a spawned server
/// that ignores SIGTERM (SIGKILL comes at twice the grace, then its exit is
/// waited for 1 s at most). A connection whose `Closed` event was taken is
/// dropped without waiting. An async host that must not block a worker
/// thread closes first and drives the events to `Closed`, or drops it in
/// `spawn_blocking`.
///
/// The event [`next_event`](Connection::next_event) gives borrows the
/// connection: answer it through a [`Sender`], taken before the loop.
/// Here `cat` plays the server, sending back what it gets: first our
/// request (which we answer), then our answer (the response to our
/// request).
///
/// ```
/// # #[cfg(unix)] fn main() -> Result<(), mcp_stdio::Error> {
/// use std::time::Duration;
/// use mcp_stdio::{Command, Connection, Event, RpcKind};
///
/// let mut conn = Connection::spawn(&Command::new("cat"))?;
/// let tx = conn.sender();
/// let id = conn.request("tools/list", None, Some(Duration::from_secs(10)))?;
/// while let Some(event) = conn.next_event(None)? {
///     match event {
///         Event::Message { envelope, .. } if envelope.kind == Some(RpcKind::Request) => {
///             tx.respond(envelope.id.unwrap(), br#"{"tools":[]}"#)?;
///         }
///         Event::Response { id: answered, envelope, .. } => {
///             assert_eq!(answered, id);
///             assert_eq!(envelope.result, Some(&br#"{"tools":[]}"#[..]));
///             tx.close(Duration::from_secs(2))?; // cat's stdin ends: it exits
///         }
///         Event::Closed => break,
///         _ => {}
///     }
/// }
/// assert!(conn.exit_status().unwrap().success());
/// # Ok(()) }
/// # #[cfg(not(unix))] fn main() {}
/// ```
#[derive(Debug)]
pub struct Connection {
    sender: Sender,
    /// The data of the last event, copied out of the connection's lock so
    /// that a [`Sender`] can send (answer) while the caller holds the event.
    event: event::EventData,
    /// Events a [`call`](Connection::call) took while it waited, for the
    /// next `next_event` calls, in order; and their bytes.
    kept: std::collections::VecDeque<event::EventData>,
    kept_bytes: usize,
    /// The descriptor an event loop waits on, made when first asked for.
    #[cfg(linux_apis)]
    poll_fd: std::sync::OnceLock<unix::poll::PollFd>,
}

/// Sends on a [`Connection`] from any thread or task, also while another
/// waits in [`next_event`](Connection::next_event) (which a send wakes).
/// `Clone + Send + Sync + 'static`; cloning is cheap. A sender that outlives
/// its connection gets [`Error::Closed`].
///
/// ```
/// use mcp_stdio::Connection;
///
/// let conn = Connection::memory();
/// let sender = conn.sender();
/// std::thread::spawn(move || sender.notify("notifications/progress", Some(br#"{"progress":1}"#)))
///     .join()
///     .unwrap()
///     .unwrap();
/// let mut out = Vec::new();
/// conn.take_output(&mut out).unwrap();
/// assert_eq!(out, br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}
/// "#);
/// drop(conn);
/// ```
#[derive(Clone, Debug)]
pub struct Sender {
    shared: Arc<Shared>,
}

// What the C header says "any thread" of is `Send + Sync` here: sends,
// close, the counts and the deadline take `&self`; taking events takes
// `&mut self`. The compiler checks it.
const _: () = {
    fn any_thread<T: Send + Sync + 'static>() {}
    fn check() {
        any_thread::<Sender>();
        any_thread::<Connection>();
    }
    let _ = check;
};

/// What a connection and its senders share.
#[derive(Debug)]
pub(crate) struct Shared {
    inner: Mutex<Inner>,
    /// Wakes a thread waiting in `next_event` on a memory connection.
    ready: Condvar,
    /// Calls waiting for the lock: a `next_event` that keeps reading (a
    /// peer whose bytes never run out) lets them in between its turns.
    contenders: AtomicUsize,
}

/// Everything behind the lock.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) core: Transport,
    /// A thread waits in `next_event` (or an event loop on the poll set):
    /// the next send wakes it.
    waiting: bool,
    /// The descriptors (and a spawned server) of a descriptor connection;
    /// `None`: a memory connection. Boxed, so that a memory connection's
    /// `None` is a null pointer: inline, the compiler may read a field of
    /// the absent value before it tests for `None` (harmless, but valgrind
    /// reports the read of uninitialised bytes in the host's process).
    #[cfg(os_io)]
    io: Option<Box<io::Io>>,
    /// A spawned server's restarts, when its command has a policy.
    #[cfg(os_io)]
    restarter: Option<Box<restart::Restarter>>,
    /// How many times the descriptors (handles) changed: a restart.
    #[cfg_attr(not(linux_apis), allow(dead_code))]
    generation: u32,
}

impl Inner {
    fn new(core: Transport, #[cfg(os_io)] io: Option<io::Io>) -> Inner {
        Inner {
            core,
            waiting: false,
            #[cfg(os_io)]
            io: io.map(Box::new),
            #[cfg(os_io)]
            restarter: None,
            generation: 0,
        }
    }

    /// Begins closing: sends refused from now on; for a spawned server, its
    /// signals scheduled. The first call's schedule stands.
    pub(crate) fn begin_close(&mut self, grace: Duration, now: Instant) -> Result<(), Error> {
        #[cfg(os_io)]
        if let Some(process) = self.io.as_mut().and_then(|io| io.process_mut()) {
            process.on_close(grace, now);
        }
        #[cfg(os_io)]
        if let Some(restarter) = &mut self.restarter {
            restarter.cancel(&mut self.core);
        }
        self.core.close(grace, now)
    }

    /// The earliest instant something is due without new input: the
    /// core's next deadline, or a descriptor connection's own (the end of a
    /// grace, a server's signals).
    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let deadline = self.core.next_deadline();
        #[cfg(os_io)]
        let deadline = [
            deadline,
            self.io.as_ref().and_then(|io| io.next_deadline(now)),
            self.restarter.as_ref().and_then(|r| r.due()),
        ]
        .into_iter()
        .flatten()
        .min();
        let _ = now;
        deadline
    }

    /// Milliseconds to [`next_deadline`](Self::next_deadline), rounded up
    /// (at most `i32::MAX`); -1: none; 0 once closed.
    #[cfg_attr(not(any(feature = "capi", linux_apis)), allow(dead_code))]
    pub(crate) fn millis_to_deadline(&self) -> i32 {
        if self.core.is_closed() {
            return 0;
        }
        let now = Instant::now();
        self.next_deadline(now)
            .map_or(-1, |at| millis_rounded_up(at, now))
    }

    /// The spawned server's pid; `None` for a connection that spawned nothing.
    pub(crate) fn pid(&self) -> Option<u32> {
        #[cfg(os_io)]
        return self.io.as_ref()?.process().map(|p| p.pid());
        #[cfg(not(os_io))]
        None
    }

    /// The last lines of the server's stderr, joined, each ending in `\n`
    /// (see [`Connection::stderr_tail`]), appended to `out`.
    pub(crate) fn stderr_tail_into(&self, out: &mut Vec<u8>) {
        #[cfg(os_io)]
        if let Some(tail) = self
            .io
            .as_ref()
            .and_then(|io| io.process())
            .and_then(|p| p.stderr_tail())
        {
            for line in tail.lines() {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        let _ = out;
    }

    /// Bytes of the server's stderr lines dropped (see
    /// [`Connection::stderr_dropped`]).
    pub(crate) fn stderr_dropped(&self) -> u64 {
        #[cfg(os_io)]
        return self
            .io
            .as_ref()
            .and_then(|io| io.process())
            .map_or(0, |p| p.stderr_dropped());
        #[cfg(not(os_io))]
        0
    }

    /// An event loop is about to wait on the set it was just given: what
    /// woke it before is drained (also what did not come from us: else its
    /// wait would return at once, always), and sends from now on wake it.
    #[cfg(os_io)]
    #[cfg_attr(not(any(feature = "capi", linux_apis)), allow(dead_code))]
    pub(crate) fn arm_for_event_loop(&mut self) {
        if let Some(io) = &mut self.io {
            io.drain_wake();
        }
        self.waiting = self.io.is_some();
    }

    pub(crate) fn is_memory(&self) -> bool {
        #[cfg(os_io)]
        return self.io.is_none();
        #[cfg(not(os_io))]
        true
    }
}

/// Milliseconds from `now` to `at`, rounded up so that a wait never ends
/// before `at`; at most `i32::MAX`.
fn millis_rounded_up(at: Instant, now: Instant) -> i32 {
    let left = at.saturating_duration_since(now);
    i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
}

impl Shared {
    fn new(inner: Inner) -> Arc<Shared> {
        Arc::new(Shared {
            inner: Mutex::new(inner),
            ready: Condvar::new(),
            contenders: AtomicUsize::new(0),
        })
    }

    /// Takes the lock, counted among the contenders while waiting for it.
    /// A panic while it was held poisons the connection.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Inner>, Error> {
        self.contenders.fetch_add(1, Ordering::AcqRel);
        let locked = self.inner.lock();
        self.contenders.fetch_sub(1, Ordering::AcqRel);
        locked.map_err(|_| Error::Poisoned)
    }

    /// Between two turns of a `next_event` that does not wait (a peer whose
    /// bytes never run out), with the lock released: lets the calls waiting
    /// for it take it first. A mutex does not hand itself over: the thread
    /// that unlocks takes it again before a woken waiter runs, so without
    /// this a `close` or a send from another thread could wait for as long
    /// as the peer keeps writing.
    #[cfg(os_io)]
    fn let_contenders_in(&self) {
        for _ in 0..1000 {
            if self.contenders.load(Ordering::Acquire) == 0 {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// After a send: wakes the thread waiting for events, if one is, so that
    /// it writes what was queued and heeds new deadlines or a close.
    pub(crate) fn wake(&self, inner: &mut Inner) {
        if !inner.waiting {
            return;
        }
        inner.waiting = false;
        #[cfg(os_io)]
        if let Some(io) = &mut inner.io {
            io.wake();
            return;
        }
        self.ready.notify_all();
    }

    /// Runs a send on the core and wakes a waiting `next_event`.
    pub(crate) fn send<T>(
        &self,
        send: impl FnOnce(&mut Transport) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut inner = self.lock()?;
        let sent = send(&mut inner.core)?;
        self.wake(&mut inner);
        Ok(sent)
    }

    /// Runs a send on the core, then writes what is queued at once, from
    /// this thread, as far as the peer takes it now; the waiting
    /// `next_event` is woken only if something is left to it (bytes the
    /// pipe did not take, a write refused; on Windows always: its writes
    /// complete in the waiting thread).
    pub(crate) fn send_now<T>(
        &self,
        send: impl FnOnce(&mut Transport) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut inner = self.lock()?;
        let sent = send(&mut inner.core)?;
        #[cfg(all(os_io, unix))]
        {
            let Inner { core, io, .. } = &mut *inner;
            if let Some(io) = io {
                io.flush(core);
                if core.output().is_empty() && io.write_open && !core.closing() {
                    return Ok(sent);
                }
            }
        }
        self.wake(&mut inner);
        Ok(sent)
    }

    /// Begins closing (see [`Connection::close`]).
    pub(crate) fn close(&self, grace: Duration) -> Result<(), Error> {
        let mut inner = self.lock()?;
        inner.begin_close(grace, Instant::now())?;
        self.wake(&mut inner);
        Ok(())
    }

    /// Runs `f` on a memory connection's core; [`Error::InvalidArgument`]
    /// for a descriptor connection, which moves its bytes itself.
    pub(crate) fn memory<T>(
        &self,
        f: impl FnOnce(&mut Transport) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut inner = self.lock()?;
        if !inner.is_memory() {
            return Err(Error::InvalidArgument);
        }
        f(&mut inner.core)
    }

    /// Runs `f` on the state behind the lock (settings, counts).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> Result<T, Error> {
        Ok(f(&mut *self.lock()?))
    }

    /// Closes an open descriptor connection with `DROP_GRACE` (or on an
    /// earlier close's schedule) and takes its events to `Closed`; then
    /// lets its descriptors and server go (a server not reaped by then is
    /// killed, and reaped later if it cannot be now). A memory connection
    /// is closed at once.
    fn finish(&self) {
        let relock = || match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut inner = relock();
        if !inner.is_memory() && !inner.core.is_closed() && !self.inner.is_poisoned() {
            let _ = inner.begin_close(DROP_GRACE, Instant::now());
            while let Ok(Taken::Event(())) = self.next_event_locked(inner, Wait::Forever, |_, _| ())
            {
                inner = relock();
            }
            inner = relock();
        }
        let _ = inner.core.close(Duration::ZERO, Instant::now());
        #[cfg(os_io)]
        {
            let io = inner.io.take();
            drop(inner);
            // Closes the descriptors; kills and reaps a server left. A
            // server that could not be reaped at its end, earlier or now,
            // is reaped here once it can be.
            drop(io);
            #[cfg(unix)]
            crate::process::unix::child::reap_owed();
        }
    }
}

impl Connection {
    fn from_inner(inner: Inner) -> Connection {
        Connection {
            sender: Sender {
                shared: Shared::new(inner),
            },
            event: event::EventData::default(),
            kept: std::collections::VecDeque::new(),
            kept_bytes: 0,
            #[cfg(linux_apis)]
            poll_fd: std::sync::OnceLock::new(),
        }
    }

    /// A memory connection: it does no I/O and holds no descriptor. You
    /// hand it the peer's bytes ([`receive`](Connection::receive),
    /// [`receive_end`](Connection::receive_end)) and take what it queued
    /// ([`take_output`](Connection::take_output)). Defaults: a 64 MiB line
    /// limit, a 64 MiB output bound.
    ///
    /// ```
    /// use mcp_stdio::{Connection, Event};
    /// use std::time::Duration;
    ///
    /// let mut conn = Connection::memory();
    /// let id = conn.request("tools/list", None, None).unwrap();
    /// let mut out = Vec::new();
    /// conn.take_output(&mut out).unwrap();
    /// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n");
    /// conn.receive(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n").unwrap();
    /// match conn.next_event(Some(Duration::ZERO)).unwrap() {
    ///     Some(Event::Response { id: answered, envelope, .. }) => {
    ///         assert_eq!(answered, id);
    ///         assert_eq!(envelope.result, Some(&b"{\"tools\":[]}"[..]));
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    pub fn memory() -> Connection {
        Connection::from_inner(Inner::new(
            Transport::new(),
            #[cfg(os_io)]
            None,
        ))
    }

    /// A [`Sender`] for this connection, for other threads and tasks.
    pub fn sender(&self) -> Sender {
        self.sender.clone()
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.sender.shared
    }

    /// The next event, waiting up to `timeout` for one (`None`: no limit;
    /// zero: only what is ready). Meanwhile a descriptor connection writes
    /// its queue, reads the peer's bytes and supervises its server.
    ///
    /// `Ok(None)`: none came in time. Events come in this order: the peer's
    /// lines in stream order ([`Event::Message`], [`Event::Response`],
    /// [`Event::Invalid`]), and a spawned server's stderr lines
    /// ([`Event::Stderr`]) as they are read; requests whose deadline passed
    /// ([`Event::RequestTimedOut`]); when closing has come to its end,
    /// [`Event::RequestFailed`] for each pending request, then
    /// [`Event::Closed`], last, once. After it: [`Error::Closed`].
    ///
    /// The event's data is a copy the connection keeps until the next
    /// `next_event`, outside its lock: answer it at once through a
    /// [`Sender`] (the event borrows the connection itself).
    ///
    /// The timeout holds whatever the peer sends: bytes that give no event
    /// are read at most 16 reads of 64 KiB, or 5 ms, at a time before the
    /// time is looked at. Errors: [`Error::Closed`] (see above),
    /// [`Error::OutOfMemory`] (judging a line, or queuing a cancellation;
    /// call again), [`Error::Os`] (the wait failed), [`Error::Poisoned`].
    pub fn next_event(&mut self, timeout: Option<Duration>) -> Result<Option<Event<'_>>, Error> {
        // What a `call` kept comes first, in the order it came.
        if let Some(kept) = self.kept.pop_front() {
            self.kept_bytes -= kept.len();
            self.event = kept;
            return Ok(Some(self.event.event()));
        }
        let wait = Wait::from_timeout(timeout);
        let data = &mut self.event;
        let taken = self
            .sender
            .shared
            .next_event_with(wait, |event, exit| data.keep(event, exit))?;
        match taken {
            Taken::Event(Ok(())) => Ok(Some(self.event.event())),
            Taken::Event(Err(e)) => Err(e),
            Taken::NoMessage => {
                #[cfg(linux_apis)]
                if let Some(poll_fd) = self.poll_fd.get() {
                    poll_fd.sync(self.shared())?;
                }
                Ok(None)
            }
            Taken::Ended => Err(Error::Closed),
        }
    }

    /// The descriptor an event loop waits on for this connection (Linux):
    /// an epoll descriptor, readable while anything the connection waits
    /// for is ready (the peer's bytes, room to write what is queued, a
    /// send from another thread, a spawned server's stderr or exit). Made
    /// when first asked for (then also through `AsFd` and `AsRawFd`);
    /// [`Error::Os`] when no descriptor is left for it.
    ///
    /// The loop: take events with `next_event(Some(Duration::ZERO))` until
    /// it gives `Ok(None)` (which brings the descriptor up to date), then
    /// wait until the descriptor is readable or
    /// [`next_deadline`](Connection::next_deadline) comes, and again. It
    /// suits edge-triggered waits (tokio's `AsyncFd`): a turn that stops
    /// with bytes left makes the descriptor readable again by itself. A
    /// memory connection has nothing to wait for: its descriptor never
    /// becomes readable.
    ///
    /// Once made, the descriptor stays open, the same number and the same
    /// epoll instance, until the connection is dropped: `as_raw_fd` always
    /// gives it. That is the condition of tokio's `AsyncFd::register`; its
    /// older safe constructors (`try_with_interest`, deprecated since tokio
    /// 1.53 because a type in general cannot promise it) are sound for a
    /// `Connection`.
    #[cfg(linux_apis)]
    pub fn poll_fd(&self) -> Result<std::os::fd::BorrowedFd<'_>, Error> {
        if let Some(poll_fd) = self.poll_fd.get() {
            return Ok(poll_fd.fd());
        }
        let made = unix::poll::PollFd::new()?;
        made.sync(self.shared())?;
        // Only `&self`: another thread may have made one meanwhile; the
        // first stays.
        let _ = self.poll_fd.set(made);
        Ok(self.poll_fd.get().ok_or(Error::OutOfMemory)?.fd())
    }

    /// The earliest instant at which an event is due without new input (a
    /// request's deadline, the end of a closing grace, a server's signal);
    /// `None` when nothing is scheduled. For an event loop that waits
    /// elsewhere (see the `AsFd` implementation).
    pub fn next_deadline(&self) -> Result<Option<Instant>, Error> {
        self.shared().with(|inner| {
            if inner.core.is_closed() {
                Some(Instant::now())
            } else {
                inner.next_deadline(Instant::now())
            }
        })
    }

    /// Sets the longest line accepted from the peer, in bytes before the
    /// `\n` (`None`: no limit; the default is 64 MiB): a longer one is one
    /// [`Event::Invalid`] of kind `TooLong`, its bytes dropped, never held.
    pub fn set_max_line_len(&mut self, limit: Option<NonZeroUsize>) -> Result<(), Error> {
        self.shared()
            .with(|inner| inner.core.set_max_line_len(limit))
    }

    /// Hands a memory connection bytes the peer sent, in chunks of any
    /// size. [`Error::InvalidArgument`] for a descriptor connection;
    /// [`Error::Closed`] after [`receive_end`](Self::receive_end) or once
    /// closing came to its end.
    pub fn receive(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.shared().memory(|core| core.receive(bytes))
    }

    /// Tells a memory connection that the peer closed its end: a last line
    /// without a newline still counts, then the connection closes.
    pub fn receive_end(&mut self) -> Result<(), Error> {
        self.shared().memory(Transport::receive_end)
    }

    /// Moves what a memory connection queued for the peer to the end of
    /// `out`. [`Error::InvalidArgument`] for a descriptor connection.
    pub fn take_output(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.shared().memory(|core| core.take_output(out))
    }

    /// The spawned server's process id (also its process group's); `None`
    /// for a connection that spawned nothing.
    pub fn pid(&self) -> Option<u32> {
        self.shared().with(|inner| inner.pid()).ok().flatten()
    }

    /// Bytes of the spawned server's stderr lines dropped because more than
    /// 1 MiB waited undelivered (newlines included); 0 without stderr
    /// events.
    pub fn stderr_dropped(&self) -> u64 {
        self.shared()
            .with(|inner| inner.stderr_dropped())
            .unwrap_or(0)
    }

    /// The last lines the spawned server wrote to its stderr, oldest first,
    /// each ending in `\n` (a `\r\n` end, or none for the last bytes
    /// before the end of the stream, as `\n`): at most 20 lines and 4 KiB
    /// (a single longer line keeps its last 4 KiB), whether they were
    /// delivered as [`Event::Stderr`] or dropped. Kept after the server is
    /// gone, for as long as the connection lives: what a host shows when a
    /// server dies ("ModuleNotFoundError: ...", "npm ERR! 404"). Empty
    /// for a connection that spawned nothing, and with
    /// [`StderrMode::Inherit`](crate::StderrMode::Inherit) or
    /// [`Discard`](crate::StderrMode::Discard), where the library does not
    /// read the server's stderr.
    pub fn stderr_tail(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.shared().with(|inner| inner.stderr_tail_into(&mut out));
        out
    }

    /// [`Sender::send`].
    pub fn send(&self, json: &[u8]) -> Result<(), Error> {
        self.sender.send(json)
    }

    /// [`Sender::send_now`].
    pub fn send_now(&self, json: &[u8]) -> Result<(), Error> {
        self.sender.send_now(json)
    }

    /// [`Sender::request`].
    pub fn request(
        &self,
        method: &str,
        params: Option<&[u8]>,
        timeout: Option<Duration>,
    ) -> Result<i64, Error> {
        self.sender.request(method, params, timeout)
    }

    /// [`Sender::request_with`].
    pub fn request_with(
        &self,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<i64, Error> {
        self.sender.request_with(method, params, options)
    }

    /// [`Sender::notify`].
    pub fn notify(&self, method: &str, params: Option<&[u8]>) -> Result<(), Error> {
        self.sender.notify(method, params)
    }

    /// [`Sender::respond`].
    pub fn respond(&self, id: &[u8], result: &[u8]) -> Result<(), Error> {
        self.sender.respond(id, result)
    }

    /// [`Sender::respond_error`].
    pub fn respond_error(&self, id: Option<&[u8]>, code: i64, message: &str) -> Result<(), Error> {
        self.sender.respond_error(id, code, message)
    }

    /// [`Sender::cancel`].
    pub fn cancel(&self, id: i64, reason: Option<&str>) -> Result<(), Error> {
        self.sender.cancel(id, reason)
    }

    /// [`Sender::close`].
    pub fn close(&self, grace: Duration) -> Result<(), Error> {
        self.sender.close(grace)
    }

    /// [`Sender::set_max_queued`].
    pub fn set_max_queued(&self, bytes: usize) -> Result<(), Error> {
        self.sender.set_max_queued(bytes)
    }
}

/// [`Connection::poll_fd`].
///
/// # Panics
/// When the descriptor cannot be made (no descriptor left); call
/// [`Connection::poll_fd`] first to have that as an error.
#[cfg(linux_apis)]
impl std::os::fd::AsFd for Connection {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self.poll_fd() {
            Ok(fd) => fd,
            Err(e) => panic!("the connection's poll descriptor could not be made: {e}"),
        }
    }
}

/// [`Connection::poll_fd`], for APIs that take raw descriptors (tokio's
/// `AsyncFd`). Panics as `as_fd`.
#[cfg(linux_apis)]
impl std::os::fd::AsRawFd for Connection {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsFd;
        self.as_fd().as_raw_fd()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.sender.shared.finish();
    }
}

impl Sender {
    /// Queues one JSON text for the peer as one compact line (as
    /// [`encode`](crate::encode) writes it). Sends never block and never
    /// drop: they queue, and the connection writes the queue out. Errors:
    /// [`Error::InvalidJson`], [`Error::WouldBlock`] (the queue is at its
    /// bound: send again once it drained), [`Error::Closed`] (close has
    /// begun, or the peer is gone), [`Error::OutOfMemory`],
    /// [`Error::Poisoned`]; nothing is queued on an error.
    pub fn send(&self, json: &[u8]) -> Result<(), Error> {
        self.shared.send(|core| core.send(json))
    }

    /// [`send`](Sender::send), then what is queued is written at once, from
    /// this thread, as far as the peer takes it now (the descriptors never
    /// block), instead of by the thread in
    /// [`next_event`](Connection::next_event), which is woken only if
    /// something is left to it. A request-and-answer round trip saves a
    /// wake-up of that thread; a thread that sends many messages in a row
    /// makes a write each (`send` lets them go out together). On Windows,
    /// and for a memory connection, the same as `send`. Errors as `send`.
    pub fn send_now(&self, json: &[u8]) -> Result<(), Error> {
        self.shared.send_now(|core| core.send(json))
    }

    /// Queues the request `{"jsonrpc":"2.0","id":N,"method":..,"params":..}`
    /// and returns its id `N` (1, 2, 3... per connection). Its answer comes
    /// as one [`Event::Response`]; with a `timeout`, an unanswered request
    /// gives one [`Event::RequestTimedOut`] at its deadline, and (unless it
    /// is an `initialize`) a `notifications/cancelled` is sent for it.
    /// `params`: a JSON object or array, or `None`. Errors as
    /// [`send`](Self::send), [`Error::InvalidParams`] (params not an
    /// object or array) and [`Error::InvalidArgument`] (ids exhausted); a
    /// refused request uses no id.
    pub fn request(
        &self,
        method: &str,
        params: Option<&[u8]>,
        timeout: Option<Duration>,
    ) -> Result<i64, Error> {
        self.request_with(method, params, RequestOptions::timeout(timeout))
    }

    /// [`request`](Self::request) with options: its timeout, and whether
    /// its progress is followed ([`RequestOptions::progress`]: its
    /// `notifications/progress` come as [`Event::Progress`] tied to its id,
    /// and may reset its timeout, never past a hard maximum). Errors as
    /// [`Transport::request_with`](crate::Transport::request_with).
    pub fn request_with(
        &self,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<i64, Error> {
        let options = options.without_zero_timeout();
        self.shared
            .send(|core| core.request_with(method, params, options, Instant::now()))
    }

    /// Queues the notification `{"jsonrpc":"2.0","method":..,"params":..}`.
    pub fn notify(&self, method: &str, params: Option<&[u8]>) -> Result<(), Error> {
        self.shared.send(|core| core.notify(method, params))
    }

    /// Queues the response `{"jsonrpc":"2.0","id":<id>,"result":<result>}`
    /// to a request of the peer; `id` is its id token as on the wire (the
    /// event's `envelope.id`). [`Error::InvalidArgument`] when `id` is not
    /// a JSON string or number.
    pub fn respond(&self, id: &[u8], result: &[u8]) -> Result<(), Error> {
        self.shared.send(|core| core.respond(id, result))
    }

    /// Queues the error response
    /// `{"jsonrpc":"2.0","id":<id>,"error":{"code":..,"message":..}}`;
    /// `None` leaves `id` out (a request whose id could not be read).
    pub fn respond_error(&self, id: Option<&[u8]>, code: i64, message: &str) -> Result<(), Error> {
        self.shared
            .send(|core| core.respond_error(id, code, message))
    }

    /// Cancels our request `id`: queues its `notifications/cancelled`
    /// whatever the queue's bound and forgets it (no event comes for it).
    /// [`Error::InvalidArgument`] when `id` is not pending or is an
    /// `initialize`.
    pub fn cancel(&self, id: i64, reason: Option<&str>) -> Result<(), Error> {
        self.shared.send(|core| core.cancel(id, reason))
    }

    /// Begins closing and returns at once; sends are refused from now on.
    /// `next_event` drives the close: the queue is written until it is
    /// empty or `grace` has passed, then the write side ends (an owned
    /// descriptor closed, an owned socket shut down for writing); answers
    /// that still arrive are delivered; when the peer's end arrives or at
    /// `grace`, pending requests fail and [`Event::Closed`] comes. A
    /// spawned server also gets SIGTERM at `grace` and SIGKILL at twice
    /// `grace`, and `Closed` waits for its exit. Repeating it changes
    /// nothing (the first schedule stands).
    pub fn close(&self, grace: Duration) -> Result<(), Error> {
        self.shared.close(grace)
    }

    /// Bounds the output queue at `bytes` of framed lines (default 64 MiB):
    /// a send that would pass it is refused with [`Error::WouldBlock`],
    /// unless the queue is empty. [`Error::InvalidArgument`] for 0.
    pub fn set_max_queued(&self, bytes: usize) -> Result<(), Error> {
        self.shared.with(|inner| inner.core.set_max_queued(bytes))?
    }
}
