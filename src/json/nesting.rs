//! The stack of open containers, one bit per level: in a register for the
//! first 64 levels, on the heap past them. Growing it is the only allocation
//! validation makes, and it may fail without aborting.

/// Which containers are open, innermost last.
pub(crate) struct Nesting {
    depth: usize,
    /// Levels 0..64: bit set for an object, clear for an array.
    low: u64,
    /// Level `64 * (k + 1) + b` is bit `b` of `deep[k]`. Words are kept when
    /// levels close (they are reused by the next deep container).
    deep: Vec<u64>,
    /// Growing `deep` failed: the text is too deep for the memory available.
    out_of_memory: bool,
}

impl Nesting {
    pub(crate) fn new() -> Self {
        Nesting {
            depth: 0,
            low: 0,
            deep: Vec::new(),
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
        let (word, bit) = if self.depth < 64 {
            (&mut self.low, self.depth)
        } else {
            let k = self.depth / 64 - 1;
            if k == self.deep.len() && !self.grow() {
                return false;
            }
            (&mut self.deep[k], self.depth % 64)
        };
        if object {
            *word |= 1 << bit;
        } else {
            *word &= !(1 << bit);
        }
        self.depth += 1;
        true
    }

    #[cold]
    fn grow(&mut self) -> bool {
        if self.deep.try_reserve(1).is_err() {
            self.out_of_memory = true;
            return false;
        }
        self.deep.push(0);
        true
    }

    /// Closes the innermost container. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn pop(&mut self) {
        self.depth -= 1;
    }

    /// True when the innermost open container is an object. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn in_object(&self) -> bool {
        let top = self.depth - 1;
        let word = if top < 64 {
            self.low
        } else {
            self.deep[top / 64 - 1]
        };
        word & (1 << (top % 64)) != 0
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
            n.deep.len(),
            1000 / 64 - 1 + 1,
            "one word per 64 levels past 64"
        );
        for level in (1..1000).rev() {
            n.pop();
            assert_eq!(n.in_object(), kind(level - 1), "level {}", level - 1);
        }
        n.pop();
        assert_eq!(n.depth(), 0);
        assert!(!n.out_of_memory());
    }
}
