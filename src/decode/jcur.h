/* jcur.h: the cursor the API decoders (openai.c, anthropic.c, responses.c) walk a
 * payload with: one pass that validates every byte (by jscan's rules) and
 * reads the few members a decoder wants on the way. Everything here is
 * static inline, so each decoder gets its own inlined copy of the steps
 * its hot path takes; nothing here allocates. Private to decode/. */
#ifndef LL_JCUR_H
#define LL_JCUR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

#include "decode/jscan.h"

/* ---- the cursor ------------------------------------------------------------
 *
 * A payload is walked with a bare pointer. Each step below consumes one
 * piece of JSON and returns 0 (or 1 for "another member/element follows"),
 * or finds invalid text and returns -1, which ends the decode with
 * LL_E_PROTO. Containers are read as
 *
 *     rc = cur_open(c, '}');
 *     while (rc > 0) { cur_key(...); <consume the value>; rc = cur_more(c, '}'); }
 *
 * Values we do not read are validated as they are skipped (the common
 * scalars here, anything else by jscan_scan_value()); strings we read are
 * validated too. Every byte of the payload is therefore checked once, by
 * the same rules as jscan_validate(), with JSCAN_DEFAULT_DEPTH nesting
 * allowed in all.
 *
 * This runs once per SSE event, so it is written for the common case of
 * compact, plain-ASCII JSON: the checks that case needs are inlined, and
 * everything else (whitespace, escapes, UTF-8, fractions) takes a call. */
struct cur {
    const char *p;
    const char *end;
    unsigned depth; /* containers entered and not yet left */
    /* The counted output strings (content, text) seen: how many, and the
     * bytes between the quotes of the last one, for oai_decode_chunk_memo. */
    unsigned texts;
    const char *text, *text_end;
};

/* A member's name, ready for comparing against literals. Real payloads
 * never escape their keys, so the name is normally a view of the raw key;
 * an escaped key is decoded into the caller's small buffer (a key too long
 * for it matches nothing we look for, as all our names are short). */
struct key {
    const char *s;
    size_t n;
};

/* The steps every token goes through are forced inline: left to itself the
 * compiler keeps them out of line (each has several callers), and the calls
 * then cost more than the scanning. */
#if defined(__GNUC__)
#define CUR_INLINE static inline __attribute__((always_inline))
#else
#define CUR_INLINE static inline
#endif

#define KEY_IS(k, lit) ((k)->n == sizeof(lit) - 1 && memcmp((k)->s, (lit), sizeof(lit) - 1) == 0)
#define KEY_BUF 32

static inline const char *skip_ws_slow(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Past any whitespace at p. Compact JSON has none, so the test that there
 * is none is all that is inlined. */
CUR_INLINE const char *skip_ws(const char *p, const char *end)
{
    if (p < end && (unsigned char)*p > ' ')
        return p;
    return skip_ws_slow(p, end);
}

/* Validate the string whose opening quote is at p; the pointer past its
 * closing quote, or NULL. *escaped as for jscan_scan_string().
 *
 * This is jscan_scan_string()'s common case done here, where it can be
 * inlined: 16 bytes at a time, find the first byte that is a quote, a
 * backslash, a control byte or not ASCII (a signed compare below 0x20
 * catches both of the last two). When that byte is the closing quote the
 * string was plain and we are done; anything else (an escape, UTF-8, the
 * last few bytes of the payload) goes to jscan, from where we stopped. */
CUR_INLINE const char *scan_string(const char *p, const char *end, int *escaped)
{
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(' ');
    const char *s = p + 1;

    while (end - s >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i m =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                         _mm_cmplt_epi8(x, space));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits) {
            s += __builtin_ctz(bits);
            if (*s == '"') {
                *escaped = 0;
                return s + 1;
            }
            break;
        }
        s += 16;
    }
    return jscan_scan_string(s - 1, end, escaped);
#else
    return jscan_scan_string(p, end, escaped);
#endif
}

/* Past the digits at p (none is fine). Eight at a time while they last: a
 * byte is a digit exactly when its high nibble is 3 and adding 6 leaves it
 * there. */
CUR_INLINE const char *skip_digits(const char *p, const char *end)
{
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, sizeof(x));
        if ((x & 0xF0F0F0F0F0F0F0F0ULL) != 0x3030303030303030ULL ||
            ((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) != 0x3030303030303030ULL)
            break;
        p += 8;
    }
    while (p < end && (unsigned)(*p - '0') < 10)
        p++;
    return p;
}

/* Validate the value at p (no whitespace before it); the pointer past it,
 * or NULL. *escaped is set for a string. Strings, null and integers, which
 * are nearly every value in a chunk, are done here; the rest (containers,
 * negative numbers, fractions, true/false) goes to jscan_scan_value(). */
CUR_INLINE const char *scan_value(const struct cur *c, const char *p, int *escaped)
{
    const char *end = c->end, *q;

    if (p >= end)
        return NULL;
    switch (*p) {
    case '"': return scan_string(p, end, escaped);
    case 'n':
        if (end - p >= 4 && memcmp(p, "null", 4) == 0)
            return p + 4;
        return NULL;
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        q = skip_digits(p + 1, end);
        if (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))
            return q;
        break;
    case '0':
        q = p + 1;
        if (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))
            return q;
        break;
    default: break;
    }
    return jscan_scan_value(p, end, JSCAN_DEFAULT_DEPTH - c->depth);
}

/* The first byte of the next value, after whitespace, or -1 at the end. */
CUR_INLINE int cur_peek(struct cur *c)
{
    c->p = skip_ws(c->p, c->end);
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

/* Validate and consume the next value. */
CUR_INLINE int cur_skip(struct cur *c)
{
    int escaped;
    const char *q = scan_value(c, skip_ws(c->p, c->end), &escaped);

    if (!q)
        return -1;
    c->p = q;
    return 0;
}

/* Validate and consume the next value; *v gets its view and *escaped
 * (when v is a string) whether it holds an escape. */
CUR_INLINE int cur_value(struct cur *c, struct jscan_value *v, int *escaped)
{
    const char *p = skip_ws(c->p, c->end);
    const char *q = scan_value(c, p, escaped);

    if (!q)
        return -1;
    v->type = jscan_type_of((unsigned char)*p);
    v->ptr = p;
    v->len = (size_t)(q - p);
    c->p = q;
    return 0;
}

/* The length of the text the string v decodes to. An unescaped string's
 * text is its raw bytes, so the common case needs no second look. */
CUR_INLINE uint64_t string_text_bytes(const struct jscan_value *v, int escaped)
{
    return escaped ? jscan_string_decoded_len(v) : v->len - 2;
}

/* Consume the next value; *bytes gets the length of the text a string
 * decodes to, 0 for null or any other non-string. With `output` (a string
 * counted as output: delta.content, text) it also notes where the
 * string's bytes are, which is all oai_decode_chunk_memo needs to
 * recognise the next chunk. (Inlined: `output` is a constant at every
 * call.) */
CUR_INLINE int cur_text_bytes(struct cur *c, uint64_t *bytes, int output)
{
    struct jscan_value v;
    int escaped = 0;

    *bytes = 0;
    if (cur_value(c, &v, &escaped) < 0)
        return -1;
    if (v.type == JSCAN_STRING)
        *bytes = string_text_bytes(&v, escaped);
    if (output) {
        /* A non-string (null, junk) counts twice: nothing to patch later. */
        c->texts += v.type == JSCAN_STRING ? 1 : 2;
        c->text = v.ptr + 1;
        c->text_end = v.ptr + v.len - 1;
    }
    return 0;
}

/* Consume the opening bracket at c->p (the one cur_peek() just saw) and
 * the whitespace after it. Returns 1 when an item follows, 0 when the
 * container is empty (its closing bracket `close` consumed as well), -1
 * when that would nest too deep or the text ends. */
CUR_INLINE int cur_open(struct cur *c, char close)
{
    const char *p;

    if (c->depth >= JSCAN_DEFAULT_DEPTH)
        return -1;
    p = skip_ws(c->p + 1, c->end);
    if (p >= c->end)
        return -1;
    if (*p == close) {
        c->p = p + 1;
        return 0;
    }
    c->depth++;
    c->p = p;
    return 1;
}

/* After an item of the innermost container: past the comma and the
 * whitespace after it when another item follows (returns 1), or past the
 * closing bracket `close` (returns 0); -1 for anything else. */
CUR_INLINE int cur_more(struct cur *c, char close)
{
    const char *p = c->p;

    /* Compact JSON: a comma right before the next item. */
    if (c->end - p >= 2 && p[0] == ',' && (unsigned char)p[1] > ' ') {
        c->p = p + 1;
        return 1;
    }
    p = skip_ws(p, c->end);

    if (p >= c->end)
        return -1;
    if (*p == ',') {
        p = skip_ws(p + 1, c->end);
        if (p >= c->end)
            return -1;
        c->p = p;
        return 1;
    }
    if (*p != close)
        return -1;
    c->p = p + 1;
    c->depth--;
    return 0;
}

/* An escaped key's name, decoded into buf (KEY_BUF bytes); a name that
 * does not fit is left empty, which matches nothing we look for. */
static inline void key_unescape(struct key *k, const char *p, const char *q, char *buf)
{
    struct jscan_value raw = {JSCAN_STRING, p, (size_t)(q - p)};
    size_t n = 0;

    if (jscan_string_unescape(&raw, buf, KEY_BUF, &n) != 0)
        n = 0;
    k->s = buf;
    k->n = n;
}

/* A member's key (cur_open or cur_more left us at it) and its colon: its
 * name goes to *k (buf, of KEY_BUF bytes, holds it when the key was
 * escaped) and the cursor to the value. */
CUR_INLINE int cur_key(struct cur *c, struct key *k, char *buf)
{
    const char *p = c->p, *q, *end = c->end;
    int escaped;

    if (*p != '"')
        return -1;
    q = scan_string(p, end, &escaped);
    if (!q)
        return -1;
    if (!escaped) {
        k->s = p + 1;
        k->n = (size_t)(q - p) - 2;
    } else {
        key_unescape(k, p, q, buf);
    }
    if (q >= end || *q != ':') {
        q = skip_ws(q, end);
        if (q >= end || *q != ':')
            return -1;
    }
    c->p = q + 1;
    return 0;
}

static inline uint32_t add_sat_u32(uint32_t a, uint64_t b)
{
    uint64_t s = (uint64_t)a + b;
    return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* One element of an array, read or skipped whole by the callee: 0, or -1
 * on malformed input. */
typedef int cur_elem_fn(struct cur *c, void *ud);

/* Call elem(c, ud) once per element of the array at c, in order; a value
 * that is not an array is skipped (validated) and calls it never. Returns
 * as cur_more: 0 past the array, -1 on malformed input or when elem
 * returns -1. */
static inline int cur_array(struct cur *c, cur_elem_fn *elem, void *ud)
{
    if (cur_peek(c) != '[')
        return cur_skip(c);
    int rc = cur_open(c, ']');
    while (rc > 0) {
        if (elem(c, ud) < 0)
            return -1;
        rc = cur_more(c, ']');
    }
    return rc;
}

static inline int count_elem(struct cur *c, void *ud)
{
    ++*(uint64_t *)ud;
    return cur_skip(c);
}

/* Add the elements of the array at c to *n (saturating), skipping each
 * (validated, not read); a value that is not an array is skipped and adds
 * none. Returns as cur_more: 0 past the array, -1 on malformed input. */
static inline int cur_count_array(struct cur *c, uint32_t *n)
{
    uint64_t k = 0;
    int rc = cur_array(c, count_elem, &k);
    if (rc == 0)
        *n = add_sat_u32(*n, k);
    return rc;
}

/* Unescape string v into buf[cap], as jscan_string_unescape() does; a
 * short string without escapes (every finish_reason) is copied as is. */
static inline void copy_text(const struct jscan_value *v, int escaped, char *buf, size_t cap)
{
    if (!escaped && v->len - 2 < cap) {
        memcpy(buf, v->ptr + 1, v->len - 2);
        buf[v->len - 2] = '\0';
        return;
    }
    jscan_string_unescape(v, buf, cap, NULL);
}

/* Read a token count into *n: a non-negative integer, else -1. */
static inline int read_token_count(struct cur *c, int64_t *n)
{
    struct jscan_value v;
    int escaped;

    if (cur_value(c, &v, &escaped) < 0)
        return -1;
    if (v.type != JSCAN_NUMBER || jscan_number_int64(&v, n) < 0 || *n < 0)
        *n = -1;
    return 0;
}

/* Reads one member's value, the cursor at it (cur_key has read the key k);
 * returns 0, or -1 on invalid text. ud is cur_object's. */
typedef int cur_member_fn(struct cur *c, const struct key *k, void *ud);

/* Walk the object the cursor is at, calling member once per member.
 * Returns 0, or -1 on invalid text. Inlined, so that member, a constant at
 * each caller, is a direct call. */
CUR_INLINE int cur_object(struct cur *c, cur_member_fn *member, void *ud)
{
    struct key k;
    char kb[KEY_BUF];
    int rc = cur_open(c, '}');

    while (rc > 0) {
        if (cur_key(c, &k, kb) < 0 || member(c, &k, ud) < 0)
            return -1;
        rc = cur_more(c, '}');
    }
    return rc;
}

/* Walk a whole payload data[0..len): one object, calling member once per
 * member, and nothing after it but whitespace. Returns 0, or -1 when data
 * is NULL or not exactly a valid JSON object. c is started here and left
 * as the walk ends it (texts, text..text_end), for the memo. */
CUR_INLINE int cur_payload(struct cur *c, const char *data, size_t len, cur_member_fn *member,
                           void *ud)
{
    if (!data)
        return -1;
    c->p = data;
    c->end = data + len;
    c->depth = 0;
    c->texts = 0;
    c->text = c->text_end = NULL;
    if (cur_peek(c) != '{' || cur_object(c, member, ud) < 0)
        return -1;
    return skip_ws(c->p, c->end) == c->end ? 0 : -1;
}

/* ---- words: what a string member means (the decoders' "type"s) ---- */

/* A string value's raw view (quotes included) in *v, JSCAN_INVALID when
 * it is not a string. */
CUR_INLINE int read_string(struct cur *c, struct jscan_value *v, int *escaped)
{
    if (cur_value(c, v, escaped) < 0)
        return -1;
    if (v->type != JSCAN_STRING)
        v->type = JSCAN_INVALID;
    return 0;
}

/* A word a string may be, and what it then means. */
struct word {
    const char *lit;
    size_t n;
    int meaning;
};

#define WORD(lit, meaning)                                                                         \
    {                                                                                              \
        (lit), sizeof(lit) - 1, (meaning)                                                          \
    }

/* What the string v (escaped as said) means by the first of words[] it
 * is; other when it is none of them, none when it is not a string. */
static inline int meaning_of(const struct jscan_value *v, int esc, const struct word *words,
                             size_t nwords, int other, int none)
{
    size_t i;

    if (v->type != JSCAN_STRING)
        return none;
    for (i = 0; i < nwords; i++) {
        const struct word *w = &words[i];
        if (esc ? jscan_string_equals(v, w->lit, w->n)
                : v->len == w->n + 2 && memcmp(v->ptr + 1, w->lit, w->n) == 0)
            return w->meaning;
    }
    return other;
}

/* Read the value at c and say what it means, as meaning_of() does (a
 * value that is not a string means none). Returns the meaning (words'
 * meanings are 0 or more), or -1 on invalid text. */
static inline int read_meaning(struct cur *c, const struct word *words, size_t nwords, int other,
                               int none)
{
    struct jscan_value v;
    int esc;

    if (read_string(c, &v, &esc) < 0)
        return -1;
    return meaning_of(&v, esc, words, nwords, other, none);
}

/* What an SSE event's name s[0..n) means, as meaning_of() would answer for
 * the string "s": none when n is 0, other when it is no word (or too long
 * to be one: every word is shorter than 62 bytes). */
static inline int name_meaning(const char *s, size_t n, const struct word *words, size_t nwords,
                               int other, int none)
{
    struct jscan_value v = {JSCAN_STRING, NULL, 0};
    char buf[64];

    if (n == 0)
        return none;
    if (n + 2 > sizeof buf)
        return other;
    buf[0] = '"';
    memcpy(buf + 1, s, n);
    buf[n + 1] = '"';
    v.ptr = buf;
    v.len = n + 2;
    return meaning_of(&v, 0, words, nwords, other, none);
}

/* What an event is: its data's own "type", already read as the meaning
 * type, wins; when the data had none (type is none), its SSE name
 * s[0..n) says, as name_meaning() reads it. */
static inline int event_meaning(int type, const char *s, size_t n, const struct word *words,
                                size_t nwords, int other, int none)
{
    return type != none ? type : name_meaning(s, n, words, nwords, other, none);
}

/* ---- usage: an API's token counts ---- */

/* A member of a usage's token details (OpenAI's prompt_tokens_details,
 * the Responses API's input_tokens_details): cached_tokens is read into
 * *(int64_t *)ud, the rest skipped. A cur_member_fn. */
static inline int read_cached_tokens_member(struct cur *c, const struct key *k, void *ud)
{
    if (KEY_IS(k, "cached_tokens"))
        return read_token_count(c, ud);
    return cur_skip(c);
}

/* One token count an API's usage object may hold: its key lit[0..n), and
 * the int64_t it is read into, as the byte offset off in the decoder's
 * struct. With details set, the key names an object of token details
 * whose cached_tokens is read there (read_cached_tokens_member). Each
 * decoder's usage is a table of these (COUNT_KEY, DETAILS_KEY). */
struct count_key {
    const char *lit;
    size_t n;
    size_t off;
    int details;
};

#define COUNT_KEY(lit, type, field)                                                                \
    {                                                                                              \
        (lit), sizeof(lit) - 1, offsetof(type, field), 0                                           \
    }
#define DETAILS_KEY(lit, type, field)                                                              \
    {                                                                                              \
        (lit), sizeof(lit) - 1, offsetof(type, field), 1                                           \
    }

/* A usage object's table, and the struct its counts go into. */
struct count_table {
    const struct count_key *keys;
    size_t nkeys;
    void *base;
};

/* A member of a usage object, read by the struct count_table ud: the
 * first key that is k says which int64_t of the struct at base gets the
 * count (a non-negative integer, else -1; a details key that is not an
 * object is skipped); a member no key names is skipped. A cur_member_fn. */
static inline int read_count_member(struct cur *c, const struct key *k, void *ud)
{
    const struct count_table *t = ud;
    for (size_t i = 0; i < t->nkeys; i++) {
        const struct count_key *ck = &t->keys[i];
        if (k->n != ck->n || memcmp(k->s, ck->lit, ck->n) != 0)
            continue;
        int64_t *dst = (int64_t *)(void *)((char *)t->base + ck->off);
        if (!ck->details)
            return read_token_count(c, dst);
        if (cur_peek(c) == '{')
            return cur_object(c, read_cached_tokens_member, dst);
        break;
    }
    return cur_skip(c);
}

/* "usage": an object, whose counts keys[0..nkeys) read into the struct at
 * base (read_count_member), *has set; anything else (null: vLLM without
 * usage, or junk) is skipped. Returns 0, or -1 on invalid text. */
static inline int read_usage_into(struct cur *c, int *has, const struct count_key *keys,
                                  size_t nkeys, void *base)
{
    struct count_table t = {keys, nkeys, base};

    if (cur_peek(c) != '{')
        return cur_skip(c);
    *has = 1;
    return cur_object(c, read_count_member, &t);
}

/* ---- errors: an API's "error" member ---- */

/* An error as an API sends it: its code (Anthropic's type) and message. */
struct cur_error {
    int has;
    char code[40];
    char message[128];
};

/* A string member into dst[cap] while dst is empty (the first one
 * counts); anything else is skipped. Returns 0, or -1 on invalid text. */
static inline int read_text_into(struct cur *c, char *dst, size_t cap)
{
    struct jscan_value v;
    int esc;
    if (read_string(c, &v, &esc) < 0)
        return -1;
    if (v.type == JSCAN_STRING && !dst[0])
        copy_text(&v, esc, dst, cap);
    return 0;
}

/* "error": an object, whose members member reads into ud, *has set; a
 * bare string, msg[cap] (the first string when keep_last is 0, else the
 * last), *has set; null or anything else, no error. Returns 0, or -1 on
 * invalid text. */
static inline int read_error_into(struct cur *c, int *has, char *msg, size_t cap, int keep_last,
                                  cur_member_fn *member, void *ud)
{
    struct jscan_value v;
    int esc;

    if (cur_peek(c) == '{') {
        *has = 1;
        return cur_object(c, member, ud);
    }
    if (cur_value(c, &v, &esc) < 0)
        return -1;
    if (v.type == JSCAN_STRING) {
        *has = 1;
        if (keep_last || !msg[0])
            copy_text(&v, esc, msg, cap);
    }
    return 0;
}

/* "error" into e: an object, whose members member reads into e (its ud);
 * a bare string, e's message (when none came before). As read_error_into. */
static inline int read_api_error(struct cur *c, struct cur_error *e, cur_member_fn *member)
{
    return read_error_into(c, &e->has, e->message, sizeof e->message, 0, member, e);
}

/* "WHAT: MESSAGE" (or either alone) into d[cap], the message cut where
 * it would overflow, never inside a UTF-8 character; what fits in d. */
static inline void join_error(char *d, size_t cap, const char *what, const char *message)
{
    size_t at = 0;
    if (what[0]) {
        at = strlen(what);
        if (at > cap / 2)
            at = cap / 2;
        memcpy(d, what, at);
        if (message[0]) {
            memcpy(d + at, ": ", 2);
            at += 2;
        }
    }
    size_t n = strlen(message);
    if (at + n >= cap) {
        n = cap - 1 - at;
        while (n && ((unsigned char)message[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(d + at, message, n);
    d[at + n] = '\0';
}

#endif
