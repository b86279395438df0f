//! The bounded output queue: framed lines waiting for the driver to write them.
//!
//! One buffer: bytes before `head` are written (consumed), `head..` waits.
//! Lines are encoded straight into it, so a message costs no allocation once
//! the buffer has grown to the traffic. Consumed space is reclaimed when the
//! queue empties, or by moving the waiting bytes to the front when consumed
//! space outgrows them (each byte moves at most once per time it is outgrown:
//! amortised O(1) a byte).

use crate::error::Error;

/// The bound a new queue starts with: 64 MiB.
const DEFAULT_MAX_QUEUED: usize = 64 << 20;

/// Whether an appended line counts against the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Refused with `WouldBlock` when it does not fit (unless the queue is empty).
    Enforced,
    /// Queued whatever the bound (cancellation notifications).
    Bypassed,
}

#[derive(Debug)]
pub(crate) struct OutputQueue {
    buf: Vec<u8>,
    head: usize,
    max: usize,
}

impl OutputQueue {
    pub(crate) fn new() -> Self {
        OutputQueue {
            buf: Vec::new(),
            head: 0,
            max: DEFAULT_MAX_QUEUED,
        }
    }

    pub(crate) fn max(&self) -> usize {
        self.max
    }

    pub(crate) fn set_max(&mut self, max: usize) -> Result<(), Error> {
        if max == 0 {
            return Err(Error::InvalidArgument);
        }
        self.max = max;
        Ok(())
    }

    /// The bytes waiting to be written.
    pub(crate) fn output(&self) -> &[u8] {
        &self.buf[self.head..]
    }

    /// Marks the first `n` waiting bytes written (at most all of them).
    pub(crate) fn consume(&mut self, n: usize) {
        self.head += n.min(self.buf.len() - self.head);
        if self.head == self.buf.len() {
            self.buf.clear();
            self.head = 0;
        }
    }

    /// Appends everything waiting to `out` and empties the queue. On
    /// `OutOfMemory` nothing moved.
    pub(crate) fn take(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        let waiting = self.output();
        out.try_reserve(waiting.len())
            .map_err(|_| Error::OutOfMemory)?;
        out.extend_from_slice(waiting);
        self.consume(usize::MAX);
        Ok(())
    }

    /// Moves the waiting bytes to the front when consumed space outgrows them.
    fn reclaim(&mut self) {
        if self.head > 0 && self.head >= self.buf.len() - self.head {
            self.buf.copy_within(self.head.., 0);
            self.buf.truncate(self.buf.len() - self.head);
            self.head = 0;
        }
    }

    /// Appends one line written by `write` (which appends to the buffer and
    /// may fail). On any error, the queue is as it was. With
    /// [`Bound::Enforced`], a line that would take the queue past its bound
    /// is refused with `WouldBlock`, unless the queue was empty.
    pub(crate) fn append(
        &mut self,
        bound: Bound,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.reclaim();
        let start = self.buf.len();
        let queued = start - self.head;
        let written = write(&mut self.buf).and_then(|()| {
            let framed = self.buf.len() - start;
            if bound == Bound::Enforced && queued > 0 && queued + framed > self.max {
                Err(Error::WouldBlock)
            } else {
                Ok(())
            }
        });
        if written.is_err() {
            self.buf.truncate(start);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &[u8]) -> impl FnOnce(&mut Vec<u8>) -> Result<(), Error> + '_ {
        move |buf| {
            buf.extend_from_slice(text);
            Ok(())
        }
    }

    #[test]
    fn consumed_space_is_reclaimed_and_order_kept() {
        let mut q = OutputQueue::new();
        let mut expected = Vec::new();
        let mut written = Vec::new();
        // Fewer under Miri, which interprets every step; still many compactions.
        let rounds = if cfg!(miri) { 300u32 } else { 10_000 };
        for i in 0..rounds {
            let text = format!("{i}\n");
            q.append(Bound::Enforced, line(text.as_bytes())).unwrap();
            expected.extend_from_slice(text.as_bytes());
            // Write all but a few bytes, so the queue never empties.
            let n = q.output().len().saturating_sub(3);
            written.extend_from_slice(&q.output()[..n]);
            q.consume(n);
            assert!(
                q.buf.capacity() <= 64,
                "consumed space grows: {}",
                q.buf.capacity()
            );
        }
        q.take(&mut written).unwrap();
        assert_eq!(written, expected);
        assert!(q.output().is_empty());
    }

    #[test]
    fn a_failed_write_leaves_the_queue_as_it_was() {
        let mut q = OutputQueue::new();
        q.append(Bound::Enforced, line(b"a\n")).unwrap();
        let failed = q.append(Bound::Enforced, |buf| {
            buf.extend_from_slice(b"half");
            Err(Error::InvalidJson)
        });
        assert_eq!(failed, Err(Error::InvalidJson));
        assert_eq!(q.output(), b"a\n");
    }

    #[test]
    fn consume_is_clamped() {
        let mut q = OutputQueue::new();
        q.append(Bound::Enforced, line(b"abc\n")).unwrap();
        q.consume(100);
        assert!(q.output().is_empty());
    }
}
