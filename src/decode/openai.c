/* openai.c: decoding OpenAI-format chunks and responses (see openai.h).
 *
 * One pass over the payload: it validates every byte while we descend into
 * `choices`, `usage` and `error` and read the few fields we count;
 * everything else (ids, model names, llama.cpp's "timings") is validated
 * by jscan as it is skipped. Keys are matched by length first, then by
 * bytes. This runs once per SSE event, so its cost per byte matters:
 * bench/decode.sh --instr counts it. */
#include "decode/openai.h"

#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

#include "decode/jscan.h"
#include "util/util.h"

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
    unsigned depth;              /* containers entered and not yet left */
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

static const char *skip_ws_slow(const char *p, const char *end)
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
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
                                              _mm_cmpeq_epi8(x, backslash)),
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
    case '"':
        return scan_string(p, end, escaped);
    case 'n':
        if (end - p >= 4 && memcmp(p, "null", 4) == 0)
            return p + 4;
        return NULL;
    case '1': case '2': case '3': case '4': case '5':
    case '6': case '7': case '8': case '9':
        q = skip_digits(p + 1, end);
        if (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))
            return q;
        break;
    case '0':
        q = p + 1;
        if (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))
            return q;
        break;
    default:
        break;
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
static void key_unescape(struct key *k, const char *p, const char *q, char *buf)
{
    struct jscan_value raw = { JSCAN_STRING, p, (size_t)(q - p) };
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

/* ---- the OpenAI shapes ------------------------------------------------------ */

static uint32_t add_sat_u32(uint32_t a, uint64_t b)
{
    uint64_t s = (uint64_t)a + b;
    return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static void chunk_clear(struct oai_chunk *c)
{
    memset(c, 0, sizeof(*c));
    c->prompt_tokens = -1;
    c->completion_tokens = -1;
    c->cached_tokens = -1;
}

/* Unescape string v into buf[cap], as jscan_string_unescape() does; a
 * short string without escapes (every finish_reason) is copied as is. */
static void copy_text(const struct jscan_value *v, int escaped, char *buf, size_t cap)
{
    if (!escaped && v->len - 2 < cap) {
        memcpy(buf, v->ptr + 1, v->len - 2);
        buf[v->len - 2] = '\0';
        return;
    }
    jscan_string_unescape(v, buf, cap, NULL);
}

/* Read a token count into *n: a non-negative integer, else -1. */
static int read_token_count(struct cur *c, int64_t *n)
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

/* A member of usage.prompt_tokens_details: cached_tokens is read. */
static int usage_details_member(struct cur *c, const struct key *k, void *ud)
{
    struct oai_chunk *out = ud;
    if (KEY_IS(k, "cached_tokens"))
        return read_token_count(c, &out->cached_tokens);
    return cur_skip(c);
}

/* A member of usage: the token counts and the prompt's details are read. */
static int usage_member(struct cur *c, const struct key *k, void *ud)
{
    struct oai_chunk *out = ud;
    if (KEY_IS(k, "prompt_tokens"))
        return read_token_count(c, &out->prompt_tokens);
    if (KEY_IS(k, "completion_tokens"))
        return read_token_count(c, &out->completion_tokens);
    if (KEY_IS(k, "prompt_tokens_details") && cur_peek(c) == '{')
        return cur_object(c, usage_details_member, out);
    return cur_skip(c);
}

static int read_usage(struct cur *c, struct oai_chunk *out)
{
    if (cur_peek(c) != '{')
        return cur_skip(c);              /* null (vLLM without usage) or junk */
    out->has_usage = 1;
    return cur_object(c, usage_member, out);
}

/* An error member: {"message": "..."} or a bare string. null is no error. */
static int read_error(struct cur *c, struct oai_chunk *out)
{
    struct jscan_value v;
    struct key k;
    char kb[KEY_BUF];
    int rc, escaped;

    if (cur_peek(c) == '{') {
        out->has_error = 1;
        rc = cur_open(c, '}');
        while (rc > 0) {
            if (cur_key(c, &k, kb) < 0)
                return -1;
            if (!KEY_IS(&k, "message"))
                rc = cur_skip(c);
            else if ((rc = cur_value(c, &v, &escaped)) == 0 && v.type == JSCAN_STRING &&
                     out->error_message[0] == '\0')
                jscan_string_unescape(&v, out->error_message,
                                      sizeof(out->error_message), NULL);
            if (rc < 0)
                return -1;
            rc = cur_more(c, '}');
        }
        return rc;
    }
    if (cur_value(c, &v, &escaped) < 0)
        return -1;
    if (v.type == JSCAN_STRING) {
        out->has_error = 1;
        jscan_string_unescape(&v, out->error_message, sizeof(out->error_message), NULL);
    }
    return 0;
}

CUR_INLINE int read_finish(struct cur *c, struct oai_chunk *out)
{
    struct jscan_value v;
    int escaped;

    if (cur_value(c, &v, &escaped) < 0)
        return -1;
    if (v.type == JSCAN_NULL || out->has_finish)
        return 0;
    out->has_finish = 1;
    if (v.type == JSCAN_STRING)
        copy_text(&v, escaped, out->finish_reason, sizeof(out->finish_reason));
    return 0;
}

static int read_tool_calls(struct cur *c, struct oai_chunk *out)
{
    uint64_t n = 0;
    int rc;

    if (cur_peek(c) != '[')
        return cur_skip(c);
    rc = cur_open(c, ']');
    while (rc > 0) {
        if (cur_skip(c) < 0)
            return -1;
        n++;
        rc = cur_more(c, ']');
    }
    out->tool_call_deltas = add_sat_u32(out->tool_call_deltas, n);
    return rc;
}

/* What read_message gathers from a message's members. */
struct message_ctx {
    struct oai_chunk *out;
    int *saw_role;
    uint64_t reasoning, reasoning_alt; /* bytes under each of the two names */
};

static int message_member(struct cur *c, const struct key *k, void *ud)
{
    struct message_ctx *m = ud;
    struct jscan_value v;
    uint64_t text = 0;
    int rc, escaped;

    if (KEY_IS(k, "content")) {
        rc = cur_text_bytes(c, &text, 1);
        m->out->content_bytes = add_sat_u32(m->out->content_bytes, text);
        return rc;
    }
    if (KEY_IS(k, "role")) {
        rc = cur_value(c, &v, &escaped);
        if (rc == 0 && v.type == JSCAN_STRING)
            *m->saw_role = 1;
        return rc;
    }
    if (KEY_IS(k, "reasoning_content"))
        return cur_text_bytes(c, &m->reasoning, 0);
    if (KEY_IS(k, "reasoning"))
        return cur_text_bytes(c, &m->reasoning_alt, 0);
    if (KEY_IS(k, "tool_calls"))
        return read_tool_calls(c, m->out);
    return cur_skip(c);
}

/* A chat delta (streamed) or message (not streamed). *saw_role is set when
 * it names a role. */
CUR_INLINE int read_message(struct cur *c, struct oai_chunk *out, int *saw_role)
{
    struct message_ctx m = {.out = out, .saw_role = saw_role};

    if (cur_peek(c) != '{')
        return cur_skip(c);
    if (cur_object(c, message_member, &m) < 0)
        return -1;
    /* Some servers send the same reasoning text under both names; count it
     * once. */
    out->reasoning_bytes = add_sat_u32(out->reasoning_bytes, LL_MAX(m.reasoning, m.reasoning_alt));
    return 0;
}

CUR_INLINE int read_choice(struct cur *c, enum oai_api api, int streamed,
                       struct oai_chunk *out, int *saw_role)
{
    struct key k;
    char kb[KEY_BUF];
    uint64_t text;
    int rc;

    if (cur_peek(c) != '{')
        return cur_skip(c);
    rc = cur_open(c, '}');
    while (rc > 0) {
        if (cur_key(c, &k, kb) < 0)
            return -1;
        if (KEY_IS(&k, "finish_reason")) {
            rc = read_finish(c, out);
        } else if (api == OAI_API_COMPLETIONS && KEY_IS(&k, "text")) {
            rc = cur_text_bytes(c, &text, 1);
            out->content_bytes = add_sat_u32(out->content_bytes, text);
        } else if (api == OAI_API_CHAT &&
                   (streamed ? KEY_IS(&k, "delta") : KEY_IS(&k, "message"))) {
            rc = read_message(c, out, saw_role);
        } else {
            rc = cur_skip(c);
        }
        if (rc < 0)
            return -1;
        rc = cur_more(c, '}');
    }
    return rc;
}

CUR_INLINE int read_choices(struct cur *c, enum oai_api api, int streamed,
                        struct oai_chunk *out, int *saw_role)
{
    int rc;

    if (cur_peek(c) != '[')
        return cur_skip(c);
    rc = cur_open(c, ']');
    while (rc > 0) {
        if (read_choice(c, api, streamed, out, saw_role) < 0)
            return -1;
        rc = cur_more(c, ']');
    }
    return rc;
}

/* The shared single pass over chunks and responses: every byte is
 * validated, and the few fields we want are read on the way. out was
 * cleared by the caller; on invalid text it is cleared again. */
/* What a successful decode_object saw beyond *out, for the memo. */
struct decode_note {
    unsigned texts;              /* counted output strings (and non-strings) */
    const char *text, *text_end; /* the last string's bytes between its quotes */
    int saw_role;
};

static int decode_object(enum oai_api api, int streamed, const char *data,
                         size_t len, struct oai_chunk *out, struct decode_note *note)
{
    struct cur c;
    struct jscan_value v, top_message = { JSCAN_INVALID, NULL, 0 };
    struct key k;
    char kb[KEY_BUF];
    int saw_role = 0, object_is_error = 0, rc, escaped;

    if (!data)
        return LL_E_PROTO;
    c.p = data;
    c.end = data + len;
    c.depth = 0;
    c.texts = 0;
    c.text = c.text_end = NULL;
    if (cur_peek(&c) != '{')
        return LL_E_PROTO;
    rc = cur_open(&c, '}');
    while (rc > 0) {
        if (cur_key(&c, &k, kb) < 0)
            goto fail;
        if (KEY_IS(&k, "choices")) {
            rc = read_choices(&c, api, streamed, out, &saw_role);
        } else if (KEY_IS(&k, "usage")) {
            rc = read_usage(&c, out);
        } else if (KEY_IS(&k, "error")) {
            rc = read_error(&c, out);
        } else if (KEY_IS(&k, "object")) {
            rc = cur_value(&c, &v, &escaped);
            if (rc == 0 && v.type == JSCAN_STRING)
                object_is_error = escaped ? jscan_string_equals(&v, "error", 5) :
                                  v.len == 7 && memcmp(v.ptr, "\"error\"", 7) == 0;
            else if (rc == 0)
                object_is_error = 0;
        } else if (KEY_IS(&k, "message")) {
            rc = cur_value(&c, &top_message, &escaped);
        } else {
            rc = cur_skip(&c);
        }
        if (rc < 0)
            goto fail;
        rc = cur_more(&c, '}');
    }
    if (rc < 0 || skip_ws(c.p, c.end) != c.end)
        goto fail;
    /* vLLM's older error shape: {"object":"error","message":"...",...}. */
    if (object_is_error && !out->has_error) {
        out->has_error = 1;
        if (top_message.type == JSCAN_STRING)
            jscan_string_unescape(&top_message, out->error_message,
                                  sizeof(out->error_message), NULL);
    }
    if (streamed && saw_role && !oai_chunk_carries_output(out))
        out->role_only = 1;
    if (note) {
        note->texts = c.texts;
        note->text = c.text;
        note->text_end = c.text_end;
        note->saw_role = saw_role;
    }
    return 0;

fail:
    chunk_clear(out);
    return LL_E_PROTO;
}

int oai_chunk_carries_output(const struct oai_chunk *c)
{
    return c->content_bytes > 0 || c->reasoning_bytes > 0 || c->tool_call_deltas > 0;
}

int oai_decode_chunk(enum oai_api api, const char *data, size_t len,
                     struct oai_chunk *out)
{
    chunk_clear(out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1;
        return 0;
    }
    return decode_object(api, 1, data, len, out, NULL);
}

int oai_decode_response(enum oai_api api, const char *body, size_t len,
                        struct oai_chunk *out)
{
    chunk_clear(out);
    return decode_object(api, 0, body, len, out, NULL);
}

/* ---- the memo: a stream's chunks differ only in their text ---------------
 *
 * A server's chunks within one stream are normally byte for byte the same
 * apart from the token text: same id, model, created second, same keys in
 * the same order. So when the bytes before and after the one counted string
 * of the last fully decoded chunk are unchanged, and what lies between
 * them is a valid string that ends exactly at the old closing quote, the
 * new chunk is that chunk with another string in the same place: it is
 * valid, and decodes to the same fields with content_bytes (and, from it,
 * role_only) of its own. That takes two memcmp and a scan of the token
 * instead of a parse; anything else is decoded in full and, when it has
 * one counted string and fits, becomes the chunk to compare with.
 * fuzz_openai checks the shortcut against full decodes. */

void oai_memo_reset(struct oai_memo *m)
{
    m->len = 0;
    m->hits = 0;
}

int oai_decode_chunk_memo(enum oai_api api, const char *data, size_t len,
                          struct oai_chunk *out, struct oai_memo *m)
{
    size_t plen = m->len, tail = plen - m->text_end;

    /* prev is head "text" tail; so is data when its head and tail match. */
    if (plen > 0 && m->api == api && len >= (size_t)m->text_at + tail &&
        memcmp(data, m->prev, m->text_at) == 0 &&
        memcmp(data + len - tail, m->prev + m->text_end, tail) == 0) {
        /* The new text must be a whole string between the same quotes:
         * scanned from the opening quote by the decoder's own rules
         * (escapes, UTF-8), it ends exactly at the tail's closing quote. */
        const char *open = data + m->text_at - 1;
        int escaped;
        if (scan_string(open, data + len, &escaped) == data + len - tail + 1) {
            struct jscan_value v = {JSCAN_STRING, open, len - tail + 1 - (m->text_at - 1u)};
            *out = m->result;
            out->content_bytes = add_sat_u32(0, string_text_bytes(&v, escaped));
            out->role_only = m->saw_role && !oai_chunk_carries_output(out);
            m->hits++;
            return 0;
        }
    }

    struct decode_note note;
    int rc;

    chunk_clear(out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1;
        return 0;
    }
    rc = decode_object(api, 1, data, len, out, &note);
    m->len = 0;
    if (rc == 0 && note.texts == 1 && note.text && len <= sizeof(m->prev) &&
        out->reasoning_bytes == 0 && out->tool_call_deltas == 0) {
        memcpy(m->prev, data, len);
        m->len = (uint16_t)len;
        m->api = api;
        m->text_at = (uint16_t)(note.text - data);
        m->text_end = (uint16_t)(note.text_end - data);
        m->saw_role = note.saw_role;
        m->result = *out;
    }
    return rc;
}

/* ---- per-request accumulation -------------------------------------------- */

void oai_stream_init(struct oai_stream *s)
{
    memset(s, 0, sizeof(*s));
    s->prompt_tokens = -1;
    s->completion_tokens = -1;
    s->cached_tokens = -1;
}

uint64_t oai_stream_add(struct oai_stream *s, const struct oai_chunk *c)
{
    int output = oai_chunk_carries_output(c);
    uint64_t tokens = output ? 1 : 0;

    s->events++;
    if (c->done)
        s->done = 1;
    if (output)
        s->output_events++;
    if (c->content_bytes)
        s->content_events++;
    if (c->role_only)
        s->role_only_events++;
    s->content_bytes += c->content_bytes;
    s->reasoning_bytes += c->reasoning_bytes;
    s->tool_call_deltas += c->tool_call_deltas;
    if (c->has_finish && !s->has_finish) {
        s->has_finish = 1;
        memcpy(s->finish_reason, c->finish_reason, sizeof(s->finish_reason));
    }
    if (c->has_error && !s->has_error) {
        s->has_error = 1;
        memcpy(s->error_message, c->error_message, sizeof(s->error_message));
    }
    if (c->has_usage) {
        int64_t prev = s->completion_tokens > 0 ? s->completion_tokens : 0;
        s->has_usage = 1;
        if (c->prompt_tokens >= 0)
            s->prompt_tokens = c->prompt_tokens;
        if (c->cached_tokens >= 0)
            s->cached_tokens = c->cached_tokens;
        if (c->completion_tokens >= 0) {
            s->completion_tokens = c->completion_tokens;
            if (output) {
                /* Continuous usage: the count is cumulative, so this event
                 * carried the growth. */
                s->usage_on_output = 1;
                tokens = c->completion_tokens > prev ?
                         (uint64_t)(c->completion_tokens - prev) : 0;
            }
        }
    }
    return tokens;
}

uint64_t oai_stream_output_tokens(const struct oai_stream *s,
                                  enum oai_tokens_source *src)
{
    enum oai_tokens_source which = OAI_TOKENS_EVENTS;
    uint64_t n = s->output_events;

    if (s->completion_tokens >= 0) {
        which = s->usage_on_output ? OAI_TOKENS_CHUNK_USAGE : OAI_TOKENS_USAGE;
        n = (uint64_t)s->completion_tokens;
    }
    if (src)
        *src = which;
    return n;
}

const char *oai_tokens_source_name(enum oai_tokens_source src)
{
    switch (src) {
    case OAI_TOKENS_CHUNK_USAGE: return "chunk_usage";
    case OAI_TOKENS_USAGE: return "usage";
    case OAI_TOKENS_EVENTS: return "events";
    }
    return "events";
}
