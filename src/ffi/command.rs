//! `McpCommand`: what `mcp_transport_spawn` starts, built like
//! `std::process::Command` (program, arguments, environment, directory,
//! stderr). POSIX and Windows.

use std::ffi::{c_char, CStr, OsString};
use std::path::PathBuf;
use std::ptr;
use std::time::Duration;

use super::boundary::fault_point;
use super::buffer::McpBuffer;
use super::McpStatus;
use crate::process::command::{Command, EnvMode, StderrMode};
use crate::process::restart::RestartPolicy;
use crate::process::spawn_error::spawn_error;

/// How a spawned server's environment starts, before the
/// `mcp_command_env` entries are laid over it.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpEnvMode {
    /// Only the host's variables that a server needs to run and no secret:
    /// `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` (the MCP SDKs'
    /// list), and `LANG`, `LC_ALL`, `LC_CTYPE`, `TZ`, `TMPDIR` (so that text,
    /// times and temporary files behave as on the host). Values that start
    /// with `()` (exported shell functions) are left out. On Windows:
    /// `APPDATA`, `COMSPEC`, `HOMEDRIVE`, `HOMEPATH`, `LOCALAPPDATA`, `PATH`,
    /// `PATHEXT`, `PROCESSOR_ARCHITECTURE`, `PROGRAMFILES`, `SYSTEMDRIVE`,
    /// `SYSTEMROOT`, `TEMP`, `TMP`, `USERNAME`, `USERPROFILE`, `WINDIR`
    /// (names compared without case). The default.
    MCP_ENV_DEFAULT = 0,
    /// Every variable of the host.
    MCP_ENV_INHERIT = 1,
    /// No variable: only the `mcp_command_env` entries.
    MCP_ENV_CLEAR = 2,
}

/// Where a spawned server's stderr goes.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpStderrMode {
    /// To the host as `MCP_EVENT_STDERR` events, one per line (the default).
    /// Always drained, so a chatty server never blocks on it; lines longer
    /// than 64 KiB come in pieces of 64 KiB, and at most 1 MiB waits
    /// undelivered: beyond it the oldest lines are dropped and counted
    /// (`mcp_transport_stderr_dropped`).
    MCP_STDERR_EVENTS = 0,
    /// The host's own stderr.
    MCP_STDERR_INHERIT = 1,
    /// Nowhere (`/dev/null`, `NUL` on Windows).
    MCP_STDERR_DISCARD = 2,
}

/// A command to spawn as an MCP server (opaque): create it with
/// `mcp_command_new`, add to it, pass it to `mcp_transport_spawn` (as often
/// as you like; with `mcp_command_restart` the transport starts the server
/// again by itself when it ends unexpectedly), free it with
/// `mcp_command_free`. One thread at a time.
#[derive(Debug)]
pub struct McpCommand(pub(crate) Command);

/// A NUL-terminated argument as an `OsString`; NULL is an error.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
unsafe fn os_string(text: *const c_char) -> Result<OsString, McpStatus> {
    if text.is_null() {
        return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
    }
    // SAFETY: non-null and NUL-terminated, by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    #[cfg(unix)]
    return Ok(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes).to_os_string());
    // Windows: UTF-8, converted to UTF-16 for the system.
    #[cfg(windows)]
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(OsString::from(text)),
        Err(_) => Err(McpStatus::MCP_STATUS_INVALID_TEXT),
    }
}

/// Runs `change` on the command behind `cmd` (NULL: `MCP_STATUS_NULL_ARGUMENT`).
///
/// # Safety
/// `cmd` is NULL or a live command not used by another thread.
unsafe fn with_command(
    cmd: *mut McpCommand,
    change: impl FnOnce(&mut Command) -> Result<(), McpStatus>,
) -> McpStatus {
    // SAFETY: NULL or live and unaliased, by the caller's contract.
    let Some(cmd) = (unsafe { cmd.as_mut() }) else {
        return McpStatus::MCP_STATUS_NULL_ARGUMENT;
    };
    fault_point();
    match change(&mut cmd.0) {
        Ok(()) => McpStatus::MCP_STATUS_OK,
        Err(status) => status,
    }
}

/// Creates a command that runs `program`: a name looked up in the `PATH`
/// the server will get (after the environment mode and the overlays; the
/// host's `PATH` when the server gets none), or a path with a `/`. A
/// relative path, and a name found through a relative `PATH` entry, are
/// taken from the server's working directory (`mcp_command_cwd`), as a
/// shell's `cd dir && program` would. No arguments, `MCP_ENV_DEFAULT`, the
/// host's working directory, `MCP_STDERR_EVENTS`.
///
/// Returns a new command owned by the caller (free it with
/// `mcp_command_free`), or NULL when `program` is NULL (on Windows also
/// when it is not valid UTF-8) or memory is short. An empty program is
/// refused by `mcp_transport_spawn` (`MCP_STATUS_EMPTY_PROGRAM`).
/// Thread-safe.
///
/// # Safety
/// `program` is NULL or a NUL-terminated string (copied).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_new(program: *const c_char) -> *mut McpCommand {
    ffi_boundary!(mcp_command_new, ptr::null_mut(), {
        fault_point();
        // SAFETY: forwarded caller contract.
        let Ok(program) = (unsafe { os_string(program) }) else {
            return ptr::null_mut();
        };
        Box::into_raw(Box::new(McpCommand(Command::new(&program))))
    })
}

/// Appends one argument (copied; any bytes but NUL).
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd or arg NULL) or,
/// on Windows, `MCP_STATUS_INVALID_TEXT` (not valid UTF-8).
///
/// # Safety
/// `cmd` is NULL or a live command; `arg` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_arg(cmd: *mut McpCommand, arg: *const c_char) -> McpStatus {
    ffi_boundary!(mcp_command_arg, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                cmd.args.push(os_string(arg)?);
                Ok(())
            })
        }
    })
}

/// Sets the variable `name` to `value` in the server's environment, over
/// what the mode gives; `value` NULL removes `name`. Later calls for the
/// same name win.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd or name NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (`name` empty or containing `=`) or, on
/// Windows, `MCP_STATUS_INVALID_TEXT` (not valid UTF-8).
///
/// # Safety
/// `cmd` is NULL or a live command; `name` and `value` are NULL or
/// NUL-terminated (copied).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_env(
    cmd: *mut McpCommand,
    name: *const c_char,
    value: *const c_char,
) -> McpStatus {
    ffi_boundary!(mcp_command_env, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                let name = os_string(name)?;
                if name.is_empty() || name.as_encoded_bytes().contains(&b'=') {
                    return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT);
                }
                let value = if value.is_null() {
                    None
                } else {
                    Some(os_string(value)?)
                };
                cmd.env.push((name, value));
                Ok(())
            })
        }
    })
}

/// Sets how the server's environment starts: an `McpEnvMode`.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd NULL) or
/// `MCP_STATUS_INVALID_ARGUMENT` (not a mode).
///
/// # Safety
/// `cmd` is NULL or a live command.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_env_mode(cmd: *mut McpCommand, mode: i32) -> McpStatus {
    ffi_boundary!(mcp_command_env_mode, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                cmd.env_mode = match mode {
                    0 => EnvMode::Default,
                    1 => EnvMode::Inherit,
                    2 => EnvMode::Clear,
                    _ => return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT),
                };
                Ok(())
            })
        }
    })
}

/// Sets the server's working directory (copied; a relative one is taken
/// from the host's; checked when spawning: a missing one is
/// `MCP_STATUS_SPAWN_FAILED` with `errno` ENOENT). A relative program path
/// is found from there (see `mcp_command_new`).
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd or dir NULL) or,
/// on Windows, `MCP_STATUS_INVALID_TEXT` (not valid UTF-8).
///
/// # Safety
/// `cmd` is NULL or a live command; `dir` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_cwd(cmd: *mut McpCommand, dir: *const c_char) -> McpStatus {
    ffi_boundary!(mcp_command_cwd, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                cmd.cwd = Some(PathBuf::from(os_string(dir)?));
                Ok(())
            })
        }
    })
}

/// Sets where the server's stderr goes: an `McpStderrMode`.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd NULL) or
/// `MCP_STATUS_INVALID_ARGUMENT` (not a mode).
///
/// # Safety
/// `cmd` is NULL or a live command.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_stderr(cmd: *mut McpCommand, mode: i32) -> McpStatus {
    ffi_boundary!(mcp_command_stderr, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                cmd.stderr = match mode {
                    0 => StderrMode::Events,
                    1 => StderrMode::Inherit,
                    2 => StderrMode::Discard,
                    _ => return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT),
                };
                Ok(())
            })
        }
    })
}

/// Sets the restart policy of the transports spawned from `cmd` from now
/// on: when the server ends unexpectedly (it exits, is killed from
/// outside, closes its stdout or stops reading its stdin, while the host
/// has not closed the transport), its pending requests fail at once with
/// the reason (`MCP_EVENT_REQUEST_FAILED`), its last stderr lines are
/// delivered, and after a wait the same command is spawned again:
/// `MCP_EVENT_RESTARTED` says so, on the same transport (request ids go
/// on); the host does its handshake again. Sends between the end and that
/// event return `MCP_STATUS_RESTARTING`. Never after the host's
/// `mcp_transport_close` or `mcp_transport_free`; never two at once.
///
/// - `max_restarts`: the most restarts in the transport's life (0: none,
///   the default; `UINT32_MAX`: no limit but the crash loop's);
/// - `backoff_ms`: the wait between an end and its restart, doubled for
///   every other end within the crash-loop window before it, up to
///   `max_backoff_ms`;
/// - `crash_loop_exits`, `crash_loop_window_ms`: that many ends within
///   that window (the last counted) are a crash loop: no restart follows,
///   and the transport ends as it would without a policy, with the last
///   reason (0 exits: no such check).
///
/// Suggested (what the Rust API's `RestartPolicy::new()` holds): 10
/// restarts, 250 ms doubling up to 8000 ms, 5 ends within 60000 ms. A
/// restart whose spawn fails ends the transport the same way
/// (`mcp_transport_end_text` then says why it could not start).
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (cmd NULL) or
/// `MCP_STATUS_INVALID_ARGUMENT` (`max_backoff_ms` below `backoff_ms`).
///
/// # Safety
/// `cmd` is NULL or a live command.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_restart(
    cmd: *mut McpCommand,
    max_restarts: u32,
    backoff_ms: u32,
    max_backoff_ms: u32,
    crash_loop_exits: u32,
    crash_loop_window_ms: u32,
) -> McpStatus {
    ffi_boundary!(mcp_command_restart, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_command(cmd, |cmd| {
                if max_backoff_ms < backoff_ms {
                    return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT);
                }
                let ms = |n: u32| Duration::from_millis(n.into());
                cmd.restart = (max_restarts > 0).then(|| {
                    RestartPolicy::new()
                        .max_restarts(max_restarts)
                        .backoff(ms(backoff_ms), ms(max_backoff_ms))
                        .crash_loop(crash_loop_exits, ms(crash_loop_window_ms))
                });
                Ok(())
            })
        }
    })
}

/// Frees a command (transports spawned from it are not affected). NULL is
/// a no-op.
///
/// # Safety
/// `cmd` is NULL or a live command, not used during or after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_free(cmd: *mut McpCommand) {
    ffi_boundary!(mcp_command_free, (), {
        if !cmd.is_null() {
            // SAFETY: made by `mcp_command_new` (a Box), not freed before.
            drop(unsafe { Box::from_raw(cmd) });
            fault_point();
        }
    })
}

/// Why `cmd` could not be started, in words naming the program, from the
/// code that came with `MCP_STATUS_SPAWN_FAILED` (`errno`; on Windows
/// `GetLastError()`): "cannot start `npx`: not found in PATH (searched:
/// /usr/local/bin, /usr/bin, /bin)" (the `PATH` the server would get, or
/// the host's when it gets none), "cannot start `server`: working
/// directory `/srv/x`: No such file or directory (os error 2)", "cannot
/// start `./server.py`: Permission denied (os error 13)". Read it right
/// after the failed spawn: it looks at the command and the file system
/// again. Valid UTF-8, not NUL-terminated.
///
/// Writes the text to `*out` (free it with `mcp_buffer_free`). Returns
/// `MCP_STATUS_OK` or `MCP_STATUS_NULL_ARGUMENT` (cmd or out NULL). (The
/// text is allocated as Rust allocates: should that fail, the process
/// aborts.) Thread-safe (`cmd` is only read).
///
/// # Safety
/// `cmd` is NULL or a live command; `out` is NULL or points to a writable
/// `McpBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_command_spawn_error(
    cmd: *const McpCommand,
    os_error: i32,
    out: *mut McpBuffer,
) -> McpStatus {
    ffi_boundary!(mcp_command_spawn_error, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        // SAFETY: NULL or live, by the caller's contract; only read.
        let Some(McpCommand(cmd)) = (unsafe { cmd.as_ref() }) else {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        let text = spawn_error(cmd, os_error).to_string();
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { out.write(McpBuffer::from_vec(text.into_bytes())) };
        McpStatus::MCP_STATUS_OK
    })
}
