//! The pipes to a Windows server, and overlapped I/O on our ends.
//!
//! Anonymous pipes cannot do overlapped I/O, so each pipe is a named pipe
//! with a name of its own (this process's id and a counter), one instance,
//! local clients only: our end is the server end, opened overlapped, so a
//! read or a write can wait with a deadline, be waited on together with
//! others (`wait_any`), and be cancelled (`CancelIoEx`); the child's end
//! is the client end, opened synchronous, as console programs expect their
//! stdio. Neither end is inheritable (see `spawn.rs` for how the child's
//! end is passed).
//!
//! An operation in flight owns its buffer and its `OVERLAPPED`: the kernel
//! writes to them until it completes, so dropping one cancels it and waits
//! for the cancellation before the memory goes.

use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use windows_sys::Win32::Foundation::{
    ERROR_BROKEN_PIPE, ERROR_IO_INCOMPLETE, ERROR_IO_PENDING, GENERIC_READ, GENERIC_WRITE, HANDLE,
    INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, ReadFile, WriteFile, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED,
    OPEN_EXISTING, PIPE_ACCESS_INBOUND, PIPE_ACCESS_OUTBOUND,
};
use windows_sys::Win32::System::Pipes::{
    CreateNamedPipeW, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};
use windows_sys::Win32::System::Threading::{CreateEventW, WaitForMultipleObjects};
use windows_sys::Win32::System::IO::{CancelIoEx, GetOverlappedResult, OVERLAPPED};

/// Which way the bytes go, seen from the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// The child reads (its stdin): our end writes.
    ToChild,
    /// The child writes (its stdout, its stderr): our end reads.
    FromChild,
}

/// Both ends of one pipe.
#[derive(Debug)]
pub(crate) struct Pipe {
    /// Ours: overlapped.
    pub(crate) ours: OwnedHandle,
    /// The child's: synchronous.
    pub(crate) theirs: OwnedHandle,
}

const PIPE_BUFFER: u32 = 64 * 1024;

/// A new pipe.
pub(crate) fn pipe(direction: Direction) -> io::Result<Pipe> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        r"\\.\pipe\mcp-stdio-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let name: Vec<u16> = name.encode_utf16().chain([0]).collect();
    let (access, theirs_access) = match direction {
        Direction::ToChild => (PIPE_ACCESS_OUTBOUND, GENERIC_READ),
        Direction::FromChild => (PIPE_ACCESS_INBOUND, GENERIC_WRITE),
    };
    // SAFETY: a NUL-terminated name; no security attributes (not
    // inheritable); returns a new handle or INVALID_HANDLE_VALUE.
    let ours = unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            access | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
            PIPE_TYPE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            1,
            PIPE_BUFFER,
            PIPE_BUFFER,
            0,
            std::ptr::null(),
        )
    };
    if ours == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just made, owned by nothing else.
    let ours = unsafe { OwnedHandle::from_raw_handle(ours) };
    // SAFETY: as above, for the client end; synchronous (no flags).
    let theirs = unsafe {
        CreateFileW(
            name.as_ptr(),
            theirs_access,
            0,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if theirs == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just made, owned by nothing else.
    let theirs = unsafe { OwnedHandle::from_raw_handle(theirs) };
    Ok(Pipe { ours, theirs })
}

/// A manual-reset event, not signalled, not inheritable (the operations'
/// events, and the wake of `wake.rs`).
pub(super) fn event() -> io::Result<OwnedHandle> {
    // SAFETY: no attributes, manual reset, not signalled, no name.
    let raw = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just made, owned by nothing else.
    Ok(unsafe { OwnedHandle::from_raw_handle(raw) })
}

/// What became of an operation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Done {
    /// It completed: this many bytes moved.
    Bytes(usize),
    /// It has not completed yet: wait on its event.
    Pending,
    /// The other end is closed (a read at the end of the stream, or a
    /// write to a reader that is gone).
    Closed,
}

/// One overlapped read or write on `handle`, with the buffer it uses.
pub(crate) struct Op {
    handle: HANDLE,
    /// Boxed: the kernel holds its address while the operation runs.
    overlapped: Box<OVERLAPPED>,
    event: OwnedHandle,
    buffer: Vec<u8>,
    in_flight: bool,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Op")
            .field("handle", &self.handle)
            .field("in_flight", &self.in_flight)
            .field("buffer", &self.buffer.len())
            .finish()
    }
}

// SAFETY: the raw handle is only an identifier here; the operation is used
// by one thread at a time (it is not Sync), and the kernel's access to its
// memory does not depend on the thread.
unsafe impl Send for Op {}

impl Op {
    /// An operation on `handle` (one of ours, which must outlive it), with
    /// a buffer of `capacity` bytes for reads.
    pub(crate) fn new(handle: BorrowedHandle<'_>, capacity: usize) -> io::Result<Op> {
        Ok(Op {
            handle: handle.as_raw_handle(),
            overlapped: Box::new(OVERLAPPED::default()),
            event: event()?,
            buffer: vec![0; capacity],
            in_flight: false,
        })
    }

    /// The event that is signalled when the operation completes.
    pub(crate) fn event(&self) -> BorrowedHandle<'_> {
        std::os::windows::io::AsHandle::as_handle(&self.event)
    }

    /// Whether an operation was started and has not been finished.
    pub(crate) fn in_flight(&self) -> bool {
        self.in_flight
    }

    /// The bytes read by the last read that finished with `Bytes(n)`: the
    /// first `n` of these.
    pub(crate) fn buffer(&self) -> &[u8] {
        &self.buffer
    }

    fn reset(&mut self) {
        *self.overlapped = OVERLAPPED::default();
        self.overlapped.hEvent = self.event.as_raw_handle();
    }

    fn started(&mut self, ok: i32, n: u32) -> io::Result<Done> {
        if ok != 0 {
            // Completed at once; the event is signalled too, and the
            // completion is taken here.
            return Ok(Done::Bytes(n as usize));
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error().map(|e| e as u32) {
            Some(ERROR_IO_PENDING) => {
                self.in_flight = true;
                Ok(Done::Pending)
            }
            Some(ERROR_BROKEN_PIPE) => Ok(Done::Closed),
            _ => Err(error),
        }
    }

    /// Starts reading into the buffer.
    pub(crate) fn start_read(&mut self) -> io::Result<Done> {
        assert!(!self.in_flight, "one operation at a time");
        self.reset();
        let mut n = 0u32;
        let len = self.buffer.len().min(u32::MAX as usize) as u32;
        // SAFETY: the buffer and the OVERLAPPED are owned by `self`, which
        // does not free them while the read runs (see Drop).
        let ok = unsafe {
            ReadFile(
                self.handle,
                self.buffer.as_mut_ptr(),
                len,
                &mut n,
                &mut *self.overlapped,
            )
        };
        self.started(ok, n)
    }

    /// Starts writing `data` (copied into the operation's buffer).
    pub(crate) fn start_write(&mut self, data: &[u8]) -> io::Result<Done> {
        assert!(!self.in_flight, "one operation at a time");
        self.reset();
        self.buffer.clear();
        self.buffer.extend_from_slice(data);
        let mut n = 0u32;
        let len = self.buffer.len().min(u32::MAX as usize) as u32;
        // SAFETY: as for reads.
        let ok = unsafe {
            WriteFile(
                self.handle,
                self.buffer.as_ptr(),
                len,
                &mut n,
                &mut *self.overlapped,
            )
        };
        self.started(ok, n)
    }

    /// How the operation in flight stands, without waiting.
    pub(crate) fn poll(&mut self) -> io::Result<Done> {
        if !self.in_flight {
            return Ok(Done::Pending);
        }
        let mut n = 0u32;
        // SAFETY: the OVERLAPPED of the operation in flight; no wait.
        let ok = unsafe { GetOverlappedResult(self.handle, &*self.overlapped, &mut n, 0) };
        if ok != 0 {
            self.in_flight = false;
            return Ok(Done::Bytes(n as usize));
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error().map(|e| e as u32) {
            Some(ERROR_IO_INCOMPLETE) => Ok(Done::Pending),
            Some(ERROR_BROKEN_PIPE) => {
                self.in_flight = false;
                Ok(Done::Closed)
            }
            _ => {
                self.in_flight = false;
                Err(error)
            }
        }
    }

    /// Cancels the operation in flight and waits until the kernel is done
    /// with its memory; what it had moved by then is returned (a write's
    /// bytes may have gone out).
    pub(crate) fn cancel(&mut self) -> usize {
        if !self.in_flight {
            return 0;
        }
        let mut n = 0u32;
        // SAFETY: our handle and the OVERLAPPED in flight; then a waiting
        // GetOverlappedResult, which returns once the operation is over
        // (completed or cancelled).
        unsafe {
            CancelIoEx(self.handle, &*self.overlapped);
            GetOverlappedResult(self.handle, &*self.overlapped, &mut n, 1);
        }
        self.in_flight = false;
        n as usize
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Waits until one of `handles` is signalled, or `timeout` (`None`: for
/// ever); the index of the first signalled one, or `None` at the timeout.
/// At most 64 handles (`MAXIMUM_WAIT_OBJECTS`).
pub(crate) fn wait_any(
    handles: &[BorrowedHandle<'_>],
    timeout: Option<Duration>,
) -> io::Result<Option<usize>> {
    let raw: Vec<RawHandle> = handles.iter().map(|h| h.as_raw_handle()).collect();
    wait_any_raw(&raw, timeout)
}

/// [`wait_any`] on raw handles: for a wait made without the lock that
/// keeps them borrowed (the connection's thread alone closes them). A
/// handle closed meanwhile makes the wait fail or return at once (the
/// system touches no memory of ours through it); it cannot block for ever.
pub(crate) fn wait_any_raw(
    raw: &[RawHandle],
    timeout: Option<Duration>,
) -> io::Result<Option<usize>> {
    assert!(!raw.is_empty() && raw.len() <= 64, "1 to 64 handles");
    let ms = timeout.map_or(u32::MAX, |t| {
        t.as_millis().min(u128::from(u32::MAX - 1)) as u32
    });
    // SAFETY: an array of `raw.len()` handle values, read for the call;
    // wait for any one.
    let r = unsafe { WaitForMultipleObjects(raw.len() as u32, raw.as_ptr(), 0, ms) };
    match r {
        WAIT_TIMEOUT => Ok(None),
        // WAIT_OBJECT_0 is 0: any r below the count names a handle.
        r if r.wrapping_sub(WAIT_OBJECT_0) < raw.len() as u32 => {
            Ok(Some((r - WAIT_OBJECT_0) as usize))
        }
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::windows::io::AsHandle;
    use std::time::Instant;

    #[test]
    fn bytes_go_both_ways() {
        let to = pipe(Direction::ToChild).unwrap();
        let from = pipe(Direction::FromChild).unwrap();
        let mut child_in = File::from(to.theirs);
        let mut child_out = File::from(from.theirs);

        let mut write = Op::new(to.ours.as_handle(), 0).unwrap();
        match write.start_write(b"ping\n").unwrap() {
            Done::Bytes(5) => {}
            Done::Pending => {
                assert_eq!(
                    wait_any(&[write.event()], Some(Duration::from_secs(5))).unwrap(),
                    Some(0)
                );
                assert_eq!(write.poll().unwrap(), Done::Bytes(5));
            }
            other => panic!("{other:?}"),
        }
        let mut got = [0u8; 5];
        child_in.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping\n");

        let mut read = Op::new(from.ours.as_handle(), 4096).unwrap();
        assert_eq!(
            read.start_read().unwrap(),
            Done::Pending,
            "nothing written yet"
        );
        child_out.write_all(b"pong\n").unwrap();
        assert_eq!(
            wait_any(&[read.event()], Some(Duration::from_secs(5))).unwrap(),
            Some(0)
        );
        assert_eq!(read.poll().unwrap(), Done::Bytes(5));
        assert_eq!(&read.buffer()[..5], b"pong\n");

        assert_eq!(read.start_read().unwrap(), Done::Pending);
        drop(child_out);
        assert_eq!(
            wait_any(&[read.event()], Some(Duration::from_secs(5))).unwrap(),
            Some(0)
        );
        assert_eq!(read.poll().unwrap(), Done::Closed, "the writer is gone");
    }

    #[test]
    fn a_silent_pipe_times_out_on_time_and_cancels() {
        let from = pipe(Direction::FromChild).unwrap();
        let _child_out = File::from(from.theirs);
        let mut read = Op::new(from.ours.as_handle(), 4096).unwrap();
        assert_eq!(read.start_read().unwrap(), Done::Pending);
        let begun = Instant::now();
        assert_eq!(
            wait_any(&[read.event()], Some(Duration::from_millis(200))).unwrap(),
            None
        );
        let took = begun.elapsed();
        assert!(
            took >= Duration::from_millis(190) && took < Duration::from_secs(2),
            "{took:?}"
        );
        assert_eq!(read.cancel(), 0);
        assert!(!read.in_flight());
    }

    #[test]
    fn a_write_nobody_reads_stays_pending_and_cancels() {
        let to = pipe(Direction::ToChild).unwrap();
        let _child_in = File::from(to.theirs);
        let mut write = Op::new(to.ours.as_handle(), 0).unwrap();
        // More than the pipe holds: the write cannot complete.
        let big = vec![b'x'; 4 * PIPE_BUFFER as usize];
        assert_eq!(write.start_write(&big).unwrap(), Done::Pending);
        assert_eq!(
            wait_any(&[write.event()], Some(Duration::from_millis(100))).unwrap(),
            None
        );
        let moved = write.cancel();
        assert!(moved < big.len(), "{moved}");
    }

    /// A real console program on these pipes: `more` copies its stdin to
    /// its stdout until its stdin ends.
    #[test]
    fn a_child_on_the_pipes() {
        use super::super::{job::Job, spawn};
        let (stdin, stdout) = (
            pipe(Direction::ToChild).unwrap(),
            pipe(Direction::FromChild).unwrap(),
        );
        let root = std::env::var("SystemRoot")
            .or_else(|_| std::env::var("SYSTEMROOT"))
            .unwrap();
        let app: Vec<u16> = format!(r"{root}\system32\cmd.exe").encode_utf16().collect();
        let line: Vec<u16> = "cmd.exe /d /c more".encode_utf16().collect();
        let mut env: Vec<u16> = Vec::new();
        for (name, value) in std::env::vars() {
            env.extend(format!("{name}={value}").encode_utf16());
            env.push(0);
        }
        env.push(0);
        let job = Job::new().unwrap();
        let started = spawn::spawn(
            &spawn::Spawn {
                application: &app,
                command_line: &line,
                environment: &env,
                current_dir: None,
                stdio: [
                    stdin.theirs.as_handle(),
                    stdout.theirs.as_handle(),
                    stdout.theirs.as_handle(),
                ],
                no_window: true,
            },
            &job,
        )
        .unwrap();
        drop((stdin.theirs, stdout.theirs)); // the child holds them now
        let mut write = Op::new(stdin.ours.as_handle(), 0).unwrap();
        if write.start_write(b"hello\r\n").unwrap() == Done::Pending {
            assert_eq!(
                wait_any(&[write.event()], Some(Duration::from_secs(5))).unwrap(),
                Some(0)
            );
            assert_eq!(write.poll().unwrap(), Done::Bytes(7));
        }
        drop(write);
        drop(stdin.ours); // the end of its input
        let mut read = Op::new(stdout.ours.as_handle(), 4096).unwrap();
        let mut out = Vec::new();
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let done = match read.start_read().unwrap() {
                Done::Pending => {
                    let left = end.saturating_duration_since(Instant::now());
                    assert_eq!(
                        wait_any(&[read.event()], Some(left)).unwrap(),
                        Some(0),
                        "{out:?}"
                    );
                    read.poll().unwrap()
                }
                done => done,
            };
            match done {
                Done::Bytes(n) => out.extend_from_slice(&read.buffer()[..n]),
                Done::Closed => break,
                Done::Pending => unreachable!(),
            }
        }
        assert_eq!(String::from_utf8_lossy(&out).trim_end(), "hello");
        drop(started);
    }

    #[test]
    fn the_first_of_several_is_told() {
        let a = pipe(Direction::FromChild).unwrap();
        let b = pipe(Direction::FromChild).unwrap();
        let _a_out = File::from(a.theirs);
        let mut b_out = File::from(b.theirs);
        let mut ra = Op::new(a.ours.as_handle(), 64).unwrap();
        let mut rb = Op::new(b.ours.as_handle(), 64).unwrap();
        assert_eq!(ra.start_read().unwrap(), Done::Pending);
        assert_eq!(rb.start_read().unwrap(), Done::Pending);
        b_out.write_all(b"b").unwrap();
        assert_eq!(
            wait_any(&[ra.event(), rb.event()], Some(Duration::from_secs(5))).unwrap(),
            Some(1)
        );
        assert_eq!(rb.poll().unwrap(), Done::Bytes(1));
        assert_eq!(ra.poll().unwrap(), Done::Pending);
    }
}
