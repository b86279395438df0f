//! The POSIX I/O helpers through the C ABI: pipes, socketpairs, non-blocking
//! descriptors, end of file, errors. (Signals: tests/posix_signals.rs.)
#![cfg(all(unix, os_io, feature = "capi"))]

use std::ffi::c_int;
use std::ptr;
use std::thread;

use mcp_stdio::ffi::*;
use McpStatus::*;

fn pipe() -> (c_int, c_int) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn close(fd: c_int) {
    unsafe { libc::close(fd) };
}

fn set_nonblocking(fd: c_int) {
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        assert_eq!(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK), 0);
    }
}

fn write_all(fd: c_int, data: &[u8]) -> McpStatus {
    unsafe { mcp_write_all(fd, data.as_ptr(), data.len()) }
}

/// Reads `fd` with mcp_line_reader_read_fd until end of stream; returns every
/// message (copied) and the byte count.
fn read_to_end(fd: c_int) -> (Vec<Vec<u8>>, usize) {
    unsafe {
        let r = mcp_line_reader_new();
        let mut messages = Vec::new();
        let mut total = 0;
        let mut m = McpMessage {
            kind: 0,
            rpc_kind: 0,
            data: ptr::null(),
            len: 0,
        };
        loop {
            let mut n = usize::MAX;
            let status = mcp_line_reader_read_fd(r, fd, &mut n);
            if status == MCP_STATUS_END_OF_STREAM {
                assert_eq!(n, 0);
                assert_eq!(mcp_line_reader_finish(r), MCP_STATUS_OK);
            } else {
                assert_eq!(status, MCP_STATUS_OK);
                assert!(n > 0 && n <= 64 << 10, "{n}");
                total += n;
            }
            while mcp_line_reader_next_message(r, &mut m) == MCP_STATUS_OK {
                assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_JSON as i32);
                messages.push(std::slice::from_raw_parts(m.data, m.len).to_vec());
            }
            if status == MCP_STATUS_END_OF_STREAM {
                mcp_line_reader_free(r);
                return (messages, total);
            }
        }
    }
}

#[test]
fn reads_a_pipe_in_pieces_and_reports_end_of_stream() {
    let (rd, wr) = pipe();
    unsafe {
        let r = mcp_line_reader_new();
        assert_eq!(write_all(wr, b"{\"a\":1}\n{\"b\""), MCP_STATUS_OK);
        let mut n = 0;
        assert_eq!(mcp_line_reader_read_fd(r, rd, &mut n), MCP_STATUS_OK);
        assert_eq!(n, 12);
        let mut m = McpMessage {
            kind: -1,
            rpc_kind: -1,
            data: ptr::null(),
            len: 0,
        };
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(std::slice::from_raw_parts(m.data, m.len), b"{\"a\":1}");
        assert_eq!(
            mcp_line_reader_next_message(r, &mut m),
            MCP_STATUS_NO_MESSAGE
        );
        assert_eq!(mcp_line_reader_buffered_len(r), 4);

        assert_eq!(write_all(wr, b":2}"), MCP_STATUS_OK);
        close(wr);
        // nread is optional.
        assert_eq!(
            mcp_line_reader_read_fd(r, rd, ptr::null_mut()),
            MCP_STATUS_OK
        );
        assert_eq!(
            mcp_line_reader_read_fd(r, rd, &mut n),
            MCP_STATUS_END_OF_STREAM
        );
        assert_eq!(n, 0);
        assert_eq!(
            mcp_line_reader_next_message(r, &mut m),
            MCP_STATUS_NO_MESSAGE
        );
        assert_eq!(mcp_line_reader_finish(r), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(std::slice::from_raw_parts(m.data, m.len), b"{\"b\":2}");
        mcp_line_reader_free(r);
    }
    close(rd);
}

#[test]
fn a_non_blocking_descriptor_with_nothing_says_would_block() {
    let (rd, wr) = pipe();
    set_nonblocking(rd);
    unsafe {
        let r = mcp_line_reader_new();
        let mut n = 99;
        assert_eq!(
            mcp_line_reader_read_fd(r, rd, &mut n),
            MCP_STATUS_WOULD_BLOCK
        );
        assert_eq!(n, 0);
        assert_eq!(write_all(wr, b"[1]\n"), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_read_fd(r, rd, &mut n), MCP_STATUS_OK);
        assert_eq!(n, 4);
        assert_eq!(
            mcp_line_reader_read_fd(r, rd, &mut n),
            MCP_STATUS_WOULD_BLOCK
        );
        close(wr);
        assert_eq!(
            mcp_line_reader_read_fd(r, rd, &mut n),
            MCP_STATUS_END_OF_STREAM
        );
        mcp_line_reader_free(r);
    }
    close(rd);
}

#[test]
fn system_errors_are_reported_with_errno() {
    unsafe {
        let r = mcp_line_reader_new();
        let mut n = 99;
        assert_eq!(mcp_line_reader_read_fd(r, -1, &mut n), MCP_STATUS_IO_ERROR);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EBADF)
        );
        assert_eq!(n, 0);
        // The reader is still usable.
        assert_eq!(mcp_line_reader_feed(r, b"1\n".as_ptr(), 2), MCP_STATUS_OK);
        mcp_line_reader_free(r);
        assert_eq!(write_all(-1, b"x"), MCP_STATUS_IO_ERROR);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EBADF)
        );
    }
}

#[test]
fn null_and_empty_arguments() {
    unsafe {
        let mut n = 7;
        assert_eq!(
            mcp_line_reader_read_fd(ptr::null_mut(), 0, &mut n),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(n, 0, "a count is written on every return");
        assert_eq!(
            mcp_write_all(-1, ptr::null(), 0),
            MCP_STATUS_OK,
            "nothing to write"
        );
        assert_eq!(mcp_write_all(1, ptr::null(), 5), MCP_STATUS_NULL_ARGUMENT);
    }
}

#[test]
fn megabytes_through_a_pipe_arrive_whole_and_in_order() {
    let (rd, wr) = pipe();
    let lines: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("{{\"id\":{i},\"pad\":\"{}\"}}", "x".repeat(i * 7 % 9000)).into_bytes())
        .collect();
    let stream: Vec<u8> = lines
        .iter()
        .flat_map(|l| [&l[..], b"\n"].concat())
        .collect();
    let expected_len = stream.len();
    let writer = thread::spawn(move || {
        // Uneven pieces, each written whole by mcp_write_all (pipes take 64 KiB at a time).
        for piece in stream.chunks(100_003) {
            assert_eq!(write_all(wr, piece), MCP_STATUS_OK);
        }
        close(wr);
    });
    let (messages, total) = read_to_end(rd);
    writer.join().unwrap();
    close(rd);
    assert_eq!(total, expected_len);
    assert_eq!(messages, lines);
}

#[test]
fn write_all_waits_out_a_full_non_blocking_pipe() {
    let (rd, wr) = pipe();
    set_nonblocking(wr);
    let big = format!("[\"{}\"]\n", "y".repeat(3 << 20)).into_bytes();
    let reader = thread::spawn(move || read_to_end(rd));
    // 3 MiB into a 64 KiB pipe: EAGAIN many times, each waited out with poll.
    assert_eq!(write_all(wr, &big), MCP_STATUS_OK);
    close(wr);
    let (messages, total) = reader.join().unwrap();
    close(rd);
    assert_eq!(total, big.len());
    assert_eq!(messages, vec![big[..big.len() - 1].to_vec()]);
}

fn write_all_deadline(fd: c_int, data: &[u8], timeout_ms: i32) -> (McpStatus, usize) {
    let mut written = usize::MAX;
    let status =
        unsafe { mcp_write_all_deadline(fd, data.as_ptr(), data.len(), timeout_ms, &mut written) };
    (status, written)
}

/// A peer that never reads cannot hang a write with a deadline, blocking
/// descriptor or not; what was written is reported, and the rest can follow.
#[test]
fn write_all_deadline_gives_up_on_a_peer_that_does_not_read() {
    for nonblocking in [false, true] {
        let (rd, wr) = pipe();
        if nonblocking {
            set_nonblocking(wr);
        }
        let big = format!("[\"{}\"]\n", "d".repeat(1 << 20)).into_bytes();
        let start = std::time::Instant::now();
        let (status, written) = write_all_deadline(wr, &big, 50);
        assert_eq!(status, MCP_STATUS_TIMED_OUT, "nonblocking: {nonblocking}");
        assert!(start.elapsed() >= std::time::Duration::from_millis(50));
        assert!(written > 0 && written < big.len(), "{written}");
        // Nothing more fits now: a zero timeout gives up at once.
        assert_eq!(
            write_all_deadline(wr, &big[written..], 0),
            (MCP_STATUS_TIMED_OUT, 0)
        );
        // With a reader, the rest goes through and the line arrives whole.
        let reader = thread::spawn(move || read_to_end(rd));
        assert_eq!(
            write_all_deadline(wr, &big[written..], -1),
            (MCP_STATUS_OK, big.len() - written)
        );
        close(wr);
        let (messages, total) = reader.join().unwrap();
        close(rd);
        assert_eq!(total, big.len());
        assert_eq!(messages, vec![big[..big.len() - 1].to_vec()]);
    }
}

#[test]
fn write_all_deadline_reports_every_outcome_with_a_count() {
    let (rd, wr) = pipe();
    // Room enough: done at once, even with a zero timeout.
    assert_eq!(write_all_deadline(wr, b"[1]\n", 0), (MCP_STATUS_OK, 4));
    close(rd);
    // A closed peer: broken pipe, nothing written.
    assert_eq!(
        write_all_deadline(wr, b"[2]\n", 1000),
        (MCP_STATUS_BROKEN_PIPE, 0)
    );
    close(wr);
    assert_eq!(write_all_deadline(-1, b"x", 10), (MCP_STATUS_IO_ERROR, 0));
    let mut written = 9;
    let status = unsafe { mcp_write_all_deadline(1, ptr::null(), 5, 10, &mut written) };
    assert_eq!((status, written), (MCP_STATUS_NULL_ARGUMENT, 0));
    let status = unsafe { mcp_write_all_deadline(-1, ptr::null(), 0, 10, ptr::null_mut()) };
    assert_eq!(status, MCP_STATUS_OK, "nothing to write, no count wanted");
}

#[test]
fn socketpairs_work_both_ways() {
    let mut sv = [0; 2];
    assert_eq!(
        unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, sv.as_mut_ptr()) },
        0
    );
    let (a, b) = (sv[0], sv[1]);
    let echo = thread::spawn(move || {
        // Echo every message back, then close.
        let (messages, _) = read_to_end(b);
        for m in messages {
            assert_eq!(write_all(b, &[&m[..], b"\n"].concat()), MCP_STATUS_OK);
        }
        close(b);
    });
    let sent = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n{\"n\":2}\n";
    assert_eq!(write_all(a, sent), MCP_STATUS_OK);
    unsafe { libc::shutdown(a, libc::SHUT_WR) };
    let (messages, _) = read_to_end(a);
    echo.join().unwrap();
    close(a);
    assert_eq!(
        messages.concat(),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}{\"n\":2}"
    );
}
