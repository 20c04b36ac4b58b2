/* openai.c: decoding OpenAI-format chunks and responses (see openai.h).
 *
 * One pass with jscan's reader: it validates every byte of the payload
 * while we descend into `choices`, `usage` and `error` and read the few
 * fields we count; everything else (ids, model names, llama.cpp's
 * "timings") is validated as it is skipped. Keys are matched by length
 * first, then by bytes. */
#include "openai.h"

#include <string.h>

#include "jscan.h"
#include "util.h"

/* A member's name, ready for comparing against literals. Real payloads
 * never escape their keys, so the name is normally a view of the raw key;
 * an escaped key is decoded into the caller's small buffer (a key too long
 * for it matches nothing we look for, as all our names are short). */
struct key {
    const char *s;
    size_t n;
};

static void key_load(struct key *k, const struct jscan_value *raw, int escaped,
                     char *buf, size_t cap)
{
    size_t out = 0;

    if (!escaped) {
        k->s = raw->ptr + 1;
        k->n = raw->len - 2;
        return;
    }
    if (jscan_string_unescape(raw, buf, cap, &out) != 0)
        out = 0;
    k->s = buf;
    k->n = out;
}

#define KEY_IS(k, lit) ((k)->n == sizeof(lit) - 1 && memcmp((k)->s, (lit), sizeof(lit) - 1) == 0)
#define KEY_BUF 32

/* Read the next member's key; 0 at the end of the object (or on error). */
static int next_key(struct jscan_reader *r, struct key *k, char *buf)
{
    struct jscan_value raw;

    if (!jscan_reader_next_member(r, &raw))
        return 0;
    key_load(k, &raw, r->key_escaped, buf, KEY_BUF);
    return 1;
}

static void skip(struct jscan_reader *r)
{
    jscan_reader_value(r, NULL);
}

static uint32_t add_sat_u32(uint32_t a, uint64_t b)
{
    uint64_t s = (uint64_t)a + b;
    return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Read a value; bytes of text it decodes to, 0 for null or any non-string. */
static uint64_t read_text_bytes(struct jscan_reader *r)
{
    struct jscan_value v;
    if (!jscan_reader_value(r, &v) || v.type != JSCAN_STRING)
        return 0;
    return jscan_string_decoded_len(&v);
}

static void chunk_clear(struct oai_chunk *c)
{
    memset(c, 0, sizeof(*c));
    c->prompt_tokens = -1;
    c->completion_tokens = -1;
    c->cached_tokens = -1;
}

/* Read a token count: a non-negative integer, else -1. */
static int64_t read_token_count(struct jscan_reader *r)
{
    struct jscan_value v;
    int64_t n;
    if (!jscan_reader_value(r, &v) || v.type != JSCAN_NUMBER ||
        jscan_number_int64(&v, &n) < 0 || n < 0)
        return -1;
    return n;
}

static void read_usage(struct jscan_reader *r, struct oai_chunk *c)
{
    struct key k;
    char kb[KEY_BUF];

    if (jscan_reader_peek(r) != JSCAN_OBJECT) {
        skip(r);                         /* null (vLLM without usage) or junk */
        return;
    }
    c->has_usage = 1;
    jscan_reader_enter(r);
    while (next_key(r, &k, kb)) {
        if (KEY_IS(&k, "prompt_tokens")) {
            c->prompt_tokens = read_token_count(r);
        } else if (KEY_IS(&k, "completion_tokens")) {
            c->completion_tokens = read_token_count(r);
        } else if (KEY_IS(&k, "prompt_tokens_details") &&
                   jscan_reader_peek(r) == JSCAN_OBJECT) {
            struct key d;
            char db[KEY_BUF];
            jscan_reader_enter(r);
            while (next_key(r, &d, db)) {
                if (KEY_IS(&d, "cached_tokens"))
                    c->cached_tokens = read_token_count(r);
                else
                    skip(r);
            }
        } else {
            skip(r);
        }
    }
}

/* An error member: {"message": "..."} or a bare string. null is no error. */
static void read_error(struct jscan_reader *r, struct oai_chunk *c)
{
    struct jscan_value v;
    struct key k;
    char kb[KEY_BUF];

    if (jscan_reader_peek(r) == JSCAN_OBJECT) {
        c->has_error = 1;
        jscan_reader_enter(r);
        while (next_key(r, &k, kb)) {
            if (!KEY_IS(&k, "message")) {
                skip(r);
            } else if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING &&
                       c->error_message[0] == '\0') {
                jscan_string_unescape(&v, c->error_message,
                                      sizeof(c->error_message), NULL);
            }
        }
        return;
    }
    if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING) {
        c->has_error = 1;
        jscan_string_unescape(&v, c->error_message, sizeof(c->error_message), NULL);
    }
}

static void read_finish(struct jscan_reader *r, struct oai_chunk *c)
{
    struct jscan_value v;

    if (!jscan_reader_value(r, &v) || v.type == JSCAN_NULL || c->has_finish)
        return;
    c->has_finish = 1;
    if (v.type == JSCAN_STRING)
        jscan_string_unescape(&v, c->finish_reason, sizeof(c->finish_reason), NULL);
}

static void read_tool_calls(struct jscan_reader *r, struct oai_chunk *c)
{
    uint64_t n = 0;

    if (jscan_reader_peek(r) != JSCAN_ARRAY) {
        skip(r);
        return;
    }
    jscan_reader_enter(r);
    while (jscan_reader_next_element(r)) {
        skip(r);
        n++;
    }
    c->tool_call_deltas = add_sat_u32(c->tool_call_deltas, n);
}

/* A chat delta (streamed) or message (not streamed). *saw_role is set when
 * it names a role. */
static void read_message(struct jscan_reader *r, struct oai_chunk *c, int *saw_role)
{
    struct jscan_value v;
    struct key k;
    char kb[KEY_BUF];
    uint64_t reasoning = 0, reasoning_alt = 0;

    if (jscan_reader_peek(r) != JSCAN_OBJECT) {
        skip(r);
        return;
    }
    jscan_reader_enter(r);
    while (next_key(r, &k, kb)) {
        if (KEY_IS(&k, "content")) {
            c->content_bytes = add_sat_u32(c->content_bytes, read_text_bytes(r));
        } else if (KEY_IS(&k, "role")) {
            if (jscan_reader_value(r, &v) && v.type == JSCAN_STRING)
                *saw_role = 1;
        } else if (KEY_IS(&k, "reasoning_content")) {
            reasoning = read_text_bytes(r);
        } else if (KEY_IS(&k, "reasoning")) {
            reasoning_alt = read_text_bytes(r);
        } else if (KEY_IS(&k, "tool_calls")) {
            read_tool_calls(r, c);
        } else {
            skip(r);
        }
    }
    /* Some servers send the same reasoning text under both names; count it
     * once. */
    c->reasoning_bytes = add_sat_u32(c->reasoning_bytes,
                                     LL_MAX(reasoning, reasoning_alt));
}

static void read_choice(struct jscan_reader *r, enum oai_api api, int streamed,
                        struct oai_chunk *c, int *saw_role)
{
    struct key k;
    char kb[KEY_BUF];

    if (jscan_reader_peek(r) != JSCAN_OBJECT) {
        skip(r);
        return;
    }
    jscan_reader_enter(r);
    while (next_key(r, &k, kb)) {
        if (KEY_IS(&k, "finish_reason"))
            read_finish(r, c);
        else if (api == OAI_API_COMPLETIONS && KEY_IS(&k, "text"))
            c->content_bytes = add_sat_u32(c->content_bytes, read_text_bytes(r));
        else if (api == OAI_API_CHAT &&
                 (streamed ? KEY_IS(&k, "delta") : KEY_IS(&k, "message")))
            read_message(r, c, saw_role);
        else
            skip(r);
    }
}

/* The shared single pass over chunks and responses: the reader validates
 * every byte, reading the few fields we want on the way. */
static int decode_object(enum oai_api api, int streamed, const char *data,
                         size_t len, struct oai_chunk *out)
{
    struct jscan_reader r;
    struct jscan_value v, top_message = { JSCAN_INVALID, NULL, 0 };
    struct key k;
    char kb[KEY_BUF];
    int saw_role = 0, object_is_error = 0;

    jscan_reader_init(&r, data, len, JSCAN_DEFAULT_DEPTH);
    if (jscan_reader_peek(&r) != JSCAN_OBJECT)
        return LL_E_PROTO;
    jscan_reader_enter(&r);
    while (next_key(&r, &k, kb)) {
        if (KEY_IS(&k, "choices")) {
            if (jscan_reader_peek(&r) != JSCAN_ARRAY) {
                skip(&r);
                continue;
            }
            jscan_reader_enter(&r);
            while (jscan_reader_next_element(&r))
                read_choice(&r, api, streamed, out, &saw_role);
        } else if (KEY_IS(&k, "usage")) {
            read_usage(&r, out);
        } else if (KEY_IS(&k, "error")) {
            read_error(&r, out);
        } else if (KEY_IS(&k, "object")) {
            if (jscan_reader_value(&r, &v))
                object_is_error = jscan_string_equals(&v, "error", 5);
        } else if (KEY_IS(&k, "message")) {
            jscan_reader_value(&r, &top_message);
        } else {
            skip(&r);
        }
    }
    if (jscan_reader_finish(&r) != 0) {
        chunk_clear(out);
        return LL_E_PROTO;
    }
    /* vLLM's older error shape: {"object":"error","message":"...",...}. */
    if (object_is_error && !out->has_error) {
        out->has_error = 1;
        if (top_message.type == JSCAN_STRING)
            jscan_string_unescape(&top_message, out->error_message,
                                  sizeof(out->error_message), NULL);
    }
    if (streamed && saw_role && !oai_chunk_carries_output(out))
        out->role_only = 1;
    return 0;
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
    return decode_object(api, 1, data, len, out);
}

int oai_decode_response(enum oai_api api, const char *body, size_t len,
                        struct oai_chunk *out)
{
    chunk_clear(out);
    return decode_object(api, 0, body, len, out);
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
