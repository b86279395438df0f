//! Starting a server with posix_spawn(3), on the portable POSIX build
//! (macOS, the BSDs, and Linux built with `MCP_STDIO_PORTABLE_POSIX=1`),
//! where no code of ours runs in the child: what the Linux build does
//! between fork and exec (`spawn.rs`) is said here with file actions and
//! attributes, which the system carries out itself (on macOS, in the
//! kernel: no fork of the host's address space at all).
//!
//! - its stdin, stdout and stderr `dup2`'ed from the pipes' ends (which the
//!   caller made above descriptor 2, so that no action overwrites the
//!   source of a later one), or stderr opened on `/dev/null`, or the
//!   host's stderr kept (its close-on-exec flag cleared);
//! - its working directory (`posix_spawn_file_actions_addchdir_np`);
//! - its own process group, an empty signal mask, every signal at its
//!   default (on Linux the C library's own signals too, which its
//!   posix_spawn would leave ignored: see `with_libc_signals`);
//! - no descriptor of the host but 0-2: on Apple's systems
//!   `POSIX_SPAWN_CLOEXEC_DEFAULT`, on glibc (2.34+)
//!   `posix_spawn_file_actions_addclosefrom_np(3)`; elsewhere (musl, the
//!   BSDs) there is no such action, and a descriptor the host opened
//!   without close-on-exec reaches the server (the library's own are all
//!   close-on-exec).
//!
//! `PR_SET_PDEATHSIG` (`kill_on_host_exit`, Linux only) has no attribute:
//! the caller forks and execs for it. The calls are linked directly: the
//! portable build needs macOS 10.15+ (`addchdir_np`), glibc 2.34+
//! (`addclosefrom_np`) or musl 1.1.24+.

#![cfg(not(linux_apis))]

use std::ffi::{c_char, c_int, CString, OsStr, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

// Apple's extension (<spawn.h>, macOS 10.7+), which the libc crate
// (0.2.191) does not declare: the descriptor is kept across the exec in
// spite of `POSIX_SPAWN_CLOEXEC_DEFAULT` and its own close-on-exec flag.
#[cfg(target_vendor = "apple")]
extern "C" {
    fn posix_spawn_file_actions_addinherit_np(
        actions: *mut libc::posix_spawn_file_actions_t,
        fd: c_int,
    ) -> c_int;
}

// glibc 2.29+, musl 1.1.24+ and macOS 10.15+ have it, and the libc crate
// declares it for them; elsewhere (FreeBSD 13.1+, Android API 34+, the
// illumos libc) the libc crate (0.2.191) does not, and it is declared
// here, with the same signature.
#[cfg(any(
    all(
        target_os = "linux",
        any(target_env = "gnu", target_env = "musl", target_env = "ohos")
    ),
    target_os = "macos"
))]
use libc::posix_spawn_file_actions_addchdir_np;
#[cfg(not(any(
    all(
        target_os = "linux",
        any(target_env = "gnu", target_env = "musl", target_env = "ohos")
    ),
    target_os = "macos"
)))]
extern "C" {
    fn posix_spawn_file_actions_addchdir_np(
        actions: *mut libc::posix_spawn_file_actions_t,
        path: *const c_char,
    ) -> c_int;
}

/// Where the server's stderr goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ChildStderr<'a> {
    /// This descriptor (a pipe's end, above 2), `dup2`'ed to 2.
    Fd(BorrowedFd<'a>),
    /// The host's own descriptor 2, which must be open.
    Inherit,
    /// `/dev/null`, opened for reading and writing in the child.
    DevNull,
}

/// A server to start: what posix_spawn(3) is given.
#[derive(Debug)]
pub(crate) struct Spawn<'a> {
    /// The program, an absolute path (as `resolve` found it).
    pub(crate) program: &'a Path,
    /// Its `argv[0]`: the name the command was given.
    pub(crate) arg0: &'a OsStr,
    pub(crate) args: &'a [OsString],
    /// Its whole environment.
    pub(crate) env: &'a [(OsString, OsString)],
    /// Its working directory (relative: to the host's).
    pub(crate) cwd: Option<&'a Path>,
    /// Above descriptor 2, like `stdout` and a `ChildStderr::Fd`.
    pub(crate) stdin: BorrowedFd<'a>,
    pub(crate) stdout: BorrowedFd<'a>,
    pub(crate) stderr: ChildStderr<'a>,
}

/// The error posix_spawn(3) and its helpers return (an errno value, not -1).
fn check(r: c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// `bytes` as a C string; one with a NUL inside is refused with
/// `InvalidInput`, as `std::process::Command` refuses it.
fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in a program, argument or environment variable",
        )
    })
}

/// A NULL-terminated array of pointers into `strings`, as argv and envp
/// are given (`*mut` in the C declarations; never written through).
fn pointers(strings: &[CString]) -> Vec<*mut c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// A `posix_spawn_file_actions_t`, destroyed when dropped. Boxed: it is
/// initialised in place and never moves afterwards.
struct FileActions(Box<MaybeUninit<libc::posix_spawn_file_actions_t>>);

impl FileActions {
    fn new() -> io::Result<FileActions> {
        let mut actions = Box::new(MaybeUninit::uninit());
        // SAFETY: init writes the object it is given, writable memory of
        // its type; on success `Drop` destroys it once.
        check(unsafe { libc::posix_spawn_file_actions_init(actions.as_mut_ptr()) })?;
        Ok(FileActions(actions))
    }

    fn as_mut_ptr(&mut self) -> *mut libc::posix_spawn_file_actions_t {
        self.0.as_mut_ptr()
    }

    fn as_ptr(&self) -> *const libc::posix_spawn_file_actions_t {
        self.0.as_ptr()
    }

    /// In the child: `dup2(fd, to)` (with `fd == to`: its close-on-exec
    /// flag cleared, as POSIX.1-2024 says and glibc 2.29+ and musl do).
    fn dup2(&mut self, fd: c_int, to: c_int) -> io::Result<()> {
        // SAFETY: the object was initialised by `new`; only numbers are
        // recorded.
        check(unsafe { libc::posix_spawn_file_actions_adddup2(self.as_mut_ptr(), fd, to) })
    }

    /// In the child: `path` opened as descriptor `to`.
    fn open(&mut self, to: c_int, path: &std::ffi::CStr, flags: c_int) -> io::Result<()> {
        // SAFETY: the object was initialised by `new`; `path` is a
        // NUL-terminated string, which the call copies.
        check(unsafe {
            libc::posix_spawn_file_actions_addopen(self.as_mut_ptr(), to, path.as_ptr(), flags, 0)
        })
    }

    /// In the child: chdir(2) to `dir`.
    fn chdir(&mut self, dir: &std::ffi::CStr) -> io::Result<()> {
        // SAFETY: the object was initialised by `new`; `dir` is a
        // NUL-terminated string, which the call copies.
        check(unsafe { posix_spawn_file_actions_addchdir_np(self.as_mut_ptr(), dir.as_ptr()) })
    }

    /// Apple: `fd` kept across the exec in spite of
    /// `POSIX_SPAWN_CLOEXEC_DEFAULT` and of its close-on-exec flag.
    #[cfg(target_vendor = "apple")]
    fn inherit(&mut self, fd: c_int) -> io::Result<()> {
        // SAFETY: the object was initialised by `new`; only a number is
        // recorded.
        check(unsafe { posix_spawn_file_actions_addinherit_np(self.as_mut_ptr(), fd) })
    }

    /// glibc 2.34+: every descriptor from `from` up closed in the child.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn close_from(&mut self, from: c_int) -> io::Result<()> {
        // SAFETY: the object was initialised by `new`; only a number is
        // recorded.
        check(unsafe { libc::posix_spawn_file_actions_addclosefrom_np(self.as_mut_ptr(), from) })
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialised by `new` (a `FileActions` exists only then),
        // destroyed once, here.
        unsafe { libc::posix_spawn_file_actions_destroy(self.as_mut_ptr()) };
    }
}

/// A `posix_spawnattr_t`, destroyed when dropped. Boxed: it is initialised
/// in place and never moves afterwards.
struct Attributes(Box<MaybeUninit<libc::posix_spawnattr_t>>);

impl Attributes {
    fn new() -> io::Result<Attributes> {
        let mut attributes = Box::new(MaybeUninit::uninit());
        // SAFETY: init writes the object it is given, writable memory of
        // its type; on success `Drop` destroys it once.
        check(unsafe { libc::posix_spawnattr_init(attributes.as_mut_ptr()) })?;
        Ok(Attributes(attributes))
    }

    fn as_mut_ptr(&mut self) -> *mut libc::posix_spawnattr_t {
        self.0.as_mut_ptr()
    }

    fn as_ptr(&self) -> *const libc::posix_spawnattr_t {
        self.0.as_ptr()
    }

    /// Its own process group, an empty signal mask, every catchable signal
    /// at its default (and on Apple's systems, no descriptor but those the
    /// file actions name).
    fn clean_server(&mut self) -> io::Result<()> {
        // Every signal to its default: handled ones are reset by the exec
        // anyway, but ignored ones would stay ignored (a host that ignores
        // SIGTERM or SIGPIPE would start servers deaf to the shutdown, or
        // unable to die of a broken pipe).
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        let mut all = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset and sigfillset initialise the sets they are
        // given; sigdelset then edits an initialised set (SIGKILL and
        // SIGSTOP, which cannot be caught, are left out).
        let (empty, all) = unsafe {
            libc::sigemptyset(empty.as_mut_ptr());
            libc::sigfillset(all.as_mut_ptr());
            libc::sigdelset(all.as_mut_ptr(), libc::SIGKILL);
            libc::sigdelset(all.as_mut_ptr(), libc::SIGSTOP);
            (empty.assume_init(), all.assume_init())
        };
        #[cfg(target_os = "linux")]
        let all = with_libc_signals(all);
        // Apple: only the descriptors the file actions name survive the exec.
        #[cfg(target_vendor = "apple")]
        const CLOEXEC_DEFAULT: c_int = libc::POSIX_SPAWN_CLOEXEC_DEFAULT;
        #[cfg(not(target_vendor = "apple"))]
        const CLOEXEC_DEFAULT: c_int = 0;
        // (c_int on most systems, a short on some.)
        let flags = libc::POSIX_SPAWN_SETPGROUP as c_int
            | libc::POSIX_SPAWN_SETSIGMASK as c_int
            | libc::POSIX_SPAWN_SETSIGDEF as c_int
            | CLOEXEC_DEFAULT;
        // Every flag above fits in the short the call takes.
        let flags = libc::c_short::try_from(flags)
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: the object was initialised by `new`; the sets are
        // initialised and copied by the calls.
        unsafe {
            check(libc::posix_spawnattr_setflags(self.as_mut_ptr(), flags))?;
            check(libc::posix_spawnattr_setpgroup(self.as_mut_ptr(), 0))?;
            check(libc::posix_spawnattr_setsigmask(self.as_mut_ptr(), &empty))?;
            check(libc::posix_spawnattr_setsigdefault(self.as_mut_ptr(), &all))?;
        }
        Ok(())
    }
}

impl Drop for Attributes {
    fn drop(&mut self) {
        // SAFETY: initialised by `new` (an `Attributes` exists only then),
        // destroyed once, here.
        unsafe { libc::posix_spawnattr_destroy(self.as_mut_ptr()) };
    }
}

/// `set` with the C library's own signals added (Linux: 32 up to
/// `SIGRTMIN()`: glibc's SIGCANCEL and SIGSETXID, musl's three), which
/// sigaddset refuses to add. glibc's and musl's posix_spawn block every
/// signal while the child shares the host's memory, and set those to
/// SIG_IGN in it unless they are in the `POSIX_SPAWN_SETSIGDEF` set: the
/// exec would keep them ignored, where fork and exec leave them at their
/// default. Set in the set's bits (the kernel's layout, which both use:
/// signal n at bit n - 1 of an array of unsigned longs).
#[cfg(target_os = "linux")]
fn with_libc_signals(mut set: libc::sigset_t) -> libc::sigset_t {
    const BITS: usize = libc::c_ulong::BITS as usize;
    const WORDS: usize = size_of::<libc::sigset_t>() / size_of::<libc::c_ulong>();
    let words = std::ptr::from_mut(&mut set).cast::<libc::c_ulong>();
    for sig in 32..libc::SIGRTMIN() {
        let bit = (sig - 1) as usize;
        if bit / BITS < WORDS {
            // SAFETY: `set` is an array of WORDS unsigned longs (glibc's
            // and musl's sigset_t), and the word is within it.
            unsafe { *words.add(bit / BITS) |= 1 << (bit % BITS) };
        }
    }
    set
}

/// Starts `what` with posix_spawn(3) (not `posix_spawnp`: the program is
/// already an absolute path, and macOS's `posix_spawnp` misreports
/// relative ones after a change of directory); the child's pid, which the
/// caller reaps.
///
/// The server gets what the Linux build's fork and exec give it: its
/// stdin, stdout and stderr, its working directory, its own process group,
/// an empty signal mask and every signal at its default. One difference:
/// the host's other descriptors are closed in the child on Apple's systems
/// (`POSIX_SPAWN_CLOEXEC_DEFAULT`) and with glibc
/// (`posix_spawn_file_actions_addclosefrom_np`), but elsewhere (musl, the
/// BSDs) one the host opened without close-on-exec reaches the server,
/// since no code of ours runs in the child to close it (every descriptor
/// of the library is close-on-exec). `PR_SET_PDEATHSIG` has no equivalent:
/// the caller spawns with fork and exec when it is asked for.
///
/// Errors: `InvalidInput` for a NUL inside the program, an argument or a
/// variable (before anything is started); else the errno posix_spawn
/// reports (`ENOENT`, `EACCES`, `ENOEXEC`, `E2BIG`...), with no child left.
pub(crate) fn spawn(what: &Spawn<'_>) -> io::Result<libc::pid_t> {
    let program = c_string(what.program.as_os_str().as_bytes())?;
    let argv = std::iter::once(what.arg0)
        .chain(what.args.iter().map(OsString::as_os_str))
        .map(|a| c_string(a.as_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    let envp = what
        .env
        .iter()
        .map(|(name, value)| {
            let mut var = Vec::with_capacity(name.len() + value.len() + 1);
            var.extend_from_slice(name.as_bytes());
            var.push(b'=');
            var.extend_from_slice(value.as_bytes());
            c_string(&var)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let cwd = what
        .cwd
        .map(|dir| c_string(dir.as_os_str().as_bytes()))
        .transpose()?;
    let (argv_ptrs, envp_ptrs) = (pointers(&argv), pointers(&envp));

    debug_assert!(what.stdin.as_raw_fd() > 2 && what.stdout.as_raw_fd() > 2);
    let mut actions = FileActions::new()?;
    // The sources are above 2: no action overwrites a later one's source.
    actions.dup2(what.stdin.as_raw_fd(), 0)?;
    actions.dup2(what.stdout.as_raw_fd(), 1)?;
    match what.stderr {
        ChildStderr::Fd(fd) => {
            debug_assert!(fd.as_raw_fd() > 2);
            actions.dup2(fd.as_raw_fd(), 2)?;
        }
        // Kept, even if the host made it close-on-exec.
        #[cfg(target_vendor = "apple")]
        ChildStderr::Inherit => actions.inherit(2)?,
        #[cfg(not(target_vendor = "apple"))]
        ChildStderr::Inherit => actions.dup2(2, 2)?,
        ChildStderr::DevNull => actions.open(2, c"/dev/null", libc::O_RDWR)?,
    }
    if let Some(dir) = &cwd {
        actions.chdir(dir)?;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    actions.close_from(3)?;
    let mut attributes = Attributes::new()?;
    attributes.clean_server()?;

    let mut pid: libc::pid_t = 0;
    // SAFETY: `pid` is writable; the program, argv and envp are
    // NUL-terminated strings in NULL-terminated arrays that outlive the
    // call (which only reads them); the file actions and attributes were
    // initialised and are destroyed after it.
    check(unsafe {
        libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            actions.as_ptr(),
            attributes.as_ptr(),
            argv_ptrs.as_ptr(),
            envp_ptrs.as_ptr(),
        )
    })?;
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};

    use crate::sys::unix::fd::above_stdio;

    /// A pipe, both ends close-on-exec and above 2: (read end, write end).
    fn pipe() -> (OwnedFd, OwnedFd) {
        let (read, write) = io::pipe().unwrap();
        (
            above_stdio(read.into()).unwrap(),
            above_stdio(write.into()).unwrap(),
        )
    }

    /// Waits for our child `pid`: its wait status.
    fn wait(pid: libc::pid_t) -> c_int {
        let mut status = 0;
        // SAFETY: waits for our own child; `status` is writable.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(r, pid, "{}", io::Error::last_os_error());
        status
    }

    /// Starts `/bin/sh -c script` with `env` and `cwd`, its stderr on
    /// /dev/null: its pid, and our ends of its stdin and stdout.
    fn start_sh(
        script: &str,
        env: &[(OsString, OsString)],
        cwd: Option<&Path>,
    ) -> io::Result<(libc::pid_t, File, File)> {
        let (stdin, stdin_ours) = pipe();
        let (stdout_ours, stdout) = pipe();
        let args = [OsString::from("-c"), OsString::from(script)];
        let pid = spawn(&Spawn {
            program: Path::new("/bin/sh"),
            arg0: OsStr::new("sh"),
            args: &args,
            env,
            cwd,
            stdin: stdin.as_fd(),
            stdout: stdout.as_fd(),
            stderr: ChildStderr::DevNull,
        })?;
        Ok((pid, stdin_ours.into(), stdout_ours.into()))
    }

    /// What `/bin/sh -c script` writes to its stdout, and its exit code.
    fn sh(
        script: &str,
        env: &[(OsString, OsString)],
        cwd: Option<&Path>,
    ) -> io::Result<(String, c_int)> {
        let (pid, stdin, mut stdout) = start_sh(script, env, cwd)?;
        drop(stdin);
        let mut text = String::new();
        stdout.read_to_string(&mut text)?;
        let status = wait(pid);
        assert!(libc::WIFEXITED(status), "status {status:#x}");
        Ok((text, libc::WEXITSTATUS(status)))
    }

    #[test]
    fn the_server_gets_its_arguments_environment_and_stdio() {
        let env = [(OsString::from("GREETING"), OsString::from("a b"))];
        let (pid, mut stdin, mut stdout) = start_sh(
            r#"echo "$0 $GREETING ${HOME-unset}"; read line; echo "got $line"; exit 3"#,
            &env,
            None,
        )
        .unwrap();
        stdin.write_all(b"hello\n").unwrap();
        drop(stdin);
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        let status = wait(pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 3);
        // Only the environment given: no HOME of ours.
        assert_eq!(out, "sh a b unset\ngot hello\n");
    }

    #[test]
    fn the_server_is_in_its_own_process_group() {
        let (pid, stdin, mut stdout) = start_sh("echo $$; exec cat", &[], None).unwrap();
        let mut first = [0u8; 32];
        let n = stdout.read(&mut first).unwrap();
        let said: libc::pid_t = std::str::from_utf8(&first[..n])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(said, pid);
        // SAFETY: getpgid takes a pid; our child is alive (it waits for
        // its stdin's end), not yet reaped.
        let (group, ours) = unsafe { (libc::getpgid(pid), libc::getpgid(0)) };
        assert_eq!(group, pid, "{}", io::Error::last_os_error());
        assert_ne!(group, ours);
        drop(stdin);
        let status = wait(pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    #[test]
    fn the_working_directory_applies() {
        let dir = Path::new("/tmp").canonicalize().unwrap();
        let (out, code) = sh("pwd -P", &[], Some(&dir)).unwrap();
        assert_eq!((out.trim_end(), code), (dir.to_str().unwrap(), 0));
        let gone = sh("pwd", &[], Some(Path::new("/no/such/directory/here")));
        assert_eq!(gone.unwrap_err().raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn no_host_descriptor_reaches_the_server() {
        // Close-on-exec, as every descriptor of the library.
        let closed = File::open("/dev/null").unwrap();
        // Without close-on-exec: closed too where the platform can (Apple,
        // glibc), see `spawn`.
        // SAFETY: opens a NUL-terminated path.
        let loose = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        assert!(loose > 2, "{}", io::Error::last_os_error());
        // SAFETY: a descriptor just opened, owned by nothing else.
        let loose = unsafe { OwnedFd::from_raw_fd(loose) };
        let (closed_n, loose_n) = (closed.as_raw_fd(), loose.as_raw_fd());
        // /dev/fd/N: the shell's own descriptors (it opens none above 2
        // before running the loop, nor does `[`, a builtin).
        let script = format!(
            "for n in 0 1 2 {closed_n} {loose_n}; do [ -e /dev/fd/$n ] && echo $n; done; exit 0"
        );
        let (out, code) = sh(&script, &[], None).unwrap();
        assert_eq!(code, 0);
        let open: Vec<c_int> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(&open[..3], [0, 1, 2], "{out}");
        assert!(!open.contains(&closed_n), "{out}");
        if cfg!(any(
            target_vendor = "apple",
            all(target_os = "linux", target_env = "gnu")
        )) {
            assert_eq!(open, [0, 1, 2], "{out}");
        }
        // The host's descriptor is as it was.
        // SAFETY: F_GETFD on a live descriptor.
        assert_eq!(unsafe { libc::fcntl(loose_n, libc::F_GETFD) }, 0);
    }

    #[test]
    fn the_inherited_stderr_is_kept_even_close_on_exec() {
        // SAFETY: F_GETFD on a descriptor number; a closed one fails.
        let flags = unsafe { libc::fcntl(2, libc::F_GETFD) };
        if flags < 0 {
            return; // this process has no stderr to pass on
        }
        let (stdin, _ours) = pipe();
        let (out, stdout) = pipe();
        let args = [
            OsString::from("-c"),
            OsString::from("[ -e /dev/fd/2 ] && echo kept"),
        ];
        // SAFETY: sets, then restores, descriptor 2's flags (a server
        // another test starts meanwhile keeps its stderr all the same).
        unsafe { libc::fcntl(2, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        let started = spawn(&Spawn {
            program: Path::new("/bin/sh"),
            arg0: OsStr::new("sh"),
            args: &args,
            env: &[],
            cwd: None,
            stdin: stdin.as_fd(),
            stdout: stdout.as_fd(),
            stderr: ChildStderr::Inherit,
        });
        // SAFETY: as above.
        let after = unsafe { libc::fcntl(2, libc::F_GETFD) };
        // SAFETY: as above.
        unsafe { libc::fcntl(2, libc::F_SETFD, flags) };
        let pid = started.unwrap();
        drop(stdout);
        let mut said = String::new();
        File::from(out).read_to_string(&mut said).unwrap();
        wait(pid);
        assert_eq!(said, "kept\n");
        // The host's flag is as it was (the clearing was the child's).
        assert_eq!(after & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_signal_mask_is_empty_and_no_signal_ignored() {
        // This thread blocks SIGUSR2 (its mask is what a child inherits)
        // and the process ignores SIGXFSZ (nothing else in the library's
        // tests uses it); the server has neither, nor the C library's own
        // signals ignored (see `with_libc_signals`).
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        let mut old_mask = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: a set initialised before it is used; the old mask and
        // action are saved to be restored below.
        let old_action = unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), libc::SIGUSR2);
            libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), old_mask.as_mut_ptr());
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN)
        };
        let result = sh("exec grep -E '^Sig(Blk|Ign):' /proc/self/status", &[], None);
        // SAFETY: restores what was saved above.
        unsafe {
            libc::signal(libc::SIGXFSZ, old_action);
            libc::pthread_sigmask(libc::SIG_SETMASK, old_mask.as_ptr(), std::ptr::null_mut());
        }
        let (out, code) = result.unwrap();
        assert_eq!(code, 0, "{out}");
        assert_eq!(out.lines().count(), 2, "{out}");
        for line in out.lines() {
            let hex = line.split_whitespace().nth(1).unwrap();
            assert_eq!(u64::from_str_radix(hex, 16).unwrap(), 0, "{out}");
        }
    }

    #[test]
    fn errors_are_the_errno_of_the_exec() {
        let (stdin, _ours) = pipe();
        let (_ours, stdout) = pipe();
        let start = |program: &Path| {
            spawn(&Spawn {
                program,
                arg0: program.as_os_str(),
                args: &[],
                env: &[],
                cwd: None,
                stdin: stdin.as_fd(),
                stdout: stdout.as_fd(),
                stderr: ChildStderr::DevNull,
            })
            .map(wait)
        };
        let missing = start(Path::new("/no/such/program"));
        assert_eq!(missing.unwrap_err().raw_os_error(), Some(libc::ENOENT));
        // A directory cannot be executed.
        let directory = start(Path::new("/tmp"));
        assert_eq!(directory.unwrap_err().raw_os_error(), Some(libc::EACCES));
    }

    #[test]
    fn a_nul_inside_is_refused() {
        let (stdin, _ours) = pipe();
        let (_ours, stdout) = pipe();
        let refused = |args: &[OsString], env: &[(OsString, OsString)], cwd: Option<&Path>| {
            let e = spawn(&Spawn {
                program: Path::new("/bin/sh"),
                arg0: OsStr::new("sh"),
                args,
                env,
                cwd,
                stdin: stdin.as_fd(),
                stdout: stdout.as_fd(),
                stderr: ChildStderr::DevNull,
            })
            .unwrap_err();
            e.kind() == io::ErrorKind::InvalidInput && e.raw_os_error().is_none()
        };
        assert!(refused(&[OsString::from("a\0b")], &[], None));
        let var = (OsString::from("A"), OsString::from("x\0y"));
        assert!(refused(&[], &[var], None));
        assert!(refused(&[], &[], Some(Path::new("/t\0mp"))));
    }
}
