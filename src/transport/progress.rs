//! A request whose progress is followed: its progress token written into
//! its `params._meta` (the request's own id: unique among the requests in
//! flight), and the `notifications/progress` that name it recognised.

use super::frame;
use crate::envelope::{json_string_eq, Envelope};
use crate::error::Error;
use crate::json::object_members;

/// Writes `"method":"<method>","params":<params with _meta.progressToken>}\n`:
/// the token merged into the `_meta` object the params carry, or a `_meta`
/// made for it (params made for it too when there are none). Params that
/// are not an object, a `_meta` that is not one, or one that already has a
/// `progressToken`: [`Error::InvalidParams`].
pub(super) fn method_and_params_with_token(
    out: &mut Vec<u8>,
    method: &str,
    params: Option<&[u8]>,
    token: i64,
) -> Result<(), Error> {
    frame::raw(out, b"\"method\":")?;
    frame::string(out, method)?;
    frame::raw(out, b",\"params\":")?;
    let Some(params) = params else {
        frame::raw(out, b"{\"_meta\":{\"progressToken\":")?;
        frame::integer(out, token)?;
        return frame::raw(out, b"}}}\n");
    };
    let start = out.len();
    if frame::value(out, params)? != b'{' {
        return Err(Error::InvalidParams);
    }
    // The params, compact: where the token goes, and after what.
    let compact = &out[start..];
    let [meta] = object_members(compact, ["_meta"])?.ok_or(Error::InvalidParams)?;
    let (at, opening, closing): (usize, &[u8], &[u8]) = match meta {
        Some(meta) => {
            let [existing] =
                object_members(meta, ["progressToken"])?.ok_or(Error::InvalidParams)?;
            if existing.is_some() {
                return Err(Error::InvalidParams);
            }
            let at = start + (meta.as_ptr().addr() - compact.as_ptr().addr()) + 1;
            let more: &[u8] = if meta.len() > 2 { b"," } else { b"" };
            (at, b"\"progressToken\":", more)
        }
        None => {
            let more: &[u8] = if compact.len() > 2 { b"}," } else { b"}" };
            (start + 1, b"\"_meta\":{\"progressToken\":", more)
        }
    };
    // Written at the end, then turned into place.
    let end = out.len();
    frame::raw(out, opening)?;
    frame::integer(out, token)?;
    frame::raw(out, closing)?;
    let inserted = out.len() - end;
    out[at..].rotate_right(inserted);
    frame::raw(out, b"}\n")
}

/// The request a `notifications/progress` is for (its `progressToken`, an
/// integer as the transport writes it) and its `progress` value, when
/// `envelope` is one.
pub(super) fn of_ours(envelope: &Envelope<'_>) -> Option<(i64, Option<f64>)> {
    if !json_string_eq(envelope.method?, "notifications/progress") {
        return None;
    }
    let [token, progress] = object_members(envelope.params?, ["progressToken", "progress"])
        .ok()
        .flatten()?;
    let id = frame::our_id(token?)?;
    let value = progress
        .and_then(|p| std::str::from_utf8(p).ok())
        .and_then(|p| p.parse::<f64>().ok());
    Some((id, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(params: Option<&[u8]>) -> Result<String, Error> {
        let mut out = b"{".to_vec();
        method_and_params_with_token(&mut out, "tools/call", params, 7)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn the_token_is_merged_into_the_meta_or_made() {
        assert_eq!(
            framed(None).unwrap(),
            "{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":7}}}\n"
        );
        assert_eq!(
            framed(Some(b"{}")).unwrap(),
            "{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":7}}}\n"
        );
        assert_eq!(
            framed(Some(br#"{ "name" : "x" }"#)).unwrap(),
            "{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":7},\"name\":\"x\"}}\n"
        );
        assert_eq!(
            framed(Some(br#"{"name":"x","_meta":{}}"#)).unwrap(),
            "{\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"_meta\":{\"progressToken\":7}}}\n"
        );
        assert_eq!(
            framed(Some(
                br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"x"}"#
            ))
            .unwrap(),
            "{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":7,\
             \"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"},\"name\":\"x\"}}\n"
        );
    }

    #[test]
    fn params_it_cannot_carry_are_refused() {
        for params in [
            &b"[1]"[..],
            br#"{"_meta":[]}"#,
            br#"{"_meta":{"progressToken":"a"}}"#,
        ] {
            assert_eq!(
                framed(Some(params)),
                Err(Error::InvalidParams),
                "{params:?}"
            );
        }
        assert_eq!(framed(Some(b"{")), Err(Error::InvalidJson));
    }

    #[test]
    fn progress_notifications_name_their_request() {
        let env = |line: &'static [u8]| crate::envelope(line).unwrap();
        assert_eq!(
            of_ours(&env(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2.5,"total":10}}"#)),
            Some((7, Some(2.5)))
        );
        assert_eq!(
            of_ours(&env(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}"#)),
            Some((7, None))
        );
        for line in [
            &br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"7","progress":1}}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":7,"progress":1}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":[7]}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
        ] {
            assert_eq!(of_ours(&env(line)), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
