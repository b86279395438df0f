//! A Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: a server put in
//! it, and every process the server starts after that (they join their
//! parent's job), end together when the job is terminated, or when its
//! last handle closes: also when the host that holds it dies, however it
//! dies. Nothing is ever killed by process id, so no reused id can make it
//! kill an unrelated program.

use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};

/// A job that kills its processes when it is closed.
#[derive(Debug)]
pub(crate) struct Job(OwnedHandle);

impl Job {
    /// A new, unnamed job, its handle not inheritable.
    pub(crate) fn new() -> io::Result<Job> {
        // SAFETY: no security attributes (the handle is not inherited), no
        // name; returns a new handle or NULL.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just made, owned by nothing else.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(raw) });
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the information class matches the structure and its size;
        // the structure lives across the call.
        let ok = unsafe {
            SetInformationJobObject(
                job.0.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts `process` (a handle with `PROCESS_SET_QUOTA` and
    /// `PROCESS_TERMINATE` access) in the job.
    pub(crate) fn assign(&self, process: BorrowedHandle<'_>) -> io::Result<()> {
        // SAFETY: two live handles, borrowed for the call.
        let ok =
            unsafe { AssignProcessToJobObject(self.0.as_raw_handle(), process.as_raw_handle()) };
        match ok {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }

    /// The job's handle, for `PROC_THREAD_ATTRIBUTE_JOB_LIST`.
    pub(crate) fn as_raw(&self) -> windows_sys::Win32::Foundation::HANDLE {
        self.0.as_raw_handle()
    }

    /// Ends every process in the job, each with `exit_code`.
    pub(crate) fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: a live job handle, borrowed for the call.
        let ok = unsafe { TerminateJobObject(self.0.as_raw_handle(), exit_code) };
        match ok {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }
}

/// Ends the one process `process` (one that could not be put in a job:
/// nothing else may be left running).
pub(crate) fn terminate_process(process: BorrowedHandle<'_>, exit_code: u32) -> io::Result<()> {
    // SAFETY: a live process handle, borrowed for the call.
    let ok = unsafe {
        windows_sys::Win32::System::Threading::TerminateProcess(process.as_raw_handle(), exit_code)
    };
    match ok {
        0 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::io::AsHandle;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// A process that waits for ever: `cmd /c more` reading a stdin that
    /// never ends (`more.exe`, a grandchild, does the reading).
    fn waiting_child() -> Child {
        Command::new("cmd.exe")
            .args(["/c", "more"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("cmd.exe starts")
    }

    fn exited_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    #[test]
    fn terminate_ends_the_process_with_the_code_given() {
        let job = Job::new().unwrap();
        let mut child = waiting_child();
        job.assign(child.as_handle()).unwrap();
        assert!(
            exited_within(&mut child, Duration::from_millis(300)).is_none(),
            "it waits"
        );
        job.terminate(77).unwrap();
        let status = exited_within(&mut child, Duration::from_secs(10)).expect("ended");
        assert_eq!(status.code(), Some(77));
    }

    #[test]
    fn closing_the_job_kills_what_it_holds() {
        let job = Job::new().unwrap();
        let mut child = waiting_child();
        job.assign(child.as_handle()).unwrap();
        drop(job);
        assert!(
            exited_within(&mut child, Duration::from_secs(10)).is_some(),
            "killed at close"
        );
    }
}
