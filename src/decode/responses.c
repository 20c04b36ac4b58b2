/* responses.c: decoding OpenAI Responses events and bodies (see
 * responses.h).
 *
 * One pass over the payload with the cursor of jcur.h, as openai.c and
 * anthropic.c do: every byte validated, the few members we count read on
 * the way into a struct rmsg, whatever order they come in; what they mean
 * is decided at the end by the payload's "type". The top level of a
 * streamed event and of a non-streamed body share one walk: an event's
 * own members (type, delta, item, response, code, message) and a body's
 * (status, output, usage, error) do not overlap. */
#include "decode/responses.h"

#include <stdio.h>
#include <string.h>

#include "decode/decodeframe.h"
#include "decode/jcur.h"
#include "decode/jscan.h"
#include "util/util.h"

enum ev_type {
    T_NONE,
    T_TEXT,       /* response.output_text.delta, response.refusal.delta */
    T_REASONING,  /* response.reasoning_text.delta, response.reasoning_summary_text.delta */
    T_TOOL,       /* response.function_call_arguments.delta, custom_tool_call_input.delta */
    T_ITEM_ADDED, /* response.output_item.added */
    T_COMPLETED,
    T_INCOMPLETE,
    T_FAILED,
    T_ERROR,
    T_OTHER
};

static const struct word ev_types[] = {
    WORD("response.output_text.delta", T_TEXT),
    WORD("response.reasoning_text.delta", T_REASONING),
    WORD("response.reasoning_summary_text.delta", T_REASONING),
    WORD("response.refusal.delta", T_TEXT),
    WORD("response.function_call_arguments.delta", T_TOOL),
    WORD("response.custom_tool_call_input.delta", T_TOOL),
    WORD("response.output_item.added", T_ITEM_ADDED),
    WORD("response.completed", T_COMPLETED),
    WORD("response.incomplete", T_INCOMPLETE),
    WORD("response.failed", T_FAILED),
    WORD("error", T_ERROR),
};

/* An output item's type, and a response's status. */
enum item_type { I_NONE, I_MESSAGE, I_REASONING, I_TOOL, I_OTHER };
enum status { S_NONE, S_COMPLETED, S_INCOMPLETE, S_FAILED, S_OTHER };

static const struct word item_types[] = {
    WORD("message", I_MESSAGE),
    WORD("reasoning", I_REASONING),
    WORD("function_call", I_TOOL),
    WORD("custom_tool_call", I_TOOL),
};

static const struct word statuses[] = {
    WORD("completed", S_COMPLETED),
    WORD("incomplete", S_INCOMPLETE),
    WORD("failed", S_FAILED),
};

/* Bytes kept of incomplete_details.reason, NUL included: "incomplete:"
 * and 19 bytes fill a finish_reason's 31. */
#define RESP_REASON_MAX 20

struct usage {
    int64_t input, cached, output;
};

/* What a response object holds (a body's top level, or an event's
 * "response"). */
struct resp {
    enum status status;
    struct usage usage;
    int has_usage;
    struct cur_error error;
    uint64_t content, reasoning; /* bytes of output text (a body's output) */
    uint32_t tools;              /* function and tool calls in it */
    /* incomplete_details.reason ("max_output_tokens", "content_filter"),
     * truncated; "" when none. */
    char incomplete_reason[RESP_REASON_MAX];
};

/* What one payload holds, before its type says what it means. */
struct rmsg {
    enum ev_type type;
    uint64_t delta;      /* bytes of the "delta" string */
    enum item_type item; /* item.type (output_item.added) */
    struct resp top;     /* the payload's own status, output, usage, error */
    struct resp nested;  /* its "response" */
    struct cur_error ev; /* an error event's own code and message */
};

/* What usage holds: the token counts and the input's details. */
static const struct count_key usage_keys[] = {
    COUNT_KEY("input_tokens", struct usage, input),
    COUNT_KEY("output_tokens", struct usage, output),
    DETAILS_KEY("input_tokens_details", struct usage, cached),
};

/* An error's members: code (or type, when no code came) and message. */
static int err_member(struct cur *c, const struct key *k, void *ud)
{
    struct cur_error *e = ud;
    if (KEY_IS(k, "code") || KEY_IS(k, "type")) {
        /* code wins over type: a code read later replaces a type. */
        char tmp[sizeof e->code] = "";
        if (read_text_into(c, tmp, sizeof tmp) < 0)
            return -1;
        if (tmp[0] && (KEY_IS(k, "code") || !e->code[0]))
            memcpy(e->code, tmp, sizeof tmp);
        return 0;
    }
    if (KEY_IS(k, "message"))
        return read_text_into(c, e->message, sizeof e->message);
    return cur_skip(c);
}

/* One part of an item's content or summary: its text (output_text,
 * reasoning_text, summary_text) or refusal bytes. */
static int part_member(struct cur *c, const struct key *k, void *ud)
{
    uint64_t *bytes = ud, n;
    if (KEY_IS(k, "text") || KEY_IS(k, "refusal")) {
        if (cur_text_bytes(c, &n, 0) < 0)
            return -1;
        *bytes += n;
        return 0;
    }
    return cur_skip(c);
}

/* One element of an array of parts; its text bytes added to *ud. */
static int part_elem(struct cur *c, void *ud)
{
    return cur_peek(c) == '{' ? cur_object(c, part_member, ud) : cur_skip(c);
}

/* One output item: its type and its text. */
struct item {
    enum item_type type;
    uint64_t text;
};

/* An item's "type" into *type, when k is it: returns 0, or -1 on invalid
 * text; 1 when k was another member. */
static int item_type_of(struct cur *c, const struct key *k, enum item_type *type)
{
    if (!KEY_IS(k, "type"))
        return 1;
    int t = read_meaning(c, item_types, LL_ARRAY_LEN(item_types), I_OTHER, I_NONE);
    *type = (enum item_type)t;
    return t < 0 ? -1 : 0;
}

static int item_member(struct cur *c, const struct key *k, void *ud)
{
    struct item *it = ud;
    int rc = item_type_of(c, k, &it->type);
    if (rc <= 0)
        return rc;
    if (KEY_IS(k, "content") || KEY_IS(k, "summary"))
        return cur_array(c, part_elem, &it->text);
    return cur_skip(c);
}

/* One item of a body's "output", into the struct resp ud: its text by
 * kind, a tool call counted. */
static int output_elem(struct cur *c, void *ud)
{
    struct resp *r = ud;
    struct item it = {I_NONE, 0};

    if (cur_peek(c) != '{')
        return cur_skip(c);
    if (cur_object(c, item_member, &it) < 0)
        return -1;
    if (it.type == I_REASONING)
        r->reasoning += it.text;
    else if (it.type == I_TOOL)
        r->tools++;
    else
        r->content += it.text;
    return 0;
}

/* incomplete_details' reason into the char[RESP_REASON_MAX] ud. */
static int details_member(struct cur *c, const struct key *k, void *ud)
{
    char *reason = ud;
    return KEY_IS(k, "reason") ? read_text_into(c, reason, RESP_REASON_MAX) : cur_skip(c);
}

/* The members of a response object; with `output`, its output is read
 * (a body's), else skipped (an event's response repeats the streamed
 * text). Returns 0 or -1 when k was one of them, 1 when it was not. */
static int resp_member_of(struct cur *c, const struct key *k, struct resp *r, int output)
{
    if (KEY_IS(k, "status")) {
        int s = read_meaning(c, statuses, LL_ARRAY_LEN(statuses), S_OTHER, S_NONE);
        r->status = (enum status)s;
        return s < 0 ? -1 : 0;
    }
    if (KEY_IS(k, "usage"))
        return read_usage_into(c, &r->has_usage, usage_keys, LL_ARRAY_LEN(usage_keys), &r->usage);
    if (KEY_IS(k, "error"))
        return read_api_error(c, &r->error, err_member);
    if (KEY_IS(k, "incomplete_details"))
        return cur_peek(c) == '{' ? cur_object(c, details_member, r->incomplete_reason)
                                  : cur_skip(c);
    if (output && KEY_IS(k, "output"))
        return cur_array(c, output_elem, r);
    return 1;
}

static int nested_member(struct cur *c, const struct key *k, void *ud)
{
    int rc = resp_member_of(c, k, ud, 0);
    return rc <= 0 ? rc : cur_skip(c);
}

/* output_item.added's item: only its type is read. */
static int added_item_member(struct cur *c, const struct key *k, void *ud)
{
    int rc = item_type_of(c, k, ud);
    return rc <= 0 ? rc : cur_skip(c);
}

static void resp_init(struct resp *r)
{
    memset(r, 0, sizeof *r);
    r->usage = (struct usage){-1, -1, -1};
}

/* A member of the payload's top level. */
static int payload_member(struct cur *c, const struct key *k, void *ud)
{
    struct rmsg *m = ud;

    if (KEY_IS(k, "type")) {
        int t = read_meaning(c, ev_types, LL_ARRAY_LEN(ev_types), T_OTHER, T_NONE);
        m->type = (enum ev_type)t;
        return t < 0 ? -1 : 0;
    }
    if (KEY_IS(k, "delta")) /* the one string the memo may patch */
        return cur_text_bytes(c, &m->delta, 1);
    if (KEY_IS(k, "response"))
        return cur_peek(c) == '{' ? cur_object(c, nested_member, &m->nested) : cur_skip(c);
    if (KEY_IS(k, "item"))
        return cur_peek(c) == '{' ? cur_object(c, added_item_member, &m->item) : cur_skip(c);
    if (KEY_IS(k, "code") || KEY_IS(k, "message")) /* an error event's own members */
        return err_member(c, k, &m->ev);
    int rc = resp_member_of(c, k, &m->top, 1);
    return rc <= 0 ? rc : cur_skip(c);
}

/* The single pass: every byte validated, the members we want read into
 * *m. Returns 0, or -1 on invalid text; c is left for the memo's note. */
static int decode_payload(struct cur *c, const char *data, size_t len, struct rmsg *m)
{
    memset(m, 0, sizeof *m);
    resp_init(&m->top);
    resp_init(&m->nested);
    return cur_payload(c, data, len, payload_member, m);
}

static void take_usage(const struct resp *r, struct oai_chunk *out)
{
    if (!r->has_usage)
        return;
    out->has_usage = 1;
    out->prompt_tokens = r->usage.input;
    out->cached_tokens = r->usage.cached;
    out->completion_tokens = r->usage.output;
}

static void take_error(const struct cur_error *e, struct oai_chunk *out)
{
    out->has_error = 1;
    out->overloaded = strstr(e->code, "overloaded") != NULL;
    join_error(out->error_message, sizeof out->error_message, e->code, e->message);
}

/* The finish of a response that ended: "completed", or "incomplete"
 * joined to its incomplete_details' reason when it gave one
 * ("incomplete:max_output_tokens", which stats_finish_by_length counts as
 * cut by a token limit). */
static void take_finish(int completed, const struct resp *r, struct oai_chunk *out)
{
    out->has_finish = 1;
    if (completed || !r->incomplete_reason[0])
        snprintf(out->finish_reason, sizeof out->finish_reason, "%s",
                 completed ? "completed" : "incomplete");
    else
        snprintf(out->finish_reason, sizeof out->finish_reason, "incomplete:%s",
                 r->incomplete_reason);
}

static void take_status(const struct resp *r, struct oai_chunk *out)
{
    if (r->status == S_COMPLETED || r->status == S_INCOMPLETE)
        take_finish(r->status == S_COMPLETED, r, out);
}

/* What a streamed event of type t means, into out (cleared). */
static void event_result(enum ev_type t, const struct rmsg *m, struct oai_chunk *out)
{
    switch (t) {
    case T_TEXT: out->content_bytes = add_sat_u32(0, m->delta); break;
    case T_REASONING: out->reasoning_bytes = add_sat_u32(0, m->delta); break;
    case T_TOOL: out->tool_call_deltas = 1; break;
    case T_ITEM_ADDED: out->tool_call_deltas = m->item == I_TOOL; break;
    case T_COMPLETED:
    case T_INCOMPLETE:
    case T_FAILED:
        out->done = 1;
        take_usage(&m->nested, out);
        if (t != T_FAILED) {
            take_finish(t == T_COMPLETED, &m->nested, out);
        } else {
            struct cur_error e = m->nested.error;
            if (!e.code[0] && !e.message[0])
                memcpy(e.message, "response.failed", sizeof "response.failed");
            take_error(&e, out);
        }
        break;
    case T_ERROR: {
        /* {"type":"error","code":..,"message":..}, or an "error" object. */
        const struct cur_error *e = m->ev.code[0] || m->ev.message[0] ? &m->ev : &m->top.error;
        take_error(e, out);
        break;
    }
    case T_NONE:
    case T_OTHER: break;
    }
}

/* One event, for cur_decode. The memo may keep a text delta whose
 * own "type" said so (the event name plays no part in its result), its
 * content_bytes from its one counted string (the delta) and nothing else
 * in it that counts. */
static int event_into(struct cur *c, const char *event, size_t event_len, const char *data,
                      size_t len, struct oai_chunk *out)
{
    struct rmsg m;

    if (decode_payload(c, data, len, &m) < 0)
        return -1;
    event_result(
        event_meaning(m.type, event, event_len, ev_types, LL_ARRAY_LEN(ev_types), T_OTHER, T_NONE),
        &m, out);
    return m.type == T_TEXT && c->texts == 1;
}

/* One whole body, for cur_decode. */
static int body_into(struct cur *c, const char *event, size_t event_len, const char *body,
                     size_t len, struct oai_chunk *out)
{
    struct rmsg m;

    if (decode_payload(c, body, len, &m) < 0)
        return -1;
    const struct resp *r = &m.top;
    out->content_bytes = add_sat_u32(0, r->content);
    out->reasoning_bytes = add_sat_u32(0, r->reasoning);
    out->tool_call_deltas = r->tools;
    take_status(r, out);
    take_usage(r, out);
    if (r->error.has) {
        take_error(&r->error, out);
    } else if (r->status == S_FAILED) {
        struct cur_error e = {1, "", "response failed"};
        take_error(&e, out);
    }
    return 0;
}

/* resp_decode_event and resp_decode_response. */
CUR_DEFINE_DECODERS(resp, OAI_API_RESPONSES, event_into, body_into)
