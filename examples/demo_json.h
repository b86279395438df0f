/*
 * demo_json.h - a deliberately tiny JSON field reader for the demo programs
 * (mcp_host.c, mcp_server.c). It is NOT a JSON parser.
 *
 * It relies on every line it looks at having already been validated by the
 * library (the demos only look at lines the reader reported as valid JSON:
 * MCP_MESSAGE_JSON or MCP_MESSAGE_INVALID_JSONRPC), so it only *navigates*:
 * find an object member, compare a string, walk a string body. It does not
 * re-validate, and on input that is not valid JSON its answers are
 * meaningless. It is bounds-checked throughout, though, so even then it
 * cannot read past the line.
 *
 * Values are returned as spans of their raw JSON text, which is what lets the
 * demos echo ids (and the echo tool's text) back byte for byte. Duplicate
 * object keys: the last one wins (as in most JSON parsers).
 *
 * Header-only: every function is static inline, so each demo stays a single
 * translation unit and one that does not call a helper gets no
 * unused-function warning.
 */

#ifndef MCP_STDIO_DEMO_JSON_H
#define MCP_STDIO_DEMO_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *p; /* raw JSON text of the value; NULL if absent */
    size_t n;
} JSpan;

#define JS_ERR SIZE_MAX

static const JSpan JS_NONE = {NULL, 0};

static inline int js_is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static inline size_t js_ws(const char *s, size_t n, size_t i)
{
    while (i < n && js_is_ws(s[i]))
        i++;
    return i;
}

/* s[i] is the opening quote; returns the index just past the closing quote. */
static inline size_t js_skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++; /* skip the escaped character (for \uXXXX the hex digits are harmless) */
        else if (s[i] == '"')
            return i + 1;
    }
    return JS_ERR;
}

/* Returns the index just past the value starting at s[i]. */
static inline size_t js_skip_value(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return JS_ERR;
    if (s[i] == '"')
        return js_skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = js_skip_string(s, n, i);
                if (i == JS_ERR)
                    return JS_ERR;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return JS_ERR;
    }
    /* number, true, false, null: runs until a structural character or space */
    size_t start = i;
    while (i < n && !js_is_ws(s[i]) && s[i] != ',' && s[i] != ']' && s[i] != '}' && s[i] != ':')
        i++;
    return i > start ? i : JS_ERR;
}

/* The value of the 4 hex digits at s[i], or -1. */
static inline long js_hex4(const char *s, size_t n, size_t i)
{
    long v = 0;
    if (i + 4 > n)
        return -1;
    for (size_t k = i; k < i + 4; k++) {
        char c = s[k];
        int d = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Encodes code point cp as UTF-8 into out; returns the byte count. */
static inline int js_utf8(unsigned long cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Decodes the next character of a JSON string body starting at s[*i] into
 * UTF-8 (raw bytes pass through one at a time; escapes are decoded, including
 * surrogate pairs; a lone surrogate becomes U+FFFD). Returns the number of
 * bytes written to out, or 0 at the closing quote or on malformed input.
 */
static inline int js_str_next(const char *s, size_t n, size_t *i, unsigned char out[4])
{
    size_t k = *i;
    if (k >= n || s[k] == '"')
        return 0;
    if (s[k] != '\\') {
        out[0] = (unsigned char)s[k];
        *i = k + 1;
        return 1;
    }
    if (k + 1 >= n)
        return 0;
    char c;
    switch (s[k + 1]) {
    case '"': c = '"'; break;
    case '\\': c = '\\'; break;
    case '/': c = '/'; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
        long hi = js_hex4(s, n, k + 2);
        if (hi < 0)
            return 0;
        unsigned long cp = (unsigned long)hi;
        k += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && k + 1 < n && s[k] == '\\' && s[k + 1] == 'u') {
            long lo = js_hex4(s, n, k + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned long)lo - 0xDC00);
                k += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
            cp = 0xFFFD; /* lone surrogate */
        *i = k;
        return js_utf8(cp, out);
    }
    default:
        return 0;
    }
    out[0] = (unsigned char)c;
    *i = k + 2;
    return 1;
}

static inline int js_is_string(JSpan v) { return v.p && v.n >= 2 && v.p[0] == '"'; }
static inline int js_is_object(JSpan v) { return v.p && v.n >= 2 && v.p[0] == '{'; }

/* Does the JSON string v decode to exactly the C string lit? */
static inline int js_str_eq(JSpan v, const char *lit)
{
    if (!js_is_string(v))
        return 0;
    size_t i = 1, pos = 0, len = strlen(lit);
    unsigned char buf[4];
    int k;
    while ((k = js_str_next(v.p, v.n, &i, buf)) > 0) {
        if (pos + (size_t)k > len || memcmp(lit + pos, buf, (size_t)k) != 0)
            return 0;
        pos += (size_t)k;
    }
    return pos == len && i < v.n && v.p[i] == '"';
}

static inline int js_is_array(JSpan v) { return v.p && v.n >= 2 && v.p[0] == '['; }

/* Is the raw JSON text of v exactly lit (e.g. an id "3" or the literal "true")? */
static inline int js_raw_eq(JSpan v, const char *lit)
{
    return v.p && v.n == strlen(lit) && memcmp(v.p, lit, v.n) == 0;
}

/*
 * Decodes the JSON string v into out (which must have room for v.n bytes:
 * decoding never makes a string longer than its JSON text). Returns the
 * number of bytes written, or JS_ERR if v is not a string.
 */
static inline size_t js_str_decode(JSpan v, char *out)
{
    if (!js_is_string(v))
        return JS_ERR;
    size_t i = 1, pos = 0;
    unsigned char buf[4];
    int k;
    while ((k = js_str_next(v.p, v.n, &i, buf)) > 0) {
        memcpy(out + pos, buf, (size_t)k);
        pos += (size_t)k;
    }
    return pos;
}

/*
 * Iterates over the elements of array arr:
 *     size_t pos = 0; JSpan e;
 *     while (js_array_next(arr, &pos, &e)) ...
 * Returns 1 and sets *elem, or 0 after the last element (or if arr is not an array).
 */
static inline int js_array_next(JSpan arr, size_t *pos, JSpan *elem)
{
    if (!js_is_array(arr))
        return 0;
    const char *s = arr.p;
    size_t n = arr.n;
    size_t i = *pos == 0 ? js_ws(s, n, 1) : *pos; /* 0: start (index 0 is the '[') */
    if (i >= n || s[i] == ']')
        return 0;
    size_t vend = js_skip_value(s, n, i);
    if (vend == JS_ERR)
        return 0;
    *elem = (JSpan){s + i, vend - i};
    i = js_ws(s, n, vend);
    *pos = (i < n && s[i] == ',') ? js_ws(s, n, i + 1) : n;
    return 1;
}

/* Element `index` of array arr, or JS_NONE. */
static inline JSpan js_index(JSpan arr, size_t index)
{
    size_t pos = 0;
    JSpan e;
    for (size_t k = 0; js_array_next(arr, &pos, &e); k++)
        if (k == index)
            return e;
    return JS_NONE;
}

/* Value of member `key` of object obj, or JS_NONE. */
static inline JSpan js_member(JSpan obj, const char *key)
{
    JSpan found = JS_NONE;
    if (!js_is_object(obj))
        return JS_NONE;
    const char *s = obj.p;
    size_t n = obj.n;
    size_t i = js_ws(s, n, 1);
    while (i < n && s[i] == '"') {
        size_t kend = js_skip_string(s, n, i);
        if (kend == JS_ERR)
            return JS_NONE;
        JSpan k = {s + i, kend - i};
        i = js_ws(s, n, kend);
        if (i >= n || s[i] != ':')
            return JS_NONE;
        i = js_ws(s, n, i + 1);
        size_t vend = js_skip_value(s, n, i);
        if (vend == JS_ERR)
            return JS_NONE;
        if (js_str_eq(k, key)) {
            found.p = s + i;
            found.n = vend - i;
        }
        i = js_ws(s, n, vend);
        if (i >= n || s[i] != ',')
            break;
        i = js_ws(s, n, i + 1);
    }
    return found;
}

#endif /* MCP_STDIO_DEMO_JSON_H */
