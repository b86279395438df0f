#!/usr/bin/env python3
"""Writes the fuzz seeds: fuzz/seeds/<target>/<name>, small files, checked in.

The edge cases of the contract (docs/contract.md). Run it again after
changing it:
    python3 fuzz/seeds/make_seeds.py
reader_model and encode take the raw bytes; reader_chunking takes a header
(limit, flags, split, chunk lengths; see fuzz_targets/reader_chunking.rs) and
then the stream; transport_model takes a program of operations (see
fuzz_targets/transport_model.rs and TRANSPORT below).
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
BOM = b"\xef\xbb\xbf"

REQ = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
RESP = b'{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"hi"}]}}'
ERR = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":null}}'
ERR_NULL_ID = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
BATCH = b"[" + REQ + b"," + NOTE + b"," + RESP + b"]"
INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"fuzz","version":"1.0"}}}')

# One JSON text (or not) each: seeds for the encoder, lines for the readers.
TEXTS = {
    "int_42": b"42",
    "empty_array": b"[]",
    "empty_object": b"{}",
    "string": b'"str"',
    "literals": b"[true,false,null]",
    "minus_zero_frac_exp": b"[-0,0.5e-3,1E+2,-1.25e10]",
    "big_exponent": b"1e999",
    "tiny_exponent": b"-1e-999",
    "int_40_digits": b"1234567890123456789012345678901234567890",
    "id_30_digits": b'{"id":123456789012345678901234567890}',
    "lone_high_surrogate": b'"\\ud800"',
    "lone_low_surrogate": b'"\\udc00x"',
    "surrogate_pair_escaped": b'"\\ud83d\\ude00"',
    "surrogate_then_letter": b'"\\uD800\\u0041"',
    "emoji_4_bytes": '{"e":"😀"}'.encode(),
    "non_ascii_mix": '"é€😀\u00a0ÿ"'.encode(),
    "u2028_u2029_in_string": '"a\u2028b\u2029c"'.encode(),
    "u2028_outside_string": "[1,\u20282]".encode(),
    "del_in_string": b'"a\x7fb"',
    "escapes": b'"\\n\\t\\"\\\\\\/\\b\\f\\r\\u0000\\u001F"',
    "duplicate_keys": b'{"a":1,"a":2,"a":{"a":[]}}',
    "nest_10_arrays": b"[" * 10 + b"]" * 10,
    "nest_10_objects": b'{"a":' * 10 + b"1" + b"}" * 10,
    "nest_1000_arrays": b"[" * 1000 + b"]" * 1000,
    "nest_1000_unclosed": b"[" * 1000,
    "spaces_inside": b' { "a" :\t[ 1 ,\r2 ] , "b" : "x y" } ',
    "rpc_request": REQ,
    "rpc_notification": NOTE,
    "rpc_response": RESP,
    "rpc_error": ERR,
    "rpc_error_null_id": ERR_NULL_ID,
    "rpc_batch": BATCH,
    "rpc_initialize": INIT,
    "rpc_request_null_id": b'{"jsonrpc":"2.0","id":null,"method":"m"}',
    "rpc_escaped_names": b'{"json\\u0072pc":"2\\u002e0","\\u006dethod":"m","id":"1"}',
    "rpc_wrong_version": b'{"jsonrpc":"2.00","id":1,"method":"m"}',
    "rpc_real_code": b'{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"x"}}',
    "rpc_result_and_error": b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}',
    "rpc_bad_batch": b"[" + REQ + b",1]",
    "rpc_deep_params": b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b"[" * 300 + b"]" * 300 + b"}",
    # Not JSON.
    "bad_leading_zero": b"01",
    "bad_dot": b"[1.,.5]",
    "bad_plus": b"+1",
    "bad_nan": b"NaN",
    "bad_infinity": b"-Infinity",
    "bad_escape": b'"\\x"',
    "bad_short_unicode": b'"\\u12"',
    "bad_raw_tab": b'"a\tb"',
    "bad_raw_newline_cr": b'"a\rb"',
    "bad_trailing": b"{} x",
    "bad_two_values": b"1 2",
    "bad_two_objects": b"{}{}",
    "bad_trailing_comma": b"[1,]",
    "bad_single_quote": b"{'a':1}",
    "bad_lone_continuation": b'"\x80"',
    "bad_overlong": b'"\xc0\xaf"',
    "bad_overlong_3": b'"\xe0\x80\xaf"',
    "bad_encoded_surrogate": b'"\xed\xa0\x80"',
    "bad_ff_byte": b'"\xff"',
    "bad_truncated_emoji": b'"\xf0\x9f\x98"',
    "bad_above_10ffff": b'"\xf4\x90\x80\x80"',
    "bad_nul": b'{"a":"\x00"}',
    "bad_nul_outside": b"\x00",
    "bad_form_feed_ws": b"\x0c{}",
    "bad_vertical_tab_ws": b"\x0b[]",
    "bad_nbsp_ws": b"\xc2\xa0{}",
    "bad_bom_text": BOM + b"{}",
    "bad_unclosed_string": b'"abc',
    "bad_empty": b"",
}

# Streams for the readers.
STREAMS = {
    "crlf": b'{"a":1}\r\n[2]\r\n"x"\r\n',
    "bare_cr": b'{"a":1}\r{"b":2}\n1\r\n\r\n',
    "cr_only": b"\r\r\r",
    "bom_start": BOM + b'{"a":1}\n',
    "bom_start_split_line": BOM + b"\n" + BOM + b"1\n",
    "bom_mid_stream": b'{"a":1}\n' + BOM + b'{"b":2}\n',
    "bom_only": BOM,
    "bom_partial": b"\xef\xbb",
    "bom_partial_then_json": b"\xef\xbb{}\n",
    "bom_then_ws": BOM + b" \t\r\n{}\n",
    "bom_twice": BOM + BOM + b"{}\n",
    "whitespace_lines": b" \t \r\n\n   \n\t\n{}\n \n",
    "final_line_no_newline": b'{"a":1}\n{"b":2}',
    "final_line_invalid_no_newline": b"{}\nnot json",
    "nul_line": b"\x00\n{}\n",
    "mcp_session": INIT + b"\n" + NOTE + b"\r\n" + REQ + b"\n" + RESP + b"\n" + ERR + b"\n" + BATCH + b"\n",
    "mixed_junk": b'Server started on stdio\n{"jsonrpc":"2.0","method":"ping"}\n\xff\xfe\n[1,2\n]\n',
    "long_line": b'{"a":"' + b"x" * 100 + b'"}\n{}\n' + b" " * 80 + b"\n[1]",
    "many_empty_lines": b"\n" * 50 + b"1",
    "split_emoji_lines": '"😀"\n"é"\n"\u2028"\n'.encode(),
}

# reader_chunking headers: (limit byte, flags byte, split byte, chunk lengths).
NO_LIMIT = 0x80
def limit(n):
    return n - 1  # 1..=64


def flags(skip, rpc, nlens):
    return (1 if skip else 0) | (2 if rpc else 0) | (nlens << 2)


HEADERS = [
    (NO_LIMIT, False, False, 128, []),
    (limit(8), False, True, 64, [3]),
    (limit(1), True, False, 200, [1, 2]),
    (limit(16), True, True, 30, [0, 5, 7]),
    (limit(64), False, False, 255, [13, 1]),
    (NO_LIMIT, True, True, 0, [2, 200]),
    (limit(3), False, False, 100, [4]),
]


def chunk_seed(i, stream):
    lim, skip, rpc, split, lens = HEADERS[i % len(HEADERS)]
    return bytes([lim, flags(skip, rpc, len(lens)), split] + lens) + stream


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# More JSON-RPC shapes, for jsonrpc_model (with every rpc_* text above).
RPC_MORE = {
    "notification_params_array": b'{"jsonrpc":"2.0","method":"m","params":[1]}',
    "notification_params_string": b'{"jsonrpc":"2.0","method":"m","params":"x"}',
    "request_id_real": b'{"jsonrpc":"2.0","method":"m","id":1.5e3}',
    "request_id_bool": b'{"jsonrpc":"2.0","method":"m","id":true}',
    "request_with_result": b'{"jsonrpc":"2.0","method":"m","id":1,"result":{}}',
    "method_not_string": b'{"jsonrpc":"2.0","method":1,"id":1}',
    "response_null_result": b'{"jsonrpc":"2.0","id":1,"result":null}',
    "response_null_id": b'{"jsonrpc":"2.0","id":null,"result":1}',
    "response_no_id": b'{"jsonrpc":"2.0","result":1}',
    "error_no_id": b'{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}',
    # An error response may omit its id (docs/contract.md §JSON-RPC: error response id).
    "error_no_id_parse_error": b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}',
    "error_no_id_in_batch": b"[" + RESP + b',{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}]',
    "error_no_id_no_message": b'{"jsonrpc":"2.0","error":{"code":-32600}}',
    "error_no_id_and_result": b'{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"result":1}',
    "error_id_bool": b'{"jsonrpc":"2.0","id":false,"error":{"code":1,"message":"m"}}',
    "response_no_id_in_batch": b"[" + RESP + b',{"jsonrpc":"2.0","result":{}}]',
    "error_code_string": b'{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}',
    "error_code_exp": b'{"jsonrpc":"2.0","id":1,"error":{"code":1e2,"message":"m"}}',
    "error_code_neg_zero": b'{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":"m"}}',
    "error_message_missing": b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
    "error_not_object": b'{"jsonrpc":"2.0","id":1,"error":[1,"m"]}',
    "error_dup_code": b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m","code":3}}',
    "dup_jsonrpc_last_wins": b'{"jsonrpc":"1.0","method":"m","jsonrpc":"2.0"}',
    "dup_jsonrpc_last_loses": b'{"jsonrpc":"2.0","method":"m","jsonrpc":"2"}',
    "dup_id_last_null": b'{"jsonrpc":"2.0","method":"m","id":1,"id":null}',
    "version_number": b'{"jsonrpc":2.0,"method":"m"}',
    "version_escaped_dot": b'{"jsonrpc":"2\u002E0","method":"m"}',
    "version_slash_escape": b'{"jsonrpc":"2.0","method":"a\/b"}',
    "long_member_names": b'{"jsonrpc":"2.0","methodx":"m","\u006a\u0073\u006f\u006e\u0072\u0070\u0063":"2.0","method":"m"}',
    "non_ascii_name": '{"jsonrpc":"2.0","méthod":"m","method":"m"}'.encode(),
    "batch_nested": b"[[" + NOTE + b"]]",
    "batch_one": b"[" + ERR + b"]",
    "batch_with_spaces": b"[ " + NOTE + b" , " + RESP + b" ]",
    "spaces_everywhere": b'{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "m" , "params" : { } }',
    "top_level_string": b'"jsonrpc"',
}


# transport_model programs (see fuzz_targets/transport_model.rs): a limit
# byte (below 0x80: limit + 1; else none), then operations, each an opcode
# and its argument bytes. Peer line kinds are tests/transport_model's
# `peer_line` (0 result, 1 error, 2 reordered members, 3 `1.0`, 4 `"1"`,
# 5 `01`, 6 `-1`, 7 `1e0`, 8 a request, 9 a batch, 10 and 11 duplicate ids,
# 12 a notification, 15 junk, 18 a BOM, 21 a long line, 22 unterminated);
# the id byte gives `b % 6` below 160, `b - 160` up to 249; cut 255 is
# whole; a cancel's id byte gives `b % 8` below 128, else `b - 128`. Methods: 0
# tools/call, 1 initialize; params 0 none, 4 invalid JSON, 5 a scalar.
T_NO_LIMIT = 0xFF


def t_line(kind, id_byte, cut=255):
    return bytes([0, kind, id_byte, cut])


def t_raw(data):
    assert len(data) < 16
    return bytes([4, len(data)]) + data


T_END = bytes([5])


def t_request(method=0, params=0, timeout_ms=None):
    return bytes([6, method, params, 255 if timeout_ms is None else timeout_ms])


def t_notify(method=0, params=0):
    return bytes([9, method, params])


def t_respond(id_i=0, result=0):
    return bytes([10, id_i, result])


def t_respond_error(id_i=None, code=(0xA8, 0x80), message=0):
    return bytes([11, 0 if id_i is None else id_i * 2 + 1, code[0], code[1], message])


def t_send(i=0):
    return bytes([12, i])


def t_cancel(id_b, reason=None):
    return bytes([13, id_b, 0 if reason is None else reason * 2 + 1])


def t_max_queued(b):
    return bytes([14, b])


def t_consume(b):
    return bytes([15, b])


T_TAKE = bytes([16])


def t_advance(ms):
    return bytes([17, ms])


def t_close(ms):
    return bytes([19, ms])


T_WRITE_FAILED = bytes([20])
T_NEXT = bytes([21])
T_DRAIN = bytes([23])

TRANSPORT = {
    "answers_in_any_order": bytes([T_NO_LIMIT]) + t_request(0, 1, 30) + t_request(0, 0) + t_request(0, 0, 10)
    + t_line(1, 2) + t_line(0, 1) + t_line(9 + 16, 3) + T_DRAIN + t_line(0, 1) + t_line(0, 9) + t_advance(20)
    + T_DRAIN,
    "lookalikes_then_ours": bytes([T_NO_LIMIT]) + t_request()
    + b"".join(t_line(k, 1) for k in (3, 4, 5, 6, 7, 8, 9, 10)) + t_line(11, 1) + T_DRAIN + t_line(2, 1)
    + T_DRAIN,
    "timeouts_ties_and_initialize": bytes([T_NO_LIMIT]) + t_request(0, 0, 5) + t_request(1, 1, 5)
    + t_request(0, 0, 3) + t_request(0, 0, 5) + t_request(0, 0) + t_advance(4) + T_NEXT + t_advance(1) + T_DRAIN
    + t_line(0, 1) + t_cancel(5, 1) + t_cancel(2) + T_DRAIN,
    "queue_bound": bytes([T_NO_LIMIT]) + t_max_queued(30) + t_request() + t_request() + t_notify()
    + t_respond(0, 0) + t_respond_error() + t_send(0) + t_consume(10) + t_request(0, 0, 1)
    + t_cancel(1, 0) + t_max_queued(0) + t_advance(2) + T_DRAIN + T_TAKE + t_request(),
    "bad_arguments": bytes([T_NO_LIMIT]) + t_request(0, 4) + t_request(0, 5) + t_notify(0, 4) + t_respond(3, 0)
    + t_respond(0, 3) + t_respond(4, 4) + t_respond_error(3) + t_send(3) + t_cancel(0) + t_cancel(250)
    + t_cancel(251) + t_request(),
    "close_with_grace": bytes([T_NO_LIMIT]) + t_request(0, 0, 50) + t_request() + t_request() + t_close(10)
    + t_request() + t_notify() + t_cancel(1) + t_close(0) + t_line(0, 2) + T_DRAIN + t_advance(9) + T_DRAIN
    + t_advance(1) + T_NEXT + t_line(0, 3) + T_DRAIN + t_raw(b"[1]\n"),
    "write_failed": bytes([T_NO_LIMIT]) + t_request(0, 0, 1) + t_request(1, 0, 1) + t_request() + T_TAKE
    + t_line(0, 3) + T_WRITE_FAILED + t_notify() + T_NEXT + t_raw(b"junk\n") + t_advance(1) + T_DRAIN,
    "peer_end_first": bytes([T_NO_LIMIT]) + t_request() + t_request(0, 0, 40) + t_line(22, 2) + T_END
    + t_raw(b"1\n") + T_END + T_DRAIN + T_NEXT,
    "split_lines": bytes([T_NO_LIMIT]) + t_request() + t_request() + t_line(0, 1, 20) + t_line(12, 0, 70)
    + t_line(1, 2, 1) + t_raw(b'"\xc3') + T_DRAIN + t_raw(b'\xa9"\r\n') + T_DRAIN,
    "small_limit_and_bom": bytes([15]) + t_line(18, 0) + t_raw(b"[1]\n") + t_request() + t_line(21, 1, 10)
    + T_DRAIN + t_line(0, 1) + t_raw(b"\xef\xbb\xbf{}\n") + t_raw(b" " * 10) + t_raw(b" " * 8 + b"\n") + T_DRAIN,
    "bom_split": bytes([T_NO_LIMIT]) + t_raw(b"\xef") + T_DRAIN + t_raw(b"\xbb") + t_raw(b"\xbf{}\n") + T_DRAIN,
    # 80 requests, deadlines descending with the ids; the newest 60 answered or
    # cancelled (stale heap entries outnumber live ones: compaction); then the
    # rest time out, earliest deadline first.
    "many_deadlines_compacted": bytes([T_NO_LIMIT]) + b"".join(t_request(0, 0, 63 - i * 63 // 80)
    for i in range(80)) + b"".join(t_line(0, 160 + i) for i in range(21, 81)) + t_cancel(128 + 20) + T_DRAIN
    + t_advance(30) + T_DRAIN + t_advance(63) + T_DRAIN,
    "many_requests_fail_ascending": bytes([T_NO_LIMIT]) + b"".join(t_request(0, 0, 60 if i % 2 else 255)
    for i in range(12)) + t_line(0, 5) + t_line(0, 3) + T_END + T_DRAIN,
}


def main():
    for target in ("reader_model", "reader_chunking", "encode", "jsonrpc_model", "transport_model", "ffi"):
        shutil.rmtree(os.path.join(HERE, target), ignore_errors=True)
    # Texts as one line each, and all of them as one stream.
    all_lines = b"\n".join(t for t in TEXTS.values() if len(t) < 500) + b"\n"
    streams = dict(STREAMS)
    streams["all_texts"] = all_lines
    for i, (name, text) in enumerate(TEXTS.items()):
        write("encode", name, text)
        # For the readers: the text as a line (a few with CRLF), except the empty one.
        if text:
            line = text + (b"\r\n" if i % 5 == 0 else b"\n")
            write("reader_model", "line_" + name, line)
    write("encode", "ws_around", b" \r\n\t[1, {\"a\" : \"b c\"}]\n\n ")
    write("encode", "ws_only", b" \n\t\r")
    write("encode", "crlf_inside", b'{"a":\r\n1}\r\n')
    for i, (name, stream) in enumerate(streams.items()):
        write("reader_model", name, stream)
        write("reader_chunking", name, chunk_seed(i, stream))
        write("ffi", name, chunk_seed(i + 3, stream))
    rpc_texts = {k: v for k, v in TEXTS.items() if k.startswith("rpc_")}
    rpc_texts.update(RPC_MORE)
    for name, text in rpc_texts.items():
        write("jsonrpc_model", name, text + b"\n")
    write("jsonrpc_model", "all_rpc", b"\r\n".join(rpc_texts.values()))
    write("jsonrpc_model", "mcp_session", streams["mcp_session"])
    # Each chunking header over a few streams with lines near the small limits.
    near = b'{"a":1}\n12345678\n123456789\n        \n{"b":"xyz"}\r\n' + BOM + b"[]\n\xff\n{}"
    for i in range(len(HEADERS)):
        write("reader_chunking", "near_limits_%d" % i, chunk_seed(i, near))
        write("reader_chunking", "rpc_session_%d" % i, chunk_seed(i, streams["mcp_session"][:300]))
    for name, program in TRANSPORT.items():
        write("transport_model", name, program)


main()
