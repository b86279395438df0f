//! Where the members of one JSON-RPC message (`id`, `method`, `params`,
//! `result`, `error`) are in its text: what the classifier notes
//! (`jsonrpc.rs`) and an [`Envelope`](crate::Envelope) is read from
//! (`envelope.rs`). Below both, so that neither imports the other's floor.

/// Where the members of an envelope are in the text the classifier watched.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spans {
    pub(crate) id: Span,
    pub(crate) method: Span,
    pub(crate) params: Span,
    pub(crate) result: Span,
    pub(crate) error: Span,
}

/// The bytes `from..to` of a text; `to == 0` (the default) means absent,
/// since a value has at least one byte.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    from: usize,
    to: usize,
}

impl Span {
    #[inline(always)]
    pub(crate) fn new(from: usize, to: usize) -> Self {
        Span { from, to }
    }

    pub(crate) fn of(self, text: &[u8]) -> Option<&[u8]> {
        if self.to == 0 {
            None
        } else {
            text.get(self.from..self.to)
        }
    }
}
