//! Items: what a reader gave (`Got`), what a `.expected` file lists
//! (`Want`), and comparing the two.

use mcp_stdio::RpcKind;

use crate::catalogue::Case;
use crate::notation::show;

/// The kind of an item, with its JSON-RPC kind when the reader classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Json(Option<RpcKind>),
    ParseError,
    InvalidJsonRpc,
    TooLong,
}

/// An item as the reader gave it (data empty for too-long items).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub kind: Kind,
    pub data: Vec<u8>,
    pub len: usize,
}

/// An item as the `.expected` file lists it.
#[derive(Debug, Clone)]
pub enum Want {
    Item(Kind, Vec<u8>),
    /// A too-long line of `full` raw bytes: the item's len must be in (limit, full].
    TooLong {
        full: usize,
    },
}

fn describe(kind: Kind) -> String {
    match kind {
        Kind::Json(None) => "json".into(),
        Kind::Json(Some(rpc)) => format!("json:{}", format!("{rpc:?}").to_lowercase()),
        Kind::ParseError => "parse_error".into(),
        Kind::InvalidJsonRpc => "invalid_jsonrpc".into(),
        Kind::TooLong => "too_long".into(),
    }
}

fn describe_got(g: &Got) -> String {
    match g.kind {
        Kind::TooLong => format!("too_long (len {})", g.len),
        k => format!("{} {}", describe(k), show(&g.data, 300)),
    }
}

fn describe_want(w: &Want) -> String {
    match w {
        Want::TooLong { full } => format!("too_long {full}"),
        Want::Item(k, data) => format!("{} {}", describe(*k), show(data, 300)),
    }
}

/// Compares the items of one run with the expected ones; `Err` tells the first difference.
pub fn compare(case: &Case, got: &[Got]) -> Result<(), String> {
    for (i, (g, w)) in got.iter().zip(&case.want).enumerate() {
        let ok = match w {
            Want::TooLong { full } => {
                g.kind == Kind::TooLong && g.len > case.max_line_len && g.len <= *full
            }
            Want::Item(kind, data) => g.kind == *kind && g.data == *data && g.len == data.len(),
        };
        if !ok {
            return Err(format!(
                "item {} (line {} of the expected items):\n     got {}\n  wanted {}",
                i,
                i + 1,
                describe_got(g),
                describe_want(w)
            ));
        }
    }
    if got.len() != case.want.len() {
        let extra = got.get(case.want.len()).map(describe_got);
        let missing = case.want.get(got.len()).map(describe_want);
        return Err(format!(
            "{} items, wanted {}; first extra: {:?}; first missing: {:?}",
            got.len(),
            case.want.len(),
            extra,
            missing
        ));
    }
    Ok(())
}
