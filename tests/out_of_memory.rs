//! Allocation failure is a status, never an abort: under an address-space
//! limit, a line nested deep enough that its stack of open containers (one
//! bit a level past 64) cannot be allocated gives `MCP_STATUS_OUT_OF_MEMORY`
//! from `mcp_encode` and `mcp_line_reader_next_message` (and
//! `Err(OutOfMemory)` from `try_next_message`), the process lives on, and
//! the line is still there to take once memory is back.
//!
//! Each case runs in a child process of its own (this program, run again
//! with `MCP_STDIO_OOM_CASE` set), since the limit is process-wide and an
//! abort must fail the case, not the run. No test harness: one thread.

#[cfg(target_os = "linux")]
mod linux {
    use std::process::Command;

    use mcp_stdio::ffi::*;
    use mcp_stdio::{Error, LineReader, Message};
    use McpStatus::*;

    /// Levels of nesting: the stack of containers needs `LEVELS / 8` bytes (2 MiB).
    const LEVELS: usize = 16 << 20;

    fn deep_line() -> Vec<u8> {
        let mut line = vec![b'['; LEVELS];
        line.resize(2 * LEVELS, b']');
        line
    }

    /// The process's address space now, in bytes.
    fn address_space() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmSize:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kib << 10
    }

    /// Lets the address space grow by `room` bytes more, and no more.
    fn limit_growth_to(room: u64) {
        set_limit(address_space() + room);
    }

    fn lift_limit() {
        set_limit(libc::RLIM_INFINITY);
    }

    fn set_limit(bytes: u64) {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_AS, &mut limit), 0);
            limit.rlim_cur = bytes.min(limit.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_AS, &limit), 0);
        }
    }

    /// A small margin: what the stack of a 16M-level line needs is far more.
    const MARGIN: u64 = 256 << 10;

    fn encode_case() -> Result<(), String> {
        let line = deep_line();
        let mut buf = McpBuffer {
            data: std::ptr::null_mut(),
            len: 0,
        };
        // Room for the output line (reserved first), not for the nesting stack.
        limit_growth_to(line.len() as u64 + 4096 + MARGIN);
        let status = unsafe { mcp_encode(line.as_ptr(), line.len(), 0, &mut buf) };
        lift_limit();
        check(status == MCP_STATUS_OUT_OF_MEMORY, format!("{status:?}"))?;
        check(buf.data.is_null(), "no output on failure".into())?;
        let status = unsafe { mcp_encode(line.as_ptr(), line.len(), 0, &mut buf) };
        check(status == MCP_STATUS_OK, format!("after: {status:?}"))?;
        check(buf.len == line.len() + 1, "the whole line".into())?;
        unsafe { mcp_buffer_free(&mut buf) };
        Ok(())
    }

    /// Through the C ABI; `at_finish`: the line ends at finish, not at `\n`.
    fn reader_case(flags: u32, at_finish: bool) -> Result<(), String> {
        unsafe {
            let r = mcp_line_reader_new();
            check(
                mcp_line_reader_set_flags(r, flags) == MCP_STATUS_OK,
                "flags".into(),
            )?;
            let mut line = deep_line();
            if !at_finish {
                line.push(b'\n');
            }
            check(
                mcp_line_reader_feed(r, line.as_ptr(), line.len()) == MCP_STATUS_OK,
                "feed".into(),
            )?;
            if at_finish {
                check(mcp_line_reader_finish(r) == MCP_STATUS_OK, "finish".into())?;
            }
            drop(line);
            let mut m = McpMessage {
                kind: -1,
                rpc_kind: -1,
                data: std::ptr::null(),
                len: 0,
            };
            limit_growth_to(MARGIN);
            let status = mcp_line_reader_next_message(r, &mut m);
            lift_limit();
            check(status == MCP_STATUS_OUT_OF_MEMORY, format!("{status:?}"))?;
            check(m.kind == -1, "*out untouched".into())?;
            // The line is still there, whole.
            let status = mcp_line_reader_next_message(r, &mut m);
            check(status == MCP_STATUS_OK, format!("after: {status:?}"))?;
            let expected = if flags & MCP_READER_JSONRPC != 0 {
                McpMessageKind::MCP_MESSAGE_INVALID_JSONRPC
            } else {
                McpMessageKind::MCP_MESSAGE_JSON
            };
            check(m.kind == expected as i32, format!("kind {}", m.kind))?;
            check(m.len == 2 * LEVELS, format!("len {}", m.len))?;
            let status = mcp_line_reader_next_message(r, &mut m);
            check(status == MCP_STATUS_NO_MESSAGE, format!("then: {status:?}"))?;
            mcp_line_reader_free(r);
        }
        Ok(())
    }

    fn rust_api_case() -> Result<(), String> {
        let mut r = LineReader::new();
        let mut line = deep_line();
        line.push(b'\n');
        r.feed(&line).unwrap();
        drop(line);
        limit_growth_to(MARGIN);
        let first = r.try_next_message().map(|m| m.is_some());
        lift_limit();
        check(first == Err(Error::OutOfMemory), format!("{first:?}"))?;
        match r.try_next_message() {
            Ok(Some(Message::Json { line, .. })) if line.len() == 2 * LEVELS => Ok(()),
            other => Err(format!("after: {:?}", other.map(|m| m.map(|m| m.len())))),
        }
    }

    fn check(ok: bool, what: String) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(what)
        }
    }

    const CASES: &[&str] = &[
        "encode",
        "reader",
        "reader_jsonrpc",
        "reader_line_ended_by_finish",
        "rust_api",
    ];

    fn run_case(case: &str) -> Result<(), String> {
        match case {
            "encode" => encode_case(),
            "reader" => reader_case(0, false),
            "reader_jsonrpc" => reader_case(MCP_READER_JSONRPC, false),
            "reader_line_ended_by_finish" => reader_case(0, true),
            "rust_api" => rust_api_case(),
            _ => Err(format!("no case {case}")),
        }
    }

    pub fn main() {
        if let Ok(case) = std::env::var("MCP_STDIO_OOM_CASE") {
            match run_case(&case) {
                Ok(()) => println!("ok"),
                Err(why) => println!("failed: {why}"),
            }
            return;
        }
        let me = std::env::current_exe().unwrap();
        let mut failed = 0;
        for case in CASES {
            let out = Command::new(&me)
                .env("MCP_STDIO_OOM_CASE", case)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            if out.status.success() && stdout.trim() == "ok" {
                println!("out of memory, {case}: ok");
            } else {
                failed += 1;
                println!(
                    "out of memory, {case}: FAILED ({}): {}{}",
                    out.status,
                    stdout.trim(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        println!("{} passed, {failed} failed", CASES.len() - failed);
        std::process::exit(i32::from(failed > 0));
    }
}

fn main() {
    #[cfg(target_os = "linux")]
    linux::main();
}
