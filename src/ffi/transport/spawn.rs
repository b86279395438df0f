//! `mcp_transport_spawn` ([`Connection::spawn`]), `pid`, `stderr_dropped`.

use super::super::command::McpCommand;
use super::super::McpBuffer;
use super::{lock, McpStatus, McpTransport};
use crate::Connection;

/// `mcp_transport_spawn` flag (Linux): the server is sent SIGKILL when the
/// thread that spawned it ends (the host exits or crashes), through
/// `PR_SET_PDEATHSIG`. Spawn from a thread that lives as long as the
/// server should. Elsewhere `MCP_STATUS_INVALID_ARGUMENT`.
pub const MCP_TRANSPORT_KILL_ON_HOST_EXIT: u32 = 1 << 2;

/// `mcp_transport_spawn` flag (Windows): a console program gets a console
/// window (by default it gets none, `CREATE_NO_WINDOW`, so that no window
/// flashes from a GUI host). Elsewhere `MCP_STATUS_INVALID_ARGUMENT`.
pub const MCP_TRANSPORT_CONSOLE_WINDOW: u32 = 1 << 3;

/// Starts an MCP server as a child process and returns a transport on its
/// stdin and stdout. The program is looked up in the `PATH` the server
/// gets (see `mcp_command_new`); it runs in its own process group, with an
/// empty signal mask, every signal at its default (also those the host
/// ignores, SIGPIPE and SIGTERM included), and no descriptor of the host
/// but the three it is given (all others are made close-on-exec in the
/// child). Its stderr goes where `mcp_command_stderr` says. The transport
/// owns the pipes and the process; no thread is started and no signal
/// handler installed.
///
/// Then, besides the rules of every transport:
/// - `mcp_transport_close(t, grace_ms)` begins the MCP shutdown: what is
///   queued is written and the server's stdin closed (at the latest at the
///   grace), SIGTERM goes to its process group at `grace_ms` if it has not
///   exited, SIGKILL at twice `grace_ms`. `next_event` drives it; answers
///   still arriving are delivered.
/// - `MCP_EVENT_CLOSED` comes once the server has exited and its stdout and
///   stderr have ended, or once its group was sent SIGKILL and the server's
///   exit was seen (a grandchild holding the pipes cannot keep it open; a
///   server stuck in the kernel, or held by a tracer, is waited for 1 s);
///   pending requests get `MCP_EVENT_REQUEST_FAILED` just before.
///   `exit_code` and `term_signal` say how it ended (-1 and 0: unknown).
/// - A server that exits by itself, or closes its stdout, closes the
///   transport the same way (with a 2 s grace: its stdin is closed, SIGTERM
///   comes 2 s later if it still runs, SIGKILL 4 s later), unless its
///   command has a restart policy (`mcp_command_restart`): then it is
///   started again on this transport (`MCP_EVENT_RESTARTED`), and closed
///   this way only when the policy gives up.
/// - `mcp_transport_free` on an open transport closes it with a 2 s grace
///   (or on an earlier close's schedule) and waits: at most about twice the
///   grace plus 1 s. The server is reaped, whatever the order of calls; one
///   that cannot be reaped by then (a tracer holds it, it is stuck in the
///   kernel) is not waited for: the next `mcp_transport_spawn` or
///   `mcp_transport_free` of any transport reaps it once it can.
///
/// What the host must know:
/// - The server's pid is also its process group's id. Its exit is noticed
///   without reaping it: until no group signal is to come (the transport
///   ended, or SIGKILL was sent), the exited server stays a zombie, which
///   keeps that id from being given to another process, so that the
///   shutdown signals can only reach the server's own group.
/// - A host whose own SIGCHLD handler reaps children (`waitpid(-1, ...)`),
///   or that ignores SIGCHLD (or sets `SA_NOCLDWAIT`), takes the server's
///   exit status (`CLOSED` then says -1 and 0) and frees its pid, and the
///   group's id, as soon as it exits. The library signals the group through
///   the server's pidfd, which names that group and no other, whatever
///   became of the number (Linux 6.9+); on older kernels by the number only
///   while it sees the server unreaped, and once the server is reaped
///   behind its back, not at all: what the server left running is then not
///   reached.
/// - Descendants that leave the server's process group (`setsid`,
///   `setpgid`: daemons, some wrappers) are not reached by the shutdown
///   signals, and the library does nothing more about them: once the server
///   is gone and its group sent SIGKILL, `CLOSED` comes even while they
///   still hold its stdout or stderr.
/// - A host that forks without exec while a transport is open gives its
///   child copies of the server's pipes (they are close-on-exec, not
///   close-on-fork): the server sees no end of its stdin until that child
///   exits or execs.
/// - The library's descriptors (pipes, the wake-up, the pidfd,
///   `/dev/null`) never take the numbers 0, 1, 2, also in a host that
///   closed them; the server gets its stdin, stdout and stderr as 0, 1, 2
///   whatever the host closed (`/dev/null` as stderr with
///   `MCP_STDERR_INHERIT` in a host without one).
///
/// Windows: the program is found in the server's `PATH` with its
/// `PATHEXT` (`npx` is `npx.cmd`); a `.cmd` or `.bat` runs through
/// `cmd.exe` with its arguments escaped so that none can inject a command
/// (one that cannot be escaped, a line break, gives
/// `MCP_STATUS_INVALID_ARGUMENT`). The server gets exactly its three stdio
/// handles (`PROC_THREAD_ATTRIBUTE_HANDLE_LIST`) and is in a Job Object
/// with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` from its first instruction,
/// held by the transport: everything the server starts joins it, and the
/// host's exit, however it happens, ends the whole tree. There is no
/// SIGTERM: `mcp_transport_close` closes the server's stdin and terminates
/// the job at `grace_ms` (exit code 1; `term_signal` is always 0). No
/// console window, unless `MCP_TRANSPORT_CONSOLE_WINDOW`. Nothing is killed
/// by process id. Another component of the host that starts a process with
/// inheritable handles and no handle list during the spawn could inherit
/// the server's pipe ends (they are inheritable for the duration of the
/// `CreateProcessW` call only).
///
/// `flags`: 0, `MCP_TRANSPORT_KILL_ON_HOST_EXIT` (Linux),
/// `MCP_TRANSPORT_CONSOLE_WINDOW` (Windows).
///
/// Returns `MCP_STATUS_OK` and the transport in `*out`, or, with nothing
/// started and nothing left behind (no process, no descriptor):
/// `MCP_STATUS_NULL_ARGUMENT` (cmd or out NULL), `MCP_STATUS_UNKNOWN_FLAGS`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a flag meaning nothing here; an
/// environment name empty or holding `=`; on Windows also an argument a
/// batch file cannot be given safely), `MCP_STATUS_EMPTY_PROGRAM`,
/// `MCP_STATUS_SPAWN_FAILED` (`errno` says why: ENOENT for a program not
/// found or a missing working directory, EACCES, E2BIG, EMFILE...; on
/// Windows `GetLastError()`: `ERROR_FILE_NOT_FOUND` (2), `ERROR_DIRECTORY`
/// (267), ...; `mcp_command_spawn_error` says it in words, naming the
/// program and the `PATH` searched), `MCP_STATUS_OUT_OF_MEMORY`. Thread-safe (`cmd` is only read).
///
/// macOS and the BSDs: nothing ends the server when the host dies (there
/// is no `PR_SET_PDEATHSIG` and no job): free the transport before the
/// host exits.
///
/// # Safety
/// `cmd` is NULL or a live command not changed during the call; `out` is
/// NULL or points to writable memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_spawn(
    cmd: *const McpCommand,
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_spawn, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        // SAFETY: NULL or live and unchanged, by the caller's contract.
        let Some(cmd) = (unsafe { cmd.as_ref() }) else {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        // Both flags are known everywhere; each means something on its own
        // platform only (elsewhere: an invalid argument, not an unknown bit).
        if flags & !(MCP_TRANSPORT_KILL_ON_HOST_EXIT | MCP_TRANSPORT_CONSOLE_WINDOW) != 0 {
            return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
        }
        if flags & MCP_TRANSPORT_CONSOLE_WINDOW != 0 && !cfg!(windows) {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let kill_on_host_exit = flags & MCP_TRANSPORT_KILL_ON_HOST_EXIT != 0;
        let console_window = flags & MCP_TRANSPORT_CONSOLE_WINDOW != 0;
        let spawn = || {
            cmd.0.check()?; // an empty program
            Connection::spawn_with(&cmd.0, kill_on_host_exit, console_window)
        };
        let made = McpTransport::make(spawn);
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { super::hand_out(made, out) }
    })
}

/// The spawned server's process id (on POSIX also its process group's), or
/// -1 for a transport that spawned nothing, and for NULL. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_pid(t: *const McpTransport) -> i32 {
    ffi_boundary!(mcp_transport_pid, -1, {
        // SAFETY: forwarded caller contract.
        match unsafe { lock(t) } {
            Ok((_, inner)) => inner.pid().map_or(-1, |pid| pid as i32),
            Err(_) => -1,
        }
    })
}

/// How many times the spawned server was started again by its command's
/// restart policy (`mcp_command_restart`): after `MCP_EVENT_RESTARTED`,
/// that restart's number (1 for the first). 0 for a transport that never
/// restarted, and for NULL. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_restarts(t: *const McpTransport) -> u32 {
    ffi_boundary!(mcp_transport_restarts, 0, {
        // SAFETY: forwarded caller contract.
        match unsafe { lock(t) } {
            Ok((_, inner)) => inner.restarts(),
            Err(_) => 0,
        }
    })
}

/// The bytes of the spawned server's stderr lines dropped because more
/// than 1 MiB waited undelivered (newlines included); 0 for NULL and for
/// transports without stderr events. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_stderr_dropped(t: *const McpTransport) -> u64 {
    ffi_boundary!(mcp_transport_stderr_dropped, 0, {
        // SAFETY: forwarded caller contract.
        match unsafe { lock(t) } {
            Ok((_, inner)) => inner.stderr_dropped(),
            Err(_) => 0,
        }
    })
}

/// The last lines the spawned server wrote to its stderr, oldest first,
/// each ending in `\n` (a `\r\n` end as `\n`; the last bytes before the end
/// of the stream get one too): at most 20 lines and 4 KiB (a single longer
/// line keeps its last 4 KiB), whether they were taken as
/// `MCP_EVENT_STDERR` events or dropped. Kept after the server is gone,
/// until the transport is freed: what a host shows when a server dies
/// ("ModuleNotFoundError: ...", "npm ERR! 404"). Empty for a transport that
/// spawned nothing, and with `MCP_STDERR_INHERIT` or `MCP_STDERR_DISCARD`,
/// where the library does not read the server's stderr.
///
/// Writes the text to `*out` (free it with `mcp_buffer_free`; an empty
/// buffer holds no allocation). Returns `MCP_STATUS_OK`,
/// `MCP_STATUS_NULL_ARGUMENT` (t or out NULL), `MCP_STATUS_OUT_OF_MEMORY`
/// or `MCP_STATUS_POISONED`. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `out` is NULL or points to a writable
/// `McpBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_stderr_tail(
    t: *const McpTransport,
    out: *mut McpBuffer,
) -> McpStatus {
    ffi_boundary!(mcp_transport_stderr_tail, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let inner = match unsafe { lock(t) } {
            Ok((_, inner)) => inner,
            Err(status) => return status,
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        let mut text = Vec::new();
        if text.try_reserve(4 << 10).is_err() {
            return McpStatus::MCP_STATUS_OUT_OF_MEMORY;
        }
        inner.stderr_tail_into(&mut text);
        drop(inner);
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { out.write(McpBuffer::from_vec(text)) };
        McpStatus::MCP_STATUS_OK
    })
}
