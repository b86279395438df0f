//! The hostile-input catalogue (`tests/hostile/`, format in its README.md):
//! every case is fed whole, byte by byte, cut at every point (small cases),
//! and in deterministic random chunkings, through the Rust API (`feed`, and
//! `read_from` with a source handing out the same pieces) and
//! through the C ABI (`mcp_line_reader_feed`), and its items must be exactly
//! the ones its `.expected` file lists.
//!
//! `HOSTILE_CASE=NAME` (or a comma-separated list) runs only those cases;
//! `--nocapture` shows how many runs each case had and how long it took.

mod common;

use common::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::Instant;

use mcp_stdio::ffi::*;
use mcp_stdio::{LineReader, Message, RpcKind, DEFAULT_MAX_LINE_LEN};

// ---------------------------------------------------------------------------
// The byte notation (README.md "Byte notation").

/// A parsed piece of byte notation: literal bytes, or a group repeated N times.
#[derive(Debug)]
enum Node {
    Bytes(Vec<u8>),
    Repeat(usize, Vec<Node>),
}

fn nodes_len(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Bytes(b) => b.len(),
            Node::Repeat(k, inner) => k * nodes_len(inner),
        })
        .sum()
}

fn render(nodes: &[Node], out: &mut Vec<u8>) {
    for n in nodes {
        match n {
            Node::Bytes(b) => out.extend_from_slice(b),
            Node::Repeat(k, inner) => {
                let mut once = Vec::new();
                render(inner, &mut once);
                out.extend_from_slice(&once.repeat(*k));
            }
        }
    }
}

/// Parses the byte notation: literal characters stand for their UTF-8
/// bytes, `%HH` is one byte, `%{N:...%}` repeats its contents N times.
fn parse_notation(text: &str) -> Result<Vec<Node>, String> {
    let mut at = 0;
    parse_group(text.as_bytes(), &mut at, false)
}

fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    render(&parse_notation(text)?, &mut out);
    Ok(out)
}

fn parse_group(s: &[u8], at: &mut usize, nested: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    let mut bytes = Vec::new();
    while *at < s.len() {
        let b = s[*at];
        if b != b'%' {
            bytes.push(b);
            *at += 1;
            continue;
        }
        match s.get(*at + 1) {
            Some(b'}') if nested => {
                *at += 2;
                nodes.push(Node::Bytes(bytes));
                return Ok(nodes);
            }
            Some(b'}') => return Err(format!("`%}}` without `%{{` at offset {at}")),
            Some(b'{') => {
                let digits_at = *at + 2;
                let colon = s[digits_at..]
                    .iter()
                    .position(|&c| c == b':')
                    .ok_or_else(|| format!("`%{{` without `:` at offset {at}"))?;
                let digits = std::str::from_utf8(&s[digits_at..digits_at + colon]).unwrap();
                let n: usize = digits
                    .parse()
                    .map_err(|_| format!("bad repeat count {digits:?} at offset {at}"))?;
                *at = digits_at + colon + 1;
                let inner = parse_group(s, at, true)?;
                nodes.push(Node::Bytes(std::mem::take(&mut bytes)));
                nodes.push(Node::Repeat(n, inner));
            }
            _ => {
                let hex = s
                    .get(*at + 1..*at + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("`%` must be `%HH`, `%{{N:` or `%}}` (offset {at})"))?;
                bytes.push(hex);
                *at += 3;
            }
        }
    }
    if nested {
        return Err("`%{` without its `%}`".into());
    }
    nodes.push(Node::Bytes(bytes));
    Ok(nodes)
}

/// Bytes in the byte notation, for messages: printable ASCII as is, other
/// bytes as `%HH`, long runs of one byte as `%{N:..%}`, cut after `max` characters.
fn show(bytes: &[u8], max: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if s.len() > max {
            let _ = write!(s, "... ({} bytes in all)", bytes.len());
            break;
        }
        let b = bytes[i];
        let run = bytes[i..].iter().take_while(|&&c| c == b).count();
        let one = if (0x20..0x7f).contains(&b) && b != b'%' {
            (b as char).to_string()
        } else {
            format!("%{b:02X}")
        };
        if run > 8 {
            let _ = write!(s, "%{{{run}:{one}%}}");
            i += run;
        } else {
            s.push_str(&one);
            i += 1;
        }
    }
    s
}

#[test]
fn the_byte_notation() {
    assert_eq!(decode("a b%0A%ff%{3:x%}").unwrap(), b"a b\n\xffxxx");
    assert_eq!(decode("%{2:[%{2:1%}]%}").unwrap(), b"[11][11]");
    assert_eq!(decode("é%{0:x%}").unwrap(), "é".as_bytes());
    for bad in ["%", "%0", "%zz", "%}", "%{2:x", "%{x:y%}", "%{3"] {
        assert!(decode(bad).is_err(), "{bad}");
    }
    assert_eq!(show(b"ab%\n", 100), "ab%25%0A");
    assert_eq!(decode(&show(&[b'q'; 20], 100)).unwrap(), [b'q'; 20]);
}

// ---------------------------------------------------------------------------
// Cases.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json(Option<RpcKind>),
    ParseError,
    InvalidJsonRpc,
    TooLong,
}

/// An item as the reader gave it (data empty for too-long items).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Got {
    kind: Kind,
    data: Vec<u8>,
    len: usize,
}

/// An item as the `.expected` file lists it.
#[derive(Debug, Clone)]
enum Want {
    Item(Kind, Vec<u8>),
    /// A too-long line of `full` raw bytes: the item's len must be in (limit, full].
    TooLong {
        full: usize,
    },
}

#[derive(Debug)]
struct Case {
    name: String,
    /// Where the input comes from, and its length; `input` is filled just before the case runs.
    source: Source,
    input_len: usize,
    input: Vec<u8>,
    /// `usize::MAX`: no limit.
    max_line_len: usize,
    skip_invalid: bool,
    jsonrpc: bool,
    finish: bool,
    want: Vec<Want>,
}

#[derive(Debug)]
enum Source {
    File(PathBuf),
    Recipe(Vec<Node>),
}

impl Case {
    fn load_input(&mut self) {
        self.input = match &self.source {
            Source::File(path) => fs::read(path).unwrap(),
            Source::Recipe(nodes) => {
                let mut out = Vec::with_capacity(self.input_len);
                render(nodes, &mut out);
                out
            }
        };
        assert_eq!(self.input.len(), self.input_len);
    }
}

fn catalogue_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// The input of a `.gen` recipe: the byte notation, one piece per line,
/// concatenated (the file's own line breaks are not part of the input).
fn parse_recipe(recipe: &str) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    for (n, line) in recipe.lines().enumerate() {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        check_line(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        nodes.extend(parse_notation(line).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    Ok(nodes)
}

fn check_line(line: &str) -> Result<(), String> {
    if line.ends_with([' ', '\t']) || line.contains('\r') {
        return Err("trailing whitespace or CR: write it %20, %09, %0D".into());
    }
    Ok(())
}

fn rpc_kind(name: &str) -> Result<RpcKind, String> {
    Ok(match name {
        "request" => RpcKind::Request,
        "notification" => RpcKind::Notification,
        "response" => RpcKind::Response,
        "error" => RpcKind::Error,
        "batch" => RpcKind::Batch,
        _ => return Err(format!("unknown rpc kind {name:?}")),
    })
}

fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Parses a `.expected` file (without its input).
fn parse_expected(name: &str, text: &str) -> Result<(Case, Option<String>), String> {
    let mut case = Case {
        name: name.to_string(),
        source: Source::Recipe(Vec::new()),
        input_len: 0,
        input: Vec::new(),
        max_line_len: DEFAULT_MAX_LINE_LEN,
        skip_invalid: false,
        jsonrpc: false,
        finish: true,
        want: Vec::new(),
    };
    let mut input_from = None;
    for (n, line) in text.lines().enumerate() {
        let err = |e: String| format!("{name}.expected line {}: {e}", n + 1);
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        check_line(line).map_err(err)?;
        if let Some(setting) = line.strip_prefix("# ") {
            if !case.want.is_empty() {
                return Err(err("settings come before the items".into()));
            }
            let (key, value) = match setting.split_once(": ") {
                Some((k, v)) => (k, Some(v)),
                None => (setting, None),
            };
            match (key, value) {
                ("jsonrpc", None) => case.jsonrpc = true,
                ("skip_invalid", None) => case.skip_invalid = true,
                ("finish", Some("no")) => case.finish = false,
                ("finish", Some("yes")) => case.finish = true,
                ("max_line_len", Some("none")) => case.max_line_len = usize::MAX,
                ("max_line_len", Some(v)) => {
                    case.max_line_len = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| err(format!("bad limit {v:?}")))?
                }
                ("input", Some(v)) => input_from = Some(v.to_string()),
                _ => return Err(err(format!("unknown setting {setting:?}"))),
            }
            continue;
        }
        let (head, data) = line.split_once(' ').unwrap_or((line, ""));
        let (kind, rpc) = match head.split_once(':') {
            Some((k, r)) => (k, Some(rpc_kind(r).map_err(err)?)),
            None => (head, None),
        };
        if kind == "too_long" {
            let full: usize = data
                .parse()
                .map_err(|_| err("too_long takes the line's full raw length".into()))?;
            if full <= case.max_line_len {
                return Err(err(format!("a line of {full} bytes is not over the limit")));
            }
            case.want.push(Want::TooLong { full });
            continue;
        }
        let bytes = decode(data).map_err(err)?;
        if bytes.is_empty()
            || is_json_ws(bytes[0])
            || is_json_ws(*bytes.last().unwrap())
            || bytes.contains(&b'\n')
        {
            return Err(err("item data is a trimmed, non-empty line".into()));
        }
        let kind = match kind {
            "json" if case.jsonrpc == rpc.is_some() => Kind::Json(rpc),
            "json" => return Err(err("json items have an rpc kind iff `# jsonrpc`".into())),
            "parse_error" if !case.skip_invalid && rpc.is_none() => Kind::ParseError,
            "invalid_jsonrpc" if case.jsonrpc && !case.skip_invalid && rpc.is_none() => {
                Kind::InvalidJsonRpc
            }
            _ => return Err(err(format!("item {head:?} impossible with these settings"))),
        };
        if bytes.len() > case.max_line_len {
            return Err(err("an item longer than the limit".into()));
        }
        case.want.push(Want::Item(kind, bytes));
    }
    Ok((case, input_from))
}

/// Every case of the catalogue, sorted by name, or the ones `HOSTILE_CASE` names.
fn load_catalogue() -> Vec<Case> {
    let dir = catalogue_dir();
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in fs::read_dir(&dir).expect("tests/hostile exists") {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if file == "README.md" {
            continue;
        }
        let (stem, ext) = file
            .rsplit_once('.')
            .unwrap_or_else(|| panic!("{file}: no extension"));
        assert!(
            matches!(ext, "in" | "gen" | "expected"),
            "tests/hostile/{file}: only .in, .gen and .expected files belong here"
        );
        files.entry(stem.into()).or_default().insert(ext.into());
    }
    let source = |stem: &str| -> (Source, usize) {
        let exts = &files[stem];
        assert!(
            !(exts.contains("in") && exts.contains("gen")),
            "{stem}: both .in and .gen"
        );
        if exts.contains("in") {
            let path = dir.join(format!("{stem}.in"));
            let len = fs::metadata(&path).unwrap().len() as usize;
            (Source::File(path), len)
        } else if exts.contains("gen") {
            let recipe = fs::read_to_string(dir.join(format!("{stem}.gen"))).unwrap();
            let nodes = parse_recipe(&recipe).unwrap_or_else(|e| panic!("{stem}.gen: {e}"));
            let len = nodes_len(&nodes);
            (Source::Recipe(nodes), len)
        } else {
            panic!("{stem}: no .in or .gen")
        }
    };
    let only: Option<Vec<String>> = std::env::var("HOSTILE_CASE")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let mut used_inputs = BTreeSet::new();
    let mut cases = Vec::new();
    for (stem, exts) in &files {
        if !exts.contains("expected") {
            continue;
        }
        let text = fs::read_to_string(dir.join(format!("{stem}.expected"))).unwrap();
        let (mut case, input_from) = parse_expected(stem, &text).unwrap_or_else(|e| panic!("{e}"));
        let input_stem = match input_from {
            Some(other) => {
                assert!(
                    !exts.contains("in") && !exts.contains("gen"),
                    "{stem}: `# input:` and an input file of its own"
                );
                assert!(files.contains_key(&other), "{stem}: no input {other:?}");
                other
            }
            None => stem.clone(),
        };
        used_inputs.insert(input_stem.clone());
        if only.as_ref().is_some_and(|o| !o.contains(stem)) {
            continue;
        }
        (case.source, case.input_len) = source(&input_stem);
        cases.push(case);
    }
    for (stem, exts) in &files {
        assert!(
            used_inputs.contains(stem) || !(exts.contains("in") || exts.contains("gen")),
            "{stem}: an input no .expected file uses"
        );
    }
    if let Some(only) = &only {
        assert_eq!(cases.len(), only.len(), "HOSTILE_CASE names unknown cases");
    }
    cases
}

// ---------------------------------------------------------------------------
// Reading a case.

/// How one run feeds the input: cut at `cuts` (sorted offsets), taking the
/// items after every feed, or (lazy) only after some feeds so that items queue up.
#[derive(Debug, Clone)]
struct Plan {
    label: String,
    cuts: Vec<usize>,
    lazy: bool,
}

fn chunks<'a>(input: &'a [u8], cuts: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut from = 0;
    cuts.iter()
        .copied()
        .chain(std::iter::once(input.len()))
        .map(move |cut| {
            let cut = cut.clamp(from, input.len());
            let piece = &input[from..cut];
            from = cut;
            piece
        })
}

fn take_now(plan: &Plan, feed_index: usize) -> bool {
    !plan.lazy || feed_index % 3 == 2
}

fn got_from(m: Message<'_>) -> Got {
    match m {
        Message::Json { line, rpc } => Got {
            kind: Kind::Json(rpc),
            data: line.to_vec(),
            len: line.len(),
        },
        Message::ParseError { line } => Got {
            kind: Kind::ParseError,
            data: line.to_vec(),
            len: line.len(),
        },
        Message::InvalidJsonRpc { line } => Got {
            kind: Kind::InvalidJsonRpc,
            data: line.to_vec(),
            len: line.len(),
        },
        Message::TooLong { len } => Got {
            kind: Kind::TooLong,
            data: Vec::new(),
            len,
        },
    }
}

/// A `Read` source that hands out the planned pieces, one (or, past 64 KiB,
/// part of one) per call, for `LineReader::read_from`.
struct Pieces<'a> {
    pieces: Vec<&'a [u8]>,
    next: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.next < self.pieces.len() && self.pieces[self.next].is_empty() {
            self.next += 1;
        }
        let Some(piece) = self.pieces.get_mut(self.next) else {
            return Ok(0);
        };
        let n = piece.len().min(out.len());
        out[..n].copy_from_slice(&piece[..n]);
        *piece = &piece[n..];
        Ok(n)
    }
}

fn read_rust_feed(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
    read_rust(case, plan, false)
}

fn read_rust_read_from(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
    read_rust(case, plan, true)
}

fn read_rust(case: &Case, plan: &Plan, read_from: bool) -> Result<Vec<Got>, String> {
    let mut r = LineReader::new();
    r.set_max_line_len(
        std::num::NonZeroUsize::new(case.max_line_len).filter(|_| case.max_line_len != usize::MAX),
    );
    r.set_skip_invalid(case.skip_invalid);
    r.set_jsonrpc(case.jsonrpc);
    let mut items = Vec::new();
    if read_from {
        let mut source = Pieces {
            pieces: chunks(&case.input, &plan.cuts).collect(),
            next: 0,
        };
        for i in 0.. {
            let n = r
                .read_from(&mut source)
                .map_err(|e| format!("read_from: {e}"))?;
            if n == 0 {
                break;
            }
            if take_now(plan, i) {
                while let Some(m) = r.next_message() {
                    items.push(got_from(m));
                }
            }
        }
    } else {
        for (i, piece) in chunks(&case.input, &plan.cuts).enumerate() {
            r.feed(piece).map_err(|e| format!("feed: {e}"))?;
            if take_now(plan, i) {
                while let Some(m) = r.next_message() {
                    items.push(got_from(m));
                }
            }
        }
    }
    while let Some(m) = r.next_message() {
        items.push(got_from(m));
    }
    if case.finish {
        r.finish().map_err(|e| format!("finish: {e}"))?;
        while let Some(m) = r.next_message() {
            items.push(got_from(m));
        }
        if r.buffered_len() != 0 {
            return Err(format!(
                "buffered_len {} after finish and every item taken",
                r.buffered_len()
            ));
        }
    }
    Ok(items)
}

fn got_from_c(m: &McpMessage) -> Result<Got, String> {
    use McpMessageKind::*;
    use McpRpcKind::*;
    let rpc = match m.rpc_kind {
        k if k == MCP_RPC_NONE as i32 => None,
        k if k == MCP_RPC_REQUEST as i32 => Some(RpcKind::Request),
        k if k == MCP_RPC_NOTIFICATION as i32 => Some(RpcKind::Notification),
        k if k == MCP_RPC_RESPONSE as i32 => Some(RpcKind::Response),
        k if k == MCP_RPC_ERROR as i32 => Some(RpcKind::Error),
        k if k == MCP_RPC_BATCH as i32 => Some(RpcKind::Batch),
        k => return Err(format!("rpc_kind {k}")),
    };
    let kind = match m.kind {
        k if k == MCP_MESSAGE_JSON as i32 => Kind::Json(rpc),
        k if k == MCP_MESSAGE_PARSE_ERROR as i32 => Kind::ParseError,
        k if k == MCP_MESSAGE_INVALID_JSONRPC as i32 => Kind::InvalidJsonRpc,
        k if k == MCP_MESSAGE_TOO_LONG as i32 => Kind::TooLong,
        k => return Err(format!("kind {k}")),
    };
    if !matches!(kind, Kind::Json(_)) && rpc.is_some() {
        return Err(format!("{kind:?} with rpc_kind {}", m.rpc_kind));
    }
    if (kind == Kind::TooLong) != m.data.is_null() {
        return Err(format!("{kind:?} with data {:?}", m.data));
    }
    let data = if m.data.is_null() {
        Vec::new()
    } else {
        // SAFETY: the reader lends `len` bytes at `data` until its next call.
        unsafe { std::slice::from_raw_parts(m.data, m.len) }.to_vec()
    };
    Ok(Got {
        kind,
        data,
        len: m.len,
    })
}

fn read_c(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
    use McpStatus::*;
    let check = |what: &str, status: McpStatus| {
        if status == MCP_STATUS_OK {
            Ok(())
        } else {
            Err(format!("{what}: {status:?}"))
        }
    };
    let drain = |r: *mut McpLineReader, items: &mut Vec<Got>| -> Result<(), String> {
        loop {
            let mut m = McpMessage {
                kind: -1,
                rpc_kind: -1,
                data: ptr::null(),
                len: usize::MAX,
            };
            // SAFETY: a live reader; `m` is writable.
            match unsafe { mcp_line_reader_next_message(r, &mut m) } {
                MCP_STATUS_NO_MESSAGE => return Ok(()),
                MCP_STATUS_OK => items.push(got_from_c(&m)?),
                other => return Err(format!("next_message: {other:?}")),
            }
        }
    };
    let r = mcp_line_reader_new();
    assert!(!r.is_null());
    let mut items = Vec::new();
    // SAFETY: `r` is live until the free below; pointers and lengths match.
    let result = (|| unsafe {
        check(
            "set_max_line_len",
            mcp_line_reader_set_max_line_len(r, case.max_line_len),
        )?;
        let flags = if case.skip_invalid {
            MCP_READER_SKIP_INVALID
        } else {
            0
        } | if case.jsonrpc { MCP_READER_JSONRPC } else { 0 };
        check("set_flags", mcp_line_reader_set_flags(r, flags))?;
        for (i, piece) in chunks(&case.input, &plan.cuts).enumerate() {
            // An empty piece goes in as (NULL, 0), as Go and Swift pass it.
            let data = if piece.is_empty() {
                ptr::null()
            } else {
                piece.as_ptr()
            };
            check("feed", mcp_line_reader_feed(r, data, piece.len()))?;
            if take_now(plan, i) {
                drain(r, &mut items)?;
            }
        }
        drain(r, &mut items)?;
        if case.finish {
            check("finish", mcp_line_reader_finish(r))?;
            drain(r, &mut items)?;
            let held = mcp_line_reader_buffered_len(r);
            if held != 0 {
                return Err(format!(
                    "buffered_len {held} after finish and every item taken"
                ));
            }
        }
        Ok(())
    })();
    // SAFETY: freed once.
    unsafe { mcp_line_reader_free(r) };
    result.map(|()| items)
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
fn compare(case: &Case, got: &[Got]) -> Result<(), String> {
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

// ---------------------------------------------------------------------------
// Chunkings.

/// Inputs up to this size are cut at every point (less in debug builds, which are ~20x slower).
const SMALL: usize = if cfg!(debug_assertions) { 1024 } else { 4096 };
/// Inputs up to this size are cut at every pair of points.
const TINY: usize = 40;
/// Inputs up to this size are also read byte by byte.
const BYTE_BY_BYTE_MAX: usize = if cfg!(debug_assertions) {
    256 << 10
} else {
    4 << 20
};
/// Random chunkings per case: 300, fewer for big inputs (about `RANDOM_BYTES`
/// in all), at least `MIN_RANDOM_RUNS`.
const RANDOM_RUNS: usize = 300;
const RANDOM_BYTES: usize = if cfg!(debug_assertions) {
    8 << 20
} else {
    128 << 20
};
const MIN_RANDOM_RUNS: usize = if cfg!(debug_assertions) { 1 } else { 3 };
/// `read_from` prepares (zero-fills) 64 KiB on every call, however few bytes
/// the source gives (~1 µs in release, ~3 ms in debug builds): it gets the
/// plans, in order, as long as their pieces add up to at most this many calls.
const READ_FROM_BUDGET: usize = if cfg!(debug_assertions) { 300 } else { 200_000 };
/// A random chunking has at most about this many feeds.
const MAX_FEEDS: usize = 100_000;

fn random_cuts(len: usize, rng: &mut Rng) -> Vec<usize> {
    // Chunk sizes of one scale per run: tiny, small, page-sized, or a large share of the input.
    let hi = match rng.below(4) {
        0 => 8,
        1 => 100,
        2 => 8192,
        _ => len / 3 + 1,
    }
    .max(2 * len / MAX_FEEDS + 1);
    let mut cuts = Vec::new();
    let mut at = 0;
    loop {
        // Now and then a single byte, whatever the scale.
        at += if rng.below(16) == 0 {
            1
        } else {
            1 + rng.below(hi)
        };
        if at >= len {
            return cuts;
        }
        cuts.push(at);
    }
}

fn plans(case: &Case) -> Vec<Plan> {
    let len = case.input.len();
    let mut plans = vec![Plan {
        label: "whole".into(),
        cuts: vec![],
        lazy: false,
    }];
    if len <= BYTE_BY_BYTE_MAX {
        for lazy in [false, true] {
            plans.push(Plan {
                label: format!("byte by byte{}", if lazy { ", lazy" } else { "" }),
                cuts: (1..len).collect(),
                lazy,
            });
        }
    }
    if len <= SMALL {
        for a in 0..=len {
            plans.push(Plan {
                label: format!("cut at {a}"),
                cuts: vec![a],
                lazy: false,
            });
        }
    }
    if len <= TINY {
        for a in 1..len {
            for b in a + 1..len {
                plans.push(Plan {
                    label: format!("cuts at {a}, {b}"),
                    cuts: vec![a, b],
                    lazy: false,
                });
            }
        }
    }
    let runs = (RANDOM_BYTES / len.max(1)).clamp(MIN_RANDOM_RUNS, RANDOM_RUNS);
    for run in 0..runs as u64 {
        let mut rng = Rng::named(&case.name, run);
        let cuts = random_cuts(len, &mut rng);
        plans.push(Plan {
            label: format!("random chunking #{run} ({} feeds)", cuts.len() + 1),
            cuts,
            lazy: rng.below(3) == 0,
        });
    }
    plans
}

/// Runs every plan of `case` through each API; returns the first failure of each.
fn run_case(case: &Case) -> Vec<String> {
    let start = Instant::now();
    let plans = plans(case);
    let mut failures = Vec::new();
    for (api, read) in [
        (
            "Rust feed",
            read_rust_feed as fn(&Case, &Plan) -> Result<Vec<Got>, String>,
        ),
        ("Rust read_from", read_rust_read_from),
        ("C mcp_line_reader_feed", read_c),
    ] {
        let mut read_from_calls = 0;
        for plan in &plans {
            if api == "Rust read_from" {
                let calls = plan.cuts.len() + 1;
                if read_from_calls + calls > READ_FROM_BUDGET {
                    continue;
                }
                read_from_calls += calls;
            }
            if let Err(e) = read(case, plan).and_then(|got| compare(case, &got)) {
                failures.push(format!("{} [{api}, {}]: {e}", case.name, plan.label));
                break;
            }
        }
    }
    eprintln!(
        "{:<36} {:>11} bytes {:>4} items {:>5} chunkings x 3 APIs {:>8.2?}{}",
        case.name,
        case.input.len(),
        case.want.len(),
        plans.len(),
        start.elapsed(),
        if failures.is_empty() { "" } else { "  FAILED" }
    );
    failures
}

fn run_cases(select: impl Fn(&Case) -> bool) {
    let mut failures = Vec::new();
    for mut case in load_catalogue().into_iter().filter(|c| select(c)) {
        case.load_input();
        failures.extend(run_case(&case));
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Inputs above this size (the 50 MB and 64 MiB lines) are in `big_cases`:
/// a minute in debug builds, a few seconds in release.
const BIG: usize = 8 << 20;

#[test]
fn small_cases() {
    run_cases(|c| c.input_len <= BIG);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug builds: cargo test --release --test hostile"
)]
fn big_cases() {
    run_cases(|c| c.input_len > BIG);
}

#[test]
fn the_catalogue_is_complete() {
    if std::env::var("HOSTILE_CASE").is_ok() {
        return;
    }
    let cases = load_catalogue();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    // Every kind of item and every setting appears somewhere.
    let has = |f: &dyn Fn(&Case) -> bool| cases.iter().any(f);
    for kind in [
        Kind::Json(None),
        Kind::ParseError,
        Kind::InvalidJsonRpc,
        Kind::Json(Some(RpcKind::Request)),
        Kind::Json(Some(RpcKind::Notification)),
        Kind::Json(Some(RpcKind::Response)),
        Kind::Json(Some(RpcKind::Error)),
        Kind::Json(Some(RpcKind::Batch)),
    ] {
        assert!(
            has(&|c| c
                .want
                .iter()
                .any(|w| matches!(w, Want::Item(k, _) if *k == kind))),
            "no case yields {kind:?}"
        );
    }
    assert!(has(&|c| c
        .want
        .iter()
        .any(|w| matches!(w, Want::TooLong { .. }))));
    assert!(has(&|c| c.skip_invalid) && has(&|c| !c.finish));
    assert!(has(&|c| c.input_len >= 50_000_000), "the 50 MB line");
}
