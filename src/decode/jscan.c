/* jscan.c: a non-allocating JSON validator and scanner (see jscan.h).
 *
 * The validator is one iterative pass with an explicit bit stack (one bit
 * per open container: object or array), so a hostile document can neither
 * recurse us off the stack nor make us allocate. The walkers (iterators,
 * lookups) re-scan values lazily and rely on the validator having run: they
 * only bracket-match and skip strings, which is several times cheaper than
 * validating again. */
#include "decode/jscan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Byte classes for the string fast loop: 1 for a byte that needs no
 * attention inside a string (printable ASCII other than '"' and '\\'). */
static int str_plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* Eight bytes at a time: a word with a nonzero result holds at least one
 * byte that needs a closer look. These are the classic bit tricks for "some
 * byte equals c" and "some byte is below n" (exact as to whether any byte
 * matches, though not as to which). */
#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static uint64_t load64(const char *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof(x));
    return x;
}

static uint64_t swar_has_byte(uint64_t x, unsigned char c)
{
    uint64_t t = x ^ (ONES * c);
    return (t - ONES) & ~t & HIGHS;
}

/* Nonzero when some byte of x is '"', '\\', below 0x20 or above 0x7F. */
static uint64_t swar_string_special(uint64_t x)
{
    return swar_has_byte(x, '"') | swar_has_byte(x, '\\') |
           ((x - ONES * 0x20) & ~x & HIGHS) | (x & HIGHS);
}

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws((unsigned char)*p))
        p++;
    return p;
}

static int hex_val(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parse 4 hex digits at p (p + 4 <= end checked by the caller). Returns the
 * value or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_val((unsigned char)p[i]);
        if (h < 0)
            return -1;
        v = (v << 4) | h;
    }
    return v;
}

/* The slow part of string validation, kept out of line so that the common
 * all-ASCII scan stays small: one escape or one non-ASCII character at p.
 * Returns the pointer past it, or NULL. */
static const char *validate_string_special(const char *p, const char *end)
{
    unsigned char c = (unsigned char)*p;

    if (c == '\\') {
        if (end - p < 2)
            return NULL;
        switch (p[1]) {
        case '"': case '\\': case '/': case 'b':
        case 'f': case 'n': case 'r': case 't':
            return p + 2;
        case 'u':
            break;
        default:
            return NULL;
        }
        if (end - p < 6)
            return NULL;
        long cp = hex4(p + 2);
        if (cp < 0)
            return NULL;
        p += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return NULL;              /* a low surrogate with no high one */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return NULL;          /* a high surrogate not followed by \u */
            long lo = hex4(p + 2);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return NULL;
            p += 6;
        }
        return p;
    }
    if (c < 0x20)
        return NULL;                  /* raw control characters are not allowed */
    size_t n = ll_utf8_len((const unsigned char *)p, (size_t)(end - p));
    return n ? p + n : NULL;
}

/* Validate a string whose opening quote is at p. Returns the pointer past
 * the closing quote, or NULL. *escaped is set to 1 when the string holds an
 * escape (and left alone otherwise).
 *
 * Eight bytes at a time: the lowest flagged byte of the SWAR mask is exact,
 * so we jump straight to the first byte that needs a look. */
static const char *validate_string(const char *p, const char *end, int *escaped)
{
    p++;
    for (;;) {
        for (;;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (end - p >= 8) {
                uint64_t m = swar_string_special(load64(p));
                if (!m) {
                    p += 8;
                    continue;
                }
                p += (unsigned)__builtin_ctzll(m) / 8;   /* the first flagged byte */
                break;
            }
#endif
            while (p < end && str_plain((unsigned char)*p))
                p++;
            break;
        }
        if (p >= end)
            return NULL;
        if (*p == '"')
            return p + 1;
        if (*p == '\\')
            *escaped = 1;
        p = validate_string_special(p, end);
        if (!p)
            return NULL;
    }
}

/* Validate a number starting at p. Returns the pointer past it, or NULL.
 * What follows is checked by the caller (it must be a delimiter). */
static const char *validate_number(const char *p, const char *end)
{
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && is_digit((unsigned char)*p))
            p++;
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit((unsigned char)*p))
            return NULL;
        while (p < end && is_digit((unsigned char)*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit((unsigned char)*p))
            return NULL;
        while (p < end && is_digit((unsigned char)*p))
            p++;
    }
    return p;
}

static const char *validate_literal(const char *p, const char *end,
                                    const char *lit, size_t n)
{
    if ((size_t)(end - p) < n || memcmp(p, lit, n) != 0)
        return NULL;
    return p + n;
}

static int top_is_object(const unsigned char *stack, unsigned depth)
{
    return (stack[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
}

/* Validate one value starting at p (no leading whitespace) with at most
 * max_depth (0..JSCAN_DEPTH_LIMIT) nested containers. Returns the pointer
 * just past it, or NULL when the text is not a valid value.
 *
 * This is a small pushdown automaton. The stack holds one bit per open
 * container (1 = object); `depth` is its height. After each complete value
 * we land in `after_value`, which decides what may follow from the
 * innermost open container. */
static const char *validate_value(const char *p, const char *end,
                                  unsigned max_depth)
{
    unsigned char stack[JSCAN_DEPTH_LIMIT / 8];
    unsigned depth = 0;
    int in_object;                    /* whether the innermost container is an object */
    int escaped = 0;                  /* not needed here */

value:
    if (p >= end)
        return NULL;
    switch (*p) {
    case '{':
    case '[': {
        int is_obj = *p == '{';
        if (depth >= max_depth)
            return NULL;
        if (depth % 8 == 0)
            stack[depth / 8] = 0;     /* a fresh byte of the bit stack */
        if (is_obj)
            stack[depth / 8] |= (unsigned char)(1u << (depth % 8));
        else
            stack[depth / 8] &= (unsigned char)~(1u << (depth % 8));
        depth++;
        p = skip_ws(p + 1, end);
        if (p >= end)
            return NULL;
        if (*p == (is_obj ? '}' : ']')) {
            p++;
            depth--;
            goto after_value;
        }
        if (is_obj)
            goto member_key;
        goto value;
    }
    case '"':
        p = validate_string(p, end, &escaped);
        break;
    case 't':
        p = validate_literal(p, end, "true", 4);
        break;
    case 'f':
        p = validate_literal(p, end, "false", 5);
        break;
    case 'n':
        p = validate_literal(p, end, "null", 4);
        break;
    default:
        p = validate_number(p, end);
        break;
    }
    if (!p)
        return NULL;

after_value:
    if (depth == 0)
        return p;
    p = skip_ws(p, end);
    if (p >= end)
        return NULL;
    in_object = top_is_object(stack, depth);
    if (*p == (in_object ? '}' : ']')) {
        p++;
        depth--;
        goto after_value;
    }
    if (*p != ',')
        return NULL;
    p = skip_ws(p + 1, end);
    if (in_object)
        goto member_key;
    goto value;

member_key:
    if (p >= end || *p != '"')
        return NULL;
    p = validate_string(p, end, &escaped);
    if (!p)
        return NULL;
    p = skip_ws(p, end);
    if (p >= end || *p != ':')
        return NULL;
    p = skip_ws(p + 1, end);
    goto value;
}

int jscan_validate(const char *doc, size_t len, unsigned max_depth,
                   struct jscan_value *root)
{
    const char *p, *q, *end;

    if (max_depth < 1 || max_depth > JSCAN_DEPTH_LIMIT)
        return LL_E_INVAL;
    if (!doc && len)
        return LL_E_INVAL;
    end = doc + len;
    p = skip_ws(doc, end);
    q = validate_value(p, end, max_depth);
    if (!q || skip_ws(q, end) != end)
        return LL_E_PROTO;        /* invalid, or trailing garbage after the value */
    if (root) {
        root->type = jscan_type_of((unsigned char)*p);
        root->ptr = p;
        root->len = (size_t)(q - p);
    }
    return 0;
}

/* ---- raw scanning --------------------------------------------------------- */

const char *jscan_scan_value(const char *p, const char *end, unsigned max_depth)
{
    if (!p || p >= end || max_depth > JSCAN_DEPTH_LIMIT)
        return NULL;
    return validate_value(p, end, max_depth);
}

const char *jscan_scan_string(const char *p, const char *end, int *escaped)
{
    *escaped = 0;
    return validate_string(p, end, escaped);
}

/* ---- the single-pass reader ----------------------------------------------- */

static int reader_fail(struct jscan_reader *r)
{
    r->error = LL_E_PROTO;
    return 0;
}

void jscan_reader_init(struct jscan_reader *r, const char *doc, size_t len,
                       unsigned max_depth)
{
    r->p = doc;
    r->end = doc + len;
    r->depth = 0;
    r->max_depth = max_depth;
    r->first = 0;
    r->key_escaped = 0;
    r->error = 0;
    if (max_depth < 1 || max_depth > JSCAN_DEPTH_LIMIT || (!doc && len))
        r->error = LL_E_INVAL;
    else
        r->p = skip_ws(doc, r->end);
}

enum jscan_type jscan_reader_peek(struct jscan_reader *r)
{
    if (r->error)
        return JSCAN_INVALID;
    r->p = skip_ws(r->p, r->end);
    if (r->p >= r->end)
        return JSCAN_INVALID;
    return jscan_type_of((unsigned char)*r->p);
}

int jscan_reader_value(struct jscan_reader *r, struct jscan_value *out)
{
    const char *q;

    if (r->error)
        return 0;
    r->p = skip_ws(r->p, r->end);
    q = r->p < r->end ? validate_value(r->p, r->end, r->max_depth - r->depth) : NULL;
    if (!q)
        return reader_fail(r);
    if (out) {
        out->type = jscan_type_of((unsigned char)*r->p);
        out->ptr = r->p;
        out->len = (size_t)(q - r->p);
    }
    r->p = q;
    r->first = 0;
    return 1;
}

int jscan_reader_enter(struct jscan_reader *r)
{
    enum jscan_type t = jscan_reader_peek(r);

    if (t != JSCAN_OBJECT && t != JSCAN_ARRAY)
        return reader_fail(r);
    if (r->depth >= r->max_depth)
        return reader_fail(r);
    r->depth++;
    r->p++;
    r->first = 1;
    return 1;
}

/* Common to next_member and next_element: past the separator, or the
 * closing bracket (then leave the container and return 0). */
static int reader_next(struct jscan_reader *r, char close)
{
    if (r->error || r->depth == 0)
        return r->error ? 0 : reader_fail(r);
    const char *p = skip_ws(r->p, r->end);
    if (p >= r->end)
        return reader_fail(r);
    if (*p == close) {
        r->p = p + 1;
        r->depth--;
        r->first = 0;             /* the container was a value of its parent */
        return 0;
    }
    if (!r->first) {
        if (*p != ',')
            return reader_fail(r);
        p = skip_ws(p + 1, r->end);
        if (p >= r->end)
            return reader_fail(r);
    }
    r->p = p;
    r->first = 0;
    return 1;
}

int jscan_reader_next_member(struct jscan_reader *r, struct jscan_value *key)
{
    if (!reader_next(r, '}'))
        return 0;
    const char *p = r->p;
    if (*p != '"')
        return reader_fail(r);
    r->key_escaped = 0;
    const char *q = validate_string(p, r->end, &r->key_escaped);
    if (!q)
        return reader_fail(r);
    if (key) {
        key->type = JSCAN_STRING;
        key->ptr = p;
        key->len = (size_t)(q - p);
    }
    q = skip_ws(q, r->end);
    if (q >= r->end || *q != ':')
        return reader_fail(r);
    r->p = q + 1;
    return 1;
}

int jscan_reader_next_element(struct jscan_reader *r)
{
    return reader_next(r, ']');
}

int jscan_reader_finish(struct jscan_reader *r)
{
    if (r->error)
        return r->error;
    if (r->depth != 0 || skip_ws(r->p, r->end) != r->end)
        return LL_E_PROTO;
    return 0;
}

/* ---- walkers over validated text ---------------------------------------- */

/* Skip the string whose opening quote is at p; returns past the closing
 * quote (or end on malformed text). */
static const char *skip_string(const char *p, const char *end)
{
    p++;
    for (;;) {
        while (end - p >= 8) {
            uint64_t x = load64(p);
            if (swar_has_byte(x, '"') | swar_has_byte(x, '\\'))
                break;
            p += 8;
        }
        while (p < end && *p != '"' && *p != '\\')
            p++;
        if (p >= end)
            return end;
        if (*p == '"')
            return p + 1;
        p += 2;                       /* an escape: skip the backslash and the next byte */
        if (p > end)
            return end;
    }
}

/* Skip one value starting at p (no leading whitespace). Returns the pointer
 * past it, never beyond end. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return end;
    unsigned char c = (unsigned char)*p;
    if (c == '"')
        return skip_string(p, end);
    if (c == '{' || c == '[') {
        size_t depth = 0;
        while (p < end) {
            c = (unsigned char)*p;
            if (c == '"') {
                p = skip_string(p, end);
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return end;
    }
    /* A number or literal: runs to the next delimiter. */
    while (p < end) {
        c = (unsigned char)*p;
        if (c == ',' || c == '}' || c == ']' || is_ws(c))
            break;
        p++;
    }
    return p;
}

int jscan_iter_init(struct jscan_iter *it, const struct jscan_value *v)
{
    if (!v || (v->type != JSCAN_OBJECT && v->type != JSCAN_ARRAY) || v->len < 2) {
        it->p = it->end = NULL;
        it->type = JSCAN_INVALID;
        return LL_E_INVAL;
    }
    it->p = v->ptr + 1;
    it->end = v->ptr + v->len - 1;   /* the closing bracket */
    it->type = v->type;
    return 0;
}

/* Position at the next value of the container: skip whitespace and one
 * separating comma. Returns 0 at the end. */
static int iter_advance(struct jscan_iter *it)
{
    const char *p = skip_ws(it->p, it->end);
    if (p < it->end && *p == ',')
        p = skip_ws(p + 1, it->end);
    it->p = p;
    return p < it->end;
}

static void make_value(struct jscan_value *v, const char *p, const char *q)
{
    v->type = jscan_type_of((unsigned char)*p);
    v->ptr = p;
    v->len = (size_t)(q - p);
}

int jscan_iter_next_member(struct jscan_iter *it, struct jscan_value *key,
                           struct jscan_value *val)
{
    if (it->type != JSCAN_OBJECT || !iter_advance(it))
        return 0;
    const char *p = it->p;
    if (*p != '"')
        return 0;
    const char *q = skip_string(p, it->end);
    if (key)
        make_value(key, p, q);
    p = skip_ws(q, it->end);
    if (p >= it->end || *p != ':')
        return 0;
    p = skip_ws(p + 1, it->end);
    if (p >= it->end)
        return 0;
    q = skip_value(p, it->end);
    if (val)
        make_value(val, p, q);
    it->p = q;
    return 1;
}

int jscan_iter_next_element(struct jscan_iter *it, struct jscan_value *val)
{
    if (it->type != JSCAN_ARRAY || !iter_advance(it))
        return 0;
    const char *p = it->p;
    const char *q = skip_value(p, it->end);
    if (val)
        make_value(val, p, q);
    it->p = q;
    return 1;
}

/* ---- strings ------------------------------------------------------------ */

/* Decode the escape at p (p[0] == '\\') into out (up to 4 bytes of UTF-8).
 * Returns the bytes written and advances *pp past the escape. Tolerates
 * malformed text by emitting nothing and skipping one byte. */
static size_t decode_escape(const char **pp, const char *end, char out[4])
{
    const char *p = *pp;
    if (end - p < 2) {
        *pp = end;
        return 0;
    }
    char c = p[1];
    *pp = p + 2;
    switch (c) {
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': break;
    default: out[0] = c; return 1;     /* '"', '\\', '/' */
    }
    if (end - p < 6) {
        *pp = end;
        return 0;
    }
    long cp = hex4(p + 2);
    if (cp < 0)
        return 0;
    *pp = p + 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 12 && p[6] == '\\' && p[7] == 'u') {
        long lo = hex4(p + 8);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            *pp = p + 12;
        }
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The raw contents of a string value (between the quotes). */
static int string_body(const struct jscan_value *v, const char **p, const char **end)
{
    if (!v || v->type != JSCAN_STRING || v->len < 2)
        return -1;
    *p = v->ptr + 1;
    *end = v->ptr + v->len - 1;
    return 0;
}

size_t jscan_string_decoded_len(const struct jscan_value *v)
{
    const char *p, *end;
    size_t n = 0;
    char tmp[4];

    if (string_body(v, &p, &end) < 0)
        return 0;
    while (p < end) {
        const char *b = memchr(p, '\\', (size_t)(end - p));
        if (!b)
            return n + (size_t)(end - p);
        n += (size_t)(b - p);
        p = b;
        n += decode_escape(&p, end, tmp);
    }
    return n;
}

int jscan_string_equals(const struct jscan_value *v, const char *s, size_t len)
{
    const char *p, *end;
    char tmp[4];

    if (string_body(v, &p, &end) < 0)
        return 0;
    if (!memchr(p, '\\', (size_t)(end - p)))
        return (size_t)(end - p) == len && memcmp(p, s, len) == 0;
    while (p < end) {
        if (*p == '\\') {
            size_t n = decode_escape(&p, end, tmp);
            if (n > len || memcmp(tmp, s, n) != 0)
                return 0;
            s += n;
            len -= n;
        } else {
            if (len == 0 || *p != *s)
                return 0;
            p++;
            s++;
            len--;
        }
    }
    return len == 0;
}

/* The length of the UTF-8 character whose lead byte is c (1 for ASCII and,
 * defensively, for a stray continuation byte). */
static size_t utf8_char_len(unsigned char c)
{
    if (c >= 0xF0)
        return 4;
    if (c >= 0xE0)
        return 3;
    if (c >= 0xC0)
        return 2;
    return 1;
}

int jscan_string_unescape(const struct jscan_value *v, char *buf, size_t cap,
                          size_t *out_len)
{
    const char *p, *end;
    size_t n = 0;
    char tmp[4];
    int rc = 0;

    if (out_len)
        *out_len = 0;
    if (!buf || cap == 0)
        return LL_E_INVAL;
    buf[0] = '\0';
    if (string_body(v, &p, &end) < 0)
        return LL_E_INVAL;
    while (p < end) {
        /* A run of bytes up to the next escape that fits whole: one copy. */
        if (*p != '\\') {
            const char *b = memchr(p, '\\', (size_t)(end - p));
            size_t run = (size_t)((b ? b : end) - p);
            if (n + run <= cap - 1) {
                memcpy(buf + n, p, run);
                n += run;
                p += run;
                continue;
            }
        }
        /* Otherwise copy one whole character (or one escape) at a time, so
         * that truncation never splits a UTF-8 sequence. */
        const char *unit;
        size_t k;
        if (*p == '\\') {
            k = decode_escape(&p, end, tmp);
            unit = tmp;
        } else {
            k = utf8_char_len((unsigned char)*p);
            if (k > (size_t)(end - p))
                k = (size_t)(end - p);
            unit = p;
            p += k;
        }
        if (n + k > cap - 1) {
            rc = LL_E_RANGE;
            break;
        }
        memcpy(buf + n, unit, k);
        n += k;
    }
    buf[n] = '\0';
    if (out_len)
        *out_len = n;
    return rc;
}

/* ---- lookups and numbers ------------------------------------------------ */

int jscan_object_get(const struct jscan_value *obj, const char *key,
                     size_t key_len, struct jscan_value *out)
{
    struct jscan_iter it;
    struct jscan_value k, v;

    if (!obj || obj->type != JSCAN_OBJECT || jscan_iter_init(&it, obj) < 0)
        return LL_E_NOTFOUND;
    while (jscan_iter_next_member(&it, &k, &v)) {
        if (jscan_string_equals(&k, key, key_len)) {
            if (out)
                *out = v;
            return 0;
        }
    }
    return LL_E_NOTFOUND;
}

int jscan_path_get(const struct jscan_value *v, const char *path,
                   struct jscan_value *out)
{
    struct jscan_value cur;

    if (!v || !path)
        return LL_E_NOTFOUND;
    cur = *v;
    while (*path) {
        const char *dot = strchr(path, '.');
        size_t seg_len = dot ? (size_t)(dot - path) : strlen(path);

        if (cur.type == JSCAN_OBJECT) {
            if (jscan_object_get(&cur, path, seg_len, &cur) < 0)
                return LL_E_NOTFOUND;
        } else if (cur.type == JSCAN_ARRAY) {
            uint64_t idx = 0;
            struct jscan_iter it;
            struct jscan_value e;
            if (seg_len == 0 || seg_len > 18)
                return LL_E_NOTFOUND;
            for (size_t i = 0; i < seg_len; i++) {
                if (!is_digit((unsigned char)path[i]))
                    return LL_E_NOTFOUND;
                idx = idx * 10 + (uint64_t)(path[i] - '0');
            }
            jscan_iter_init(&it, &cur);
            for (;;) {
                if (!jscan_iter_next_element(&it, &e))
                    return LL_E_NOTFOUND;
                if (idx-- == 0)
                    break;
            }
            cur = e;
        } else {
            return LL_E_NOTFOUND;
        }
        path += seg_len;
        if (*path == '.')
            path++;
    }
    if (out)
        *out = cur;
    return 0;
}

int jscan_number_int64(const struct jscan_value *v, int64_t *out)
{
    const char *p, *end;
    int neg = 0;
    uint64_t mag = 0;

    if (!v || v->type != JSCAN_NUMBER || v->len == 0)
        return LL_E_INVAL;
    p = v->ptr;
    end = v->ptr + v->len;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end)
        return LL_E_INVAL;
    for (; p < end; p++) {
        if (!is_digit((unsigned char)*p))
            return LL_E_RANGE;            /* a fraction or an exponent */
        unsigned d = (unsigned)(*p - '0');
        if (mag > (UINT64_MAX - d) / 10)
            return LL_E_RANGE;
        mag = mag * 10 + d;
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return LL_E_RANGE;
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return LL_E_RANGE;
        *out = (int64_t)mag;
    }
    return 0;
}

int jscan_number_double(const struct jscan_value *v, double *out)
{
    char tmp[321];
    char *endp;
    double d;

    if (!v || v->type != JSCAN_NUMBER || v->len == 0)
        return LL_E_INVAL;
    if (v->len >= sizeof(tmp))
        return LL_E_RANGE;
    memcpy(tmp, v->ptr, v->len);
    tmp[v->len] = '\0';
    errno = 0;
    d = strtod(tmp, &endp);
    if (endp != tmp + v->len)
        return LL_E_INVAL;
    if (errno == ERANGE && (d > 1.0 || d < -1.0))
        return LL_E_RANGE;
    *out = d;
    return 0;
}
