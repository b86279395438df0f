//! `send_now`: the line is written by the sending thread, at once, not by
//! the thread in `next_event`; `send` leaves it queued until then. Shown on
//! a pipe whose far end the test reads itself.
#![cfg(all(unix, os_io))]

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};

use mcp_stdio::Connection;

/// A pipe: (read end, write end).
fn pipe() -> (std::fs::File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: two valid ints to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both just made, owned by nobody else.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

/// What the far end holds now, without waiting.
fn available(far: &mut std::fs::File) -> Vec<u8> {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor; O_NONBLOCK set on our own end.
    unsafe {
        let flags = libc::fcntl(far.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(far.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut got = vec![0; 4096];
    match far.read(&mut got) {
        Ok(n) => got[..n].to_vec(),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Vec::new(),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn send_now_writes_at_once_and_send_waits_for_next_event() {
    let (from_peer, peer_writes) = pipe();
    let (mut far, to_peer) = pipe();
    let conn = Connection::open_fds(OwnedFd::from(from_peer), to_peer).unwrap();
    conn.send(br#"{"a": 1}"#).unwrap();
    assert_eq!(available(&mut far), b"", "send only queues");
    conn.send_now(br#"{"b": 2}"#).unwrap();
    assert_eq!(
        available(&mut far),
        b"{\"a\":1}\n{\"b\":2}\n",
        "send_now wrote the queue at once, the earlier line first"
    );
    let sender = conn.sender();
    std::thread::spawn(move || sender.send_now(b"[3]").unwrap())
        .join()
        .unwrap();
    assert_eq!(available(&mut far), b"[3]\n", "from any thread");
    drop(peer_writes);
}
