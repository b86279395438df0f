//! Reads and writes on a handle that cannot be used overlapped (the
//! process's own stdin and stdout, whatever the host made them: anonymous
//! pipes, a console, a file; handles a caller gives): a thread per
//! direction does the blocking `ReadFile`/`WriteFile`, and the connection
//! sees the same non-blocking shape as on its own pipes, with an event to
//! wait on.
//!
//! The reading thread reads ahead at most 1 MiB, then waits for room. A
//! thread blocked in `ReadFile` or `WriteFile` cannot be stopped cleanly
//! (`CancelSynchronousIo` is tried); when its connection goes, it is left
//! to finish on its own: a reader at the end of its stream or its next
//! read, a writer once its last write is done. An owned handle is closed by
//! its thread when it finishes (so the peer sees the end of the stream
//! after the last write); a borrowed one is never closed.

use std::collections::VecDeque;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, OwnedHandle, RawHandle};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use windows_sys::Win32::Foundation::{ERROR_BROKEN_PIPE, ERROR_HANDLE_EOF, ERROR_NO_DATA};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Threading::{ResetEvent, SetEvent};
use windows_sys::Win32::System::IO::CancelSynchronousIo;

use super::pipe::event;

/// How much the reading thread reads ahead.
const READ_AHEAD: usize = 1 << 20;
/// One read's size, and the most one write takes.
const CHUNK: usize = 64 * 1024;

/// A handle the thread owns (closed when it ends) or borrows.
#[derive(Debug)]
pub(crate) enum Source {
    Owned(OwnedHandle),
    /// A handle the caller keeps open for as long as the connection lives.
    Borrowed(BorrowedHandle<'static>),
}

impl Source {
    fn raw(&self) -> RawHandle {
        match self {
            Source::Owned(h) => h.as_raw_handle(),
            Source::Borrowed(h) => h.as_raw_handle(),
        }
    }
}

// SAFETY: a handle may be used from any thread; the owned one is moved to
// the thread that alone uses it, the borrowed one lives as long as its
// caller promises.
struct SendSource(Source);
unsafe impl Send for SendSource {}

/// What a thread and its connection share.
#[derive(Debug)]
struct Shared<S> {
    state: Mutex<S>,
    /// The thread waits here for room (reader) or bytes (writer).
    changed: Condvar,
    /// Set while the connection has something to take (reader: bytes or
    /// the end; writer: the write done); reset under the lock.
    event: OwnedHandle,
}

impl<S> Shared<S> {
    fn lock(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self) {
        // SAFETY: a live event handle of ours.
        unsafe { SetEvent(self.event.as_raw_handle()) };
    }

    fn reset(&self) {
        // SAFETY: as above.
        unsafe { ResetEvent(self.event.as_raw_handle()) };
    }
}

#[derive(Debug, Default)]
struct ReadState {
    data: VecDeque<u8>,
    /// The stream ended (or failed: the error).
    end: Option<Option<i32>>,
    /// The connection is gone: stop.
    closed: bool,
}

/// The read side, read by a thread of its own.
#[derive(Debug)]
pub(crate) struct Reader {
    shared: Arc<Shared<ReadState>>,
    thread: Option<JoinHandle<()>>,
}

fn shared<S: Default>() -> io::Result<Arc<Shared<S>>> {
    Ok(Arc::new(Shared {
        state: Mutex::new(S::default()),
        changed: Condvar::new(),
        event: event()?,
    }))
}

/// Whether a failed read or write is the end of the stream, not an error.
fn is_end(code: u32) -> bool {
    matches!(code, ERROR_BROKEN_PIPE | ERROR_HANDLE_EOF | ERROR_NO_DATA)
}

impl Reader {
    /// Starts the thread that reads `source`.
    pub(crate) fn new(source: Source) -> io::Result<Reader> {
        let shared = shared::<ReadState>()?;
        let theirs = Arc::clone(&shared);
        let source = SendSource(source);
        let thread = std::thread::Builder::new()
            .name("mcp-stdio-read".into())
            .spawn(move || read_loop(&source, &theirs))?;
        Ok(Reader {
            shared,
            thread: Some(thread),
        })
    }

    /// Appends what has come (at most 64 KiB) to `buf`: the count; 0 at the
    /// end of the stream; `WouldBlock` when nothing is there (wait on
    /// [`event`](Self::event)); the read's error, once, if it failed.
    pub(crate) fn read_appending(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let mut state = self.shared.lock();
        if state.data.is_empty() {
            return match state.end {
                Some(None) => Ok(0),
                Some(Some(code)) => {
                    state.end = Some(None);
                    Err(io::Error::from_raw_os_error(code))
                }
                None => {
                    self.shared.reset();
                    Err(io::ErrorKind::WouldBlock.into())
                }
            };
        }
        let n = state.data.len().min(CHUNK);
        let (a, b) = state.data.as_slices();
        let from_a = n.min(a.len());
        buf.extend_from_slice(&a[..from_a]);
        buf.extend_from_slice(&b[..n - from_a]);
        state.data.drain(..n);
        if state.data.is_empty() && state.end.is_none() {
            self.shared.reset();
        }
        self.shared.changed.notify_all(); // room
        Ok(n)
    }

    /// Set while bytes or the end wait to be taken.
    pub(crate) fn event(&self) -> BorrowedHandle<'_> {
        std::os::windows::io::AsHandle::as_handle(&self.shared.event)
    }
}

fn read_loop(source: &SendSource, shared: &Shared<ReadState>) {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let mut n = 0u32;
        // SAFETY: a live handle (owned by this thread, or borrowed for the
        // connection's life); a buffer of CHUNK bytes; no OVERLAPPED.
        let ok = unsafe {
            ReadFile(
                source.0.raw(),
                chunk.as_mut_ptr(),
                CHUNK as u32,
                &mut n,
                std::ptr::null_mut(),
            )
        };
        let failure = (ok == 0).then(io::Error::last_os_error);
        let mut state = shared.lock();
        if state.closed {
            return;
        }
        match failure {
            None if n > 0 => {
                state.data.extend(&chunk[..n as usize]);
                shared.set();
                while state.data.len() >= READ_AHEAD && !state.closed {
                    state = shared
                        .changed
                        .wait(state)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if state.closed {
                    return;
                }
            }
            // A zero-byte read: the end of a file or a console's; a pipe's
            // zero-byte message is not one, but it cannot be told apart
            // here, and byte-mode pipes do not send them.
            None => {
                state.end = Some(None);
                shared.set();
                return;
            }
            Some(e) => {
                let code = e.raw_os_error().unwrap_or(0);
                state.end = Some((!is_end(code as u32)).then_some(code));
                shared.set();
                return;
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // Unblocks a ReadFile in flight where the system can; else the
            // thread ends at its next read's return. Not joined: it may be
            // blocked for as long as the peer writes nothing.
            // SAFETY: the thread's handle, alive while `thread` is.
            unsafe { CancelSynchronousIo(thread.as_raw_handle()) };
        }
    }
}

#[derive(Debug, Default)]
struct WriteState {
    /// Taken by `write`, not yet written.
    pending: Vec<u8>,
    /// The thread is writing.
    busy: bool,
    /// A write failed: the reader is gone (or the error).
    failed: Option<io::ErrorKind>,
    closed: bool,
}

/// The write side, written by a thread of its own.
#[derive(Debug)]
pub(crate) struct Writer {
    shared: Arc<Shared<WriteState>>,
}

impl Writer {
    /// Starts the thread that writes to `source`.
    pub(crate) fn new(source: Source) -> io::Result<Writer> {
        let shared = shared::<WriteState>()?;
        let theirs = Arc::clone(&shared);
        let source = SendSource(source);
        std::thread::Builder::new()
            .name("mcp-stdio-write".into())
            .spawn(move || write_loop(source, &theirs))?;
        Ok(Writer { shared })
    }

    /// Takes up to 64 KiB of `data`: how many bytes it took; `WouldBlock`
    /// while the last ones are still being written; `BrokenPipe` (or the
    /// error) once a write failed.
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut state = self.shared.lock();
        if let Some(kind) = state.failed {
            return Err(kind.into());
        }
        if state.busy || !state.pending.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = data.len().min(CHUNK);
        state.pending.extend_from_slice(&data[..n]);
        self.shared.reset();
        self.shared.changed.notify_all();
        Ok(n)
    }

    /// Bytes taken are not written yet.
    pub(crate) fn in_flight(&mut self) -> bool {
        let state = self.shared.lock();
        state.failed.is_none() && (state.busy || !state.pending.is_empty())
    }

    /// Set once the bytes taken are written (or the write failed).
    pub(crate) fn event(&self) -> BorrowedHandle<'_> {
        std::os::windows::io::AsHandle::as_handle(&self.shared.event)
    }
}

fn write_loop(source: SendSource, shared: &Shared<WriteState>) {
    loop {
        let data = {
            let mut state = shared.lock();
            while state.pending.is_empty() && !state.closed {
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if state.pending.is_empty() {
                break; // closed, everything written
            }
            state.busy = true;
            std::mem::take(&mut state.pending)
        };
        let mut at = 0;
        let mut failed = None;
        while at < data.len() {
            let mut n = 0u32;
            let len = (data.len() - at).min(u32::MAX as usize) as u32;
            // SAFETY: a live handle; `len` bytes from `at`; no OVERLAPPED.
            let ok = unsafe {
                WriteFile(
                    source.0.raw(),
                    data[at..].as_ptr(),
                    len,
                    &mut n,
                    std::ptr::null_mut(),
                )
            };
            if ok == 0 {
                let e = io::Error::last_os_error();
                let end = e.raw_os_error().is_some_and(|c| is_end(c as u32));
                failed = Some(if end {
                    io::ErrorKind::BrokenPipe
                } else {
                    e.kind()
                });
                break;
            }
            at += n as usize;
        }
        let mut state = shared.lock();
        state.busy = false;
        state.failed = state.failed.or(failed);
        shared.set();
        if state.failed.is_some() {
            break;
        }
    }
    drop(source); // an owned handle closes: the peer sees the end
}

impl Drop for Writer {
    fn drop(&mut self) {
        // The thread writes what it took, then ends (closing an owned
        // handle); what was not taken is dropped by the caller anyway.
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
    }
}
