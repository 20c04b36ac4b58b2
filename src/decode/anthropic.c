/* anthropic.c: decoding Anthropic Messages events and bodies (see
 * anthropic.h).
 *
 * One pass over the payload with the cursor of jcur.h, as openai.c does:
 * every byte validated, the few members we count read on the way into a
 * struct msg, whatever order they come in; what they mean is decided at
 * the end by the payload's "type". */
#include "decode/anthropic.h"

#include <string.h>

#include "decode/decodeframe.h"
#include "decode/jcur.h"
#include "decode/jscan.h"
#include "util/util.h"

enum msg_type {
    T_NONE,
    T_MESSAGE_START,
    T_BLOCK_START,
    T_BLOCK_DELTA,
    T_BLOCK_STOP,
    T_MESSAGE_DELTA,
    T_MESSAGE_STOP,
    T_PING,
    T_ERROR,
    T_MESSAGE, /* a non-streamed response */
    T_OTHER
};

/* The type of a block or a delta. */
enum part_type { P_NONE, P_TEXT, P_THINKING, P_TOOL, P_OTHER };

struct usage {
    int64_t input, cache_read, cache_creation, output;
};

/* What one payload holds, before its type says what it means. */
struct msg {
    enum msg_type type;
    struct usage usage; /* usage, or message.usage (message_start) */
    int has_usage;
    enum part_type part;     /* delta.type, or content_block.type */
    uint64_t text, thinking; /* bytes of text / thinking in delta or content_block */
    int has_text, has_json;  /* a "text" / "partial_json" member was there */
    uint64_t content_text, content_thinking; /* a message's content blocks */
    uint32_t content_tools;
    struct jscan_value stop; /* stop_reason (delta's or the message's) */
    struct cur_error error;  /* its code is the error's type */
};

static const struct word msg_types[] = {
    WORD("content_block_delta", T_BLOCK_DELTA),
    WORD("message_start", T_MESSAGE_START),
    WORD("content_block_start", T_BLOCK_START),
    WORD("content_block_stop", T_BLOCK_STOP),
    WORD("message_delta", T_MESSAGE_DELTA),
    WORD("message_stop", T_MESSAGE_STOP),
    WORD("ping", T_PING),
    WORD("error", T_ERROR),
    WORD("message", T_MESSAGE),
};

static const struct word part_types[] = {
    WORD("text_delta", P_TEXT),         WORD("text", P_TEXT),
    WORD("thinking_delta", P_THINKING), WORD("thinking", P_THINKING),
    WORD("input_json_delta", P_TOOL),   WORD("tool_use", P_TOOL),
    WORD("server_tool_use", P_TOOL),
};

/* What usage holds: the token counts, the cache's two among them. */
static const struct count_key usage_keys[] = {
    COUNT_KEY("input_tokens", struct usage, input),
    COUNT_KEY("output_tokens", struct usage, output),
    COUNT_KEY("cache_read_input_tokens", struct usage, cache_read),
    COUNT_KEY("cache_creation_input_tokens", struct usage, cache_creation),
};

static int read_usage(struct cur *c, struct msg *m)
{
    return read_usage_into(c, &m->has_usage, usage_keys, LL_ARRAY_LEN(usage_keys), &m->usage);
}

/* message_start's message: its usage is read. */
static int message_member(struct cur *c, const struct key *k, void *ud)
{
    if (KEY_IS(k, "usage"))
        return read_usage(c, ud);
    return cur_skip(c);
}

/* The members a delta and a content block share: its type, its text
 * (patchable when the memo may patch it) and its thinking. Returns 0 or -1
 * when k was one of them, 1 when it was not. */
static int shared_part_member(struct cur *c, const struct key *k, int patchable,
                              enum part_type *part, uint64_t *text, uint64_t *thinking)
{
    uint64_t n;

    if (KEY_IS(k, "type")) {
        int t = read_meaning(c, part_types, LL_ARRAY_LEN(part_types), P_OTHER, P_NONE);
        *part = (enum part_type)t;
        return t < 0 ? -1 : 0;
    }
    if (KEY_IS(k, "text") || KEY_IS(k, "thinking")) {
        int is_text = KEY_IS(k, "text");
        if (cur_text_bytes(c, &n, is_text && patchable) < 0)
            return -1;
        *(is_text ? text : thinking) += n;
        return 0;
    }
    return 1;
}

/* A delta's members: the shared ones, and (message_delta) its
 * stop_reason. The delta's "text" is the one string the memo may patch. */
static int part_member(struct cur *c, const struct key *k, void *ud)
{
    struct msg *m = ud;
    int esc;
    int rc = shared_part_member(c, k, 1, &m->part, &m->text, &m->thinking);

    if (rc <= 0) {
        if (rc == 0 && KEY_IS(k, "text"))
            m->has_text = 1;
        return rc;
    }
    if (KEY_IS(k, "partial_json")) {
        m->has_json = 1;
        return cur_skip(c);
    }
    if (KEY_IS(k, "stop_reason"))
        return read_string(c, &m->stop, &esc);
    return cur_skip(c);
}

/* One block of a message's content: text, thinking or tool use. */
struct block {
    enum part_type part;
    uint64_t text, thinking;
};

static int block_member(struct cur *c, const struct key *k, void *ud)
{
    struct block *b = ud;
    int rc = shared_part_member(c, k, 0, &b->part, &b->text, &b->thinking);

    return rc <= 0 ? rc : cur_skip(c);
}

/* One element of a message's content, counted into the struct msg ud. */
static int content_elem(struct cur *c, void *ud)
{
    struct msg *m = ud;
    struct block b = {P_NONE, 0, 0};

    if (cur_peek(c) != '{')
        return cur_skip(c);
    if (cur_object(c, block_member, &b) < 0)
        return -1;
    if (b.part == P_TEXT || b.part == P_NONE)
        m->content_text += b.text;
    else if (b.part == P_THINKING)
        m->content_thinking += b.thinking;
    else if (b.part == P_TOOL)
        m->content_tools++;
    return 0;
}

/* error: {"type": "...", "message": "..."}, the first of each kept. */
static int error_member(struct cur *c, const struct key *k, void *ud)
{
    struct cur_error *e = ud;

    if (KEY_IS(k, "type"))
        return read_text_into(c, e->code, sizeof e->code);
    if (KEY_IS(k, "message"))
        return read_text_into(c, e->message, sizeof e->message);
    return cur_skip(c);
}

/* A member of the payload's top level. */
static int payload_member(struct cur *c, const struct key *k, void *ud)
{
    struct msg *m = ud;
    int esc;

    if (KEY_IS(k, "type")) {
        int t = read_meaning(c, msg_types, LL_ARRAY_LEN(msg_types), T_OTHER, T_NONE);
        m->type = (enum msg_type)t;
        return t < 0 ? -1 : 0;
    }
    if (KEY_IS(k, "delta") || KEY_IS(k, "content_block"))
        return cur_peek(c) == '{' ? cur_object(c, part_member, m) : cur_skip(c);
    if (KEY_IS(k, "usage"))
        return read_usage(c, m);
    if (KEY_IS(k, "message"))
        return cur_peek(c) == '{' ? cur_object(c, message_member, m) : cur_skip(c);
    if (KEY_IS(k, "content"))
        return cur_array(c, content_elem, m);
    if (KEY_IS(k, "stop_reason"))
        return read_string(c, &m->stop, &esc);
    if (KEY_IS(k, "error"))
        return read_api_error(c, &m->error, error_member);
    return cur_skip(c);
}

/* The single pass: every byte validated, the members we want read into
 * *m. Returns 0, or -1 on invalid text; c is left for the memo's note. */
static int decode_payload(struct cur *c, const char *data, size_t len, struct msg *m)
{
    memset(m, 0, sizeof *m);
    m->usage = (struct usage){-1, -1, -1, -1};
    m->stop.type = JSCAN_INVALID;
    return cur_payload(c, data, len, payload_member, m);
}

static void take_usage(const struct msg *m, struct oai_chunk *out, int with_output)
{
    const struct usage *u = &m->usage;
    if (!m->has_usage)
        return;
    out->has_usage = 1;
    if (u->input >= 0) {
        /* Each count is at most INT64_MAX: their sum saturates there. */
        int64_t sum = u->input, more[2] = {LL_MAX(u->cache_read, 0), LL_MAX(u->cache_creation, 0)};
        for (int i = 0; i < 2; i++)
            sum = more[i] > INT64_MAX - sum ? INT64_MAX : sum + more[i];
        out->prompt_tokens = sum;
    }
    if (u->cache_read >= 0)
        out->cached_tokens = u->cache_read;
    if (with_output && u->output >= 0)
        out->completion_tokens = u->output;
}

static void take_stop(const struct msg *m, struct oai_chunk *out)
{
    if (m->stop.type != JSCAN_STRING)
        return;
    out->has_finish = 1;
    jscan_string_unescape(&m->stop, out->finish_reason, sizeof out->finish_reason, NULL);
}

static void take_error(const struct msg *m, struct oai_chunk *out)
{
    if (!m->error.has)
        return;
    out->has_error = 1;
    out->overloaded = strcmp(m->error.code, "overloaded_error") == 0;
    join_error(out->error_message, sizeof out->error_message, m->error.code, m->error.message);
}

/* What a streamed event of type t means, into out (cleared). */
static void event_result(enum msg_type t, const struct msg *m, struct oai_chunk *out)
{
    switch (t) {
    case T_MESSAGE_START: take_usage(m, out, 0); break;
    case T_BLOCK_START:
    case T_BLOCK_DELTA:
        if (m->part == P_TEXT || (m->part == P_NONE && m->has_text))
            out->content_bytes = add_sat_u32(0, m->text);
        else if (m->part == P_THINKING)
            out->reasoning_bytes = add_sat_u32(0, m->thinking);
        else if (m->part == P_TOOL)
            out->tool_call_deltas = 1;
        break;
    case T_MESSAGE_DELTA:
        take_stop(m, out);
        take_usage(m, out, 1);
        break;
    case T_MESSAGE_STOP: out->done = 1; break;
    case T_NONE:
    case T_BLOCK_STOP:
    case T_PING:
    case T_ERROR:
    case T_MESSAGE:
    case T_OTHER: break;
    }
    take_error(m, out);
}

/* One event, for cur_decode. The memo may keep a text delta whose
 * own "type" said so (the event name plays no part in its result), its
 * content_bytes from its one counted string (the delta's text) and
 * nothing else in it. */
static int event_into(struct cur *c, const char *event, size_t event_len, const char *data,
                      size_t len, struct oai_chunk *out)
{
    struct msg m;

    if (decode_payload(c, data, len, &m) < 0)
        return -1;
    event_result(event_meaning(m.type, event, event_len, msg_types, LL_ARRAY_LEN(msg_types),
                               T_OTHER, T_NONE),
                 &m, out);
    return m.type == T_BLOCK_DELTA && c->texts == 1 &&
           (m.part == P_TEXT || (m.part == P_NONE && m.has_text)) && !m.error.has && !m.has_usage &&
           m.stop.type != JSCAN_STRING;
}

/* One whole body, for cur_decode. */
static int body_into(struct cur *c, const char *event, size_t event_len, const char *body,
                     size_t len, struct oai_chunk *out)
{
    struct msg m;

    if (decode_payload(c, body, len, &m) < 0)
        return -1;
    out->content_bytes = add_sat_u32(0, m.content_text);
    out->reasoning_bytes = add_sat_u32(0, m.content_thinking);
    out->tool_call_deltas = m.content_tools;
    take_stop(&m, out);
    take_usage(&m, out, 1);
    take_error(&m, out);
    return 0;
}

/* anth_decode_event and anth_decode_response. */
CUR_DEFINE_DECODERS(anth, OAI_API_ANTHROPIC, event_into, body_into)
