//! Starting a server on Windows: `CreateProcessW` given exactly the three
//! handles of its stdio (`PROC_THREAD_ATTRIBUTE_HANDLE_LIST`), so that no
//! other inheritable handle of the host (another spawn's pipe, made by
//! another thread at the same moment) leaks into it and holds a pipe open;
//! and in its Job Object from its first instruction
//! (`PROC_THREAD_ATTRIBUTE_JOB_LIST`; where the system refuses that
//! attribute, it is started suspended, assigned, then resumed).
//!
//! The three handles are made inheritable for the duration of the call
//! only, and given back the flag they had (a host's own stderr, inherited,
//! keeps its flag). Another component of the host that starts a process
//! with `bInheritHandles` and no handle list during that window could still
//! inherit them: the handle list protects our children, not theirs.

use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{
    GetHandleInformation, SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList, ResumeThread,
    UpdateProcThreadAttribute, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, PROCESS_INFORMATION, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
    PROC_THREAD_ATTRIBUTE_JOB_LIST, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use super::job::Job;

/// What to start. Texts are UTF-16 without a terminating NUL.
pub(crate) struct Spawn<'a> {
    /// The executable (`cmd.exe` for a batch file), as a full path.
    pub(crate) application: &'a [u16],
    /// The whole command line (see `process::windows::cmdline`).
    pub(crate) command_line: &'a [u16],
    /// The environment block (see `process::windows::env::block`).
    pub(crate) environment: &'a [u16],
    /// The working directory; `None`: the host's.
    pub(crate) current_dir: Option<&'a [u16]>,
    /// The child's stdin, stdout and stderr.
    pub(crate) stdio: [BorrowedHandle<'a>; 3],
    /// No console window for a console program (`CREATE_NO_WINDOW`).
    pub(crate) no_window: bool,
}

/// A started process: its handle (the job holds it too) and its id.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) process: OwnedHandle,
    pub(crate) pid: u32,
}

fn nul_terminated(text: &[u16]) -> io::Result<Vec<u16>> {
    if text.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL inside a text for CreateProcessW",
        ));
    }
    let mut owned = Vec::with_capacity(text.len() + 1);
    owned.extend_from_slice(text);
    owned.push(0);
    Ok(owned)
}

/// The inherit flags of `handles`, set for the call and put back after.
struct InheritForTheCall {
    handles: Vec<(HANDLE, bool)>,
}

impl InheritForTheCall {
    fn set(handles: &[HANDLE]) -> io::Result<InheritForTheCall> {
        let mut this = InheritForTheCall {
            handles: Vec::new(),
        };
        for &handle in handles {
            let mut flags = 0u32;
            // SAFETY: a live handle borrowed for the call; `flags` is writable.
            if unsafe { GetHandleInformation(handle, &mut flags) } == 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: as above; only the inherit flag changes.
            if unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) }
                == 0
            {
                return Err(io::Error::last_os_error());
            }
            this.handles
                .push((handle, flags & HANDLE_FLAG_INHERIT != 0));
        }
        Ok(this)
    }
}

impl Drop for InheritForTheCall {
    fn drop(&mut self) {
        for &(handle, was) in &self.handles {
            let flag = if was { HANDLE_FLAG_INHERIT } else { 0 };
            // SAFETY: the handles outlive this guard (borrowed by `Spawn`).
            unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, flag) };
        }
    }
}

/// A process thread attribute list with room for `count` attributes.
struct AttributeList {
    buffer: Vec<usize>,
}

impl AttributeList {
    fn new(count: u32) -> io::Result<AttributeList> {
        let mut size = 0usize;
        // SAFETY: a NULL list asks for the size needed (the call "fails"
        // with ERROR_INSUFFICIENT_BUFFER and writes it).
        unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), count, 0, &mut size) };
        let mut buffer = vec![0usize; size.div_ceil(std::mem::size_of::<usize>()).max(1)];
        // SAFETY: a buffer of at least `size` bytes, aligned for pointers.
        if unsafe {
            InitializeProcThreadAttributeList(buffer.as_mut_ptr().cast(), count, 0, &mut size)
        } == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(AttributeList { buffer })
    }

    fn as_ptr(&mut self) -> *mut core::ffi::c_void {
        self.buffer.as_mut_ptr().cast()
    }

    /// Adds an attribute whose value is the array `handles`, which must
    /// outlive the list's use.
    fn add(&mut self, attribute: u32, handles: &[HANDLE]) -> io::Result<()> {
        // SAFETY: an initialised list; the value is a HANDLE array of the
        // size given, which the caller keeps alive until CreateProcessW.
        let ok = unsafe {
            UpdateProcThreadAttribute(
                self.as_ptr(),
                0,
                attribute as usize,
                handles.as_ptr().cast(),
                std::mem::size_of_val(handles),
                std::ptr::null_mut(),
                std::ptr::null(),
            )
        };
        match ok {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`.
        unsafe { DeleteProcThreadAttributeList(self.as_ptr()) };
    }
}

/// How the child gets into its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assign {
    /// At creation (`PROC_THREAD_ATTRIBUTE_JOB_LIST`), falling back to
    /// `Suspended` where the system refuses the attribute.
    AtCreation,
    /// Started suspended, assigned, then resumed.
    Suspended,
}

/// Starts `spawn` in `job`.
pub(crate) fn spawn(spawn: &Spawn<'_>, job: &Job) -> io::Result<Started> {
    start(spawn, job, Assign::AtCreation)
}

fn start(spawn: &Spawn<'_>, job: &Job, assign: Assign) -> io::Result<Started> {
    let application = nul_terminated(spawn.application)?;
    let mut command_line = nul_terminated(spawn.command_line)?;
    let current_dir = spawn.current_dir.map(nul_terminated).transpose()?;
    if spawn.environment.len() < 2 || spawn.environment[spawn.environment.len() - 2..] != [0, 0] {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an environment block ends in two NULs",
        ));
    }
    // The handle list, checked here (Wine accepts lists Windows refuses):
    // real handles, each once.
    let mut inherit: Vec<HANDLE> = Vec::with_capacity(3);
    for handle in &spawn.stdio {
        let raw = handle.as_raw_handle();
        if raw.is_null() || raw == INVALID_HANDLE_VALUE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a stdio handle that is no handle",
            ));
        }
        if !inherit.contains(&raw) {
            inherit.push(raw);
        }
    }
    let job_list = [job.as_raw()];
    let mut attributes = AttributeList::new(2)?;
    attributes.add(PROC_THREAD_ATTRIBUTE_HANDLE_LIST, &inherit)?;
    // Where the job list is refused, start suspended and assign before the
    // first instruction.
    let suspended = assign == Assign::Suspended
        || attributes
            .add(PROC_THREAD_ATTRIBUTE_JOB_LIST, &job_list)
            .is_err();

    let mut info = STARTUPINFOEXW::default();
    info.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    info.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    info.StartupInfo.hStdInput = spawn.stdio[0].as_raw_handle();
    info.StartupInfo.hStdOutput = spawn.stdio[1].as_raw_handle();
    info.StartupInfo.hStdError = spawn.stdio[2].as_raw_handle();
    info.lpAttributeList = attributes.as_ptr();
    let mut flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
    if spawn.no_window {
        flags |= CREATE_NO_WINDOW;
    }
    if suspended {
        flags |= CREATE_SUSPENDED;
    }
    let mut process = PROCESS_INFORMATION::default();
    let inheriting = InheritForTheCall::set(&inherit)?;
    // SAFETY: every pointer is to a NUL-terminated buffer or a structure
    // that lives across the call (the command line is writable, as the
    // call requires); the attribute list and the arrays it points to live
    // until after it.
    let ok = unsafe {
        CreateProcessW(
            application.as_ptr(),
            command_line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            1,
            flags,
            spawn.environment.as_ptr().cast(),
            current_dir
                .as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr()),
            &info.StartupInfo,
            &mut process,
        )
    };
    let error = io::Error::last_os_error();
    drop(inheriting);
    if ok == 0 {
        return Err(error);
    }
    // SAFETY: both handles were just made for us by CreateProcessW.
    let (process_handle, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(process.hProcess),
            OwnedHandle::from_raw_handle(process.hThread),
        )
    };
    if suspended {
        let assigned = job.assign(process_handle.as_handle());
        // SAFETY: the primary thread's handle, just made.
        unsafe { ResumeThread(thread.as_raw_handle()) };
        if let Err(e) = assigned {
            // Not in the job: not ours to leave running.
            let _ = super::job::terminate_process(process_handle.as_handle(), 1);
            return Err(e);
        }
    }
    Ok(Started {
        process: process_handle,
        pid: process.dwProcessId,
    })
}

/// The system directory (`C:\\Windows\\System32`), where `cmd.exe` is
/// taken from (never through `PATH`).
pub(crate) fn system_directory() -> io::Result<Vec<u16>> {
    let mut buf = vec![0u16; 260];
    loop {
        // SAFETY: a writable buffer of the length given.
        let n = unsafe {
            windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW(
                buf.as_mut_ptr(),
                buf.len() as u32,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            return Ok(buf);
        }
        buf.resize(n, 0); // n: the size needed, NUL included
    }
}

impl Started {
    /// The exit code once the process has ended; `None` while it runs.
    pub(crate) fn exit_code(&self) -> io::Result<Option<u32>> {
        // STILL_ACTIVE (259) is also a code a process may exit with: the
        // handle, signalled once the process ended, tells which. It is
        // asked first: a code read before it would be STILL_ACTIVE for a
        // process that ends between the two calls.
        let ended =
            super::pipe::wait_any(&[self.process.as_handle()], Some(std::time::Duration::ZERO))?;
        if ended.is_none() {
            return Ok(None);
        }
        let mut code = 0u32;
        // SAFETY: a live process handle; `code` is writable.
        let ok = unsafe {
            windows_sys::Win32::System::Threading::GetExitCodeProcess(
                self.process.as_raw_handle(),
                &mut code,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Some(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};
    use std::time::Duration;
    use windows_sys::Win32::System::Threading::{GetExitCodeProcess, WaitForSingleObject};

    fn w(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    /// An anonymous pipe, neither end inheritable: (read, write).
    fn pipe() -> (File, File) {
        let (mut read, mut write) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: two writable handle slots; no security attributes.
        let ok = unsafe {
            windows_sys::Win32::System::Pipes::CreatePipe(
                &mut read,
                &mut write,
                std::ptr::null(),
                0,
            )
        };
        assert_ne!(ok, 0, "{}", io::Error::last_os_error());
        // SAFETY: handles just made, owned by nothing else.
        unsafe { (File::from_raw_handle(read), File::from_raw_handle(write)) }
    }

    fn cmd_exe() -> Vec<u16> {
        let root = std::env::var("SystemRoot")
            .or_else(|_| std::env::var("SYSTEMROOT"))
            .unwrap();
        w(&format!(r"{root}\system32\cmd.exe"))
    }

    fn environment() -> Vec<u16> {
        let mut block = Vec::new();
        for (name, value) in std::env::vars() {
            block.extend(w(&format!("{name}={value}")));
            block.push(0);
        }
        block.push(0);
        if block.len() == 1 {
            block.push(0);
        }
        block
    }

    fn exit_code(started: &Started, limit: Duration) -> Option<u32> {
        // SAFETY: a live process handle.
        let waited = unsafe {
            WaitForSingleObject(started.process.as_raw_handle(), limit.as_millis() as u32)
        };
        if waited != 0 {
            return None;
        }
        let mut code = 0u32;
        // SAFETY: as above; `code` is writable.
        unsafe { GetExitCodeProcess(started.process.as_raw_handle(), &mut code) };
        Some(code)
    }

    /// `cmd /c <script>` with the given stdio, in `job`.
    fn run(script: &str, stdio: [BorrowedHandle<'_>; 3], job: &Job) -> Started {
        run_with(script, stdio, job, Assign::AtCreation)
    }

    fn run_with(
        script: &str,
        stdio: [BorrowedHandle<'_>; 3],
        job: &Job,
        assign: Assign,
    ) -> Started {
        let line = w(&format!("cmd.exe /d /c {script}"));
        let env = environment();
        let spawn_it = Spawn {
            application: &cmd_exe(),
            command_line: &line,
            environment: &env,
            current_dir: None,
            stdio,
            no_window: true,
        };
        start(&spawn_it, job, assign).expect("cmd.exe starts")
    }

    #[test]
    fn the_child_writes_to_the_pipe_it_was_given() {
        let job = Job::new().unwrap();
        let (mut out_read, out_write) = pipe();
        let (in_read, in_write) = pipe();
        let started = run(
            "echo hello",
            [
                in_read.as_handle(),
                out_write.as_handle(),
                out_write.as_handle(),
            ],
            &job,
        );
        drop((out_write, in_read, in_write));
        let mut text = String::new();
        out_read.read_to_string(&mut text).unwrap();
        assert_eq!(text.trim_end(), "hello");
        assert_eq!(exit_code(&started, Duration::from_secs(10)), Some(0));
        assert_eq!(started.exit_code().unwrap(), Some(0));
        assert!(started.pid != 0);
    }

    /// The exit code polled while the process ends is its own, never
    /// STILL_ACTIVE (259) read just before it ended.
    #[test]
    fn an_exit_code_polled_while_the_process_ends_is_its_own() {
        let job = Job::new().unwrap();
        for _ in 0..20 {
            let (in_read, _in_write) = pipe();
            let (_out_read, out_write) = pipe();
            let started = run(
                "exit 7",
                [
                    in_read.as_handle(),
                    out_write.as_handle(),
                    out_write.as_handle(),
                ],
                &job,
            );
            let give_up = std::time::Instant::now() + Duration::from_secs(10);
            let code = loop {
                if let Some(code) = started.exit_code().unwrap() {
                    break code;
                }
                assert!(
                    std::time::Instant::now() < give_up,
                    "cmd /c exit 7 never ended"
                );
            };
            assert_eq!(code, 7);
        }
    }

    /// The handle list: an inheritable handle of the host that is not in
    /// it stays out of the child, so the pipe it belongs to ends when the
    /// host closes its own end, though the child still runs.
    #[test]
    fn an_unlisted_inheritable_handle_does_not_leak() {
        let job = Job::new().unwrap();
        let (mut other_read, other_write) = pipe();
        // SAFETY: a live handle of ours; only the inherit flag changes.
        let ok = unsafe {
            SetHandleInformation(
                other_write.as_raw_handle(),
                HANDLE_FLAG_INHERIT,
                HANDLE_FLAG_INHERIT,
            )
        };
        assert_ne!(ok, 0);
        let (in_read, mut in_write) = pipe();
        let (_out_read, out_write) = pipe();
        // `more` waits on its stdin until it ends.
        let started = run(
            "more",
            [
                in_read.as_handle(),
                out_write.as_handle(),
                out_write.as_handle(),
            ],
            &job,
        );
        drop(other_write);
        // Read in a thread, so that a leak fails the test instead of
        // hanging it: `more` is then told to end, which ends the read.
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            tx.send(other_read.read(&mut byte).unwrap_or(0)).unwrap();
        });
        let ended = rx.recv_timeout(Duration::from_secs(5));
        let still_running = exit_code(&started, Duration::from_millis(100)).is_none();
        in_write.write_all(b"x\r\n").unwrap();
        drop(in_write);
        let code = exit_code(&started, Duration::from_secs(10));
        reader.join().unwrap();
        assert_eq!(
            ended,
            Ok(0),
            "the other pipe ended (nobody else holds its write end)"
        );
        assert!(still_running, "more was still running when it did");
        assert_eq!(code, Some(0));
    }

    /// In the job from the start, either way: terminating it ends the
    /// child (and what it started) with the code given.
    #[test]
    fn the_child_is_in_the_job() {
        for assign in [Assign::AtCreation, Assign::Suspended] {
            let job = Job::new().unwrap();
            let (in_read, _in_write) = pipe();
            let (_out_read, out_write) = pipe();
            let stdio = [
                in_read.as_handle(),
                out_write.as_handle(),
                out_write.as_handle(),
            ];
            let started = run_with("more", stdio, &job, assign);
            assert_eq!(
                exit_code(&started, Duration::from_millis(100)),
                None,
                "{assign:?}"
            );
            assert_eq!(started.exit_code().unwrap(), None, "{assign:?}: running");
            job.terminate(9).unwrap();
            assert_eq!(
                exit_code(&started, Duration::from_secs(10)),
                Some(9),
                "{assign:?}"
            );
        }
    }

    #[test]
    fn bad_arguments_are_refused_before_anything_starts() {
        let job = Job::new().unwrap();
        let (in_read, _w) = pipe();
        let env = environment();
        let app = cmd_exe();
        let base = Spawn {
            application: &app,
            command_line: &[],
            environment: &env,
            current_dir: None,
            stdio: [
                in_read.as_handle(),
                in_read.as_handle(),
                in_read.as_handle(),
            ],
            no_window: true,
        };
        let nul = w("cmd.exe\0");
        assert!(spawn(
            &Spawn {
                command_line: &nul,
                ..base
            },
            &job
        )
        .is_err());
        assert!(spawn(
            &Spawn {
                environment: &w("A=1\0"),
                ..base
            },
            &job
        )
        .is_err());
        let missing = w(r"C:\no\such\program.exe");
        assert_eq!(
            spawn(
                &Spawn {
                    application: &missing,
                    ..base
                },
                &job
            )
            .unwrap_err()
            .raw_os_error(),
            Some(3), // ERROR_PATH_NOT_FOUND
        );
    }
}
