//! The process's own standard handles, and the stdout guard on Windows.

use std::io;
use std::os::windows::io::{BorrowedHandle, FromRawHandle, IntoRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{
    DuplicateHandle, DUPLICATE_SAME_ACCESS, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, SetStdHandle, STD_ERROR_HANDLE, STD_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
};
use windows_sys::Win32::System::Threading::GetCurrentProcess;

/// Which standard handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Std {
    Input,
    Output,
    Error,
}

fn id(which: Std) -> STD_HANDLE {
    match which {
        Std::Input => STD_INPUT_HANDLE,
        Std::Output => STD_OUTPUT_HANDLE,
        Std::Error => STD_ERROR_HANDLE,
    }
}

fn get(which: Std) -> Option<HANDLE> {
    // SAFETY: reads a value of the process; no pointer.
    let h = unsafe { GetStdHandle(id(which)) };
    (!h.is_null() && h != INVALID_HANDLE_VALUE).then_some(h)
}

/// The process's standard handle, borrowed for as long as the process
/// lives (the library never closes it); `NotFound` when the process has
/// none (a GUI program, or one started without it).
pub(crate) fn standard(which: Std) -> io::Result<BorrowedHandle<'static>> {
    match get(which) {
        // SAFETY: a live handle of the process, which this library never
        // closes; the caller keeps it open for the connection's life.
        Some(h) => Ok(unsafe { BorrowedHandle::borrow_raw(h as RawHandle) }),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the process has no such standard handle",
        )),
    }
}

/// The stdout guard: a private duplicate of the standard output handle
/// (not inheritable) for the connection, and the standard output handle
/// of the process set to its standard error (to `NUL` without one), so
/// that what asks for it from now on (Rust's `println!`, `GetStdHandle`,
/// children started afterwards) writes there. The C runtime's descriptor
/// 1 keeps the old handle: see the header's
/// `mcp_stdio_crt_stdout_to_stderr`.
pub(crate) fn guard_stdout() -> io::Result<OwnedHandle> {
    let Some(stdout) = get(Std::Output) else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the process has no standard output",
        ));
    };
    let mut private: HANDLE = std::ptr::null_mut();
    // SAFETY: duplicates a live handle of this process into this process;
    // `private` is writable.
    let ok = unsafe {
        DuplicateHandle(
            GetCurrentProcess(),
            stdout,
            GetCurrentProcess(),
            &mut private,
            0,
            0,
            DUPLICATE_SAME_ACCESS,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just made, owned by nothing else.
    let private = unsafe { OwnedHandle::from_raw_handle(private as RawHandle) };
    let away = match get(Std::Error) {
        Some(stderr) => stderr,
        // Kept open for the process's life: the standard output now.
        None => std::fs::OpenOptions::new()
            .write(true)
            .open("NUL")?
            .into_raw_handle() as HANDLE,
    };
    // SAFETY: sets a value of the process to a live handle.
    if unsafe { SetStdHandle(STD_OUTPUT_HANDLE, away) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(private)
}
