/* openai.c: decoding OpenAI-format chunks and responses (see openai.h).
 *
 * One pass over the payload: it validates every byte while we descend into
 * `choices`, `usage` and `error` and read the few fields we count;
 * everything else (ids, model names, llama.cpp's "timings") is validated
 * by jscan as it is skipped. Keys are matched by length first, then by
 * bytes. This runs once per SSE event, so its cost per byte matters:
 * bench/decode.sh --instr counts it. */
#include "decode/openai.h"

#include <stdio.h>
#include <string.h>

#include "decode/jcur.h"
#include "decode/jscan.h"
#include "util/util.h"

/* ---- the API names ----------------------------------------------------------- */

/* Each API's public name (--api), the short name --api also takes, and
 * its path under the base URL; indexed by enum oai_api. */
static const struct {
    const char *name, *shortname, *path;
} apis[OAI_API_COUNT] = {
    [OAI_API_CHAT] = {"openai-chat", "chat", "/chat/completions"},
    [OAI_API_COMPLETIONS] = {"openai-completions", "completions", "/completions"},
    [OAI_API_ANTHROPIC] = {"anthropic-messages", "messages", "/messages"},
    [OAI_API_RESPONSES] = {"openai-responses", "responses", "/responses"},
    [OAI_API_EMBEDDINGS] = {"openai-embeddings", "embeddings", "/embeddings"},
};

/* An out-of-range api reads as chat, as it always has. */
static enum oai_api api_or_chat(enum oai_api api)
{
    return (unsigned)api < OAI_API_COUNT ? api : OAI_API_CHAT;
}

const char *oai_api_name(enum oai_api api)
{
    return apis[api_or_chat(api)].name;
}

int oai_api_from_name(const char *name)
{
    for (int a = 0; a < OAI_API_COUNT; a++)
        if (strcmp(name, apis[a].name) == 0 || strcmp(name, apis[a].shortname) == 0)
            return a;
    return -1;
}

void oai_api_list(char *buf, size_t len)
{
    size_t at = 0;
    for (int a = 0; a < OAI_API_COUNT && at < len; a++) {
        int n = snprintf(buf + at, len - at, "%s%s (%s)",
                         a == 0                  ? ""
                         : a + 1 < OAI_API_COUNT ? ", "
                                                 : " or ",
                         apis[a].name, apis[a].shortname);
        at += n > 0 ? (size_t)n : 0;
    }
}

const char *oai_api_path(enum oai_api api)
{
    return apis[api_or_chat(api)].path;
}

/* ---- the OpenAI shapes ------------------------------------------------------ */

void oai_chunk_clear(struct oai_chunk *c)
{
    memset(c, 0, sizeof(*c));
    c->prompt_tokens = -1;
    c->completion_tokens = -1;
    c->cached_tokens = -1;
}

/* What usage holds: the token counts and the prompt's details. */
static const struct count_key usage_keys[] = {
    COUNT_KEY("prompt_tokens", struct oai_chunk, prompt_tokens),
    COUNT_KEY("completion_tokens", struct oai_chunk, completion_tokens),
    DETAILS_KEY("prompt_tokens_details", struct oai_chunk, cached_tokens),
};

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
    return cur_count_array(c, &out->tool_call_deltas);
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
            rc = read_usage_into(&c, &out->has_usage, usage_keys, LL_ARRAY_LEN(usage_keys), out);
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
    oai_chunk_clear(out);
    return LL_E_PROTO;
}

int oai_chunk_carries_output(const struct oai_chunk *c)
{
    return c->content_bytes > 0 || c->reasoning_bytes > 0 || c->tool_call_deltas > 0;
}

int oai_decode_chunk(enum oai_api api, const char *data, size_t len,
                     struct oai_chunk *out)
{
    oai_chunk_clear(out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1;
        return 0;
    }
    return decode_object(api, 1, data, len, out, NULL);
}

int oai_decode_response(enum oai_api api, const char *body, size_t len,
                        struct oai_chunk *out)
{
    oai_chunk_clear(out);
    return decode_object(api, 0, body, len, out, NULL);
}

int oai_decode_error_event(const char *data, size_t len, struct oai_chunk *out)
{
    /* No data (an "error" field with no value): no offset on a null
     * pointer, which UBSan rightly refuses. */
    struct cur c = {data, data ? data + len : data, 0, 0, NULL, NULL};
    struct oai_chunk body;

    oai_chunk_clear(out);
    /* llama.cpp's own shape: the error object itself, its "message". */
    if (data && cur_peek(&c) == '{' && read_error(&c, out) == 0 && out->error_message[0])
        return 0;
    /* An error body's: {"error":{...}}, or vLLM's {"object":"error",...}. */
    if (data && oai_decode_response(OAI_API_CHAT, data, len, &body) == 0 && body.has_error &&
        body.error_message[0]) {
        *out = body;
        return 0;
    }
    /* Anything else is still an error: its text is the message. */
    oai_chunk_clear(out);
    out->has_error = 1;
    ll_printable(data ? data : "", data ? len : 0, out->error_message, sizeof out->error_message);
    return 0;
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

int oai_memo_hit(struct oai_memo *m, enum oai_api api, const char *data, size_t len,
                 struct oai_chunk *out)
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
            return 1;
        }
    }
    return 0;
}

void oai_memo_keep(struct oai_memo *m, enum oai_api api, const char *data, size_t len,
                   const char *text, const char *text_end, int saw_role,
                   const struct oai_chunk *out)
{
    m->len = 0;
    if (!text || len > sizeof(m->prev) || out->reasoning_bytes != 0 || out->tool_call_deltas != 0)
        return;
    memcpy(m->prev, data, len);
    m->len = (uint16_t)len;
    m->api = api;
    m->text_at = (uint16_t)(text - data);
    m->text_end = (uint16_t)(text_end - data);
    m->saw_role = saw_role;
    m->result = *out;
}

int oai_decode_chunk_memo(enum oai_api api, const char *data, size_t len, struct oai_chunk *out,
                          struct oai_memo *m)
{
    if (oai_memo_hit(m, api, data, len, out))
        return 0;

    struct decode_note note;
    int rc;

    oai_chunk_clear(out);
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        out->done = 1;
        return 0;
    }
    rc = decode_object(api, 1, data, len, out, &note);
    m->len = 0;
    if (rc == 0 && note.texts == 1)
        oai_memo_keep(m, api, data, len, note.text, note.text_end, note.saw_role, out);
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
