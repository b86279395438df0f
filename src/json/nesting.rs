//! The stack of open containers, one bit per level: the innermost 64 levels
//! in a register, shifted as containers open and close, the levels below
//! them on the heap, a word per 64. Growing the heap part is the only
//! allocation validation makes, and it may fail without aborting.

/// Which containers are open, innermost last.
pub(crate) struct Nesting {
    depth: usize,
    /// The open levels from `64 * spilled.len()` up, the innermost in bit 0:
    /// set for an object, clear for an array.
    top: u64,
    /// Full words of 64 levels each, outermost first, moved out of `top`
    /// when a 65th level opened above them.
    spilled: Vec<u64>,
    /// Growing `spilled` failed: the text is too deep for the memory available.
    out_of_memory: bool,
}

impl Nesting {
    pub(crate) fn new() -> Self {
        Nesting {
            depth: 0,
            top: 0,
            spilled: Vec::new(),
            out_of_memory: false,
        }
    }

    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// True when a [`push`](Self::push) failed for want of memory.
    pub(crate) fn out_of_memory(&self) -> bool {
        self.out_of_memory
    }

    /// Opens a container (an object when `object`). False, with nothing
    /// changed, only when the heap part could not grow.
    #[inline]
    pub(crate) fn push(&mut self, object: bool) -> bool {
        if self.depth.is_multiple_of(64) && self.depth > 0 && !self.spill() {
            return false;
        }
        self.top = self.top << 1 | u64::from(object);
        self.depth += 1;
        true
    }

    /// `top` holds 64 levels: moves them to the heap.
    #[cold]
    fn spill(&mut self) -> bool {
        if self.spilled.try_reserve(1).is_err() {
            self.out_of_memory = true;
            return false;
        }
        self.spilled.push(self.top);
        self.top = 0;
        true
    }

    /// Closes the innermost container. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn pop(&mut self) {
        self.depth -= 1;
        self.top >>= 1;
        if self.depth.is_multiple_of(64) && self.depth > 0 {
            self.unspill();
        }
    }

    /// `top` is empty and levels lie below it: brings the innermost 64 back.
    #[cold]
    fn unspill(&mut self) {
        self.top = self.spilled.pop().unwrap_or(0);
    }

    /// True when the innermost open container is an object. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn in_object(&self) -> bool {
        self.top & 1 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::Nesting;

    #[test]
    fn deep_levels_keep_their_kind_one_bit_each() {
        let kind = |level: usize| level.is_multiple_of(3) || level % 7 == 1;
        let mut n = Nesting::new();
        for level in 0..1000 {
            assert!(n.push(kind(level)));
            assert_eq!(n.in_object(), kind(level), "level {level}");
        }
        assert_eq!(
            n.spilled.len(),
            1000 / 64,
            "one word per 64 levels below the top"
        );
        for level in (1..1000).rev() {
            n.pop();
            assert_eq!(n.in_object(), kind(level - 1), "level {}", level - 1);
        }
        n.pop();
        assert_eq!(n.depth(), 0);
        assert!(!n.out_of_memory());
        // Deep again after closing everything: the kinds come back right.
        for level in 0..200 {
            assert!(n.push(kind(level + 1)));
            assert_eq!(n.in_object(), kind(level + 1));
        }
    }
}
