//! The stack of open containers, one bit per level, on the heap only past 64 levels.

/// Which containers are open, innermost last.
pub(crate) struct Nesting {
    depth: usize,
    /// Levels 0..64: bit set for an object, clear for an array.
    low: u64,
    /// Levels 64 and deeper, one entry per level (true for an object).
    deep: Vec<bool>,
}

impl Nesting {
    pub(crate) fn new() -> Self {
        Nesting {
            depth: 0,
            low: 0,
            deep: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    #[inline]
    pub(crate) fn push(&mut self, object: bool) {
        if self.depth < 64 {
            let bit = 1u64 << self.depth;
            if object {
                self.low |= bit;
            } else {
                self.low &= !bit;
            }
        } else {
            self.deep.push(object);
        }
        self.depth += 1;
    }

    /// Closes the innermost container. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn pop(&mut self) {
        self.depth -= 1;
        if self.depth >= 64 {
            self.deep.pop();
        }
    }

    /// True when the innermost open container is an object. Only called with `depth() > 0`.
    #[inline]
    pub(crate) fn in_object(&self) -> bool {
        let top = self.depth - 1;
        if top < 64 {
            self.low & (1u64 << top) != 0
        } else {
            self.deep.last().copied().unwrap_or(false)
        }
    }
}
