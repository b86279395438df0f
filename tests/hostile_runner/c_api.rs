//! Reading a case through the C ABI (`mcp_line_reader_feed`).

use std::ptr;

use mcp_stdio::ffi::*;
use mcp_stdio::RpcKind;

use crate::catalogue::Case;
use crate::chunkings::{chunks, take_now, Plan};
use crate::items::{Got, Kind};

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

pub fn read_c(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
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
